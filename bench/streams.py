"""The streaming benchmark: how many events per second one stream carries, how much later than
the backend's delta the client's event arrives, and how much memory an idle open stream holds.
Writes a Markdown report.

A loopback answering backend (bench/streams_backend.py, stdlib asyncio, OpenAI-compatible) and
the release server pointed at it (memory store, HS256 dev tokens, `catholic_qa` over a one-document
corpus written at start) run on free ports. Our path is `message/stream` (0.3) to `catholic_qa`,
whose answer the backend streams; the floor is the same client reading the backend's own stream
directly, in the same run.

1. Throughput: the backend writes `--deltas` small deltas as fast as the socket takes them; the
   client measures deltas (and events) per second from the arrival of the first delta to that of
   the last. Ours and the floor alternate for `--rounds` rounds.
2. Latency: the backend writes `--paced-deltas` deltas, one every `--interval-ms`, each stamped
   with `time.monotonic_ns()` as it is written; the client reads the same clock when the event
   arrives (CLOCK_MONOTONIC: one clock for every process of the machine). Added latency = ours
   minus the floor, p50 and p99, per round.
3. Idle streams: `--streams` streams held open on working tasks whose backend request is paused
   (the answer's head is sent, then nothing), on a fresh server per round; the server's resident
   memory (VmRSS) is read before and after, once steady. Each stream has its own task (and so its
   own connection to the backend) as far as the open-files limit allows (the server holds two
   sockets for such a stream); the rest join a working task with `tasks/resubscribe`. The
   streams are spread over users, `--per-user` own tasks each (the running-task and stream caps
   are set to fit). Before each reading every stream's task is read back with `tasks/get` (see
   `read_back`). The paused requests are then released and every stream must end `completed`.

Every measurement is watched (bench/quiet.py): a goal is never called met when the machine was
busy. Run through `bench/streams`, which builds the binary and raises the open-files limit.
Everything it starts is stopped by its own process id at the end.
"""

import argparse
import asyncio
import base64
import datetime
import hashlib
import hmac
import http.client
import json
import math
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import harness
import quiet
import stats

ROOT = harness.ROOT
BACKEND = os.path.join(ROOT, "bench", "streams_backend.py")
RPC_PATH = "/api/v1/a2a"
MODEL = "bench-model"
QUESTION = "What is grace?"
USER_PREFIX = "bench-streams"
TARGET_STREAMS = 10_000
TARGET_BYTES = 200 * 1000 * 1000  # "200 MB"
TARGET_ADDED_MS = 1.0
# Streams opened at once: each runs a retrieval on the server's blocking threads, whose count (and
# transient memory) grows with the requests waiting at once.
OPENING_AT_ONCE = 8
# Open files a server holds beside its streams' sockets (listener, log, epoll, corpus files…),
# added to those counted after the warm-up; and the client's and the backend's own.
FD_MARGIN = 128
BURST = re.compile(rb"~(\d+)")
STAMP = re.compile(rb"@(\d+)")
STATE = re.compile(rb'"state":"([a-z-]+)"')
CORPUS = {
    "id": "cat:bench-grace", "title": "A Short Catechism of Grace", "type": "catechism",
    "language": "en",
    "sections": [
        {"locus": "1", "heading": "Grace",
         "text": "Grace is a supernatural gift of God bestowed on us through the merits of "
                 "Jesus Christ for our salvation."},
        {"locus": "2", "heading": "Actual grace",
         "text": "Actual grace is that help of God which enlightens our mind and moves our will "
                 "to shun evil and do good."},
    ],
}

log = harness.log


# ---- pure logic: percentiles, rates, the HTTP and event-stream framing ---------------------------

def percentile(values, q):
    """The nearest-rank percentile: the smallest value with at least q % of the values at or
    below it (q in 0..100)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def rate(count, first_ns, last_ns):
    """Items per second between the first and the last arrival (count − 1 intervals); None when
    they all arrived at once."""
    if count < 2 or last_ns <= first_ns:
        return None
    return (count - 1) / ((last_ns - first_ns) / 1e9)


def ratios(ours, floors):
    """Per round, ours over the floor of the same round."""
    return [mine / floor if floor else 0.0 for mine, floor in zip(ours, floors)]


def differences(ours, floors):
    """Per round, ours minus the floor of the same round."""
    return [mine - floor for mine, floor in zip(ours, floors)]


def plan_streams(streams, per_user, server_files, server_base_files, margin=FD_MARGIN):
    """How many of `streams` get their own task (two server sockets: the client's and the
    backend's) and how many join a working task (one socket), within the server's open-files
    limit; and the users they are spread over. Raises when even that does not fit."""
    own = min(streams, server_files - server_base_files - margin - streams)
    joined = streams - own
    if own < 1 or joined > own:
        raise ValueError(
            f"{streams:,} streams do not fit in the server's open-files limit of {server_files:,} "
            f"({server_base_files:,} already open): lower BENCH_STREAMS or raise the limit")
    return {"own": own, "joined": joined, "users": math.ceil(own / per_user)}


class Chunked:
    """An HTTP/1.1 chunked body, decoded from pieces split anywhere."""

    def __init__(self):
        self.buffer = b""
        self.left = 0  # bytes of the current chunk still to come
        self.crlf = False  # the CRLF after a chunk's data is due
        self.done = False

    def feed(self, data):
        """The body bytes these pieces complete."""
        self.buffer += data
        out = []
        while not self.done:
            if self.left:
                taken = self.buffer[:self.left]
                out.append(taken)
                self.buffer = self.buffer[len(taken):]
                self.left -= len(taken)
                if self.left:
                    break
                self.crlf = True
            if self.crlf:
                if len(self.buffer) < 2:
                    break
                if self.buffer[:2] != b"\r\n":
                    raise ValueError("a chunk does not end with CRLF")
                self.buffer = self.buffer[2:]
                self.crlf = False
            end = self.buffer.find(b"\r\n")
            if end < 0:
                break
            size = int(self.buffer[:end].split(b";")[0], 16)
            self.buffer = self.buffer[end + 2:]
            if size == 0:
                self.done = True
            self.left = size
        return b"".join(out)


class Events:
    """Server-Sent Events split from bytes given in any pieces: each block up to a blank line
    (both our server and the backend end lines with LF)."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data):
        """The data of each event these bytes complete; comments (keep-alives) are left out."""
        self.buffer += data
        *blocks, self.buffer = self.buffer.split(b"\n\n")
        events = []
        for block in blocks:
            lines = [line[5:].lstrip(b" ") for line in block.split(b"\n")
                     if line.startswith(b"data:")]
            if lines:
                events.append(b"\n".join(lines))
        return events


def timed_events(reads, chunked):
    """(arrival, data) of every event of a response body read as (monotonic ns, bytes) pieces:
    an event arrives with the piece that completes it."""
    body = Chunked() if chunked else None
    splitter = Events()
    events = []
    for arrival, data in reads:
        if body is not None:
            data = body.feed(data)
        events.extend((arrival, event) for event in splitter.feed(data))
    return events


def marked(events, pattern):
    """(number, arrival) of every mark (`~index` or `@stamp`) in the events, in order, and how
    many events carried at least one."""
    found, carrying = [], 0
    for arrival, event in events:
        numbers = pattern.findall(event)
        if numbers:
            carrying += 1
            found.extend((int(number), arrival) for number in numbers)
    return found, carrying


def response_head(head):
    """The status and the lower-cased headers of a response head."""
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    return status, headers


def post_request(port, path, body, token=None):
    """The bytes of a POST asking for an event stream, the connection closed after it."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
            f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


def stream_body(message_id):
    return json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "message/stream",
        "params": {"message": {"kind": "message", "messageId": message_id, "role": "user",
                               "parts": [{"kind": "text", "text": QUESTION}],
                               "metadata": {"skillId": "catholic_qa"}}}},
        separators=(",", ":")).encode()


def resubscribe_body(task_id):
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/resubscribe",
                       "params": {"id": task_id}}, separators=(",", ":")).encode()


def direct_body():
    return json.dumps({"model": MODEL, "stream": True,
                       "messages": [{"role": "user", "content": QUESTION}]},
                      separators=(",", ":")).encode()


# ---- tokens, processes, memory -------------------------------------------------------------------

def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Tokens:
    """The server's own HS256 dev token for one user, and the same claims signed for others."""

    def __init__(self, binary, workdir):
        token = harness.hs256_token(binary, f"{USER_PREFIX}-0", "enterprise", workdir)
        head, claims, _ = token.split(".")
        self.head = head
        self.claims = json.loads(unb64url(claims))
        self.cache = {0: token}

    def user(self, number):
        if number not in self.cache:
            claims = dict(self.claims, sub=f"{USER_PREFIX}-{number}")
            signing = f"{self.head}.{b64url(json.dumps(claims).encode())}"
            signature = hmac.new(harness.HS256_SECRET.encode(), signing.encode(),
                                 hashlib.sha256).digest()
            self.cache[number] = f"{signing}.{b64url(signature)}"
        return self.cache[number]


def open_files_limit(pid="self"):
    """The soft limit on open files of a process."""
    with open(f"/proc/{pid}/limits") as limits:
        found = re.search(r"^Max open files\s+(\d+)", limits.read(), re.M)
    return int(found.group(1))


def open_files(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def status_number(pid, field):
    """A number of /proc/PID/status (kB for the memory fields)."""
    with open(f"/proc/{pid}/status") as status:
        found = re.search(rf"^{field}:\s+(\d+)", status.read(), re.M)
    return int(found.group(1)) if found else 0


def rss(pid):
    return status_number(pid, "VmRSS") * 1024


def settle(pid, seconds=20.0, step=1.0):
    """Waits until the resident memory stops moving (less than 256 KiB in a step, at most
    `seconds`), then reads it."""
    time.sleep(step)
    previous = rss(pid)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(step)
        current = rss(pid)
        if abs(current - previous) < 256 * 1024:
            return current
        previous = current
    return rss(pid)


def mib(value):
    return f"{value / 1048576:,.1f}"


class Stack:
    """The backend and one server, started and stopped together by process id."""

    def __init__(self, args, workdir, name, streams):
        self.args = args
        self.processes = harness.Processes(workdir)
        self.backend_port = harness.free_port()
        self.backend = self.processes.start(
            f"backend-{name}", [sys.executable, BACKEND, str(self.backend_port)],
            self.backend_port)
        data = os.path.join(workdir, name)
        os.makedirs(data, exist_ok=True)
        self.port = harness.free_port()
        env = harness.our_env(self.port, "memory", "hs256", None, None, data)
        events = max(10_000, args.deltas + args.paced_deltas + 100)
        env.update({
            "A2A__LLM__BASE_URL": f"http://127.0.0.1:{self.backend_port}/v1",
            "A2A__LLM__MODEL": MODEL,
            "A2A__LLM__TIMEOUT_SECS": "3600",
            "A2A__LLM__MAX_RETRIES": "0",
            "A2A__SERVER__REQUEST_TIMEOUT_SECS": "3600",
            "A2A__SERVER__MAX_CONNECTIONS": str(streams + 2 * FD_MARGIN),
            "A2A__LIMITS__ENTERPRISE__EXPENSIVE_PER_MINUTE": "100000000",
            "A2A__TASKS__MAX_RUNNING_PER_USER": str(args.per_user),
            "A2A__TASKS__MAX_STREAMS_PER_USER": str(2 * args.per_user),
            "A2A__TASKS__MAX_EVENTS_PER_TASK": str(events),
            "A2A__TASKS__MAX_EVENT_BYTES_PER_TASK": str(max(4 << 20, events * 1024)),
            "A2A__STORE__MAX_TASK_BYTES": str(max(1 << 20, events * 64)),
        })
        corpus = os.path.join(data, "corpus.jsonl")
        with open(corpus, "w") as out:
            out.write(json.dumps(CORPUS) + "\n")
        subprocess.run([args.server, "corpus", "import", corpus], env=env, cwd=ROOT, check=True,
                       capture_output=True)
        self.server = self.processes.start(f"server-{name}", [args.server, "serve"], self.port,
                                           env=env, cwd=ROOT)
        self.pid = self.server.pid
        self.pids = (self.pid, self.backend.pid)

    def control(self, **order):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.backend_port}/control", data=json.dumps(order).encode(),
            method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def check(self):
        code = self.server.poll()
        if code is not None:
            raise RuntimeError(f"the server exited with {code}; see its log in the work folder")

    def stop(self):
        self.processes.stop_all()


# ---- one stream, read whole ----------------------------------------------------------------------

def read_whole(port, path, body, token=None, timeout=120):
    """Sends the request and reads the whole answer: (status, headers, sent ns, [(arrival ns,
    bytes)]), the pieces kept as read so that no parsing slows the reading."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sent = time.monotonic_ns()
        sock.sendall(post_request(port, path, body, token))
        reads = []
        head = b""
        while b"\r\n\r\n" not in head:
            data = sock.recv(65536)
            if not data:
                raise RuntimeError(f"{path}: connection closed before the answer's head")
            head += data
        head, _, rest = head.partition(b"\r\n\r\n")
        status, headers = response_head(head)
        if rest:
            reads.append((time.monotonic_ns(), rest))
        recv = sock.recv
        now = time.monotonic_ns
        while True:
            data = recv(262144)
            if not data:
                break
            reads.append((now(), data))
    return status, headers, sent, reads


def one_stream(stack, target, token):
    """Events of one whole stream: ours (`message/stream` through the server) or the floor (the
    backend read directly)."""
    if target == "ours":
        status, headers, sent, reads = read_whole(
            stack.port, RPC_PATH, stream_body(f"bench-{uuid.uuid4()}"), token)
    else:
        status, headers, sent, reads = read_whole(stack.backend_port, "/v1/chat/completions",
                                                  direct_body())
    if status != 200 or not headers.get("content-type", "").startswith("text/event-stream"):
        raise RuntimeError(f"{target}: answered {status} {headers}: "
                           f"{b''.join(d for _, d in reads)[:300]!r}")
    events = timed_events(reads, headers.get("transfer-encoding") == "chunked")
    if target == "ours":
        last = events[-1][1] if events else b""
        if b'"final":true' not in last or b'"state":"completed"' not in last:
            raise RuntimeError(f"ours: the stream did not end completed: {last[:300]!r}")
        if not any(b'"citations":[{' in event for _, event in events):
            raise RuntimeError("ours: the answer's data part cites no passage")
        # The data part repeats the whole answer: only the text chunks are the stream's deltas.
        events = [(arrival, event) for arrival, event in events if b'"kind":"data"' not in event]
    elif not events or events[-1][1] != b"[DONE]":
        raise RuntimeError("floor: the backend's stream did not end with [DONE]")
    return sent, events


def throughput(stack, target, token, deltas, watch):
    stack.control(mode="burst", deltas=deltas)
    watched = watch.start()
    sent, events = one_stream(stack, target, token)
    load, disturbance = watch.stop(watched)
    found, carrying = marked(events, BURST)
    if [number for number, _ in found] != list(range(deltas)):
        raise RuntimeError(f"{target}: {len(found):,} of {deltas:,} deltas arrived in order")
    first, last = found[0][1], found[-1][1]
    return {"deltas": deltas, "events": carrying, "deltas_per_s": rate(deltas, first, last),
            "events_per_s": rate(carrying, first, last), "first_ms": (first - sent) / 1e6,
            "whole_ms": (last - sent) / 1e6, "load": load, "disturbance": disturbance}


def latency(stack, target, token, deltas, interval_ms, watch):
    stack.control(mode="paced", deltas=deltas, interval_ms=interval_ms)
    watched = watch.start()
    _, events = one_stream(stack, target, token)
    load, disturbance = watch.stop(watched)
    found, carrying = marked(events, STAMP)
    stamps = [number for number, _ in found]
    if len(found) != deltas or stamps != sorted(stamps):
        raise RuntimeError(f"{target}: {len(found):,} of {deltas:,} stamped deltas arrived")
    micros = [(arrival - stamp) / 1000 for stamp, arrival in found]
    return {"deltas": deltas, "events": carrying, "p50_us": percentile(micros, 50),
            "p99_us": percentile(micros, 99), "max_us": max(micros), "load": load,
            "disturbance": disturbance}


# ---- idle streams --------------------------------------------------------------------------------

class IdleStream:
    """One stream held open by the client: opened, read until its task is `working`, then read
    in the background (keep-alives) until its final event."""

    def __init__(self, port, token, body):
        self.port, self.token, self.body = port, token, body
        self.task_id = None
        self.final = None
        self.reader = self.writer = None
        self.chunked, self.events = None, Events()
        self.working = False
        self.reading = None  # the background read, once open

    def see(self, data):
        if self.chunked is not None:
            data = self.chunked.feed(data)
        for event in self.events.feed(data):
            if self.task_id is None:
                answer = json.loads(event)
                if "error" in answer:
                    raise RuntimeError(f"a stream was answered with an error: {event[:300]!r}")
                result = answer.get("result") or {}
                self.task_id = result.get("id") if result.get("kind") == "task" \
                    else result.get("taskId")
            if b'"state":"working"' in event:
                self.working = True
            if b'"final":true' in event:
                found = STATE.search(event)
                self.final = found.group(1).decode() if found else "?"

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(post_request(self.port, RPC_PATH, self.body, self.token))
        head = await self.reader.readuntil(b"\r\n\r\n")
        status, headers = response_head(head[:-4])
        if status != 200:
            raise RuntimeError(f"a stream was answered {status}: "
                               f"{(await self.reader.read(300))!r}")
        if headers.get("transfer-encoding") == "chunked":
            self.chunked = Chunked()
        while not self.working:
            data = await self.reader.read(65536)
            if not data:
                raise RuntimeError("a stream ended before its task was working")
            self.see(data)

    async def rest(self):
        try:
            while self.final is None:
                data = await self.reader.read(65536)
                if not data:
                    break
                self.see(data)
        finally:
            self.writer.close()
        return self.final


async def open_all(port, requests):
    """Opens a stream for each (token, body), `OPENING_AT_ONCE` at a time; each one's reading
    goes on in the background."""
    gate = asyncio.Semaphore(OPENING_AT_ONCE)

    async def one(token, body):
        async with gate:
            stream = IdleStream(port, token, body)
            await asyncio.wait_for(stream.open(), 120)
            stream.reading = asyncio.ensure_future(stream.rest())
            return stream

    return await asyncio.gather(*(one(token, body) for token, body in requests))


async def wait_held(stack, count, seconds=120):
    """Waits until the backend holds `count` paused requests."""
    deadline = time.monotonic() + seconds
    while True:
        held = (await asyncio.to_thread(stack.control))["held"]
        if held >= count or time.monotonic() > deadline:
            return held
        await asyncio.sleep(0.2)


async def release_all(stack, streams, seconds=300):
    """Releases the paused requests; the final state of every stream (None when it did not
    end in time)."""
    await asyncio.to_thread(stack.control, release=True)
    readings = [stream.reading for stream in streams]
    done, pending = await asyncio.wait(readings, timeout=seconds)
    for reading in pending:
        reading.cancel()
    return [stream.final for stream in streams]


def read_back(port, streams):
    """`tasks/get` of every stream's task over one keep-alive connection; each must be
    `working`. Besides checking the tasks, this is traffic on the server's threads after the
    opening burst: the allocator takes back the memory of the threads that ran the retrievals
    only when other threads allocate again, and until then the burst's memory would be counted
    as the idle streams'."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for stream in streams:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                               "params": {"id": stream.task_id}})
            connection.request("POST", RPC_PATH, body, {
                "Authorization": f"Bearer {stream.token}", "Content-Type": "application/json"})
            answer = json.loads(connection.getresponse().read())
            state = ((answer.get("result") or {}).get("status") or {}).get("state")
            if state != "working":
                raise RuntimeError(f"task {stream.task_id} of an idle stream is {state}: "
                                   f"{str(answer)[:300]}")
    finally:
        connection.close()


async def idle_round(stack, tokens, args, watch):
    """Holds the streams open on one fresh server: resident memory before, with the own-task
    streams, and with every stream."""
    pid = stack.pid
    stack.control(mode="pause", deltas=3)
    # Warm-up: one user's tasks paused and released, so that the first-use allocations of the
    # path (connection pools, caches, the allocator's arenas) are in the reading before.
    warm = await open_all(stack.port, [(tokens.user(0), stream_body(f"warm-{uuid.uuid4()}"))
                                       for _ in range(args.per_user)])
    await wait_held(stack, len(warm))
    await asyncio.to_thread(read_back, stack.port, warm)
    if any(state != "completed" for state in await release_all(stack, warm)):
        raise RuntimeError("a warm-up stream did not end completed")
    base_files = open_files(pid)
    plan = plan_streams(args.streams, args.per_user, open_files_limit(pid), base_files)
    log(f"  {args.streams:,} streams: {plan['own']:,} with their own task over {plan['users']:,} "
        f"users, {plan['joined']:,} joining a working task (server open-files limit "
        f"{open_files_limit(pid):,}, {base_files} open)")
    watched = watch.start()
    before = await asyncio.to_thread(settle, pid)
    started = time.monotonic()
    own = await open_all(stack.port, [
        (tokens.user(1 + index // args.per_user), stream_body(f"idle-{uuid.uuid4()}"))
        for index in range(plan["own"])])
    held = await wait_held(stack, plan["own"])
    if held != plan["own"]:
        raise RuntimeError(f"the backend holds {held:,} of {plan['own']:,} requests")
    opened_s = time.monotonic() - started
    await asyncio.to_thread(read_back, stack.port, own)
    middle = await asyncio.to_thread(settle, pid) if plan["joined"] else None
    joined = await open_all(stack.port, [
        (stream.token, resubscribe_body(stream.task_id)) for stream in own[:plan["joined"]]])
    if joined:
        await asyncio.to_thread(read_back, stack.port, own)
    after = await asyncio.to_thread(settle, pid)
    files = open_files(pid)
    anon = status_number(pid, "RssAnon") * 1024
    threads = status_number(pid, "Threads")
    load, disturbance = watch.stop(watched)
    log(f"  RSS {mib(before)} → {mib(after)} MiB with {args.streams:,} streams open "
        f"({(after - before) / args.streams:,.0f} bytes each); server open files {files:,}")
    states = await release_all(stack, own + joined)
    stack.check()
    completed = sum(state == "completed" for state in states)
    result = {"streams": args.streams, **plan, "rss_before": before, "rss_middle": middle,
              "rss_after": after, "rss_anon_after": anon, "files_before": base_files,
              "files_after": files, "threads": threads, "opened_s": opened_s, "completed": completed,
              "per_stream": (after - before) / args.streams,
              "per_own": ((middle if middle is not None else after) - before) / plan["own"],
              "per_joined": (after - middle) / plan["joined"] if plan["joined"] else None,
              "load": load, "disturbance": disturbance}
    if completed != len(states):
        raise RuntimeError(f"{len(states) - completed:,} of {len(states):,} streams did not end "
                           f"completed after the release: {sorted(set(map(str, states)))}")
    return result


# ---- the report ----------------------------------------------------------------------------------

def conditions(results):
    """The load average before each round (low–high) and the most CPU one other process used
    during a round."""
    loads = [result["load"] for result in results]
    worst = [result["disturbance"].worst for result in results if result["disturbance"].worst]
    top = max(worst, key=lambda usage: usage.share) if worst else None
    return stats.span(loads), (f"{top.share * 100:.0f} % ({top.comm})" if top else "0 %")


def figure(values, fmt):
    values = [value for value in values if value is not None]
    return stats.with_spread(values, fmt) if values else "—"


def thousands(value):
    return f"{value:,.0f}"


def millis(value):
    return f"{value / 1000:.3f}"


def targets(rounds, load_at_start):
    """(name, goal, measured, load at start, verdict) of the two goals: added latency (p50 and
    p99) and the memory of 10,000 idle streams."""
    rows = []
    ours, floor = rounds.get("latency_ours"), rounds.get("latency_floor")
    if ours and floor:
        used = [r["disturbance"] for r in ours + floor]
        reasons = quiet.busy_reasons(load_at_start, used)
        for name in ("p50", "p99"):
            added = differences([r[f"{name}_us"] for r in ours], [r[f"{name}_us"] for r in floor])
            value = stats.median(added) / 1000
            rows.append((f"added latency, backend delta → client event, {name}",
                         f"< {TARGET_ADDED_MS:g} ms", figure(added, lambda v: f"{v / 1000:.3f} ms"),
                         quiet.verdict(reasons, value, TARGET_ADDED_MS, higher_is_better=False)))
    idle = rounds.get("idle")
    if idle:
        reasons = quiet.busy_reasons(load_at_start, [r["disturbance"] for r in idle])
        projected = [r["per_own"] * TARGET_STREAMS for r in idle]
        rows.append((f"{TARGET_STREAMS:,} idle streams, each on its own working task "
                     "(bytes per own-task stream × 10,000)",
                     f"< {TARGET_BYTES / 1e6:.0f} MB",
                     figure(projected, lambda v: f"{v / 1e6:,.1f} MB"),
                     quiet.verdict(reasons, stats.median(projected), TARGET_BYTES,
                                   higher_is_better=False)))
    return rows


def markdown(rounds, info, settings, started, finished):
    everything = [result for results in rounds.values() for result in results]
    load_at_start = info["load_1min"]
    reasons = quiet.busy_reasons(load_at_start, [r["disturbance"] for r in everything])
    disturbed = [r for r in everything if r["disturbance"].busy()]
    lines = [
        "# Streaming benchmark results",
        "",
        f"Run {started} → {finished} UTC, `bench/streams`: {settings['rounds']} alternating "
        f"rounds (ours, then the floor), loopback. Our path: `message/stream` (0.3) to "
        "`catholic_qa`, answered by the loopback backend `bench/streams_backend.py` through the "
        "release server (memory store, HS256); the floor: the same client reading the backend's "
        "own stream.",
        "",
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory_gib']} GiB, Linux "
        f"{info['kernel']}; load average at start {info['load_at_start']}. Client, backend and "
        f"server share the CPUs. Open-files limit of every process: {settings['files']:,}.",
        "",
        ("**Quiet machine: yes.** " if not reasons else "**Quiet machine: no**, no goal can be "
         f"called met: {'; '.join(reasons)}. ")
        + f"Load average at start {load_at_start:.2f} (limit {quiet.MAX_LOAD}); "
        f"{len(disturbed)} of {len(everything)} measurements had another process above "
        f"{quiet.MAX_SHARE * 100:.0f} % of a CPU.",
        "",
        "Every figure is the median of the rounds with the run-to-run spread, (max − min) / "
        "median, in parentheses; `load`: the 1-minute load average before each round's "
        "measurement (low–high); `others`: the most CPU one other process used in one round.",
        "",
    ]
    ours, floor = rounds.get("throughput_ours"), rounds.get("throughput_floor")
    if ours and floor:
        rate_ratios = ratios([r["deltas_per_s"] for r in ours], [r["deltas_per_s"] for r in floor])
        lines += [
            f"## Events per second through one stream ({settings['deltas']:,} deltas, as fast "
            "as the backend writes them)",
            "",
            "Deltas per second from the arrival of the first delta to that of the last; events "
            "per second counts the events that carried deltas (the server joins the deltas "
            "waiting when its reader is behind, so an event may carry several). First delta: "
            "milliseconds from the request to its arrival (retrieval, the task, the backend's "
            "first byte).",
            "",
            "| path | deltas/s | events/s | deltas per event | first delta ms | whole answer ms "
            "| load | others |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for label, results in (("ours: `message/stream` through the server", ours),
                               ("floor: the backend's stream read directly", floor)):
            load, others = conditions(results)
            lines.append(
                f"| {label} | {figure([r['deltas_per_s'] for r in results], thousands)} "
                f"| {figure([r['events_per_s'] for r in results], thousands)} "
                f"| {figure([r['deltas'] / r['events'] for r in results], lambda v: f'{v:.2f}')} "
                f"| {figure([r['first_ms'] for r in results], lambda v: f'{v:.2f}')} "
                f"| {figure([r['whole_ms'] for r in results], lambda v: f'{v:.1f}')} "
                f"| {load} | {others} |")
        lines += ["", f"Ours / floor, deltas per second: "
                  f"{stats.median(rate_ratios) * 100:.0f} % ({stats.spread(rate_ratios) * 100:.0f} "
                  "% spread of the per-round ratios).", ""]
    ours, floor = rounds.get("latency_ours"), rounds.get("latency_floor")
    if ours and floor:
        lines += [
            f"## Backend delta → client event ({settings['paced_deltas']:,} deltas, one every "
            f"{settings['interval_ms']:g} ms)",
            "",
            "Each delta carries `time.monotonic_ns()` read by the backend as it writes it; the "
            "client reads the same clock (CLOCK_MONOTONIC) when the event arrives. Milliseconds; "
            "added = ours − floor in the same round, then the median of the rounds.",
            "",
            "| path | p50 ms | p99 ms | max ms | load | others |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for label, results in (("ours: through the server", ours),
                               ("floor: the backend read directly", floor)):
            load, others = conditions(results)
            lines.append(f"| {label} | {figure([r['p50_us'] for r in results], millis)} "
                         f"| {figure([r['p99_us'] for r in results], millis)} "
                         f"| {figure([r['max_us'] for r in results], millis)} | {load} "
                         f"| {others} |")
        for name in ("p50", "p99"):
            added = differences([r[f"{name}_us"] for r in ours], [r[f"{name}_us"] for r in floor])
            lines.append(f"| **added, {name}** | {figure(added, millis)} | | | | |"
                         if name == "p50" else
                         f"| **added, {name}** | | {figure(added, millis)} | | | |")
        lines.append("")
    idle = rounds.get("idle")
    if idle:
        first = idle[0]
        load, others = conditions(idle)
        lines += [
            f"## Idle open streams ({first['streams']:,} per round, a fresh server each round)",
            "",
            f"{first['own']:,} streams with their own working task (`message/stream`, over "
            f"{first['users']:,} users, {settings['per_user']} each; the task's request to the "
            f"backend is paused: the answer's head, then nothing) and {first['joined']:,} "
            "joining one of those tasks (`tasks/resubscribe`), as many own-task streams as the "
            "server's open-files limit allows (two sockets each). `VmRSS` of the server once "
            "steady, after a warm-up cycle; the streams receive keep-alive comments meanwhile. "
            "Then the paused requests are released and every stream ended `completed`.",
            "",
            "| figure | value |",
            "|---|---:|",
            f"| RSS before | {figure([r['rss_before'] for r in idle], mib)} MiB |",
        ]
        if first["joined"]:
            lines.append(f"| RSS with the own-task streams | "
                         f"{figure([r['rss_middle'] for r in idle], mib)} MiB |")
        lines += [
            f"| RSS with every stream | {figure([r['rss_after'] for r in idle], mib)} MiB |",
            f"| growth | {figure([r['rss_after'] - r['rss_before'] for r in idle], mib)} MiB |",
            f"| **bytes per stream** (growth / streams) | "
            f"**{figure([r['per_stream'] for r in idle], thousands)}** |",
            f"| bytes per own-task stream (its connection, subscription, task, backend "
            f"request) | {figure([r['per_own'] for r in idle], thousands)} |",
        ]
        if first["joined"]:
            lines.append(f"| bytes per joining stream (its connection and subscription) | "
                         f"{figure([r['per_joined'] for r in idle], thousands)} |")
        lines += [
            f"| server open files before → with every stream | "
            f"{figure([r['files_before'] for r in idle], thousands)} → "
            f"{figure([r['files_after'] for r in idle], thousands)} |",
            f"| server threads with every stream | "
            f"{figure([r['threads'] for r in idle], thousands)} |",
            f"| seconds to open the own-task streams | "
            f"{figure([r['opened_s'] for r in idle], lambda v: f'{v:.1f}')} |",
            f"| streams ended `completed` after the release | "
            f"{figure([r['completed'] for r in idle], thousands)} |",
            f"| load, others | {load}; {others} |",
            "",
        ]
    lines += ["## Goals", "", "| goal | target | measured (spread) | load at start | |",
              "|---|---|---:|---:|---|"]
    lines += [f"| {name} | {goal} | {value} | {load_at_start:.2f} | {state} |"
              for name, goal, value, state in targets(rounds, load_at_start)]
    return "\n".join(lines) + "\n"


# ---- the run -------------------------------------------------------------------------------------

def raise_open_files():
    """The soft open-files limit raised to the hard one (the processes started inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rounds_argument(text):
    value = int(text)
    if value < stats.MIN_ROUNDS:
        raise argparse.ArgumentTypeError(f"at least {stats.MIN_ROUNDS} rounds (got {value})")
    return value


def measure_stream(args, workdir, watch, rounds):
    stack = Stack(args, workdir, "stream", 64)
    try:
        token = Tokens(args.server, os.path.join(workdir, "stream")).user(0)
        # The path works end to end: a streamed answer stored with its citation.
        stack.control(mode="burst", deltas=20)
        one_stream(stack, "ours", token)
        throughput(stack, "floor", token, args.deltas, watch)  # warm-up
        throughput(stack, "ours", token, args.deltas, watch)
        for number in range(1, args.rounds + 1):
            log(f"streams: round {number} of {args.rounds}")
            for target in ("ours", "floor"):
                result = throughput(stack, target, token, args.deltas, watch)
                rounds.setdefault(f"throughput_{target}", []).append(result)
                log(f"  throughput, {target}: {result['deltas_per_s']:,.0f} deltas/s in "
                    f"{result['events']:,} events, load {result['load']:.2f}")
            for target in ("ours", "floor"):
                result = latency(stack, target, token, args.paced_deltas, args.interval_ms, watch)
                rounds.setdefault(f"latency_{target}", []).append(result)
                log(f"  latency, {target}: p50 {result['p50_us'] / 1000:.3f} ms, "
                    f"p99 {result['p99_us'] / 1000:.3f} ms, load {result['load']:.2f}")
            stack.check()
    finally:
        stack.stop()


def measure_idle(args, workdir, watch, rounds):
    for number in range(1, args.idle_rounds + 1):
        log(f"streams: idle round {number} of {args.idle_rounds}")
        stack = Stack(args, workdir, f"idle{number}", args.streams)
        try:
            tokens = Tokens(args.server, os.path.join(workdir, f"idle{number}"))
            rounds.setdefault("idle", []).append(
                asyncio.run(idle_round(stack, tokens, args, watch)))
        finally:
            stack.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True, help="the release magisterium-a2a binary")
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--paced-deltas", type=int, default=300)
    parser.add_argument("--interval-ms", type=float, default=10.0)
    parser.add_argument("--streams", type=int, default=TARGET_STREAMS)
    parser.add_argument("--per-user", type=int, default=16)
    parser.add_argument("--rounds", type=rounds_argument, default=stats.MIN_ROUNDS)
    parser.add_argument("--idle-rounds", type=rounds_argument, default=stats.MIN_ROUNDS)
    parser.add_argument("--settle", type=float, default=0)
    parser.add_argument("--out", required=True, help="the Markdown report to write")
    args = parser.parse_args()

    files = raise_open_files()
    if files < args.streams + FD_MARGIN:
        raise SystemExit(f"streams: the open-files limit ({files:,}) is below the "
                         f"{args.streams:,} streams the client holds")
    load_at_start = quiet.settle(seconds=args.settle, log=log)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    info = harness.machine()
    info["load_1min"] = load_at_start
    workdir = tempfile.mkdtemp(prefix="a2a-streams-")
    log(f"streams: working in {workdir}; load average {load_at_start:.2f}; open-files limit "
        f"{files:,}")
    watch = quiet.Watch()
    rounds = {}
    measure_stream(args, workdir, watch, rounds)
    if args.streams > 0:
        measure_idle(args, workdir, watch, rounds)
    finished = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M")
    settings = {"rounds": args.rounds, "deltas": args.deltas, "paced_deltas": args.paced_deltas,
                "interval_ms": args.interval_ms, "per_user": args.per_user, "files": files}
    text = markdown(rounds, info, settings, started, finished)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as out:
        out.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as out:
        json.dump({"machine": info, "settings": settings, "rounds": rounds}, out, indent=1,
                  default=harness.encode)
    shutil.rmtree(workdir, ignore_errors=True)
    print(text)


if __name__ == "__main__":
    main()

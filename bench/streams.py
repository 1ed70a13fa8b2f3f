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
3. Idle streams: `--streams` streams held open on working tasks whose backend request is paused (the
   answer's head is sent, then nothing), then `--joining` streams that join those tasks with
   `tasks/resubscribe` (one per task), on a fresh server per measurement; the server's resident
   memory (VmRSS) is read before, with the own-task streams, with the first half of the joining
   streams and with every stream, once steady: bytes per own-task stream, and bytes per joining
   stream read on the second half (the first half's traffic lets the allocator take back what the
   opening burst freed, which a reading straight after it still holds). Each idle round measures three servers in
   turn (`IDLE_CONFIGS`): the backend reached over HTTP/1.1 (one connection per answer in flight),
   then over HTTP/2 (`A2A__LLM__HTTP2=true`: every answer on one shared connection), each with every
   stream on an HTTP/1.1 connection of its own to the server; then the client over HTTP/2 as well:
   the backend over HTTP/2 and every stream an HTTP/2 stream of the client's h2c connections to the
   server (prior knowledge, `STREAMS_PER_CONNECTION` streams each, each new stream on the next
   connection in turn: `Http2Client`). With the streams open the backend says how many connections
   of each protocol it holds, and with the backend over HTTP/2 every answer must be on HTTP/2. An
   own-task stream holds two of the server's sockets with an HTTP/1.1 client and backend (its own
   and its request's), one with the backend over HTTP/2, none of its own with the client over HTTP/2
   too (a share of one connection); a joining stream one, or a share: the own-task streams the
   server's open-files limit cannot hold join a task instead, and the report says how many. The
   streams are spread over users, `--per-user` own tasks each (the running-task and stream caps are
   set to fit). Before each reading every stream's task is read back with `tasks/get` (see
   `read_back`), and the server's thread count must be back to its count before the warm-up
   (`threads_back`: the blocking threads of the opening burst's retrievals exit after ten idle
   seconds; an idle stream holds none). The paused requests are then released and every stream must end `completed`. The
   backend and the client run on Pythons with the `h2` package (bench/streams runs both on
   bench/python-h2's).

Every measurement is watched (bench/quiet.py): a goal is never called met when the machine was
busy (that every stream ended `completed` is checked whatever the load). Run through
`bench/streams`, which builds the binary, installs `h2` for the client and the backend and
raises the open-files limit.
Everything it starts is stopped by its own process id at the end.
"""

import argparse
import asyncio
import base64
import collections
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

try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    import h2.settings
except ImportError:  # no HTTP/2 client: main() refuses to measure the idle streams
    h2 = None

ROOT = harness.ROOT
BACKEND = os.path.join(ROOT, "bench", "streams_backend.py")
RPC_PATH = "/api/v1/a2a"
MODEL = "bench-model"
QUESTION = "What is grace?"
USER_PREFIX = "bench-streams"
TARGET_STREAMS = 10_000
TARGET_BYTES = 200 * 1000 * 1000  # "200 MB"
CURRENT_TARGET_BYTES = 600 * 1000 * 1000  # "≤ 600 MB", the current goal
TARGET_ADDED_MS = 1.0
# Streams opened at once: each runs a retrieval on the server's blocking threads, whose count (and
# transient memory) grows with the requests waiting at once.
OPENING_AT_ONCE = 8
# Open files a server holds beside its streams' sockets (listener, log, epoll, corpus files, the
# shared HTTP/2 connection to the backend…), added to those counted after the warm-up; and the
# client's and the backend's own.
FD_MARGIN = 128
# Streams joining the warm-up's tasks, so that the first use of `tasks/resubscribe` is in the
# reading before too.
WARM_JOINING = 4
# The client over HTTP/2: idle streams per h2c connection to the server (hyper's HTTP/2 server
# takes 200 streams at once on one connection, its default, which the server keeps), and the
# client's flow-control windows, raised as the backend raises its own: every byte read is
# handed back at once.
STREAMS_PER_CONNECTION = 100
CLIENT_INITIAL_WINDOW = 1 << 20
CLIENT_CONNECTION_WINDOW = 16 << 20


# One idle measurement of a round: its results key, its column in the table, its name in the
# goals, the backend over HTTP/2 (A2A__LLM__HTTP2), the client over HTTP/2.
IdleConfig = collections.namedtuple("IdleConfig", "key column name http2 client_http2")
IDLE_CONFIGS = (
    IdleConfig("idle", "backend over HTTP/1.1", "HTTP/1.1 clients, backend over HTTP/1.1",
               False, False),
    IdleConfig("idle_h2", "backend over HTTP/2", "HTTP/1.1 clients, backend over HTTP/2",
               True, False),
    IdleConfig("idle_h2_clients", "client and backend over HTTP/2",
               "HTTP/2 clients, backend over HTTP/2", True, True),
)
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


def client_sockets(streams, client_http2=False, per_connection=STREAMS_PER_CONNECTION):
    """The server's sockets that `streams` client streams hold: one each over HTTP/1.1, one per
    `per_connection` streams over HTTP/2."""
    return math.ceil(streams / per_connection) if client_http2 else streams


def plan_streams(streams, joining, per_user, server_files, server_base_files, http2=False,
                 margin=FD_MARGIN, client_http2=False, per_connection=STREAMS_PER_CONNECTION):
    """How many of `streams` get their own task and how many join a working task, beside the
    `joining` streams that join one on purpose, within the server's open-files limit. The
    client's streams hold a socket each over HTTP/1.1, one per `per_connection` streams over
    HTTP/2 (`client_http2`); an own-task stream also holds its request's socket to the backend
    over HTTP/1.1 (with the backend over HTTP/2, `http2`, the requests share one connection, in
    the margin): with the client and the backend over HTTP/2 an own-task stream holds no socket
    of its own. The own-task streams beyond the limit join a task instead (`overflow`). And the
    users the own-task streams are spread over. Raises when even that does not fit, or when
    there would be more joining streams than tasks to join (one each)."""
    room = (server_files - server_base_files - margin
            - client_sockets(streams + joining, client_http2, per_connection))
    own = streams if http2 else min(streams, room)
    joined = streams + joining - own
    if own < 1 or room < 0 or joined > own:
        raise ValueError(
            f"{streams:,} streams and {joining:,} joining do not fit in the server's open-files "
            f"limit of {server_files:,} ({server_base_files:,} already open), one joining stream "
            "a task: lower BENCH_STREAMS or BENCH_JOINING, or raise the limit")
    return {"own": own, "joined": joined, "overflow": streams - own,
            "users": math.ceil(own / per_user)}


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


# Connections of `read_back`: enough for every serving thread of the server to get several.
READ_BACK_CONNECTIONS = 8


def threads_back(pid, threads, seconds=15.0, step=0.25):
    """Waits (at most `seconds`) until the server runs no more than `threads` threads: the
    blocking threads that ran the opening burst's retrievals exit once idle for ten seconds,
    and an idle stream holds none, so their stacks and allocator pages are not counted as the
    streams'. Returns whether the count came back."""
    deadline = time.monotonic() + seconds
    while status_number(pid, "Threads") > threads:
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True


def mib(value):
    return f"{value / 1048576:,.1f}"


class Stack:
    """The backend and one server, started and stopped together by process id. `streams`: the
    client connections the server must accept at once; `http2`: the server speaks HTTP/2 to the
    backend (`A2A__LLM__HTTP2=true`)."""

    def __init__(self, args, workdir, name, streams, http2=False):
        self.args = args
        self.http2 = http2
        self.processes = harness.Processes(workdir)
        self.backend_port = harness.free_port()
        self.backend = self.processes.start(
            f"backend-{name}", [args.backend_python, BACKEND, str(self.backend_port)],
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
        if http2:
            env["A2A__LLM__HTTP2"] = "true"
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
    in the background (keep-alives) until its final event. What both protocols share: the
    events read, the task they name, its final state."""

    def __init__(self, token, body):
        self.token, self.body = token, body
        self.task_id = None
        self.final = None
        self.events = Events()
        self.working = False
        self.reading = None  # the background read, once open

    def see(self, data):
        """Reads the body bytes (the event stream, de-chunked)."""
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


class Http1Stream(IdleStream):
    """An idle stream on an HTTP/1.1 connection of its own."""

    def __init__(self, port, token, body):
        super().__init__(token, body)
        self.port = port
        self.reader = self.writer = None
        self.chunked = None

    def see(self, data):
        if self.chunked is not None:
            data = self.chunked.feed(data)
        super().see(data)

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


def settled(future, result=None, error=None):
    """Gives the future its result (or error) unless it has one, or was cancelled."""
    if not future.done():
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


class Http2Stream(IdleStream):
    """An idle stream as an HTTP/2 stream of one of the client's connections, which reads it
    (`Http2Link.receive`): `opened` resolves once its task is `working` (or fails), `ended`
    once the stream ends, however it ends."""

    def __init__(self, link, token, body):
        super().__init__(token, body)
        self.link = link
        self.stream_id = None
        self.status = None
        self.refused = b""  # the body of an answer other than 200, for the error
        loop = asyncio.get_running_loop()
        self.opened, self.ended = loop.create_future(), loop.create_future()
        # Nobody awaits `opened` once open() gave up (a timeout): its error is not reported.
        self.opened.add_done_callback(lambda future: future.cancelled() or future.exception())

    def answered(self, headers):
        self.status = int(headers.get(":status", "0"))
        kind = headers.get("content-type", "")
        if self.status == 200 and not kind.startswith("text/event-stream"):
            self.fail(RuntimeError(f"a stream was answered {kind!r}, not an event stream"))

    def received(self, data):
        if self.status != 200:
            self.refused = (self.refused + data)[:300]
            return
        try:
            self.see(data)
        except (ValueError, RuntimeError) as error:
            self.fail(error)
            return
        if self.working:
            settled(self.opened)

    def fail(self, error):
        settled(self.opened, error=error)
        self.link.reset(self)

    def close(self, why):
        """The stream ended (`why`: how, when before its task was working)."""
        if self.status is not None and self.status != 200:
            why = f"a stream was answered {self.status}: {self.refused!r}"
        settled(self.opened, error=RuntimeError(why))
        settled(self.ended)

    async def open(self):
        self.link.request(self)
        await self.opened

    async def rest(self):
        await self.ended
        return self.final


class Http2Link:
    """One h2c connection of the client to the server (HTTP/2 with prior knowledge), its
    streams read by one task: every byte of data is handed back to the server's windows as
    it is read, and the server's pings answered (by h2, flushed after each read)."""

    def __init__(self, port, reader, writer):
        self.port, self.reader, self.writer = port, reader, writer
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8"))
        self.h2.local_settings = h2.settings.Settings(client=True, initial_values={
            h2.settings.SettingCodes.ENABLE_PUSH: 0,
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: CLIENT_INITIAL_WINDOW,
        })
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(CLIENT_CONNECTION_WINDOW - 65_535)
        self.flush()
        self.streams = {}  # stream id → Http2Stream, until it ends
        self.placed = 0  # streams given to this connection
        self.closed = False  # the server's GOAWAY, or the end of the connection
        self.reading = asyncio.ensure_future(self.read())

    def flush(self):
        data = self.h2.data_to_send()
        if data and not self.writer.is_closing():
            self.writer.write(data)

    def request(self, stream):
        if self.closed:
            raise RuntimeError("the server closed an HTTP/2 connection before a stream opened")
        stream.stream_id = self.h2.get_next_available_stream_id()
        self.streams[stream.stream_id] = stream
        self.h2.send_headers(stream.stream_id, [
            (":method", "POST"), (":scheme", "http"), (":authority", f"127.0.0.1:{self.port}"),
            (":path", RPC_PATH), ("authorization", f"Bearer {stream.token}"),
            ("content-type", "application/json"), ("accept", "text/event-stream"),
            ("content-length", str(len(stream.body)))])
        self.h2.send_data(stream.stream_id, stream.body, end_stream=True)
        self.flush()

    def reset(self, stream):
        if self.streams.pop(stream.stream_id, None) is not None:
            try:
                self.h2.reset_stream(stream.stream_id)
            except h2.exceptions.ProtocolError:
                pass
            self.flush()
            stream.close("a stream was reset by the client")

    async def read(self):
        why = "the server closed the connection"
        try:
            while True:
                data = await self.reader.read(65536)
                if not data:
                    break
                self.receive(data)
        except h2.exceptions.ProtocolError as error:
            why = f"HTTP/2 protocol error: {error!r}"
            self.flush()  # the GOAWAY h2 wrote
        except ConnectionError as error:
            why = f"the connection failed: {error!r}"
        finally:
            self.closed = True
            streams, self.streams = list(self.streams.values()), {}
            for stream in streams:
                stream.close(f"{why} before the stream's task was working")

    def receive(self, data):
        for event in self.h2.receive_data(data):
            stream = self.streams.get(getattr(event, "stream_id", None))
            if isinstance(event, h2.events.DataReceived):
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                if stream is not None:
                    stream.received(event.data)
            elif isinstance(event, h2.events.ResponseReceived):
                if stream is not None:
                    stream.answered(dict(event.headers))
            elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                if stream is not None:
                    del self.streams[event.stream_id]
                    stream.close("a stream ended before its task was working"
                                 if isinstance(event, h2.events.StreamEnded) else
                                 f"the server reset a stream ({event.error_code!r})")
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.closed = True
        self.flush()

    async def close(self):
        if not self.writer.is_closing():
            try:
                self.h2.close_connection()
                self.flush()
            except h2.exceptions.ProtocolError:
                pass
            self.writer.close()
        await asyncio.gather(self.reading, return_exceptions=True)


class Http2Client:
    """The client's h2c connections to the server, `connections` of them (by default as many as
    `streams` need at `per_connection` streams each), opened on first use: each new stream goes
    on the next one in turn. In turn rather than filling one connection after the other: the
    server serves each connection on one of its serving threads, handed out in turn, and runs
    a stream's task (and its retrieval, on that thread's blocking pool) there; consecutive
    streams on one connection would put every retrieval in flight on one thread's pool, which
    then grows threads (and keeps their memory, counted as the streams') that streams on
    HTTP/1.1 connections, spread over the threads, do not. `connect`: how to reach the server,
    a coroutine giving asyncio streams (a TCP connection to 127.0.0.1:port)."""

    def __init__(self, port, streams, per_connection=STREAMS_PER_CONNECTION, connections=None,
                 connect=None):
        self.port = port
        self.count = connections or max(1, math.ceil(streams / per_connection))
        self.connect = connect or (lambda: asyncio.open_connection("127.0.0.1", port))
        self.links = []
        self.next = 0  # the connection the next stream goes on
        self.opening = asyncio.Lock()

    async def stream(self, token, body):
        async with self.opening:
            index, self.next = self.next, (self.next + 1) % self.count
            if index == len(self.links) or self.links[index].closed:
                reader, writer = await self.connect()
                link = Http2Link(self.port, reader, writer)
                if index == len(self.links):
                    self.links.append(link)
                else:
                    self.links[index] = link
            link = self.links[index]
            link.placed += 1
        return Http2Stream(link, token, body)

    async def close(self):
        await asyncio.gather(*(link.close() for link in self.links))


async def open_all(port, requests, client=None):
    """Opens a stream for each (token, body), `OPENING_AT_ONCE` at a time, each on an HTTP/1.1
    connection of its own, or on the `Http2Client`'s connections; each one's reading goes on
    in the background."""
    gate = asyncio.Semaphore(OPENING_AT_ONCE)

    async def one(token, body):
        async with gate:
            stream = (await client.stream(token, body) if client is not None
                      else Http1Stream(port, token, body))
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


def read_back(port, streams, connections=READ_BACK_CONNECTIONS):
    """`tasks/get` of every stream's task, in turn over `connections` keep-alive connections;
    each must be `working`. Besides checking the tasks, this is traffic on every serving thread
    of the server (connections are spread over them) after the opening burst: the allocator
    takes back the memory a thread freed of another's only when that thread allocates again, and
    until then the burst's memory would be counted as the idle streams'."""
    links = [http.client.HTTPConnection("127.0.0.1", port, timeout=30)
             for _ in range(connections)]
    try:
        for index, stream in enumerate(streams):
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                               "params": {"id": stream.task_id}})
            link = links[index % len(links)]
            link.request("POST", RPC_PATH, body, {
                "Authorization": f"Bearer {stream.token}", "Content-Type": "application/json"})
            answer = json.loads(link.getresponse().read())
            state = ((answer.get("result") or {}).get("status") or {}).get("state")
            if state != "working":
                raise RuntimeError(f"task {stream.task_id} of an idle stream is {state}: "
                                   f"{str(answer)[:300]}")
    finally:
        for link in links:
            link.close()


def check_backend(stack, reply, own):
    """How the backend holds the own-task streams' answers (from its /control reply): every one
    on the protocol the server was started with; raises otherwise."""
    protocol = "http2" if stack.http2 else "http1"
    other = "http1" if stack.http2 else "http2"
    connections, answers = reply["connections"], reply["answers"]
    if answers[protocol] != own or answers[other] or connections[other] \
            or not connections[protocol]:
        raise RuntimeError(
            f"the backend holds {answers['http1']:,} answers on {connections['http1']:,} "
            f"HTTP/1.1 connections and {answers['http2']:,} on {connections['http2']:,} HTTP/2 "
            f"connections, not the {own:,} own-task streams' answers on "
            f"{'HTTP/2' if stack.http2 else 'HTTP/1.1'} alone")
    return {"connections": connections, "answers": answers}


def joining_halves(tasks):
    """The joining streams' tasks in two halves (the second the larger when odd; one batch
    when there is a single stream, none when there are none)."""
    half = len(tasks) // 2
    return [batch for batch in (tasks[:half], tasks[half:]) if batch]


def joined_measured(middle, readings):
    """(streams, reading before them) of the joining streams the figure is read on: the last
    batch of `readings` ((streams, RSS after them) per batch), measured from the reading before
    it (`middle` for a single batch)."""
    if not readings:
        return 0, middle
    before = readings[-2][1] if len(readings) > 1 else middle
    return readings[-1][0], before


async def idle_round(stack, tokens, args, watch, client_http2=False):
    """Holds the streams open on one fresh server: resident memory before, with the own-task
    streams, and with every stream. `client_http2`: the streams are HTTP/2 streams of the
    client's h2c connections (`Http2Client`), else each on an HTTP/1.1 connection of its own."""
    pid = stack.pid
    base_threads = status_number(pid, "Threads")
    stack.control(mode="pause", deltas=3)
    # Warm-up: one user's tasks paused and released, a few of them joined, so that the
    # first-use allocations of the path (connection pools, caches, the allocator's arenas) are
    # in the reading before; its connections are closed before it.
    # Over HTTP/2, the warm-up's streams are spread over as many connections as it has own
    # tasks, as over HTTP/1.1 (one connection each), so that every serving thread has served.
    client = (Http2Client(stack.port, args.per_user + WARM_JOINING, connections=args.per_user)
              if client_http2 else None)
    try:
        warm = await open_all(stack.port, [(tokens.user(0), stream_body(f"warm-{uuid.uuid4()}"))
                                           for _ in range(args.per_user)], client)
        await wait_held(stack, len(warm))
        warm += await open_all(stack.port, [(stream.token, resubscribe_body(stream.task_id))
                                            for stream in warm[:WARM_JOINING]], client)
        await asyncio.to_thread(read_back, stack.port, warm)
        if any(state != "completed" for state in await release_all(stack, warm)):
            raise RuntimeError("a warm-up stream did not end completed")
    finally:
        if client is not None:
            await client.close()
    base_files = open_files(pid)
    plan = plan_streams(args.streams, args.joining, args.per_user, open_files_limit(pid),
                        base_files, http2=stack.http2, client_http2=client_http2)
    log(f"  {'HTTP/2' if client_http2 else 'HTTP/1.1'} clients, backend over "
        f"{'HTTP/2' if stack.http2 else 'HTTP/1.1'}: {plan['own']:,} streams "
        f"with their own task over {plan['users']:,} users, {plan['joined']:,} joining a "
        f"working task ({plan['overflow']:,} of them beyond the server's open-files limit of "
        f"{open_files_limit(pid):,}, {base_files} open)")
    client = (Http2Client(stack.port, plan["own"] + plan["joined"]) if client_http2 else None)
    try:
        return await idle_streams(stack, tokens, args, watch, plan, base_files, client,
                                  base_threads)
    finally:
        if client is not None:
            await client.close()


async def idle_streams(stack, tokens, args, watch, plan, base_files, client, base_threads):
    """The measurement of `idle_round`, its streams opened on `client`'s connections (None:
    HTTP/1.1); each reading waits for the server's threads to come back to `base_threads`, its
    count before the warm-up."""
    pid = stack.pid
    watched = watch.start()

    async def reading():
        if not await asyncio.to_thread(threads_back, pid, base_threads):
            log(f"  the server still runs {status_number(pid, 'Threads')} threads, "
                f"{base_threads} before the warm-up")
        return await asyncio.to_thread(settle, pid)

    before = await reading()
    threads_before = status_number(pid, "Threads")
    started = time.monotonic()
    own = await open_all(stack.port, [
        (tokens.user(1 + index // args.per_user), stream_body(f"idle-{uuid.uuid4()}"))
        for index in range(plan["own"])], client)
    held = await wait_held(stack, plan["own"])
    if held != plan["own"]:
        raise RuntimeError(f"the backend holds {held:,} of {plan['own']:,} requests")
    opened_s = time.monotonic() - started
    backend = check_backend(stack, await asyncio.to_thread(stack.control), plan["own"])
    await asyncio.to_thread(read_back, stack.port, own)
    middle = await reading() if plan["joined"] else None
    # The joining streams open in two halves, a reading after each: the first half's traffic
    # is the first allocation on the serving threads since the opening burst, and lets the
    # allocator take back what that burst freed (the reading after it can fall below the one
    # before); the joining streams' bytes are read on the second half.
    joined, joined_s, readings = [], 0.0, []
    for batch in joining_halves(own[:plan["joined"]]):
        started = time.monotonic()
        joined += await open_all(stack.port, [
            (stream.token, resubscribe_body(stream.task_id)) for stream in batch], client)
        joined_s += time.monotonic() - started
        await asyncio.to_thread(read_back, stack.port, own)
        readings.append((len(batch), await reading()))
    after = readings[-1][1] if readings else await reading()
    measured_joined, drained = joined_measured(middle, readings)
    files = open_files(pid)
    anon = status_number(pid, "RssAnon") * 1024
    threads = status_number(pid, "Threads")
    load, disturbance = watch.stop(watched)
    streams = plan["own"] + plan["joined"]
    connections = len(client.links) if client is not None else streams
    log(f"  RSS {mib(before)} → {mib(after)} MiB with {streams:,} streams open "
        f"({((middle if middle is not None else after) - before) / plan['own']:,.0f} bytes per "
        f"own-task stream"
        + (f", {(after - drained) / measured_joined:,.0f} per joining one of the second half, "
           f"{(readings[0][1] - middle) / readings[0][0]:,.0f} of the first" if joined else "")
        + f"); client connections {connections:,}; backend: {backend['answers']}, connections "
        f"{backend['connections']}; server open files {files:,}")
    states = await release_all(stack, own + joined)
    stack.check()
    completed = sum(state == "completed" for state in states)
    if completed != len(states):
        log(f"  {len(states) - completed:,} of {len(states):,} streams did not end completed "
            f"after the release: {sorted(set(map(str, states)))}")
    return {"streams": streams, "http2": stack.http2, "client_http2": client is not None,
            "client_connections": connections, "joining": args.joining, **plan,
            "backend_connections": backend["connections"], "backend_answers": backend["answers"],
            "rss_before": before, "rss_middle": middle,
            "rss_drained": readings[0][1] if len(readings) > 1 else None, "rss_after": after,
            "rss_anon_after": anon, "files_before": base_files, "files_after": files,
            "threads_before": threads_before, "threads": threads, "opened_s": opened_s,
            "joined_s": joined_s if joined else None, "completed": completed,
            "ended": len(states), "per_stream": (after - before) / streams,
            "per_own": ((middle if middle is not None else after) - before) / plan["own"],
            "per_joined": (after - drained) / measured_joined if joined else None,
            "per_joined_first": (readings[0][1] - middle) / readings[0][0] if joined else None,
            "joined_measured": measured_joined if joined else 0,
            "load": load, "disturbance": disturbance}


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
    """(name, goal, measured, verdict) of the goals: added latency (p50 and p99), the memory of
    10,000 idle own-task streams (under 200 MB; at most 600 MB), a row for each idle
    configuration measured, each judged on its own rounds, and every idle stream ended
    `completed`."""
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
    measured = [(config, rounds[config.key]) for config in IDLE_CONFIGS
                if rounds.get(config.key)]
    # Each configuration judged on its own: one row per configuration and goal.
    for goal, target, judge in (
            (f"{TARGET_STREAMS:,} idle streams, each on its own working task (bytes per own-task "
             "stream × 10,000)", f"< {TARGET_BYTES / 1e6:.0f} MB",
             lambda reasons, value: quiet.verdict(reasons, value, TARGET_BYTES,
                                                  higher_is_better=False)),
            (f"{TARGET_STREAMS:,} idle own-task streams, the current goal (bytes per own-task "
             "stream × 10,000)", f"≤ {CURRENT_TARGET_BYTES / 1e6:.0f} MB",
             lambda reasons, value: at_most(reasons, value, CURRENT_TARGET_BYTES))):
        for config, idle in measured:
            reasons = quiet.busy_reasons(load_at_start, [r["disturbance"] for r in idle])
            projected = [r["per_own"] * TARGET_STREAMS for r in idle]
            rows.append((f"{goal}, {config.name}", target, figure(projected, megabytes),
                         judge(reasons, stats.median(projected))))
    if measured:
        idle = [r for _, results in measured for r in results]
        ended = sum(r["ended"] for r in idle)
        completed = sum(r["completed"] for r in idle)
        rows.append(("every idle stream ended `completed` after the release",
                     f"all, in each of the {len(idle)} measurements",
                     f"{completed:,} of {ended:,}",
                     "met" if completed == ended else "not met"))
    return rows


def at_most(reasons, value, goal):
    """Like quiet.verdict for a goal that the value may equal: "met" when value ≤ goal on a
    quiet machine."""
    if reasons or value is None:
        return quiet.verdict(reasons, value, goal, higher_is_better=False)
    return "met" if value <= goal else "not met"


def megabytes(value):
    return f"{value / 1e6:,.1f} MB"


def not_completed(rounds):
    """Idle streams of every measurement that did not end `completed` after the release."""
    return sum(r["ended"] - r["completed"] for config in IDLE_CONFIGS
               for r in rounds.get(config.key, []))


def backend_connections(results):
    """How the backend held the own-task streams' answers, from its /control reply: "10,000
    answers on 1 HTTP/2 connection, none on HTTP/1.1"; the rounds that differ are given apart."""
    texts = []
    for result in results:
        answers, connections = result["backend_answers"], result["backend_connections"]
        main, other = ("http2", "http1") if result["http2"] else ("http1", "http2")
        names = {"http1": "HTTP/1.1", "http2": "HTTP/2"}
        count = connections[main]
        text = (f"{answers[main]:,} answers on {count:,} {names[main]} "
                f"connection{'' if count == 1 else 's'}, ")
        text += (f"{answers[other]:,} on {connections[other]:,} {names[other]}"
                 if answers[other] or connections[other] else f"none on {names[other]}")
        if text not in texts:
            texts.append(text)
    return "; ".join(texts) + (" (every round)" if len(texts) == 1 and len(results) > 1 else "")


def client_connections(results):
    """The client's connections to the server with every stream open, and the streams each
    carried: "110 HTTP/2 (100 streams each)"."""
    protocol = "HTTP/2" if results[0].get("client_http2") else "HTTP/1.1"
    counts = [r["client_connections"] for r in results]
    per = [r["streams"] / r["client_connections"] for r in results]
    each = f"{stats.span(per, lambda v: f'{v:,.0f}')} streams" if max(per) > 1 else "1 stream"
    return f"{stats.span(counts, thousands)} {protocol} ({each} each)"


def idle_section(rounds, settings):
    """The idle streams' table: one column per configuration measured."""
    measured = [(config.column, rounds[config.key]) for config in IDLE_CONFIGS
                if rounds.get(config.key)]
    if not measured:
        return []
    first = measured[0][1][0]
    streams, joining = settings.get("streams", first["own"]), settings.get("joining", 0)
    lines = [
        f"## Idle open streams ({streams:,} own-task streams and {joining:,} joining ones asked "
        "for, a fresh server for each measurement)",
        "",
        f"Streams with their own working task (`message/stream`, {settings['per_user']} per "
        "user; the task's request to the backend is paused: the answer's head, then nothing), "
        "then streams joining one of those tasks each (`tasks/resubscribe`). Each round "
        "measures three servers in turn: the server reaching the backend over HTTP/1.1 (one "
        "connection per answer in flight, so an own-task stream holds two of the server's "
        "sockets) and over HTTP/2 (`A2A__LLM__HTTP2=true`, prior knowledge: every answer on one "
        "shared connection), the client opening every stream on an HTTP/1.1 connection of its "
        "own; then the client over HTTP/2 as well: the backend over HTTP/2 and the streams "
        "HTTP/2 streams of the client's h2c connections to the server (prior knowledge; windows "
        f"of 1 MiB a stream, 16 MiB the connection), {STREAMS_PER_CONNECTION} streams a "
        "connection, each new stream on the next connection in turn (as HTTP/1.1 connections "
        "are spread over the server's serving threads), so that an own-task stream holds no "
        "socket of its own. Own-task streams beyond the server's open-files limit join a task "
        "instead. `VmRSS` of the server once steady, after a warm-up cycle: before, with the "
        "own-task streams, with the first half of the joining streams, with every stream "
        "(the joining streams' bytes are read on the second half: the first half's traffic "
        "lets the allocator take back what the opening burst freed); the streams receive "
        "keep-alive comments "
        "meanwhile. Then the paused requests are released and every stream must end "
        "`completed`.",
        "",
        "| figure | " + " | ".join(label for label, _ in measured) + " |",
        "|---|" + "---:|" * len(measured),
    ]

    def line(name, cell):
        lines.append(f"| {name} | " + " | ".join(cell(results) for _, results in measured)
                     + " |")

    def each(field, fmt):
        return lambda results: figure([r[field] for r in results], fmt)

    def count(field):
        return lambda results: stats.span([r[field] for r in results], thousands)

    def unit(cell, text):
        def formatted(results):
            value = cell(results)
            return value if value == "—" else text.format(value)
        return formatted

    line("streams with their own task", count("own"))
    line("streams joining a task (of them beyond the open-files limit)",
         lambda results: f"{stats.span([r['joined'] for r in results], thousands)} "
                         f"({stats.span([r['overflow'] for r in results], thousands)})")
    line("the client's connections to the server, with every stream open", client_connections)
    line("the backend, with the own-task streams open", backend_connections)
    line("RSS before", unit(each("rss_before", mib), "{} MiB"))
    line("RSS with the own-task streams", unit(each("rss_middle", mib), "{} MiB"))
    line("RSS with the first half of the joining streams",
         unit(each("rss_drained", mib), "{} MiB"))
    line("RSS with every stream", unit(each("rss_after", mib), "{} MiB"))
    line("growth", unit(lambda results: figure([r["rss_after"] - r["rss_before"]
                                                for r in results], mib), "{} MiB"))
    line("**bytes per own-task stream** (its connection or its share of one, subscription, "
         "task, backend request)",
         unit(each("per_own", thousands), "**{}**"))
    line("**bytes per joining stream** (its connection or its share of one, and "
         "subscription), read on the second half",
         lambda results: f"**{each('per_joined', thousands)(results)}** over "
                         f"{stats.span([r['joined_measured'] for r in results], thousands)}")
    line("bytes per joining stream of the first half (with what the opening burst left)",
         each("per_joined_first", thousands))
    line("bytes per stream (growth / every stream)", each("per_stream", thousands))
    line("server open files before → with every stream",
         lambda results: f"{each('files_before', thousands)(results)} → "
                         f"{each('files_after', thousands)(results)}")
    line("server threads before → with every stream",
         lambda results: f"{each('threads_before', thousands)(results)} → "
                         f"{each('threads', thousands)(results)}")
    line("seconds to open the own-task streams", each("opened_s", lambda v: f"{v:.1f}"))
    line("seconds to open the joining streams", each("joined_s", lambda v: f"{v:.1f}"))
    line("streams ended `completed` after the release",
         lambda results: f"{sum(r['completed'] for r in results):,} of "
                         f"{sum(r['ended'] for r in results):,}")
    line("load, others", lambda results: "; ".join(conditions(results)))
    return lines + [""]


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
    lines += idle_section(rounds, settings)
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
    """Per round, a fresh server for each of `IDLE_CONFIGS` in turn: the backend over HTTP/1.1,
    over HTTP/2, then the client over HTTP/2 as well."""
    for number in range(1, args.idle_rounds + 1):
        log(f"streams: idle round {number} of {args.idle_rounds}")
        for config in IDLE_CONFIGS:
            name = f"{config.key}-{number}"
            began = time.monotonic()
            stack = Stack(args, workdir, name, args.streams + args.joining, http2=config.http2)
            try:
                if config.http2 and not stack.control().get("http2"):
                    raise RuntimeError(f"the backend ({args.backend_python}) cannot speak HTTP/2: "
                                       "the h2 package is missing (bench/streams installs it)")
                tokens = Tokens(args.server, os.path.join(workdir, name))
                rounds.setdefault(config.key, []).append(asyncio.run(
                    idle_round(stack, tokens, args, watch, client_http2=config.client_http2)))
            finally:
                stack.stop()
            log(f"  ({time.monotonic() - began:.0f} s with the server's start and stop)")


def backend_speaks_http2(python):
    """Whether this Python has the `h2` package the backend needs for HTTP/2."""
    return subprocess.run([python, "-c", "import h2"], capture_output=True).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True, help="the release magisterium-a2a binary")
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--paced-deltas", type=int, default=300)
    parser.add_argument("--interval-ms", type=float, default=10.0)
    parser.add_argument("--streams", type=int, default=TARGET_STREAMS)
    parser.add_argument("--joining", type=int, default=2000,
                        help="streams joining a working task (tasks/resubscribe) per idle round")
    parser.add_argument("--backend-python", default=sys.executable,
                        help="the Python running the backend (with the h2 package)")
    parser.add_argument("--per-user", type=int, default=16)
    parser.add_argument("--rounds", type=rounds_argument, default=stats.MIN_ROUNDS)
    parser.add_argument("--idle-rounds", type=rounds_argument, default=stats.MIN_ROUNDS)
    parser.add_argument("--settle", type=float, default=0)
    parser.add_argument("--out", required=True, help="the Markdown report to write")
    args = parser.parse_args()

    files = raise_open_files()
    if files < args.streams + args.joining + FD_MARGIN:
        raise SystemExit(f"streams: the open-files limit ({files:,}) is below the "
                         f"{args.streams + args.joining:,} streams the client holds")
    if args.streams > 0 and h2 is None:
        raise SystemExit(f"streams: {sys.executable} has no 'h2' package, which the client needs "
                         "to open the idle streams over HTTP/2 (bench/streams runs this on "
                         "bench/python-h2's Python)")
    if args.streams > 0 and not backend_speaks_http2(args.backend_python):
        raise SystemExit(f"streams: {args.backend_python} has no 'h2' package, which the backend "
                         "needs to speak HTTP/2 (bench/streams installs it; or pass "
                         "--backend-python)")
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
                "interval_ms": args.interval_ms, "per_user": args.per_user, "files": files,
                "streams": args.streams, "joining": args.joining,
                "streams_per_connection": STREAMS_PER_CONNECTION}
    text = markdown(rounds, info, settings, started, finished)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as out:
        out.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as out:
        json.dump({"machine": info, "settings": settings, "rounds": rounds,
                   "run": f"{started} → {finished} UTC",
                   "goals": [{"goal": name, "target": goal, "measured": value, "verdict": state,
                              "load_at_start": load_at_start}
                             for name, goal, value, state in targets(rounds, load_at_start)]},
                  out, indent=1, default=harness.encode)
    shutil.rmtree(workdir, ignore_errors=True)
    print(text)
    lost = not_completed(rounds)
    if lost:
        raise SystemExit(f"streams: {lost:,} idle streams did not end completed after the release")


if __name__ == "__main__":
    main()

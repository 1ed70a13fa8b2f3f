"""What the Python SDK clients share, whatever the SDK version: the skills and inputs, the
report lines, the bearer credential, the record of which wire each call used and of the events
each stream carried, and the checks of a task's lifecycle over SDK events that each client has
put in one neutral form (see `event`)."""

import asyncio
import base64
import hashlib
import json
import os
import re
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from a2a.client import A2ACardResolver
from a2a.client.auth.credentials import CredentialService

BASE = os.environ["A2A_BASE"]
# The `host:port` a gRPC channel dials for the server, as the card names it.
BASE_TARGET = BASE.split("://", 1)[-1].rstrip("/")
SKILLS = {
    "catholic_qa": "What does the Church teach about grace?",
    "document_search": "grace",
    "document_fetch": "catechism",
    "liturgical_readings": "2026-12-08",
    "saints_of_the_day": "2026-12-08",
}

failures = 0


def failure_detail():
    """The exception's one-line summary first (shown in the suite's summary), then the traceback."""
    summary = "".join(traceback.format_exception_only(*sys.exc_info()[:2])).strip()
    return f"{summary}\n{traceback.format_exc()}"


def run(main):
    """Runs a client's `main` coroutine and exits: 1 when it raised (with what it raised) or any
    check failed, 0 otherwise."""
    try:
        asyncio.run(main())
    except Exception:  # noqa: BLE001
        print(f"FAIL client: {failure_detail()}")
        sys.exit(1)
    sys.exit(1 if failures else 0)


def report(name, ok, why=""):
    global failures
    if ok:
        print(f"PASS {name}")
    else:
        failures += 1
        print(f"FAIL {name}: {why}")


class Token(CredentialService):
    """Returns one bearer token for every scheme the card names."""

    def __init__(self, token):
        self.token = token

    async def get_credentials(self, security_scheme_name, context):
        return self.token


# (JSON-RPC method, A2A-Version header) of every call, to check which wire the SDK chose; a
# call of the HTTP+JSON binding is named by the 1.0 method its resource URL stands for.
calls = []
REST = "/api/v1/a2a/rest"
# The resource URLs of the HTTP+JSON binding (A2A 1.0 §11) and the 1.0 method of each.
REST_METHODS = [
    ("POST", r"/message:send", "SendMessage"),
    ("POST", r"/message:stream", "SendStreamingMessage"),
    ("GET", r"/tasks", "ListTasks"),
    ("GET", r"/tasks/[^/:]+", "GetTask"),
    ("POST", r"/tasks/[^/:]+:cancel", "CancelTask"),
    ("GET|POST", r"/tasks/[^/:]+:subscribe", "SubscribeToTask"),
    ("POST", r"/tasks/[^/:]+/pushNotificationConfigs", "CreateTaskPushNotificationConfig"),
    ("GET", r"/extendedAgentCard", "GetExtendedAgentCard"),
]
# The other push-config URLs, named by their shape (the SDKs' JSON-RPC runs do not call them).
REST_SHAPES = [
    (r"/tasks/[^/:]+/pushNotificationConfigs", "/tasks/{task}/pushNotificationConfigs"),
    (r"/tasks/[^/:]+/pushNotificationConfigs/[^/]+", "/tasks/{task}/pushNotificationConfigs/{config}"),
]


def rest_method(request):
    """The 1.0 method an HTTP+JSON request stands for (`REST <verb> <path>` for any other)."""
    path = request.url.path.removeprefix(REST)
    for verbs, pattern, name in REST_METHODS:
        if request.method in verbs.split("|") and re.fullmatch(pattern, path):
            return name
    shape = next((shape for pattern, shape in REST_SHAPES if re.fullmatch(pattern, path)), path)
    return f"REST {request.method} {shape}"


# The bindings the calls went through: `jsonrpc`, `http+json`.
bindings = set()


async def record(request):
    if request.url.path.startswith(REST):
        bindings.add("http+json")
        calls.append((rest_method(request), request.headers.get("a2a-version")))
    elif request.method == "POST":
        bindings.add("jsonrpc")
        method = json.loads(request.content or b"{}").get("method")
        calls.append((method, request.headers.get("a2a-version")))


# One entry per event stream the server answered: the JSON-RPC method and id of the request,
# and the id of every event, read from the bytes the SDK itself received; on the HTTP+JSON
# binding, which has no envelope, `id` is None and each event's entry is its payload's member
# (`task`, `statusUpdate`, ...), as a bare StreamResponse has exactly one.
streams = []
STREAM_PAYLOADS = {"task", "message", "statusUpdate", "artifactUpdate"}


class TappedStream(httpx.AsyncByteStream):
    """Passes a streamed body through unchanged, noting the `id` of each Server-Sent Event."""

    def __init__(self, inner, entry, rest=False):
        self.inner = inner
        self.entry = entry
        self.rest = rest
        self.pending = b""

    async def __aiter__(self):
        async for chunk in self.inner:
            self.pending += chunk
            *complete, self.pending = re.split(rb"\r\n\r\n|\n\n|\r\r", self.pending)
            for raw in complete:
                data = [
                    line[5:].removeprefix(b" ")
                    for line in re.split(rb"\r\n|\n|\r", raw)
                    if line.startswith(b"data:")
                ]
                if data:
                    body = json.loads(b"\n".join(data))
                    self.entry["event_ids"].append("|".join(sorted(body)) if self.rest else body.get("id"))
            yield chunk

    async def aclose(self):
        await self.inner.aclose()


class Tap(httpx.AsyncHTTPTransport):
    """The default transport, recording every event stream in `streams`."""

    async def handle_async_request(self, request):
        response = await super().handle_async_request(request)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            rest = request.url.path.startswith(REST)
            sent = {} if rest else json.loads(request.content or b"{}")
            method = rest_method(request) if rest else sent.get("method")
            entry = {"method": method, "id": sent.get("id"), "event_ids": [], "rest": rest}
            streams.append(entry)
            response.stream = TappedStream(response.stream, entry, rest)
        return response


def http():
    return httpx.AsyncClient(timeout=60, event_hooks={"request": [record]}, transport=Tap())


def grpc_channel(target):
    """A plain-text gRPC channel to `target` whose calls are recorded: each RPC in `calls` under
    its name with its `a2a-version` metadata, each server-streaming call in `streams`."""
    import grpc

    def note(details, streaming):
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        name = method.rsplit("/", 1)[-1]
        version = dict(details.metadata or ()).get("a2a-version")
        bindings.add("grpc")
        calls.append((name, version))
        if streaming:
            streams.append({"method": name, "id": None, "event_ids": [], "rest": False, "grpc": True})

    # The channel files an interceptor under its first kind only: one class per kind.
    class Unary(grpc.aio.UnaryUnaryClientInterceptor):
        async def intercept_unary_unary(self, continuation, details, request):
            note(details, False)
            return await continuation(details, request)

    class Streaming(grpc.aio.UnaryStreamClientInterceptor):
        async def intercept_unary_stream(self, continuation, details, request):
            note(details, True)
            return await continuation(details, request)

    return grpc.aio.insecure_channel(target, interceptors=[Unary(), Streaming()])


async def resolve(card_path):
    async with http() as h:
        return await A2ACardResolver(h, BASE).get_agent_card(relative_card_path=card_path)


# The lifecycle checks. Each client turns the SDK's events into dicts of one form:
#   {"kind": "task", "state": s} | {"kind": "status", "state": s, "final": bool or None}
#   | {"kind": "artifact", "artifact_id": a, "texts": [...], "append": bool, "last": bool}
# with states spelt as on the 0.3 wire ("working", "completed", ...); `final` is None on 1.0,
# which has no such field.
TERMINAL_STATES = {"completed", "failed", "canceled", "rejected"}


def event(kind, **fields):
    return {"kind": kind, **fields}


def stored_text(artifacts):
    """The text of a stored task's answer: its artifacts' text parts, joined (artifact id, text)."""
    if not artifacts:
        return None, ""
    artifact_id, texts = artifacts[0]
    return artifact_id, "".join(texts)


def check_stream(label, events, artifacts, entry, end_state="completed"):
    """The events of one stream: a working status, the answer as text deltas (the first not
    appended, the others appended, none marked last) that start the stored text, then the whole
    stored artifact as one last update that is not appended (a client that keeps only last chunks
    holds the answer); all under the request's id; last a final status in `end_state`."""
    shown = json.dumps(events)[:400]
    report(
        f"{label}: a working status",
        any(e["kind"] == "status" and e["state"] == "working" for e in events),
        f"events {shown}",
    )
    if end_state == "completed":
        pieces = [e for e in events if e["kind"] == "artifact"]
        deltas, whole = pieces[:-1], (pieces[-1] if pieces else None)
        artifact_id, text = stored_text(artifacts)
        streamed = "".join(t for e in deltas for t in e["texts"])
        problems = []
        if not any(e["texts"] for e in deltas):
            problems.append(f"the answer came in {len(pieces)} pieces, not streamed")
        if any(e["append"] != (i > 0) or e["last"] for i, e in enumerate(deltas)):
            problems.append("the deltas are not appended after the first, or one is marked last")
        if whole is None or whole["append"] or not whole["last"]:
            problems.append("the last update is not the whole artifact (append false, lastChunk true)")
        if any(e["artifact_id"] != artifact_id for e in pieces):
            problems.append(f"a piece of another artifact than {artifact_id}")
        if not text.startswith(streamed) or "[1]" not in text:
            problems.append(f"deltas join to {streamed!r}, the stored text is {text!r}")
        if whole is not None and "".join(whole["texts"]) != text:
            problems.append(f"the last update holds {whole['texts']!r}, the stored text is {text!r}")
        report(f"{label}: text deltas, then the whole stored text", not problems, "; ".join(problems))
    last = events[-1] if events else {}
    finals = [e.get("final") for e in events if e["kind"] == "status"]
    report(
        f"{label}: ends {end_state}",
        last.get("kind") == "status"
        and last["state"] == end_state
        and (finals[-1] is None or finals == [False] * (len(finals) - 1) + [True]),
        f"last event {json.dumps(last)}, finals {finals}",
    )
    if entry is not None and entry.get("grpc"):
        # Each message of a gRPC stream is a StreamResponse by its type: no envelope to check.
        report(f"{label}: a server-streaming RPC", entry["method"] in ("SendStreamingMessage", "SubscribeToTask"), f"{entry}")
        return
    if entry is not None and entry["rest"]:
        report(
            f"{label}: every event a bare StreamResponse",
            len(entry["event_ids"]) == len(events) and all(k in STREAM_PAYLOADS for k in entry["event_ids"]),
            f"events {entry['event_ids']}, SDK yielded {len(events)}",
        )
        return
    report(
        f"{label}: every event under the request id",
        entry is not None
        and len(entry["event_ids"]) == len(events)
        and all(i == entry["id"] for i in entry["event_ids"]),
        f"request {entry and entry['id']!r}, events {entry and entry['event_ids']}, SDK yielded {len(events)}",
    )


async def poll(get_state, name, timeout=30):
    """Polls `get_state()` (the task's state and stored artifacts) until it is terminal."""
    polls = 0
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        state, artifacts = await get_state()
        polls += 1
        if state in TERMINAL_STATES or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.2)
    _, text = stored_text(artifacts)
    report(
        name,
        state == "completed" and polls > 1 and "[1]" in text,
        f"state {state} after {polls} polls, text {text[:200]!r}",
    )


class Receiver:
    """A webhook receiver on loopback: a real HTTP server on a thread of this process, keeping
    the headers and JSON body of every POST it is sent, and answering 200."""

    def __init__(self):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the base class's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format, *args):  # noqa: A002 - the base class's signature
                """Quiet: the checks report what arrived."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/webhook"

    async def terminal(self, task_id, timeout=30):
        """Waits for a notification of `task_id` in a terminal state: (headers, raw body, state),
        or (None, None, the (id, state) of each one seen) when none came within `timeout`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            for headers, body in list(self.received):
                pushed_id, state = pushed(body)
                if pushed_id == task_id and state in TERMINAL_STATES:
                    return headers, body, state
            await asyncio.sleep(0.1)
        return None, None, [pushed(body) for _, body in self.received]


def pushed(raw):
    """The task id and state a notification carries: the Task itself (0.3), or a Task or status
    update wrapped as a 1.0 StreamResponse; states in their 0.3 spelling."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None, None
    if not isinstance(body, dict):
        return None, None
    inner = body.get("task") or body.get("statusUpdate") or body
    state = str((inner.get("status") or {}).get("state", ""))
    state = state.removeprefix("TASK_STATE_").lower().replace("_", "-")
    return inner.get("id") if "id" in inner else inner.get("taskId"), state


def jwt_claims(authorization):
    """The claims of a `Bearer` JWT, read without verifying it ({} when it is not one)."""
    parts = authorization.removeprefix("Bearer ").split(".")
    if not authorization.startswith("Bearer ") or len(parts) != 3:
        return {}
    try:
        return json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return {}


async def check_push(label, receiver, task_id, token):
    """The receiver got the task completed, with the configured token and a JWT naming this
    receiver and the SHA-256 of the body (docs/security.md, "What a notification carries")."""
    headers, body, state = await receiver.terminal(task_id)
    if headers is None:
        report(f"{label}: the terminal task pushed with the token", False, f"nothing terminal for {task_id}; seen {state}")
        return
    claims = jwt_claims(headers.get("authorization", ""))
    report(
        f"{label}: the terminal task pushed with the token",
        state == "completed"
        and headers.get("x-a2a-notification-token") == token
        and claims.get("aud") == receiver.url
        and claims.get("request_body_sha256") == hashlib.sha256(body).hexdigest(),
        f"state {state}, headers {headers}, claims {claims}",
    )

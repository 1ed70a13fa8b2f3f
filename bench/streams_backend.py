"""The OpenAI-compatible answering backend of the streaming benchmark (bench/streams.py): a
chat-completions server on loopback, asyncio on a bare socket, that streams an answer in the
form the server reads (`data: {chunk}` events, a finish reason, `data: [DONE]`), one delta per
event, in the mode the benchmark last set:

- `burst`: `deltas` deltas ` ~0`, ` ~1`, … written as fast as the socket takes them;
- `paced`: `deltas` deltas, one every `interval_ms`, each ` @<ns>`: `time.monotonic_ns()` just
  before it is written (CLOCK_MONOTONIC, the clock the benchmark's client reads on arrival);
- `pause`: the head of the answer, then nothing until the benchmark releases every request
  held, which then ends its answer with a few deltas.

Every answer ends with a citation of the first passage (` [1].`), as a model's answer does.
The benchmark sets the mode, reads how many requests are held and releases them through
`POST /control`, whose reply also says how many connections of each protocol are open (the
one asking left out) and how many answers each carries.

One port speaks two protocols: a connection that opens with the HTTP/2 preface is served as
HTTP/2 in cleartext ("prior knowledge", as the server speaks it with `A2A__LLM__HTTP2=true`),
every answer on it a stream of its own, sent within the client's flow-control windows; any
other connection is one HTTP/1.1 request, answered with `connection: close`. HTTP/2 needs the
`h2` package (sans-io, driven by the same asyncio streams); without it the backend serves
HTTP/1.1 alone and says so in the /control reply (`"http2": false`).

Run as `python3 streams_backend.py PORT`; it stops on SIGTERM.
"""

import asyncio
import json
import signal
import socket
import sys
import time
import traceback

try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    import h2.settings
except ImportError:  # HTTP/1.1 only; the /control reply says so
    h2 = None

HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"connection: close\r\n\r\n")
CHUNK_START = (b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk",'
               b'"model":"bench-model","choices":[{"index":0,"delta":{"content":"')
CHUNK_END = b'"},"finish_reason":null}]}\n\n'
FINISH = (b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","model":"bench-model",'
          b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
CITATION = " [1]."
# Bytes written between two waits for the socket to drain, in the burst mode (over HTTP/2: the
# bytes handed to the connection at once, in frames within the flow-control windows).
BURST_DRAIN_BYTES = 64 * 1024

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
# What the backend advertises over HTTP/2: every answer in flight shares one connection (10,000
# and more at once), and a window ample for the requests' bodies (a prompt is a few KB; every
# byte received is handed back at once).
MAX_CONCURRENT_STREAMS = 1_000_000
INITIAL_WINDOW = 1 << 20
CONNECTION_WINDOW = 16 << 20
# Bytes waiting in the socket's buffer past which an HTTP/2 sender waits for it to drain.
HTTP2_HIGH_WATER = 1 << 20
# h2 counts the open streams (a walk over all of them) for every stream a client opens, to
# check the limit: quadratic with 10,000 open. The limit above is never reached, so the count
# is taken (and the closed streams forgotten) once every this many new streams only.
COUNT_STREAMS_EVERY = 1024

SSE_HEADERS = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]


def chunk(content):
    """One streamed chunk whose delta is `content` (plain ASCII with no quote or backslash)."""
    return CHUNK_START + content.encode() + CHUNK_END


def is_preface_start(start):
    """Whether the first bytes of a connection may still be the HTTP/2 preface (all of it read:
    the connection speaks HTTP/2)."""
    return PREFACE.startswith(start)


def request_head(head):
    """The path and the content length of an HTTP/1.1 request head (without its blank line)."""
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    _, path, _ = request_line.split(" ", 2)
    length = 0
    for line in header_lines:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return path, length


class Http1Answer:
    """An answer written on an HTTP/1.1 connection: the head, then the body as written."""

    def __init__(self, writer):
        self.writer = writer

    def start(self):
        self.writer.write(HEAD)

    def write(self, data):
        self.writer.write(data)

    async def drain(self):
        await self.writer.drain()

    async def end(self):
        await self.writer.drain()


class Http2Answer:
    """An answer written on one stream of an HTTP/2 connection: what is written waits until the
    next drain, which sends it within the flow-control windows."""

    def __init__(self, connection, stream_id):
        self.connection, self.stream_id = connection, stream_id
        self.pending = []

    def start(self):
        self.connection.h2.send_headers(self.stream_id, [(":status", "200"), *SSE_HEADERS])
        self.connection.flush()

    def write(self, data):
        self.pending.append(data)

    async def drain(self, end=False):
        data, self.pending = b"".join(self.pending), []
        await self.connection.send(self.stream_id, data, end)

    async def end(self):
        await self.drain(end=True)


if h2 is not None:
    class Counted(h2.connection.H2Connection):
        """An h2 connection that counts its open inbound streams (to check the limit on
        them) only once every `COUNT_STREAMS_EVERY` new streams."""

        opened = 0

        @property
        def open_inbound_streams(self):
            self.opened += 1
            if self.opened % COUNT_STREAMS_EVERY:
                return 0
            return super().open_inbound_streams


class Http2Connection:
    """One HTTP/2 connection: h2's state, fed by the reader and flushed to the writer; each
    request is answered by an asyncio task of its own. What the answers send waits in
    `outgoing` until the flow-control windows take it: every WINDOW_UPDATE sends what waits, in
    order, as far as the windows go (one pass, however many answers wait)."""

    def __init__(self, backend, reader, writer):
        self.backend, self.reader, self.writer = backend, reader, writer
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        self.h2 = Counted(config=config)
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values={
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: MAX_CONCURRENT_STREAMS,
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: INITIAL_WINDOW,
            h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: 64 * 1024,
        })
        self.requests = {}  # stream id → [headers, body pieces] while the request comes in
        self.answering = {}  # stream id → the task answering it
        self.outgoing = {}  # stream id → [data, end, future], in the order they came
        self.drained = asyncio.Lock()
        self.closed = False

    def flush(self):
        data = self.h2.data_to_send()
        if data and not self.closed:
            self.writer.write(data)

    async def serve(self):
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(CONNECTION_WINDOW - 65_535)
        try:
            self.receive(PREFACE)
            while not self.closed:
                data = await self.reader.read(65536)
                if not data:
                    break
                self.receive(data)
                await self.drain()
        except h2.exceptions.ProtocolError as error:
            print(f"backend: HTTP/2 protocol error: {error!r}", file=sys.stderr, flush=True)
            self.flush()  # the GOAWAY h2 wrote
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:  # noqa: BLE001 - one bad connection must not stop the backend
            traceback.print_exc()
        finally:
            self.closed = True
            for _, _, future in self.outgoing.values():
                if not future.done():
                    future.set_exception(ConnectionResetError("the HTTP/2 connection closed"))
            self.outgoing.clear()
            for task in list(self.answering.values()):
                task.cancel()

    def receive(self, data):
        for event in self.h2.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                self.requests[event.stream_id] = [dict(event.headers), []]
            elif isinstance(event, h2.events.DataReceived):
                request = self.requests.get(event.stream_id)
                if request is not None:
                    request[1].append(event.data)
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                request = self.requests.pop(event.stream_id, None)
                if request is not None:
                    self.start(event.stream_id, request[0], b"".join(request[1]))
            elif isinstance(event, h2.events.StreamReset):
                self.requests.pop(event.stream_id, None)
                task = self.answering.pop(event.stream_id, None)
                if task is not None:
                    task.cancel()
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.closed = True
        # A WINDOW_UPDATE, a new initial window or a reset stream: send what now fits.
        self.pump()

    def start(self, stream_id, headers, body):
        task = asyncio.ensure_future(self.respond(stream_id, headers, body))
        self.answering[stream_id] = task
        task.add_done_callback(lambda _: self.answering.pop(stream_id, None))

    async def respond(self, stream_id, headers, body):
        path = headers.get(":path", "")
        try:
            if path == "/control":
                reply = self.backend.control(json.loads(body or b"{}"), self_protocol="http2")
                self.h2.send_headers(stream_id, [
                    (":status", "200"), ("content-type", "application/json"),
                    ("content-length", str(len(reply)))])
                await self.send(stream_id, reply, end=True)
            elif path.endswith("/chat/completions"):
                await self.backend.answer(Http2Answer(self, stream_id), "http2")
            else:
                self.h2.send_headers(stream_id, [(":status", "404"), ("content-length", "0")],
                                     end_stream=True)
                self.flush()
        except (h2.exceptions.StreamClosedError, ConnectionError):
            pass
        except h2.exceptions.ProtocolError:
            if not self.closed:  # not a stream reset meanwhile
                traceback.print_exc()
        except Exception:  # noqa: BLE001 - one bad answer must not stop the others
            traceback.print_exc()
            if not self.closed:
                try:
                    self.h2.reset_stream(stream_id)
                    self.flush()
                except h2.exceptions.ProtocolError:
                    pass

    async def send(self, stream_id, data, end=False):
        """Sends the data on the stream as the windows allow (what they cannot take yet waits
        for WINDOW_UPDATE), the stream ended with the last frame when `end`."""
        if self.closed:
            raise ConnectionResetError("the HTTP/2 connection is closed")
        future = asyncio.get_running_loop().create_future()
        self.outgoing[stream_id] = [data, end, future]
        self.pump()
        try:
            await future
        finally:
            self.outgoing.pop(stream_id, None)
        await self.drain()

    def pump(self):
        """Sends what waits in `outgoing`, in order, until the connection's window is spent;
        a stream whose own window is spent waits for its WINDOW_UPDATE."""
        if self.closed:
            return
        finished = []
        for stream_id, entry in self.outgoing.items():
            data, end, future = entry
            if future.done():  # its answer was cancelled (a reset stream)
                finished.append(stream_id)
                continue
            try:
                ended = False
                while data:
                    room = min(self.h2.local_flow_control_window(stream_id),
                               self.h2.max_outbound_frame_size)
                    if room <= 0:
                        break
                    piece, data = data[:room], data[room:]
                    ended = end and not data
                    self.h2.send_data(stream_id, piece, end_stream=ended)
                entry[0] = data
                if data:
                    if self.h2.outbound_flow_control_window <= 0:
                        break  # no stream can send before the connection's WINDOW_UPDATE
                    continue
                if end and not ended:
                    self.h2.end_stream(stream_id)
            except h2.exceptions.StreamClosedError as error:
                future.set_exception(error)
            else:
                future.set_result(None)
            finished.append(stream_id)
        for stream_id in finished:
            del self.outgoing[stream_id]
        self.flush()

    async def drain(self):
        if self.writer.transport.get_write_buffer_size() > HTTP2_HIGH_WATER:
            async with self.drained:
                await self.writer.drain()


class Backend:
    """The mode set by the benchmark, the requests held in the pause mode, and the connections
    and answers open on each protocol."""

    def __init__(self):
        self.mode = {"mode": "burst", "deltas": 100}
        self.held = 0
        self.answered = 0
        self.release = asyncio.Event()
        self.connections = {"http1": 0, "http2": 0}
        self.answers = {"http1": 0, "http2": 0}

    async def handle(self, reader, writer):
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        protocol = None
        try:
            start = b""
            while len(start) < len(PREFACE) and is_preface_start(start):
                data = await reader.read(len(PREFACE) - len(start))
                if not data:
                    return
                start += data
            protocol = "http2" if start == PREFACE else "http1"
            self.connections[protocol] += 1
            if protocol == "http1":
                await self.serve_http1(start, reader, writer)
            elif h2 is not None:
                await Http2Connection(self, reader, writer).serve()
            else:
                print("backend: an HTTP/2 connection refused: the h2 package is missing",
                      file=sys.stderr, flush=True)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            if protocol is not None:
                self.connections[protocol] -= 1
            writer.close()

    async def serve_http1(self, start, reader, writer):
        data = start
        while b"\r\n\r\n" not in data:
            more = await reader.read(65536)
            if not more:
                return
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        path, length = request_head(head)
        if len(body) < length:
            body += await reader.readexactly(length - len(body))
        if path == "/control":
            reply = self.control(json.loads(body[:length] or b"{}"), self_protocol="http1")
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                         + str(len(reply)).encode() + b"\r\nconnection: close\r\n\r\n" + reply)
        elif path.endswith("/chat/completions"):
            await self.answer(Http1Answer(writer), "http1")
        else:
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n"
                         b"connection: close\r\n\r\n")
        await writer.drain()

    def control(self, order, self_protocol):
        """`{"mode": …}` sets the mode of the next answers, `{"release": true}` ends every held
        answer; the reply says how many answers are held and how many were finished, and the
        connections (the asking one left out) and answers in flight on each protocol."""
        if order.get("release"):
            self.release.set()
            self.release = asyncio.Event()
        if "mode" in order:
            self.mode = order
        connections = dict(self.connections)
        connections[self_protocol] -= 1
        return json.dumps({"held": self.held, "answered": self.answered,
                           "http2": h2 is not None, "connections": connections,
                           "answers": dict(self.answers)}).encode()

    async def answer(self, out, protocol):
        self.answers[protocol] += 1
        try:
            await self.write_answer(out)
        finally:
            self.answers[protocol] -= 1

    async def write_answer(self, out):
        mode = self.mode
        out.start()
        await out.drain()
        kind, deltas = mode["mode"], int(mode.get("deltas", 0))
        if kind == "burst":
            buffered = 0
            for index in range(deltas):
                piece = chunk(f" ~{index}")
                out.write(piece)
                buffered += len(piece)
                if buffered >= BURST_DRAIN_BYTES:
                    await out.drain()
                    buffered = 0
        elif kind == "paced":
            interval = int(float(mode["interval_ms"]) * 1_000_000)
            start = time.monotonic_ns()
            for index in range(deltas):
                wait = start + index * interval - time.monotonic_ns()
                if wait > 0:
                    await asyncio.sleep(wait / 1e9)
                out.write(chunk(f" @{time.monotonic_ns()}"))
                await out.drain()
        elif kind == "pause":
            self.held += 1
            try:
                await self.release.wait()
            finally:
                self.held -= 1
            for index in range(deltas):
                out.write(chunk(f" ~{index}"))
        out.write(chunk(CITATION) + FINISH)
        await out.end()
        self.answered += 1


async def serve(port):
    backend = Backend()
    server = await asyncio.start_server(backend.handle, "127.0.0.1", port, backlog=4096)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))

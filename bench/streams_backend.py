"""The OpenAI-compatible answering backend of the streaming benchmark (bench/streams.py): a
chat-completions server on loopback, stdlib asyncio on a bare socket, that streams an answer in
the form the server reads (`data: {chunk}` events, a finish reason, `data: [DONE]`), one delta
per event, in the mode the benchmark last set:

- `burst`: `deltas` deltas ` ~0`, ` ~1`, … written as fast as the socket takes them;
- `paced`: `deltas` deltas, one every `interval_ms`, each ` @<ns>`: `time.monotonic_ns()` just
  before it is written (CLOCK_MONOTONIC, the clock the benchmark's client reads on arrival);
- `pause`: the head of the answer, then nothing until the benchmark releases every request
  held, which then ends its answer with a few deltas.

Every answer ends with a citation of the first passage (` [1].`), as a model's answer does.
The benchmark sets the mode, reads how many requests are held and releases them through
`POST /control`. Run as `python3 streams_backend.py PORT`; it stops on SIGTERM.
"""

import asyncio
import json
import signal
import socket
import sys
import time

HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"connection: close\r\n\r\n")
CHUNK_START = (b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk",'
               b'"model":"bench-model","choices":[{"index":0,"delta":{"content":"')
CHUNK_END = b'"},"finish_reason":null}]}\n\n'
FINISH = (b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","model":"bench-model",'
          b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
CITATION = " [1]."
# Bytes written between two waits for the socket to drain, in the burst mode.
BURST_DRAIN_BYTES = 64 * 1024


def chunk(content):
    """One streamed chunk whose delta is `content` (plain ASCII with no quote or backslash)."""
    return CHUNK_START + content.encode() + CHUNK_END


class Backend:
    """The mode set by the benchmark, and the requests held in the pause mode."""

    def __init__(self):
        self.mode = {"mode": "burst", "deltas": 100}
        self.held = 0
        self.answered = 0
        self.release = asyncio.Event()

    async def handle(self, reader, writer):
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            _, path, _ = request_line.split(" ", 2)
            length = 0
            for line in header_lines:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length) if length else b""
            if path == "/control":
                await self.control(json.loads(body or b"{}"), writer)
            elif path.endswith("/chat/completions"):
                await self.answer(writer)
            else:
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n"
                             b"connection: close\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def control(self, order, writer):
        """`{"mode": …}` sets the mode of the next answers, `{"release": true}` ends every held
        answer; the reply says how many answers are held and how many were finished."""
        if order.get("release"):
            self.release.set()
            self.release = asyncio.Event()
        if "mode" in order:
            self.mode = order
        reply = json.dumps({"held": self.held, "answered": self.answered}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                     + str(len(reply)).encode() + b"\r\nconnection: close\r\n\r\n" + reply)

    async def answer(self, writer):
        mode = self.mode
        writer.write(HEAD)
        await writer.drain()
        kind, deltas = mode["mode"], int(mode.get("deltas", 0))
        if kind == "burst":
            buffered = 0
            for index in range(deltas):
                piece = chunk(f" ~{index}")
                writer.write(piece)
                buffered += len(piece)
                if buffered >= BURST_DRAIN_BYTES:
                    await writer.drain()
                    buffered = 0
        elif kind == "paced":
            interval = int(float(mode["interval_ms"]) * 1_000_000)
            start = time.monotonic_ns()
            for index in range(deltas):
                wait = start + index * interval - time.monotonic_ns()
                if wait > 0:
                    await asyncio.sleep(wait / 1e9)
                writer.write(chunk(f" @{time.monotonic_ns()}"))
                await writer.drain()
        elif kind == "pause":
            self.held += 1
            try:
                await self.release.wait()
            finally:
                self.held -= 1
            for index in range(deltas):
                writer.write(chunk(f" ~{index}"))
        writer.write(chunk(CITATION) + FINISH)
        await writer.drain()
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

"""The streaming benchmark's answering backend (bench/streams_backend.py), run in this process
over socket pairs (no port, no server): every mode and /control over HTTP/1.1 and over HTTP/2
with prior knowledge on the same handler (the `h2` package: run under bench/python-h2's Python): a burst larger than the client's flow-control windows, answers
paused and released on one connection, a stream reset and a connection dropped while answers
are held."""

import asyncio
import json
import re
import socket
import unittest

import streams_backend as backend

import h2.config
import h2.connection
import h2.events

DONE = b"data: [DONE]\n\n"


async def connect(served):
    """A connection to the backend: the client's reader and writer of a socket pair whose other
    end the backend serves."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=theirs)
    served.append(asyncio.ensure_future(served.backend.handle(reader, writer)))
    return await asyncio.open_connection(sock=ours)


class Pure(unittest.TestCase):
    def test_the_preface_is_told_from_a_request_by_its_first_bytes(self):
        self.assertTrue(backend.is_preface_start(b""))
        self.assertTrue(backend.is_preface_start(b"PRI * HTTP/2"))
        self.assertTrue(backend.is_preface_start(backend.PREFACE))
        self.assertFalse(backend.is_preface_start(b"POST /v1/chat/completions HTTP/1.1\r\n"))
        self.assertFalse(backend.is_preface_start(b"PRO"))

    def test_a_request_head(self):
        path, length = backend.request_head(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 42")
        self.assertEqual((path, length), ("/v1/chat/completions", 42))
        self.assertEqual(backend.request_head(b"GET /control HTTP/1.1\r\nHost: x"),
                         ("/control", 0))


async def http1(served, path, body=b"{}"):
    """One HTTP/1.1 request: (status line, body bytes) of its whole answer."""
    reader, writer = await connect(served)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                 f"\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    answer = await reader.read()
    writer.close()
    head, _, rest = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], rest


async def control(served, **order):
    _, body = await http1(served, "/control", json.dumps(order).encode())
    return json.loads(body)


def deltas(body):
    """The numbered deltas (` ~N`) of an answer, in order."""
    return [int(number) for number in re.findall(rb"~(\d+)", body)]


class H2Client:
    """A small HTTP/2 client (prior knowledge) over h2: requests on one connection, each
    stream's data handed back to the server's windows as read."""

    def __init__(self, served):
        self.served = served
        self.streams = {}
        self.pongs = asyncio.Queue()

    async def open(self):
        self.reader, self.writer = await connect(self.served)
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.h2.initiate_connection()
        self.flush()
        self.reading = asyncio.ensure_future(self.read())
        return self

    def flush(self):
        self.writer.write(self.h2.data_to_send())

    async def read(self):
        while True:
            data = await self.reader.read(65536)
            if not data:
                break
            for event in self.h2.receive_data(data):
                stream = self.streams.get(getattr(event, "stream_id", None))
                if isinstance(event, h2.events.PingAckReceived):
                    self.pongs.put_nowait(event.ping_data)
                elif isinstance(event, h2.events.ResponseReceived):
                    stream["headers"] = dict(event.headers)
                    stream["started"].set()
                elif isinstance(event, h2.events.DataReceived):
                    stream["data"] += event.data
                    self.h2.acknowledge_received_data(event.flow_controlled_length,
                                                      event.stream_id)
                elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                    if not stream["ended"].done():
                        stream["ended"].set_result(isinstance(event, h2.events.StreamEnded))
            self.flush()
        for stream in self.streams.values():
            if not stream["ended"].done():
                stream["ended"].set_result(False)

    def request(self, path, body=b"{}"):
        stream_id = self.h2.get_next_available_stream_id()
        self.streams[stream_id] = {"headers": None, "data": bytearray(),
                                   "started": asyncio.Event(),
                                   "ended": asyncio.get_running_loop().create_future()}
        self.h2.send_headers(stream_id, [
            (":method", "POST"), (":scheme", "http"), (":authority", "backend"),
            (":path", path), ("content-type", "application/json"),
            ("content-length", str(len(body)))])
        self.h2.send_data(stream_id, body, end_stream=True)
        self.flush()
        return stream_id

    async def whole(self, stream_id, timeout=30):
        """(status, body, ended cleanly) of a stream's answer."""
        stream = self.streams[stream_id]
        clean = await asyncio.wait_for(stream["ended"], timeout)
        return (stream["headers"] or {}).get(":status"), bytes(stream["data"]), clean

    def close(self):
        self.writer.close()
        self.reading.cancel()


class Served(unittest.IsolatedAsyncioTestCase):
    """A backend; `self` stands for it in `connect` (its handlers are kept to be awaited)."""

    async def asyncSetUp(self):
        self.backend = backend.Backend()
        self.handlers = []

    def append(self, handler):
        self.handlers.append(handler)

    async def asyncTearDown(self):
        # The backend's side of every connection ends before the loop does.
        await asyncio.wait_for(asyncio.gather(*self.handlers), 10)

    async def wait_for(self, check, seconds=10):
        deadline = asyncio.get_running_loop().time() + seconds
        while True:
            reply = await control(self)
            if check(reply) or asyncio.get_running_loop().time() > deadline:
                return reply
            await asyncio.sleep(0.02)


class Http1(Served):
    async def test_a_burst_arrives_whole_and_in_order(self):
        await control(self, mode="burst", deltas=20_000)
        status, body = await http1(self, "/v1/chat/completions")
        self.assertEqual(status, b"HTTP/1.1 200 OK")
        self.assertEqual(deltas(body), list(range(20_000)))
        self.assertTrue(body.endswith(DONE))
        self.assertIn(b" [1].", body)

    async def test_paused_answers_are_held_until_released(self):
        await control(self, mode="pause", deltas=3)
        answers = [asyncio.ensure_future(http1(self, "/v1/chat/completions"))
                   for _ in range(5)]
        reply = await self.wait_for(lambda reply: reply["held"] == 5)
        self.assertEqual(reply["held"], 5)
        self.assertEqual(reply["connections"], {"http1": 5, "http2": 0})
        self.assertEqual(reply["answers"], {"http1": 5, "http2": 0})
        await control(self, release=True)
        for status, body in await asyncio.gather(*answers):
            self.assertEqual(deltas(body), [0, 1, 2])
            self.assertTrue(body.endswith(DONE))
        self.assertEqual((await control(self))["answered"], 5)

    async def test_an_unknown_path_is_404(self):
        status, _ = await http1(self, "/elsewhere")
        self.assertEqual(status, b"HTTP/1.1 404 Not Found")


class Http2(Served):
    async def asyncSetUp(self):
        await super().asyncSetUp()
        self.client = await H2Client(self).open()

    async def asyncTearDown(self):
        self.client.close()
        await super().asyncTearDown()

    async def test_a_burst_beyond_the_windows_arrives_whole_and_in_order(self):
        await control(self, mode="burst", deltas=20_000)
        status, body, clean = await self.client.whole(
            self.client.request("/v1/chat/completions"))
        self.assertEqual((status, clean), ("200", True))
        self.assertGreater(len(body), 65_535 * 16)  # the client's windows were spent many times
        self.assertEqual(deltas(body), list(range(20_000)))
        self.assertTrue(body.endswith(DONE))

    async def test_paced_deltas_carry_their_stamps(self):
        await control(self, mode="paced", deltas=5, interval_ms=1)
        _, body, clean = await self.client.whole(self.client.request("/v1/chat/completions"))
        self.assertTrue(clean)
        self.assertEqual(body.count(b" @"), 5)

    async def test_control_over_http2(self):
        status, body, _ = await self.client.whole(
            self.client.request("/control", json.dumps({"mode": "pause"}).encode()))
        self.assertEqual(status, "200")
        reply = json.loads(body)
        self.assertTrue(reply["http2"])
        self.assertEqual(reply["connections"], {"http1": 0, "http2": 0})
        self.assertEqual(self.backend.mode, {"mode": "pause"})

    async def test_paused_answers_share_one_connection_and_end_when_released(self):
        await control(self, mode="pause", deltas=3)
        streams = [self.client.request("/v1/chat/completions") for _ in range(200)]
        reply = await self.wait_for(lambda reply: reply["held"] == 200)
        self.assertEqual(reply["held"], 200)
        self.assertEqual(reply["connections"], {"http1": 0, "http2": 1})
        self.assertEqual(reply["answers"], {"http1": 0, "http2": 200})
        # The answers' heads came before the release; an HTTP/1.1 answer is served meanwhile.
        await asyncio.wait_for(self.client.streams[streams[0]]["started"].wait(), 5)
        await control(self, mode="burst", deltas=10)
        _, body = await http1(self, "/v1/chat/completions")
        self.assertEqual(deltas(body), list(range(10)))
        await control(self, release=True)
        for stream_id in streams:
            status, body, clean = await self.client.whole(stream_id)
            self.assertEqual((status, clean), ("200", True))
            self.assertEqual(deltas(body), [0, 1, 2])
            self.assertTrue(body.endswith(DONE))

    async def test_a_ping_is_answered_while_answers_are_held(self):
        # The server pings its shared connection (20 s apart) and drops it when unanswered.
        await control(self, mode="pause", deltas=1)
        held = self.client.request("/v1/chat/completions")
        await self.wait_for(lambda reply: reply["held"] == 1)
        self.client.h2.ping(b"bench-01")
        self.client.flush()
        self.assertEqual(await asyncio.wait_for(self.client.pongs.get(), 5), b"bench-01")
        await control(self, release=True)
        self.assertTrue((await self.client.whole(held))[2])

    async def test_a_reset_stream_and_a_dropped_connection_leave_the_backend_serving(self):
        await control(self, mode="pause", deltas=3)
        kept, reset = (self.client.request("/v1/chat/completions") for _ in range(2))
        await self.wait_for(lambda reply: reply["held"] == 2)
        self.client.h2.reset_stream(reset)
        self.client.flush()
        reply = await self.wait_for(lambda reply: reply["held"] == 1)
        self.assertEqual(reply["held"], 1)
        other = await H2Client(self).open()
        for _ in range(3):
            other.request("/v1/chat/completions")
        await self.wait_for(lambda reply: reply["held"] == 4)
        other.close()
        reply = await self.wait_for(lambda reply: reply["held"] == 1
                                    and reply["connections"]["http2"] == 1)
        self.assertEqual((reply["held"], reply["connections"]["http2"]), (1, 1))
        await control(self, release=True)
        status, body, clean = await self.client.whole(kept)
        self.assertEqual((status, clean), ("200", True))
        self.assertTrue(body.endswith(DONE))


if __name__ == "__main__":
    unittest.main()

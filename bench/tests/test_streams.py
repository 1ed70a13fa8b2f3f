"""The streaming benchmark's own logic (bench/streams.py): percentiles, rates and ratios, the
reading of chunked bodies and event streams split anywhere, the plan of the idle streams within
the open-files limit, the client's idle streams over HTTP/2 (h2c connections to a stand-in for
the server, over socket pairs: the `h2` package, run under bench/python-h2's Python), the idle
streams' report in its three configurations, and the goals refused on a busy machine."""

import asyncio
import json
import socket
import unittest

import h2.exceptions

import quiet
import streams
import streams_backend


class Percentiles(unittest.TestCase):
    def test_nearest_rank_of_a_hundred_values(self):
        values = list(range(100, 0, -1))
        self.assertEqual(streams.percentile(values, 50), 50)
        self.assertEqual(streams.percentile(values, 99), 99)
        self.assertEqual(streams.percentile(values, 100), 100)

    def test_p99_of_three_hundred_values_is_the_297th(self):
        values = [float(v) for v in range(1, 301)]
        self.assertEqual(streams.percentile(values, 99), 297.0)

    def test_low_ranks_and_a_single_value(self):
        self.assertEqual(streams.percentile([7, 3, 5], 0), 3)
        self.assertEqual(streams.percentile([7, 3, 5], 50), 5)
        self.assertEqual(streams.percentile([4.2], 99), 4.2)

    def test_no_values_is_an_error(self):
        with self.assertRaises(ValueError):
            streams.percentile([], 50)


class Rates(unittest.TestCase):
    def test_rate_counts_intervals_between_first_and_last_arrival(self):
        # 5,001 deltas over 2 s: 2,500 a second.
        self.assertEqual(streams.rate(5_001, 1_000_000_000, 3_000_000_000), 2_500.0)

    def test_everything_at_once_has_no_rate(self):
        self.assertIsNone(streams.rate(10, 5, 5))
        self.assertIsNone(streams.rate(1, 0, 10))

    def test_ratios_and_differences_pair_the_rounds(self):
        self.assertEqual(streams.ratios([50, 90], [100, 90]), [0.5, 1.0])
        self.assertEqual(streams.ratios([5], [0]), [0.0])
        self.assertEqual(streams.differences([1300, 900], [1000, 1000]), [300, -100])


class Framing(unittest.TestCase):
    BODY = (b'data: {"a":1}\n\n: keep-alive\n\ndata: {"b":"~0 ~1"}\n\n'
            b'data: line one\ndata: line two\n\n')
    EVENTS = [b'{"a":1}', b'{"b":"~0 ~1"}', b"line one\nline two"]

    @staticmethod
    def chunk(body, size):
        out = b""
        for start in range(0, len(body), size):
            piece = body[start:start + size]
            out += f"{len(piece):x};ext=1\r\n".encode() + piece + b"\r\n"
        return out + b"0\r\n\r\n"

    def test_a_chunked_body_fed_a_byte_at_a_time_decodes_whole(self):
        encoded = self.chunk(self.BODY, 7)
        decoder = streams.Chunked()
        decoded = b"".join(decoder.feed(encoded[i:i + 1]) for i in range(len(encoded)))
        self.assertEqual(decoded, self.BODY)
        self.assertTrue(decoder.done)

    def test_a_chunk_without_its_crlf_is_refused(self):
        with self.assertRaises(ValueError):
            streams.Chunked().feed(b"3\r\nabcXY")

    def test_events_split_anywhere_and_comments_left_out(self):
        for size in (1, 2, 5, 13, len(self.BODY)):
            splitter = streams.Events()
            events = []
            for start in range(0, len(self.BODY), size):
                events += splitter.feed(self.BODY[start:start + size])
            self.assertEqual(events, self.EVENTS, size)

    def test_an_event_arrives_with_the_read_that_completes_it(self):
        reads = [(100, self.BODY[:15]), (200, self.BODY[15:40]), (300, self.BODY[40:])]
        timed = streams.timed_events(reads, chunked=False)
        self.assertEqual(timed, list(zip([100, 300, 300], self.EVENTS)))
        encoded = self.chunk(self.BODY, 10)
        reads = [(100, encoded[:30]), (200, encoded[30:70]), (300, encoded[70:])]
        timed = streams.timed_events(reads, chunked=True)
        self.assertEqual([event for _, event in timed], self.EVENTS)
        self.assertEqual(timed[-1][0], 300)

    def test_marks_are_read_in_order_with_the_events_carrying_them(self):
        events = [(10, b'{"text":" ~0 ~1"}'), (20, b'{"kind":"status-update"}'),
                  (30, b'{"text":" ~2"}')]
        found, carrying = streams.marked(events, streams.BURST)
        self.assertEqual(found, [(0, 10), (1, 10), (2, 30)])
        self.assertEqual(carrying, 2)
        stamps, _ = streams.marked([(9, b'{"text":" @123456789"}')], streams.STAMP)
        self.assertEqual(stamps, [(123456789, 9)])

    def test_a_response_head(self):
        status, headers = streams.response_head(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked")
        self.assertEqual(status, 200)
        self.assertEqual(headers["transfer-encoding"], "chunked")


class Plan(unittest.TestCase):
    def test_every_stream_has_its_own_task_when_the_limit_allows(self):
        plan = streams.plan_streams(10_000, 0, 16, 65_536, 40)
        self.assertEqual(plan, {"own": 10_000, "joined": 0, "overflow": 0, "users": 625})
        plan = streams.plan_streams(10_000, 1_000, 16, 65_536, 40)
        self.assertEqual(plan, {"own": 10_000, "joined": 1_000, "overflow": 0, "users": 625})

    def test_the_own_task_streams_beyond_two_sockets_each_join_a_task(self):
        # Over HTTP/1.1: 2 sockets per own-task stream, 1 per joining one.
        plan = streams.plan_streams(10_000, 1_000, 16, 20_000, 40, margin=128)
        self.assertEqual(plan["own"], 20_000 - 40 - 128 - 11_000)
        self.assertEqual(plan["own"] + plan["joined"], 11_000)
        self.assertEqual(plan["overflow"], 10_000 - plan["own"])
        self.assertEqual(plan["users"], -(-plan["own"] // 16))
        self.assertLessEqual(2 * plan["own"] + plan["joined"], 20_000 - 40 - 128)

    def test_over_http2_every_stream_holds_one_socket(self):
        plan = streams.plan_streams(10_000, 1_000, 16, 20_000, 40, http2=True, margin=128)
        self.assertEqual(plan, {"own": 10_000, "joined": 1_000, "overflow": 0, "users": 625})
        with self.assertRaises(ValueError):
            streams.plan_streams(10_000, 9_900, 16, 20_000, 40, http2=True, margin=128)

    def test_with_the_client_over_http2_too_a_stream_holds_a_share_of_a_connection(self):
        # 11,000 streams, 100 a connection: 110 of the server's sockets, none per own task.
        self.assertEqual(streams.client_sockets(11_000, client_http2=True), 110)
        self.assertEqual(streams.client_sockets(11_001, client_http2=True), 111)
        self.assertEqual(streams.client_sockets(11_000), 11_000)
        plan = streams.plan_streams(10_000, 1_000, 16, 40 + 128 + 110, 40, http2=True,
                                    margin=128, client_http2=True)
        self.assertEqual(plan, {"own": 10_000, "joined": 1_000, "overflow": 0, "users": 625})
        with self.assertRaises(ValueError):
            streams.plan_streams(10_000, 1_000, 16, 40 + 128 + 109, 40, http2=True, margin=128,
                                 client_http2=True)
        # An HTTP/2 client with the backend over HTTP/1.1: each own task holds its request.
        plan = streams.plan_streams(10_000, 0, 16, 9_000, 40, margin=128, client_http2=True,
                                    per_connection=10)
        self.assertEqual(plan["own"], 9_000 - 40 - 128 - 1_000)
        self.assertEqual(plan["joined"], 10_000 - plan["own"])

    def test_more_joining_streams_than_tasks_is_refused(self):
        with self.assertRaises(ValueError):
            streams.plan_streams(10_000, 0, 16, 12_000, 40)
        with self.assertRaises(ValueError):
            streams.plan_streams(100, 101, 16, 65_536, 40, http2=True)


def result(load=0.1, others=(), **figures):
    return {"load": load, "disturbance": quiet.Disturbance(1.0, list(others), kernel=0.0),
            **figures}


def latency_rounds(ours_p50, floor_p50, ours_p99, floor_p99, **extra):
    return {
        "latency_ours": [result(p50_us=a, p99_us=b, max_us=b, **extra)
                         for a, b in zip(ours_p50, ours_p99)],
        "latency_floor": [result(p50_us=a, p99_us=b, max_us=b)
                          for a, b in zip(floor_p50, floor_p99)],
    }


def row(rows, start):
    return next(r for r in rows if r[0].startswith(start))


class Goals(unittest.TestCase):
    def test_added_latency_is_the_median_of_the_per_round_differences(self):
        rounds = latency_rounds([1200, 1400, 9000], [1000, 1000, 1000],
                                [2000, 2500, 3000], [1500, 1500, 1500])
        rows = streams.targets(rounds, 0.2)
        _, _, measured, state = row(rows, "added latency, backend delta → client event, p50")
        self.assertTrue(measured.startswith("0.400 ms"), measured)
        self.assertEqual(state, "met")
        _, _, measured, state = row(rows, "added latency, backend delta → client event, p99")
        self.assertTrue(measured.startswith("1.000 ms"), measured)
        self.assertEqual(state, "not met")

    def test_a_busy_machine_never_meets_a_goal(self):
        rounds = latency_rounds([1100] * 3, [1000] * 3, [1200] * 3, [1100] * 3)
        _, _, _, state = row(streams.targets(rounds, 1.7), "added latency")
        self.assertTrue(state.startswith("not met: machine busy (load 1.70 at start"), state)
        busy = quiet.Usage(4242, "rustc", 0.4)
        rounds["latency_floor"][1]["disturbance"] = quiet.Disturbance(1.0, [busy], 0.0)
        _, _, _, state = row(streams.targets(rounds, 0.1), "added latency")
        self.assertIn("4242/rustc used 40 % of a CPU", state)

    def test_idle_streams_are_judged_on_the_own_task_cost_times_ten_thousand(self):
        idle = [idle_result(per_own=own) for own in (15_000, 19_000, 21_000)]
        rows = streams.targets({"idle": idle}, 0.1)
        name, _, measured, state = row(rows, "10,000 idle streams")
        self.assertTrue(name.endswith(", HTTP/1.1 clients, backend over HTTP/1.1"), name)
        self.assertEqual(measured, "190.0 MB (32 %)")
        self.assertEqual(state, "met")
        self.assertEqual(len([r for r in rows if r[0].startswith("10,000 idle")]), 2)
        idle = [idle_result(per_own=own) for own in (20_000, 21_000, 22_000)]
        _, _, _, state = row(streams.targets({"idle": idle}, 0.1), "10,000 idle")
        self.assertEqual(state, "not met")

    def test_each_configuration_is_judged_on_its_own_in_a_row_of_its_own(self):
        rounds = three_configurations()
        rows = streams.targets(rounds, 0.1)
        under = [r for r in rows if r[0].startswith("10,000 idle streams, each on its own")]
        current = [r for r in rows if r[0].startswith("10,000 idle own-task streams, the current")]
        self.assertEqual([r[2:] for r in under], [("1,050.0 MB (10 %)", "not met"),
                                                   ("650.0 MB (15 %)", "not met"),
                                                   ("300.0 MB (10 %)", "not met")])
        self.assertEqual([r[2:] for r in current], [("1,050.0 MB (10 %)", "not met"),
                                                     ("650.0 MB (15 %)", "not met"),
                                                     ("300.0 MB (10 %)", "met")])
        for goal_rows, target in ((under, "< 200 MB"), (current, "≤ 600 MB")):
            self.assertEqual([r[1] for r in goal_rows], [target] * 3)
            self.assertEqual([r[0].rsplit("), ", 1)[1] for r in goal_rows], [
                "HTTP/1.1 clients, backend over HTTP/1.1", "HTTP/1.1 clients, backend over HTTP/2",
                "HTTP/2 clients, backend over HTTP/2"])
        rounds["idle_h2"] = [idle_result(per_own=own, http2=True)
                             for own in (60_000, 55_000, 62_000)]
        _, _, measured, state = row(streams.targets(rounds, 0.1),
                                    "10,000 idle own-task streams, the current goal (bytes per "
                                    "own-task stream × 10,000), HTTP/1.1 clients, backend over "
                                    "HTTP/2")
        self.assertTrue(measured.startswith("600.0 MB"), measured)
        self.assertEqual(state, "met")  # the goal is "at most"

    def test_a_busy_configuration_is_not_judged_and_the_others_still_are(self):
        busy = quiet.Disturbance(1.0, [quiet.Usage(4242, "rustc", 0.4)], 0.0)
        rounds = {"idle": [idle_result(per_own=own) for own in (100_000, 105_000, 110_000)],
                  "idle_h2_clients": [idle_result(per_own=own, http2=True, client_http2=True)
                                      for own in (15_000, 16_000, 17_000)]}
        rounds["idle_h2_clients"][0]["disturbance"] = busy
        rows = streams.targets(rounds, 0.1)
        _, _, measured, state = row(rows, "10,000 idle streams, each on its own working task "
                                    "(bytes per own-task stream × 10,000), HTTP/2 clients")
        self.assertEqual(measured, "160.0 MB (12 %)")
        self.assertTrue(state.startswith("not met: machine busy"), state)
        self.assertIn("4242/rustc", state)
        _, _, _, state = row(rows, "10,000 idle streams, each on its own working task (bytes per "
                             "own-task stream × 10,000), HTTP/1.1 clients")
        self.assertEqual(state, "not met")
        for name, _, _, state in streams.targets(rounds, 0.9):
            if name.startswith("10,000 idle"):
                self.assertTrue(state.startswith("not met: machine busy (load 0.90"), state)

    def test_every_stream_must_end_completed_whatever_the_load(self):
        rounds = {"idle": [idle_result(per_own=1, ended=11_000, completed=11_000)] * 3,
                  "idle_h2": [idle_result(per_own=1, http2=True, ended=11_000,
                                          completed=11_000)] * 3,
                  "idle_h2_clients": [idle_result(per_own=1, http2=True, client_http2=True,
                                                  ended=11_000, completed=11_000)] * 3}
        _, goal, measured, state = row(streams.targets(rounds, 1.5), "every idle stream")
        self.assertEqual((goal, measured, state),
                         ("all, in each of the 9 measurements", "99,000 of 99,000", "met"))
        self.assertEqual(streams.not_completed(rounds), 0)
        rounds["idle_h2"][1] = idle_result(per_own=1, http2=True, ended=11_000, completed=10_998)
        _, _, measured, state = row(streams.targets(rounds, 0.1), "every idle stream")
        self.assertEqual((measured, state), ("98,998 of 99,000", "not met"))
        self.assertEqual(streams.not_completed(rounds), 2)
        rounds["idle_h2_clients"][2] = idle_result(per_own=1, http2=True, client_http2=True,
                                                   ended=11_000, completed=10_999)
        _, _, measured, state = row(streams.targets(rounds, 0.1), "every idle stream")
        self.assertEqual((measured, state), ("98,997 of 99,000", "not met"))
        self.assertEqual(streams.not_completed(rounds), 3)


def idle_result(per_own, http2=False, ended=100, completed=100, client_http2=False, **figures):
    protocol = "http2" if http2 else "http1"
    connections = {"http1": 0, "http2": 0}
    connections[protocol] = 1 if http2 else 90
    answers = {"http1": 0, "http2": 0}
    answers[protocol] = 90
    figures = {"own": 90, "joined": 10, "overflow": 0, "rss_before": 10 << 20,
               "rss_middle": 11 << 20, "rss_drained": 11 << 20, "rss_after": 12 << 20,
               "per_stream": 20_000.0, "per_joined": 5_000.0, "per_joined_first": -1_000.0,
               "joined_measured": 5, "files_before": 40, "files_after": 300,
               "threads_before": 4, "threads": 5,
               "opened_s": 2.5, "joined_s": 0.4, "streams": 100,
               "client_connections": 1 if client_http2 else 100, **figures}
    return result(per_own=per_own, http2=http2, client_http2=client_http2, ended=ended,
                  completed=completed,
                  backend_connections=connections, backend_answers=answers, **figures)


class JoiningHalves(unittest.TestCase):
    def test_the_joining_streams_open_in_two_halves_the_second_measured(self):
        self.assertEqual(streams.joining_halves(list(range(5))), [[0, 1], [2, 3, 4]])
        self.assertEqual(streams.joining_halves([7]), [[7]])
        self.assertEqual(streams.joining_halves([]), [])
        # Readings of (streams, RSS after them): the figure is read on the second half, from
        # the reading after the first.
        self.assertEqual(streams.joined_measured(100, [(2, 90), (3, 120)]), (3, 90))
        self.assertEqual(streams.joined_measured(100, [(1, 110)]), (1, 100))
        self.assertEqual(streams.joined_measured(100, []), (0, 100))


def three_configurations():
    """Idle rounds of the three configurations: about 105, 65 and 30 KB per own-task stream."""
    return {"idle": [idle_result(per_own=own) for own in (100_000, 105_000, 110_000)],
            "idle_h2": [idle_result(per_own=own, http2=True) for own in (70_000, 60_000, 65_000)],
            "idle_h2_clients": [idle_result(per_own=own, http2=True, client_http2=True)
                                for own in (30_000, 28_000, 31_000)]}


class IdleReport(unittest.TestCase):
    def test_the_backend_connections_say_how_the_answers_shared_them(self):
        http2 = [idle_result(1, http2=True) for _ in range(3)]
        self.assertEqual(streams.backend_connections(http2),
                         "90 answers on 1 HTTP/2 connection, none on HTTP/1.1 (every round)")
        http1 = [idle_result(1)]
        self.assertEqual(streams.backend_connections(http1),
                         "90 answers on 90 HTTP/1.1 connections, none on HTTP/2")
        odd = idle_result(1, http2=True)
        odd["backend_connections"] = {"http1": 1, "http2": 2}
        self.assertEqual(streams.backend_connections(http2[:1] + [odd]),
                         "90 answers on 1 HTTP/2 connection, none on HTTP/1.1; "
                         "90 answers on 2 HTTP/2 connections, 0 on 1 HTTP/1.1")

    def test_the_client_connections_say_how_many_streams_each_carried(self):
        http2 = [idle_result(1, http2=True, client_http2=True, streams=11_000,
                             client_connections=110) for _ in range(3)]
        self.assertEqual(streams.client_connections(http2), "110 HTTP/2 (100 streams each)")
        http2[1]["client_connections"] = 111
        self.assertEqual(streams.client_connections(http2), "110–111 HTTP/2 (99–100 streams each)")
        http1 = [idle_result(1, streams=11_000, client_connections=11_000)]
        self.assertEqual(streams.client_connections(http1), "11,000 HTTP/1.1 (1 stream each)")

    def test_one_column_per_configuration_with_every_row_filled(self):
        rounds = three_configurations()
        settings = {"per_user": 16, "streams": 90, "joining": 10}
        lines = streams.idle_section(rounds, settings)
        table = [line for line in lines if line.startswith("| ")]
        self.assertEqual(table[0], "| figure | backend over HTTP/1.1 | backend over HTTP/2 "
                                   "| client and backend over HTTP/2 |")
        for line in table:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            self.assertEqual(len(cells), 4, line)
            self.assertNotIn("—", cells, line)
        per_own = next(line for line in table if line.startswith("| **bytes per own-task"))
        self.assertIn("**105,000 (10 %)**", per_own)
        self.assertIn("**65,000 (15 %)**", per_own)
        self.assertIn("**30,000 (10 %)**", per_own)
        self.assertTrue(any(line.startswith("| **bytes per joining stream")
                            and "**5,000 (0 %)** over 5" in line for line in table))
        self.assertTrue(any(line.startswith("| bytes per joining stream of the first half")
                            and "-1,000 (0 %)" in line for line in table))
        self.assertIn("| streams ended `completed` after the release | 300 of 300 | 300 of 300 "
                      "| 300 of 300 |", table)
        self.assertIn("90 answers on 1 HTTP/2 connection", "".join(table))
        self.assertIn("| 100 HTTP/1.1 (1 stream each) | 100 HTTP/1.1 (1 stream each) "
                      "| 1 HTTP/2 (100 streams each) |", "".join(table))
        self.assertIn(f"{streams.STREAMS_PER_CONNECTION} streams a connection", "".join(lines))
        self.assertEqual(streams.idle_section({}, settings), [])


def sse(answer):
    return b"data: " + json.dumps(answer, separators=(",", ":")).encode() + b"\n\n"


class Stand(streams_backend.Http2Connection):
    """The server's side of one h2c connection as the benchmark's client meets it (the
    backend's HTTP/2 connection, within the client's windows, answering A2A instead): each
    `message/stream` answered with its task, then `working`, then nothing until released, then
    `bulk` bytes of comments (beyond the client's stream window) and the final event."""

    async def respond(self, stream_id, headers, body):
        served = self.backend
        served.requests.append((headers, json.loads(body)))
        number = len(served.requests)
        try:
            if served.status != 200:
                self.h2.send_headers(stream_id, [(":status", str(served.status)),
                                                 ("content-type", "application/json")])
                await self.send(stream_id, b'{"error":"refused"}', end=True)
                return
            out = streams_backend.Http2Answer(self, stream_id)
            out.start()
            if served.error:
                out.write(sse({"jsonrpc": "2.0", "id": 1,
                               "error": {"code": -32003, "message": "too many"}}))
                await out.end()
                return
            task = {"kind": "task", "id": f"task-{number}", "status": {"state": "submitted"}}
            out.write(sse({"jsonrpc": "2.0", "id": 1, "result": task}))
            out.write(b": keep-alive\n\n")
            out.write(sse({"jsonrpc": "2.0", "id": 1, "result": {
                "kind": "status-update", "taskId": f"task-{number}",
                "status": {"state": "working"}, "final": False}}))
            await out.drain()
            await served.release.wait()
            comment = b": " + b"x" * 4094 + b"\n\n"
            for _ in range(served.bulk // len(comment)):
                out.write(comment)
            out.write(sse({"jsonrpc": "2.0", "id": 1, "result": {
                "kind": "status-update", "taskId": f"task-{number}",
                "status": {"state": "completed"}, "final": True}}))
            await out.end()
        except (h2.exceptions.StreamClosedError, ConnectionError):
            pass


class Http2Client(unittest.IsolatedAsyncioTestCase):
    """The client's idle streams over h2c connections to a stand-in for the server."""

    PORT = 8080

    async def asyncSetUp(self):
        self.requests, self.status, self.error = [], 200, False
        self.bulk = 3 << 19  # 1.5 MiB a stream: beyond the client's stream window of 1 MiB
        self.release = asyncio.Event()
        self.served, self.writers = [], []
        self.client = None

    def connected(self, streams_in_all):
        self.client = streams.Http2Client(self.PORT, streams_in_all, per_connection=3,
                                          connect=self.connect)
        return self.client

    async def asyncTearDown(self):
        if self.client is not None:
            await self.client.close()
        await asyncio.wait_for(asyncio.gather(*self.served), 10)

    async def connect(self):
        ours, theirs = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=theirs)
        self.writers.append(writer)

        async def serve():
            try:
                await reader.readexactly(len(streams_backend.PREFACE))
                await Stand(self, reader, writer).serve()
            finally:
                writer.close()

        self.served.append(asyncio.ensure_future(serve()))
        return await asyncio.open_connection(sock=ours)

    @staticmethod
    def requests_for(count):
        return [(f"token-{index}", streams.stream_body(f"idle-{index}"))
                for index in range(count)]

    async def test_streams_share_connections_in_turn_reach_working_and_end_completed(self):
        opened = await streams.open_all(self.PORT, self.requests_for(7), self.connected(7))
        self.assertEqual(len(self.client.links), 3)  # 7 streams, 3 a connection
        self.assertEqual([link.placed for link in self.client.links], [3, 2, 2])
        self.assertEqual([stream.link for stream in opened[:4]],
                         self.client.links + self.client.links[:1])
        self.assertEqual(sorted(stream.task_id for stream in opened),
                         sorted(f"task-{number}" for number in range(1, 8)))
        self.assertTrue(all(stream.working and stream.final is None for stream in opened))
        for (headers, body), index in zip(self.requests, range(7)):
            self.assertEqual(headers[":method"], "POST")
            self.assertEqual(headers[":path"], streams.RPC_PATH)
            self.assertEqual(headers[":authority"], f"127.0.0.1:{self.PORT}")
            self.assertTrue(headers["authorization"].startswith("Bearer token-"))
            self.assertEqual(headers["content-type"], "application/json")
            self.assertEqual(headers["accept"], "text/event-stream")
            self.assertEqual(body["method"], "message/stream")
        self.release.set()
        finals = await asyncio.wait_for(asyncio.gather(*(s.reading for s in opened)), 10)
        self.assertEqual(finals, ["completed"] * 7)

    async def test_joining_streams_go_on_after_the_own_task_ones(self):
        client = self.connected(4)
        own = await streams.open_all(self.PORT, self.requests_for(2), client)
        joined = await streams.open_all(self.PORT, [
            (stream.token, streams.resubscribe_body(stream.task_id)) for stream in own], client)
        self.assertEqual([link.placed for link in client.links], [2, 2])
        self.assertEqual(self.requests[2][1]["method"], "tasks/resubscribe")
        self.release.set()
        finals = await asyncio.wait_for(asyncio.gather(*(s.reading for s in own + joined)), 10)
        self.assertEqual(finals, ["completed"] * 4)

    async def test_an_error_answer_or_a_refusal_fails_the_opening(self):
        client = self.connected(2)
        self.error = True
        with self.assertRaisesRegex(RuntimeError, "answered with an error"):
            await streams.open_all(self.PORT, self.requests_for(1), client)
        self.error, self.status = False, 429
        with self.assertRaisesRegex(RuntimeError, "answered 429"):
            await streams.open_all(self.PORT, self.requests_for(1), client)

    async def test_a_connection_the_server_closes_ends_its_streams(self):
        opened = await streams.open_all(self.PORT, self.requests_for(2), self.connected(2))
        self.writers[0].transport.abort()
        finals = await asyncio.wait_for(asyncio.gather(*(s.reading for s in opened)), 10)
        self.assertEqual(finals, [None, None])
        closed = self.client.links[0]
        self.assertTrue(closed.closed)
        # A connection the server closed is replaced on its turn.
        again = await streams.open_all(self.PORT, self.requests_for(1), self.client)
        self.assertIsNot(again[0].link, closed)
        self.assertEqual(self.client.links, [again[0].link])
        self.release.set()
        self.assertEqual(await asyncio.wait_for(again[0].reading, 10), "completed")


if __name__ == "__main__":
    unittest.main()

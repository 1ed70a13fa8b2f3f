"""The streaming benchmark's own logic (bench/streams.py): percentiles, rates and ratios, the
reading of chunked bodies and event streams split anywhere, the plan of the idle streams within
the open-files limit, the idle streams' report with the backend over HTTP/1.1 and HTTP/2, and
the goals refused on a busy machine."""

import unittest

import quiet
import streams


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
        _, _, measured, state = row(streams.targets({"idle": idle}, 0.1), "10,000 idle")
        self.assertTrue(measured.startswith("190.0 MB"), measured)
        self.assertTrue(measured.endswith("backend over HTTP/1.1"), measured)
        self.assertEqual(state, "met")
        idle = [idle_result(per_own=own) for own in (20_000, 21_000, 22_000)]
        _, _, _, state = row(streams.targets({"idle": idle}, 0.1), "10,000 idle")
        self.assertEqual(state, "not met")

    def test_the_better_backend_protocol_is_judged_and_named(self):
        rounds = {"idle": [idle_result(per_own=own) for own in (100_000, 105_000, 110_000)],
                  "idle_h2": [idle_result(per_own=own, http2=True)
                              for own in (70_000, 60_000, 65_000)]}
        rows = streams.targets(rounds, 0.1)
        name, goal, measured, state = row(rows, "10,000 idle streams, each on its own")
        self.assertEqual(goal, "< 200 MB")
        self.assertTrue(measured.startswith("650.0 MB (15 %), backend over HTTP/2"), measured)
        self.assertIn("over HTTP/1.1: 1,050.0 MB", measured)
        self.assertEqual(state, "not met")
        name, goal, measured, state = row(rows, "10,000 idle own-task streams, the current goal")
        self.assertEqual(goal, "≤ 600 MB")
        self.assertTrue(measured.startswith("650.0 MB"), measured)
        self.assertEqual(state, "not met")
        rounds["idle_h2"] = [idle_result(per_own=own, http2=True)
                             for own in (60_000, 55_000, 62_000)]
        _, _, measured, state = row(streams.targets(rounds, 0.1), "10,000 idle own-task")
        self.assertTrue(measured.startswith("600.0 MB"), measured)
        self.assertEqual(state, "met")  # the goal is "at most"
        _, _, _, state = row(streams.targets(rounds, 0.9), "10,000 idle own-task")
        self.assertTrue(state.startswith("not met: machine busy"), state)

    def test_every_stream_must_end_completed_whatever_the_load(self):
        rounds = {"idle": [idle_result(per_own=1, ended=11_000, completed=11_000)] * 3,
                  "idle_h2": [idle_result(per_own=1, http2=True, ended=11_000,
                                          completed=11_000)] * 3}
        _, goal, measured, state = row(streams.targets(rounds, 1.5), "every idle stream")
        self.assertEqual((goal, measured, state),
                         ("all, in each of the 6 measurements", "66,000 of 66,000", "met"))
        self.assertEqual(streams.not_completed(rounds), 0)
        rounds["idle_h2"][1] = idle_result(per_own=1, http2=True, ended=11_000, completed=10_998)
        _, _, measured, state = row(streams.targets(rounds, 0.1), "every idle stream")
        self.assertEqual((measured, state), ("65,998 of 66,000", "not met"))
        self.assertEqual(streams.not_completed(rounds), 2)


def idle_result(per_own, http2=False, ended=100, completed=100, **figures):
    protocol = "http2" if http2 else "http1"
    connections = {"http1": 0, "http2": 0}
    connections[protocol] = 1 if http2 else 90
    answers = {"http1": 0, "http2": 0}
    answers[protocol] = 90
    figures = {"own": 90, "joined": 10, "overflow": 0, "rss_before": 10 << 20,
               "rss_middle": 11 << 20, "rss_after": 12 << 20, "per_stream": 20_000.0,
               "per_joined": 5_000.0, "files_before": 40, "files_after": 300, "threads": 5,
               "opened_s": 2.5, "joined_s": 0.4, **figures}
    return result(per_own=per_own, http2=http2, ended=ended, completed=completed,
                  backend_connections=connections, backend_answers=answers, **figures)


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

    def test_one_column_per_backend_protocol_with_every_row_filled(self):
        rounds = {"idle": [idle_result(per_own=own) for own in (100_000, 105_000, 110_000)],
                  "idle_h2": [idle_result(per_own=own, http2=True)
                              for own in (70_000, 60_000, 65_000)]}
        settings = {"per_user": 16, "streams": 90, "joining": 10}
        lines = streams.idle_section(rounds, settings)
        table = [line for line in lines if line.startswith("| ")]
        self.assertEqual(table[0], "| figure | backend over HTTP/1.1 | backend over HTTP/2 |")
        for line in table:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            self.assertEqual(len(cells), 3, line)
            self.assertNotIn("—", cells, line)
        per_own = next(line for line in table if line.startswith("| **bytes per own-task"))
        self.assertIn("**105,000 (10 %)**", per_own)
        self.assertIn("**65,000 (15 %)**", per_own)
        self.assertTrue(any(line.startswith("| **bytes per joining stream") and "5,000 (0 %)"
                            in line for line in table))
        self.assertIn("| streams ended `completed` after the release | 300 of 300 | 300 of 300 |",
                      table)
        self.assertIn("90 answers on 1 HTTP/2 connection", "".join(table))
        self.assertEqual(streams.idle_section({}, settings), [])


if __name__ == "__main__":
    unittest.main()

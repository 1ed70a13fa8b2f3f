"""The load benchmark's report (bench/harness.py): figures are medians of the rounds with their
spread, and a target is never called met when the machine was busy."""

import contextlib
import io
import json
import os
import tempfile
import unittest

import harness
import quiet


def result(rps, cpu_us=50.0, load=0.1, others=()):
    return {"requests": int(rps * 5), "rps": rps, "duration_us": 5_000_000, "p50_us": 1000,
            "p99_us": 1500, "p999_us": 3000, "status_errors": 0, "socket_errors": 0,
            "cpu_us": {"server": cpu_us}, "connections": 64, "load": load,
            "disturbance": quiet.Disturbance(5.0, list(others), kernel=0.02)}


def report(ours, floor, floor_others=()):
    built = harness.Report()
    with contextlib.redirect_stderr(io.StringIO()):
        for number, (mine, theirs) in enumerate(zip(ours, floor)):
            built.add("ours_memory_hs256_send", "ours, memory, HS256: message/send",
                      result(mine), "floor_json_send")
            built.add("floor_json_send", "floor (a) JSON: message/send body",
                      result(theirs, cpu_us=20.0, others=floor_others if number == 1 else ()))
    return built


def target(rows, name):
    return next(row for row in rows if row[0] == name)


SEND = "`message/send`, memory store, vs JSON floor"


class Targets(unittest.TestCase):
    def test_a_ratio_of_medians_with_the_spread_of_the_rounds(self):
        rows = harness.targets(report([40_000, 36_000, 10_000], [50_000, 50_000, 50_000]), 0.2)
        _, goal, measured, state = target(rows, SEND)
        self.assertEqual(goal, "≥ 70 %")
        self.assertEqual(measured, "72 % (83 %)")
        self.assertEqual(state, "met")

    def test_below_the_goal_on_a_quiet_machine_is_not_met(self):
        rows = harness.targets(report([18_000, 18_600, 18_300], [52_000, 52_300, 51_900]), 0.2)
        self.assertEqual(target(rows, SEND)[3], "not met")

    def test_a_load_at_start_above_the_limit_refuses_met(self):
        rows = harness.targets(report([40_000] * 3, [50_000] * 3), 1.7)
        self.assertEqual(target(rows, SEND)[3], "not met: machine busy (load 1.70 at start)")

    def test_another_process_during_a_floor_round_refuses_met(self):
        rustc = quiet.Usage(1234, "rustc", 0.34)
        rows = harness.targets(report([40_000] * 3, [50_000] * 3, floor_others=[rustc]), 0.2)
        self.assertEqual(target(rows, SEND)[3],
                         "not met: machine busy (1234/rustc used 34 % of a CPU)")

    def test_a_target_without_its_scenarios_is_not_measured(self):
        rows = harness.targets(report([40_000] * 3, [50_000] * 3), 0.2)
        self.assertEqual(target(rows, "`message/send` vs JS SDK")[2:], ("not measured", "—"))


class RedisCpu(unittest.TestCase):
    NAME = ("Redis CPU per `message/send` (Redis store and limiter) vs per plain `SET` of the "
            "stored bytes")

    def rows(self, per_send, per_set, load=0.2):
        built = harness.Report()
        with contextlib.redirect_stderr(io.StringIO()):
            for cpu in per_send:
                sent = result(18_000)
                sent["cpu_us"]["redis"] = cpu
                built.add("ours_redis_hs256_send", "ours, redis, HS256: message/send", sent)
        floor = [{"cpu_us": cpu, "disturbance": quiet.Disturbance(2.0, [], kernel=0.0)}
                 for cpu in per_set]
        return harness.targets(built, load, floor)

    def test_redis_cpu_per_send_is_judged_against_twice_a_set(self):
        _, goal, measured, state = target(self.rows([34.0, 36.0, 35.0], [8.0, 9.0, 8.5]),
                                          self.NAME)
        self.assertEqual(goal, "≤ 2×")
        self.assertTrue(measured.startswith("4.1× (35.0 (6 %) vs 8.5 (12 %) µs)"), measured)
        self.assertEqual(state, "not met")
        self.assertEqual(target(self.rows([15.0] * 3, [8.0] * 3), self.NAME)[3], "met")

    def test_without_the_redis_floor_there_is_no_row(self):
        built = report([40_000] * 3, [50_000] * 3)
        self.assertFalse(any(row[0] == self.NAME for row in harness.targets(built, 0.2)))


class OtherTargets(unittest.TestCase):
    def test_the_table_carries_the_targets_of_the_last_streams_run(self):
        with tempfile.TemporaryDirectory() as folder:
            self.assertEqual(harness.other_targets(folder),
                             [("the targets of `bench/streams`", "—",
                               "not measured: run `bench/streams`", None, "—")])
            with open(os.path.join(folder, "streams.json"), "w") as results:
                json.dump({"run": "2026-01-01 00:00 → 00:08 UTC", "goals": [
                    {"goal": "10,000 idle own-task streams", "target": "≤ 600 MB",
                     "measured": "516 MB (4 %)", "verdict": "met", "load_at_start": 0.31}]},
                          results)
            rows = harness.other_targets(folder)
        self.assertEqual(rows, [("10,000 idle own-task streams (`bench/streams`, run "
                                 "2026-01-01 00:00 → 00:08 UTC)", "≤ 600 MB", "516 MB (4 %)",
                                 0.31, "met")])
        built = report([40_000] * 3, [50_000] * 3)
        info = {"nproc": 2, "cpu": "test", "memory_gib": 1.0, "kernel": "6", "load_1min": 0.2,
                "load_at_start": "0.20 0.30 0.40"}
        settings = {"duration": 5, "threads": 2, "connections": 64, "rounds": 3}
        text = harness.markdown(built, info, [], None, "2026-01-01 00:00", "00:10", settings,
                                rows)
        self.assertIn("| 10,000 idle own-task streams (`bench/streams`, run 2026-01-01 00:00 → "
                      "00:08 UTC) | ≤ 600 MB | 516 MB (4 %) | 0.31 | met |", text.splitlines())


class Markdown(unittest.TestCase):
    def test_every_figure_carries_its_spread_load_and_others(self):
        rustc = quiet.Usage(1234, "rustc", 0.34)
        built = report([40_000, 36_000, 38_000], [50_000] * 3, floor_others=[rustc])
        info = {"nproc": 2, "cpu": "test", "memory_gib": 1.0, "kernel": "6", "load_1min": 0.2,
                "load_at_start": "0.20 0.30 0.40"}
        settings = {"duration": 5, "threads": 2, "connections": 64, "rounds": 3}
        text = harness.markdown(built, info, [], None, "2026-01-01 00:00", "00:10", settings)
        self.assertIn("**Quiet machine: no**", text)
        self.assertIn("1 of 6 measurements had another process above 5 %", text)
        row = next(line for line in text.splitlines()
                   if line.startswith("| ours, memory, HS256: message/send"))
        self.assertIn("| 38,000 (11 %) |", row)
        self.assertIn("| 76 % (11 %) |", row)
        floor_row = next(line for line in text.splitlines() if line.startswith("| floor (a)"))
        self.assertIn("| 0.10 | 34 % (rustc) |", floor_row)
        self.assertIn("not met: machine busy (1234/rustc used 34 % of a CPU)", text)


if __name__ == "__main__":
    unittest.main()


class Threading(unittest.TestCase):
    def test_per_core_against_shared_in_the_same_rounds(self):
        built = harness.Report()
        with contextlib.redirect_stderr(io.StringIO()):
            for per_core, shared in [(30_000, 20_000), (33_000, 22_000), (27_000, 18_000)]:
                built.add("ours_memory_hs256_per_core_send", "per-core", result(per_core, 40.0))
                built.add("ours_memory_hs256_shared_send", "shared", result(shared, 60.0))
        lines = harness.threading_lines(built)
        row = next(line for line in lines if line.startswith("| message/send"))
        self.assertIn("| 30,000 (20 %) | 20,000 (20 %) | 1.50× (0 %) |", row)
        self.assertIn("| 0.67× (0 %) |", row)
        self.assertFalse(any(line.startswith("| tasks/get") for line in lines))

    def test_nothing_without_both_modes(self):
        self.assertEqual(harness.threading_lines(report([40_000] * 3, [50_000] * 3)), [])

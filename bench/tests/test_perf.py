"""Reading perf's output (bench/perf.py)."""

import unittest

import perf

STAT = """# started on Tue Dec  1 16:35:09 2026

134.56,msec,task-clock,134557213,100.00,0.143,CPUs utilized
45,,context-switches,134557213,100.00,334.430,/sec
2691,,page-faults,134557213,100.00,19.999,K/sec
<not supported>,,cycles,0,100.00,,
<not counted>,,instructions:u,0,100.00,,
"""

REPORT = """
    45.10%     0.20%  [k] entry_SYSCALL_64
     3.00%     3.00%  [.] core::hash::sip::Hasher<S>::write
     1.50%     1.50%  [k] clear_page_erms
"""


class PerfOutput(unittest.TestCase):
    def test_perf_stat_values_and_events_the_machine_cannot_count(self):
        self.assertEqual(perf.parse_perf_stat(STAT), {
            "task-clock": 134.56, "context-switches": 45.0, "page-faults": 2691.0,
            "cycles": None, "instructions": None})

    def test_perf_report_with_children_and_self(self):
        self.assertEqual(perf.parse_report(REPORT), [
            (45.10, 0.20, "k", "entry_SYSCALL_64"),
            (3.00, 3.00, ".", "core::hash::sip::Hasher<S>::write"),
            (1.50, 1.50, "k", "clear_page_erms")])

    def test_perf_report_with_self_only(self):
        self.assertEqual(perf.parse_report("     7.25%  [.] memcpy\n"),
                         [(7.25, 7.25, ".", "memcpy")])

    def test_a_profile_in_microseconds_per_request(self):
        rows = perf.parse_report(REPORT + "    10.00%     0.00%  [k] do_syscall_64\n"
                                 "    12.00%     0.00%  [k] asm_exc_page_fault\n")
        own = [(share, share, kind, symbol) for _, share, kind, symbol in rows]
        found = perf.tabulate(rows, own, cpu_us=80.0)
        # One path under two names counts once (the largest), not twice.
        self.assertAlmostEqual(found["entries"]["system calls"], 36.08)
        self.assertAlmostEqual(found["entries"]["page faults"], 9.6)
        self.assertAlmostEqual(found["entries"]["  of which page clearing"], 1.2)
        self.assertAlmostEqual(found["entries"]["epoll waits"], 0.0)
        self.assertAlmostEqual(found["symbols"]["[.] core::hash::sip::Hasher<S>::write"], 2.4)
        self.assertAlmostEqual(found["kernel"], (0.2 + 1.5) * 0.8)
        self.assertAlmostEqual(found["user"], 80.0 - (0.2 + 1.5) * 0.8)

    def test_a_stat_table_says_which_counters_are_missing(self):
        run = {"rps": 1000.0, "per_request": {"task-clock": 50.0, "user µs": 30.0,
                                              "kernel µs": 20.0, "context-switches": 0.5,
                                              "cpu-migrations": 0.0, "page-faults": 0.25,
                                              "major-faults": 0.0, "cycles": None,
                                              "instructions": None}}
        floor = {"rps": 2000.0, "per_request": dict(run["per_request"], **{"task-clock": 20.0})}
        text = "\n".join(perf.stat_table({"ours": [run] * 3, "floor": [floor] * 3},
                                         "message/send"))
        self.assertIn("| CPU (task clock) µs | 50.0 (0 %) | 20.0 (0 %) | 2.50× |", text)
        self.assertIn("| cycles | not supported | not supported | — |", text)


if __name__ == "__main__":
    unittest.main()

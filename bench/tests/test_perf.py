"""Reading perf's output (bench/perf.py)."""

import unittest

import perf

STAT = """# started on Tue Dec  1 16:35:09 2026

134.56,msec,task-clock,134557213,100.00,0.143,CPUs utilized
45,,context-switches,134557213,100.00,334.430,/sec
2691,,page-faults,134557213,100.00,19.999,K/sec
<not supported>,,cycles,0,100.00,,
<not counted>,,instructions:u,0,100.00,,
812,,syscalls:sys_enter_futex,134557213,100.00,,
"""

STATUS = """Name:\tmagisterium-a2a
Threads:\t5
voluntary_ctxt_switches:\t1520
nonvoluntary_ctxt_switches:\t37
"""

SCRIPT = """ 3096/3101  
\t          68f80e magisterium_a2a::metrics::Metrics::request (/work/target/release/magisterium-a2a)
\t     5ca41b709e0 [unknown] ([unknown])

 3096/3100  
\tffffffff815e9ed0 clear_page_erms+0x10 ([kernel.kallsyms])
\tffffffff815ec9d0 handle_mm_fault+0xd0 ([kernel.kallsyms])
\tffffffff821f3046 exc_page_fault+0x176 ([kernel.kallsyms])
\tffffffff81000c82 asm_exc_page_fault+0x22 ([kernel.kallsyms])
\t          6b8164 <core::hash::sip::Hasher<S> as core::hash::Hasher>::write (/x/magisterium-a2a)

 3096/3100  
\tffffffff8200e18f tcp_sendmsg_locked ([kernel.kallsyms])
\tffffffff816b7f0d vfs_writev ([kernel.kallsyms])
\tffffffff81e2cd59 do_syscall_64+0x59 ([kernel.kallsyms])
\tffffffff81e2cd60 entry_SYSCALL_64_after_hwframe+0x76 ([kernel.kallsyms])
\t          16db20 __GI___writev (/usr/lib/x86_64-linux-gnu/libc.so.6)

 3096/3101  
\t          67ac48 moka::cht::map::bucket::BucketArray<K,V>::get (/x/magisterium-a2a)
"""


class PerfOutput(unittest.TestCase):
    def test_perf_stat_values_and_events_the_machine_cannot_count(self):
        self.assertEqual(perf.parse_perf_stat(STAT), {
            "task-clock": 134.56, "context-switches": 45.0, "page-faults": 2691.0,
            "cycles": None, "instructions": None, "syscalls:sys_enter_futex": 812.0})

    def test_switches_of_a_thread_voluntary_then_involuntary(self):
        self.assertEqual(perf.parse_switches(STATUS), (1520, 37))

    def test_perf_script_samples_leaf_first(self):
        samples = perf.parse_script(SCRIPT)
        self.assertEqual(len(samples), 4)
        self.assertEqual(samples[0][0], ("magisterium_a2a::metrics::Metrics::request", "."))
        self.assertEqual(samples[1][0], ("clear_page_erms", "k"))
        self.assertEqual(samples[1][-1],
                         ("<core::hash::sip::Hasher<S> as core::hash::Hasher>::write", "."))
        self.assertEqual(samples[3], [("moka::cht::map::bucket::BucketArray<K,V>::get", ".")])

    def test_a_profile_in_microseconds_per_request(self):
        found = perf.tabulate(perf.parse_script(SCRIPT), cpu_us=80.0)
        # 4 samples of 20 µs each; a stack holding two names of one path counts once.
        self.assertEqual(found["samples"], 4)
        self.assertAlmostEqual(found["entries"]["system calls"], 20.0)
        self.assertAlmostEqual(found["entries"]["page faults"], 20.0)
        self.assertAlmostEqual(found["entries"]["  of which page clearing"], 20.0)
        self.assertAlmostEqual(found["entries"]["epoll waits"], 0.0)
        self.assertAlmostEqual(found["symbols"]["[k] tcp_sendmsg_locked"], 20.0)
        self.assertAlmostEqual(found["kernel"], 40.0)
        self.assertAlmostEqual(found["user"], 40.0)

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

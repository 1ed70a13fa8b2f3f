"""The quiet-machine check (bench/quiet.py): reading /proc, other processes' CPU between two
snapshots, and the verdict a busy machine gets."""

import os
import subprocess
import sys
import tempfile
import time
import unittest

import quiet

TICKS = quiet.CLOCK_TICKS


def proc(pid, ppid, ticks, comm="p", started=100, kernel=False):
    return quiet.Proc(pid=pid, ppid=ppid, comm=comm, ticks=ticks, started=started, kernel=kernel)


def snap(at, *procs):
    return quiet.Snapshot(at, {entry.pid: entry for entry in procs})


def stat_line(pid, comm, ppid=1, flags=0, utime=0, stime=0, cutime=0, cstime=0, started=500):
    fields = ["S", ppid, 0, 0, 0, -1, flags, 0, 0, 0, 0, utime, stime, cutime, cstime,
              20, 0, 1, 0, started]
    return f"{pid} ({comm}) " + " ".join(str(f) for f in fields) + " 0 0\n"


class ParseStat(unittest.TestCase):
    def test_a_command_name_with_spaces_and_parentheses(self):
        entry = quiet.parse_stat(stat_line(42, "a (b) c", ppid=7, utime=1, stime=2, cutime=3,
                                           cstime=4, started=900))
        self.assertEqual((entry.pid, entry.ppid, entry.comm, entry.ticks, entry.started),
                         (42, 7, "a (b) c", 10, 900))
        self.assertFalse(entry.kernel)

    def test_kernel_threads_are_told_by_their_flag(self):
        self.assertTrue(quiet.parse_stat(stat_line(9, "ksoftirqd/0", ppid=2,
                                                   flags=quiet.PF_KTHREAD)).kernel)

    def test_snapshot_reads_every_numbered_folder_and_skips_the_rest(self):
        with tempfile.TemporaryDirectory() as root:
            for pid, text in ((5, stat_line(5, "cc1", utime=7)), (6, "garbage")):
                os.makedirs(os.path.join(root, str(pid)))
                with open(os.path.join(root, str(pid), "stat"), "w") as out:
                    out.write(text)
            os.makedirs(os.path.join(root, "self"))
            found = quiet.snapshot(root)
        self.assertEqual(list(found.procs), [5])
        self.assertEqual(found.procs[5].ticks, 7)

    def test_the_real_proc_holds_this_process(self):
        self.assertIn(os.getpid(), quiet.snapshot().procs)


class Disturbance(unittest.TestCase):
    def test_another_process_share_of_a_cpu(self):
        before = snap(0.0, proc(1, 0, 0), proc(300, 1, 1_000, comm="rustc"))
        after = snap(2.0, proc(1, 0, 0), proc(300, 1, 1_000 + TICKS, comm="rustc"))
        found = quiet.disturbance(before, after, ours=set())
        self.assertEqual(str(found.worst), "300/rustc used 50 % of a CPU")
        self.assertEqual([u.pid for u in found.busy()], [300])

    def test_the_benchmark_and_what_it_started_are_left_out(self):
        before = snap(0.0, proc(10, 1, 0, comm="python3"), proc(11, 10, 0, comm="server"),
                      proc(12, 11, 0, comm="wrk"))
        after = snap(1.0, proc(10, 1, 0, comm="python3"), proc(11, 10, 2 * TICKS, comm="server"),
                     proc(12, 11, TICKS, comm="wrk"))
        ours = quiet.descendants(10, before, after)
        self.assertEqual(ours, {10, 11, 12})
        found = quiet.disturbance(before, after, ours)
        self.assertEqual(found.others, [])
        self.assertEqual(found.busy(), [])

    def test_kernel_threads_are_counted_apart(self):
        before = snap(0.0, proc(9, 2, 0, comm="ksoftirqd/0", kernel=True))
        after = snap(1.0, proc(9, 2, TICKS // 2, comm="ksoftirqd/0", kernel=True))
        found = quiet.disturbance(before, after, ours=set())
        self.assertEqual(found.others, [])
        self.assertAlmostEqual(found.kernel, 0.5, places=2)

    def test_a_process_started_during_the_run_counts_from_zero(self):
        before = snap(0.0, proc(1, 0, 0))
        after = snap(1.0, proc(1, 0, 0), proc(400, 1, TICKS // 4, comm="cc1"))
        self.assertAlmostEqual(quiet.disturbance(before, after, set()).worst.share, 0.25,
                               places=2)

    def test_a_reused_pid_is_a_new_process(self):
        before = snap(0.0, proc(400, 1, 10 * TICKS, comm="old", started=100))
        after = snap(1.0, proc(400, 1, TICKS // 10, comm="new", started=900))
        found = quiet.disturbance(before, after, set())
        self.assertAlmostEqual(found.worst.share, 0.1, places=2)
        self.assertEqual(found.worst.comm, "new")

    def test_a_child_reaped_during_the_run_counts_once(self):
        # cargo (500) runs rustc (501), which had used 20 s before the run and 1 s during it;
        # once reaped, cargo's cutime grows by all 21 s: only the 1 s is the run's.
        before = snap(0.0, proc(500, 1, 0, comm="cargo"), proc(501, 500, 20 * TICKS))
        after = snap(2.0, proc(500, 1, 21 * TICKS, comm="cargo"))
        found = quiet.disturbance(before, after, set())
        self.assertEqual(str(found.worst), "500/cargo used 50 % of a CPU")

    def test_a_grandchild_gone_with_its_parent_is_taken_back_from_the_reaper(self):
        before = snap(0.0, proc(600, 1, 0, comm="make"), proc(601, 600, 5 * TICKS),
                      proc(602, 601, 5 * TICKS))
        # 602 ran 1 s more (6 s in all) and was reaped by 601, which ran 1 s more (its own 6 s +
        # 6 s of 602) and was reaped by make: make's cutime grew by 12 s, 2 s of them the run's.
        after = snap(1.0, proc(600, 1, 12 * TICKS, comm="make"))
        found = quiet.disturbance(before, after, set())
        self.assertAlmostEqual(found.worst.share, 2.0, places=2)

    def test_a_busy_child_of_this_process_is_left_out_of_a_real_watch(self):
        watch = quiet.Watch()
        started = watch.start()
        child = subprocess.Popen([sys.executable, "-c",
                                  "import time\nend = time.time() + 0.3\n"
                                  "while time.time() < end: pass"])
        child.wait()
        time.sleep(0.05)
        load, found = watch.stop(started)
        self.assertGreaterEqual(load, 0.0)
        self.assertNotIn(child.pid, [usage.pid for usage in found.others])
        self.assertNotIn(os.getpid(), [usage.pid for usage in found.others])


class Verdict(unittest.TestCase):
    def quiet_run(self):
        return quiet.Disturbance(5.0, [quiet.Usage(77, "sshd", 0.01)], kernel=0.03)

    def busy_run(self):
        return quiet.Disturbance(5.0, [quiet.Usage(1234, "rustc", 0.34),
                                       quiet.Usage(77, "sshd", 0.01)], kernel=0.0)

    def test_a_quiet_machine_has_no_reasons(self):
        self.assertEqual(quiet.busy_reasons(0.2, [self.quiet_run()]), [])
        self.assertEqual(quiet.verdict([], 0.8, 0.7), "met")
        self.assertEqual(quiet.verdict([], 0.6, 0.7), "not met")

    def test_a_high_load_at_start_refuses_the_verdict(self):
        reasons = quiet.busy_reasons(1.7, [self.quiet_run()])
        self.assertEqual(reasons, ["load 1.70 at start"])
        self.assertEqual(quiet.verdict(reasons, 0.95, 0.7),
                         "not met: machine busy (load 1.70 at start)")

    def test_the_limit_itself_is_quiet(self):
        self.assertEqual(quiet.busy_reasons(quiet.MAX_LOAD, []), [])
        at_limit = quiet.Disturbance(1.0, [quiet.Usage(5, "x", quiet.MAX_SHARE)], kernel=0)
        self.assertEqual(quiet.busy_reasons(0.0, [at_limit]), [])

    def test_another_process_during_a_run_refuses_the_verdict(self):
        reasons = quiet.busy_reasons(1.7, [self.quiet_run(), self.busy_run()])
        self.assertEqual(
            quiet.verdict(reasons, 0.95, 0.7),
            "not met: machine busy (load 1.70 at start; 1234/rustc used 34 % of a CPU)")

    def test_the_same_process_is_named_once_with_its_worst_share(self):
        runs = [quiet.Disturbance(1.0, [quiet.Usage(1234, "rustc", share)], kernel=0)
                for share in (0.2, 0.6, 0.1)]
        self.assertEqual(quiet.busy_reasons(0.1, runs), ["1234/rustc used 60 % of a CPU"])

    def test_lower_is_better_goals(self):
        self.assertEqual(quiet.verdict([], 1.5, 2, higher_is_better=False), "met")
        self.assertEqual(quiet.verdict([], 2.5, 2, higher_is_better=False), "not met")


if __name__ == "__main__":
    unittest.main()

"""Whether the machine was quiet while a benchmark measured: the load average before it starts,
and the CPU every other process used during each measurement, read from /proc.

A figure taken while something else ran on the machine says little: the benchmarks refuse to
call a target met when the 1-minute load average at start was above `MAX_LOAD` or when another
process used more than `MAX_SHARE` of a CPU during a measurement. "Other" means every process
that is not the benchmark itself or one it started (the server under test, the load generator,
the floors, the peers, Redis, perf): those are the descendants of the benchmark's own process.
Kernel threads are counted apart (`kernel`): they also carry the benchmark's own loopback traffic
(softirq work), so they are reported, not held against the run.

The CPU of a process is `utime + stime + cutime + cstime` of /proc/PID/stat: the children's
times count because a short-lived process (a compiler run by a build) may start and end between
two readings, and its time then shows up in its parent's `cutime` once reaped. A process that
was there at the first reading and gone at the second is subtracted with what it had used
before, since its parent's `cutime` grows by its whole life.
"""

import os
import time
from dataclasses import dataclass

MAX_LOAD = 0.5
MAX_SHARE = 0.05
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PF_KTHREAD = 0x00200000


@dataclass(frozen=True)
class Proc:
    """One process as /proc/PID/stat describes it."""

    pid: int
    ppid: int
    comm: str
    ticks: int  # utime + stime + cutime + cstime
    started: int  # start time in ticks after boot: tells a reused pid from the old one
    kernel: bool


def parse_stat(text):
    """A `Proc` from the text of /proc/PID/stat (the command name may hold spaces and ')')."""
    head, _, tail = text.rpartition(")")
    pid_text, _, comm = head.partition(" (")
    fields = tail.split()
    return Proc(
        pid=int(pid_text),
        ppid=int(fields[1]),
        comm=comm,
        ticks=sum(int(fields[i]) for i in (11, 12, 13, 14)),
        started=int(fields[19]),
        kernel=bool(int(fields[6]) & PF_KTHREAD),
    )


@dataclass
class Snapshot:
    """Every process of the machine at one moment."""

    at: float
    procs: dict


def snapshot(proc_root="/proc"):
    procs = {}
    for name in os.listdir(proc_root):
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(proc_root, name, "stat")) as stat:
                entry = parse_stat(stat.read())
        except (OSError, ValueError, IndexError):
            continue  # gone between listing and reading, or not a process
        procs[entry.pid] = entry
    return Snapshot(time.monotonic(), procs)


def descendants(root, *snapshots):
    """`root` and every process below it in any of the snapshots."""
    children = {}
    for snap in snapshots:
        for entry in snap.procs.values():
            children.setdefault(entry.ppid, set()).add(entry.pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found


@dataclass(frozen=True)
class Usage:
    """What one other process used between two snapshots, as a share of one CPU."""

    pid: int
    comm: str
    share: float

    def __str__(self):
        return f"{self.pid}/{self.comm} used {self.share * 100:.0f} % of a CPU"


@dataclass
class Disturbance:
    """The CPU other processes used during one measurement."""

    seconds: float
    others: list  # Usage, largest first
    kernel: float  # share of a CPU used by kernel threads

    @property
    def worst(self):
        return self.others[0] if self.others else None

    def busy(self, limit=MAX_SHARE):
        """The processes above `limit`, largest first."""
        return [usage for usage in self.others if usage.share > limit]


def disturbance(before, after, ours):
    """Other processes' CPU between two snapshots; `ours` is the set of pids to leave out."""
    seconds = max(after.at - before.at, 1e-6)
    used = {}
    kernel = 0
    for pid, entry in after.procs.items():
        if pid in ours:
            continue
        old = before.procs.get(pid)
        fresh = old is None or old.started != entry.started
        ticks = entry.ticks if fresh else entry.ticks - old.ticks
        if entry.kernel:
            kernel += ticks
        else:
            used[pid] = used.get(pid, 0) + ticks
    for pid, old in before.procs.items():
        new = after.procs.get(pid)
        if pid in ours or old.kernel or (new is not None and new.started == old.started):
            continue
        # Gone: the ancestor that reaped it (its parent, or the parent's reaper when the parent
        # is gone too) had its cutime grow by its whole life; take back what it used before.
        ancestor = old.ppid
        while ancestor not in used and ancestor in before.procs and ancestor not in ours:
            ancestor = before.procs[ancestor].ppid
        if ancestor in used:
            used[ancestor] -= old.ticks
    others = [
        Usage(pid, after.procs[pid].comm, ticks / CLOCK_TICKS / seconds)
        for pid, ticks in used.items()
        if ticks > 0
    ]
    others.sort(key=lambda usage: usage.share, reverse=True)
    return Disturbance(seconds, others, max(kernel, 0) / CLOCK_TICKS / seconds)


def load_average():
    """The 1-minute load average."""
    with open("/proc/loadavg") as loadavg:
        return float(loadavg.read().split()[0])


def settle(limit=MAX_LOAD, seconds=0.0, step=5.0, log=None):
    """Waits up to `seconds` for the 1-minute load average to fall to `limit` (a build just
    before the benchmark leaves it high for a minute or two); returns the last reading."""
    deadline = time.monotonic() + seconds
    load = load_average()
    while load > limit and time.monotonic() < deadline:
        if log:
            log(f"bench: load average {load:.2f} > {limit}; waiting for the machine to settle")
        time.sleep(step)
        load = load_average()
    return load


class Watch:
    """Snapshots around each measurement, with everything this process started left out."""

    def __init__(self, root=None):
        self.root = root or os.getpid()

    def start(self):
        return (snapshot(), load_average())

    def stop(self, started):
        before, load = started
        after = snapshot()
        return load, disturbance(before, after, descendants(self.root, before, after))


def busy_reasons(load_at_start, disturbances, max_load=MAX_LOAD, max_share=MAX_SHARE):
    """Why figures measured under these conditions cannot say a target is met: an empty list
    when the machine was quiet. `disturbances` are those of every measurement the target uses."""
    reasons = []
    if load_at_start is None or load_at_start > max_load:
        reasons.append(f"load {load_at_start:.2f} at start" if load_at_start is not None
                       else "load at start unknown")
    worst = {}
    for found in disturbances:
        for usage in found.busy(max_share):
            key = (usage.pid, usage.comm)
            if key not in worst or usage.share > worst[key].share:
                worst[key] = usage
    ranked = sorted(worst.values(), key=lambda usage: usage.share, reverse=True)
    reasons += [str(usage) for usage in ranked[:3]]
    if len(ranked) > 3:
        reasons.append(f"{len(ranked) - 3} more processes above {max_share * 100:.0f} %")
    return reasons


def verdict(reasons, value, goal, higher_is_better=True):
    """"met", "not met", or "not met: machine busy (…)" when the machine was not quiet."""
    if reasons:
        return f"not met: machine busy ({'; '.join(reasons)})"
    if value is None:
        return "not measured"
    ok = value >= goal if higher_is_better else value < goal
    return "met" if ok else "not met"

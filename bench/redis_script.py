"""What Redis itself spends on one `message/send`'s save, against a plain `SET` of the same bytes.

The save of a cheap skill's task is one script (`migrations/scripts/gcra.lua`, `store_task.lua`
and `save_task.lua`, as `store::redis` sends them): the message record, the rate-limit charge,
the task, its context and the owner index in one atomic step. This measures, on a redis-server
of its own on a free loopback port, Redis' own time per call (`INFO commandstats`,
`usec_per_call`, which leaves out the network and the client) for:

- `SET` of a stored task's bytes with its TTL (the floor of BENCHMARKS.md's "Redis CPU per
  send ≤ 2× a plain SET");
- a script that does nothing, called with the save's keys and arguments (the cost of calling a
  script at all);
- a script that does only the task's `SET` (the cost of one command inside a script);
- the save script as the server sends it, with its charge.

Each runs `--calls` calls from `redis-benchmark` (8 connections, fresh keys for every call),
in `--rounds` alternating rounds; each figure is the median of its rounds with its spread. The
load average before the first round and the CPU of other processes during the rounds are
written beside the figures (bench/quiet.py): a busy machine's figures are not judged.

    python3 bench/redis_script.py [--calls 100000] [--rounds 3] [--bytes 1361]
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import quiet  # noqa: E402
import stats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "migrations", "scripts")
OWNER = "a2a:v1:{o:bench}"
TTL = "86400"
CONTEXT_CAP = "100"
INDEX_CAP = "1000"
# A minute's budget far above the load (60,000,000 a minute: one call a microsecond).
INTERVAL_PS, BURST = "1000000", "60000000"


def save_script():
    parts = [open(os.path.join(SCRIPTS, name)).read()
             for name in ("gcra.lua", "store_task.lua", "save_task.lua")]
    return "".join(parts)


def usec_per_call(port, command, calls):
    """Redis' own microseconds per call of `command` (a list), `calls` calls on fresh keys."""
    harness.redis_cli(port, "FLUSHALL")
    harness.redis_cli(port, "CONFIG", "RESETSTAT")
    subprocess.run(["redis-benchmark", "-p", str(port), "-n", str(calls), "-c", "8",
                    "-r", "100000000", "-q", *command],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    name = command[0].lower()
    for line in harness.redis_cli(port, "INFO", "commandstats").splitlines():
        if line.startswith(f"cmdstat_{name}:"):
            fields = dict(field.split("=") for field in line.split(":", 1)[1].split(","))
            if int(fields["calls"]) != calls:
                raise SystemExit(f"{name}: {fields['calls']} calls of {calls}")
            if int(fields.get("failed_calls", "0")):
                raise SystemExit(f"{name}: {fields['failed_calls']} calls failed")
            return float(fields["usec_per_call"])
    raise SystemExit(f"no {name} calls were counted")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bytes", type=int, default=1361,
                        help="stored task size (a saints task: 1,361 bytes)")
    parser.add_argument("--settle", type=float, default=120.0)
    options = parser.parse_args()

    value = "x" * options.bytes
    task = f"{OWNER}:task:__rand_int__"
    keys = [f"{OWNER}:msg:__rand_int__", task, f"{OWNER}:ctx:__rand_int__", f"{OWNER}:tasks"]
    arguments = ["task-id", value, TTL, "task-id-__rand_int__", "1", CONTEXT_CAP, INDEX_CAP,
                 "task-id-__rand_int__\tindex-entry-of-a-task-0123456789abcdef"]

    load = quiet.settle(seconds=options.settle, log=lambda m: print(m, file=sys.stderr))
    watch = quiet.Watch()
    with tempfile.TemporaryDirectory() as directory:
        processes = harness.Processes(directory)
        port = harness.free_port()
        processes.start("redis", ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                                  "--save", "", "--appendonly", "no", "--dir", directory], port)
        try:
            shas = {name: harness.redis_cli(port, "SCRIPT", "LOAD", text) for name, text in (
                ("nothing", "return 1"),
                ("one SET", "redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3]) return 1"),
                ("save", save_script()),
            )}
            commands = {
                "SET": ["SET", task, value, "EX", TTL],
                "script doing nothing": ["EVALSHA", shas["nothing"], "4", *keys, *arguments],
                "script doing one SET": ["EVALSHA", shas["one SET"], "4", *keys, *arguments],
                "save script, charged": ["EVALSHA", shas["save"], "5", *keys,
                                         f"{OWNER}:rl:default", *arguments, INTERVAL_PS, BURST],
            }
            figures = {name: [] for name in commands}
            disturbances = []
            for _ in range(options.rounds):
                for name, command in commands.items():
                    started = watch.start()
                    figures[name].append(usec_per_call(port, command, options.calls))
                    disturbances.append(watch.stop(started)[1])
        finally:
            processes.stop_all()

    reasons = quiet.busy_reasons(load, disturbances)
    print(f"Redis' own time per call, {options.calls:,} calls a round, {options.rounds} "
          f"alternating rounds, {options.bytes:,}-byte task; load {load:.2f} at start; "
          + ("quiet" if not reasons else f"busy: {'; '.join(reasons)}"))
    print()
    print("| call | µs per call (spread) | × SET |")
    print("|---|---:|---:|")
    floor = stats.median(figures["SET"])
    for name, values in figures.items():
        print(f"| {name} | {stats.with_spread(values, lambda v: f'{v:.2f}')} | "
              f"{stats.median(values) / floor:.1f} |")


if __name__ == "__main__":
    main()

"""How Dijkstra's commutation check scales: 10^5- and 10^6-action executions.

Each execution is a random run (``workloads.random_execution``) on a complete graph of
20 processes (380 FIFO channels) with two Chandy–Lamport snapshots, one started early
(5 % of the way) and one mid-way, drained so both complete. ``check_commutation`` is
timed on each snapshot: the median of ``--repeats`` runs for the small execution and of
``--big-repeats`` for the large one, once as is and once with the garbage collector
paused (CPython's full collections walk the whole heap, which grows with the trace, so
they blur the check's own scaling). The ratio t(10^6)/t(10^5) is about 10 for a linear
check and about 12 for O(n log n). Generating the executions is timed separately.

Run from the repository root::

    python3 benchmarks/bench_commutation.py
    python3 benchmarks/bench_commutation.py --sizes 100000 1000000 --big-repeats 3
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import time
from pathlib import Path

from machine_info import describe as describe_machine

try:
    import snapshotlib  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from snapshotlib import Simulator
from snapshotlib.checks import check_commutation
from snapshotlib.workloads import complete, random_execution

STARTS = (0.05, 0.5)  # one snapshot early, one mid-way
STARTS_IDS = tuple(f"s{k + 1}" for k in range(len(STARTS)))  # random_execution's ids


def peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux, bytes on macOS
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (2**20 if sys.platform == "darwin" else 2**10)


def generate(n_actions: int, processes: int, seed: int) -> tuple[Simulator, float]:
    t0 = time.perf_counter()
    sim = random_execution(
        complete(processes), seed=seed, n_actions=n_actions, snapshots=len(STARTS), starts=STARTS
    )
    return sim, time.perf_counter() - t0


def time_check(sim: Simulator, snapshot_id: str, repeats: int, collect: bool) -> tuple[float, int]:
    """Median seconds of ``repeats`` checks (the collector paused unless ``collect``), and
    the inversion count."""
    times = []
    inversions = 0
    for _ in range(repeats):
        # Start each run from a collected heap: otherwise a full collection owed by the
        # 10^6 objects just generated lands inside the first timing.
        gc.collect()
        if not collect:
            gc.disable()
        try:
            t0 = time.perf_counter()
            result = check_commutation(sim, snapshot_id)
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
        if not result.holds:
            raise SystemExit(f"{snapshot_id}: Dijkstra's check failed: {result.reason}")
        inversions = result.inversions
    return statistics.median(times), inversions


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[10**5, 10**6], metavar="N")
    parser.add_argument("--processes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3, help="runs for the small size")
    parser.add_argument("--big-repeats", type=int, default=1, help="runs for the large size")
    args = parser.parse_args(argv)

    print(describe_machine())
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(
        f"workload: complete graph of {args.processes} processes, FIFO, tokens, "
        f"snapshots started at {', '.join(f'{s:.0%}' for s in STARTS)} of the run, seed {args.seed}"
    )
    small, big = args.sizes
    print(
        f"{'actions':>9} {'app actions':>11} {'snapshot':>8} {'inversions':>10} "
        f"{'seconds':>8} {'actions/s':>10} {'no-gc s':>8}"
    )
    generation = []
    # (size, snapshot id, collector on) -> median seconds
    checks: dict[tuple[int, str, bool], float] = {}
    for size, repeats in ((small, args.repeats), (big, args.big_repeats)):
        sim, gen_seconds = generate(size, args.processes, args.seed)
        n = len(sim.trace.actions)
        n_app = sum(1 for _ in sim.trace.app_actions())
        generation.append((n, gen_seconds))
        for sid in sim.snapshots():
            seconds, inversions = time_check(sim, sid, repeats, collect=True)
            no_gc, _ = time_check(sim, sid, repeats, collect=False)
            checks[size, sid, True] = seconds
            checks[size, sid, False] = no_gc
            print(
                f"{n:>9} {n_app:>11} {sid:>8} {inversions:>10} {seconds:>8.3f} "
                f"{n / seconds:>10.0f} {no_gc:>8.3f}"
            )
        del sim
    print("generation (random_execution, not part of the check):")
    for n, seconds in generation:
        print(f"  {n:>9} actions in {seconds:.3f} s ({n / seconds:.0f} actions/s)")
    print(f"ratio t({big})/t({small}) (size ratio {big / small:g}; linear ~10, n log n ~12):")
    for sid in STARTS_IDS:
        on = checks[big, sid, True] / checks[small, sid, True]
        off = checks[big, sid, False] / checks[small, sid, False]
        print(f"  {sid}: {on:.2f} with the garbage collector, {off:.2f} with it paused")
    print(f"peak RSS: {peak_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()

"""Sweep throughput: executions per second on Spark local[1] and local[2], and against a
plain Python loop in one process.

The sweep has 5 cells (Chandy–Lamport and Lai–Yang on FIFO and non-FIFO rings of 4
processes, and the clock snapshot at 10 % drift), ``n / 5`` seeds each, 30 ticks of
traffic per execution: the kind of small executions a course sweep is made of. Each
Spark figure is a whole ``run_sweep``: distributing the points, simulating and checking
them in Python workers, writing the rows as Parquet, reading them back and writing the
summary. Starting Spark (the JVM) is timed apart, and each session first runs a small
warm-up sweep so the timed one finds its Python workers started.

Printed: executions/s of the plain loop, of local[1] and of local[2]; the ratio
local[2] / local[1] (aim: >= 1.7); and the per-core overhead of Spark against the
plain loop, plain / (local[k] / k) (aim: <= 1.3).

Run from the repository root (the default is a 10^5-execution sweep)::

    python3 benchmarks/bench_sweep.py
    python3 benchmarks/bench_sweep.py --n 20000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from machine_info import describe as describe_machine

try:
    import snapshotlib  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from snapshotlib.spark.session import spark_session
from snapshotlib.spark.sweep import run_sweep
from snapshotlib.sweeps import Sweep, parse_config, run_point

CELLS = 5
WARM_UP = 200


def sweep_of(n: int) -> Sweep:
    seeds = max(1, n // CELLS)
    return parse_config(
        {
            "sweep": {"name": "bench", "seeds": seeds, "topology": "ring", "size": 4},
            "grid": [
                {"algorithm": ["chandy-lamport", "lai-yang"], "fifo": [True, False]},
                {"algorithm": "clock", "drift": 0.1},
            ],
        },
        "bench",
    )


def plain_loop(sweep: Sweep) -> float:
    started = time.perf_counter()
    for point in sweep.points():
        run_point(point)
    return time.perf_counter() - started


def on_spark(sweep: Sweep, master: str, out: Path) -> tuple[float, float, int]:
    """(seconds to start Spark, seconds for the sweep, Spark's default parallelism)."""
    started = time.perf_counter()
    spark = spark_session(master, app_name="bench-sweep")
    start = time.perf_counter() - started
    try:
        run_sweep(sweep_of(WARM_UP), out / "warm-up", spark=spark, progress=False)
        started = time.perf_counter()
        run_sweep(sweep, out / "sweep", spark=spark, progress=False)
        return start, time.perf_counter() - started, spark.sparkContext.defaultParallelism
    finally:
        spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="executions (default 10^5)")
    args = parser.parse_args()
    sweep = sweep_of(args.n)
    n = len(sweep)
    print(describe_machine())
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"sweep: {n} executions ({len(sweep.cells)} cells x {len(sweep.seeds)} seeds)")
    plain = plain_loop(sweep)
    print(f"plain loop: {plain:.1f} s, {n / plain:.0f} executions/s")
    rates = {}
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        for cores in (1, 2):
            master = f"local[{cores}]"
            start, seconds, parallelism = on_spark(sweep, master, Path(tmp))
            rates[cores] = n / seconds
            print(
                f"{master}: {seconds:.1f} s, {rates[cores]:.0f} executions/s "
                f"(parallelism {parallelism}; Spark started in {start:.1f} s, not counted)"
            )
    print(f"ratio local[2] / local[1]: {rates[2] / rates[1]:.2f} (aim >= 1.7)")
    print("per-core overhead, plain loop rate / (local[k] rate / k) (aim <= 1.3):")
    for cores in (1, 2):
        overhead = (n / plain) / (rates[cores] / cores)
        print(f"  local[{cores}]: {overhead:.2f}")
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()

"""Throughput of a live cluster, with and without a snapshot running, and snapshot times.

For each size (``--sizes``, default 5 and 20 nodes, complete graphs), a
:class:`~snapshotlib.live.LiveCluster` is started with every node sending as fast as its
loop allows (``--rate``). After a warm-up, transfers are counted over ``--seconds`` of
quiet, then over ``--seconds`` during which snapshots run back to back (one triggered as
soon as the last completed, initiators in turn). Printed per size: transfers per second
through the cluster in each window, their ratio (the text promises no pause: the aim is
at least 90 %), the snapshots' durations (median and largest, from the registry), their
recorded size, and whether every snapshot passed the engine's check.

Every process of a cluster shares this machine's cores, so the figures say what one
machine sustains, not what a cluster of machines would; the machine is printed first.

    python3 benchmarks/bench_live.py [--sizes 5 20] [--seconds 5]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

from machine_info import describe as describe_machine

try:
    import snapshotlib  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from snapshotlib.live import LiveCluster

WARM_UP_S = 2.0


def sent(cluster: LiveCluster) -> int:
    answers = cluster.health()
    missing = [n for n, a in answers.items() if a is None]
    if missing:
        raise RuntimeError(f"nodes stopped answering: {', '.join(missing)}")
    return sum(a["sent"] for a in answers.values() if a is not None)


def measure(n: int, rate: float, seconds: float) -> dict[str, object]:
    with (
        tempfile.TemporaryDirectory(prefix="bench-live-") as folder,
        LiveCluster(n, "complete", rate=rate, workdir=folder) as cluster,
    ):
        assert cluster.spec is not None
        time.sleep(WARM_UP_S)
        before, t0 = sent(cluster), time.perf_counter()
        time.sleep(seconds)
        quiet = (sent(cluster) - before) / (time.perf_counter() - t0)

        taken: list[str] = []
        initiators = itertools.cycle(cluster.spec.ids)
        before, t0 = sent(cluster), time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            sid = cluster.trigger(next(initiators))
            answer = cluster.wait(sid, timeout=120)
            if answer["status"] != "COMPLETED":
                raise RuntimeError(f"{sid}: {answer}")
            taken.append(sid)
        during = (sent(cluster) - before) / (time.perf_counter() - t0)

        rows = [cluster.status(sid) for sid in taken]
        durations = [int(r["duration_ms"]) for r in rows]
        sizes = [int(r["total_size_bytes"]) for r in rows]
        checked = [cluster.check(sid) for sid in taken]
        return {
            "nodes": n,
            "quiet": quiet,
            "during": during,
            "snapshots": len(taken),
            "median_ms": statistics.median(durations),
            "max_ms": max(durations),
            "median_bytes": statistics.median(sizes),
            "all_ok": all(c.ok for c in checked),
            "reasons": sorted({c.reason for c in checked if c.reason}),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each window")
    parser.add_argument(
        "--rate", type=float, default=100_000.0, help="transfers a node starts per second"
    )
    args = parser.parse_args()
    print(describe_machine())
    header = (
        "nodes  transfers/s quiet  transfers/s during snapshots  ratio (aim >= 0.90)  "
        "snapshots  duration ms (median, max)  recorded bytes (median)  engine check"
    )
    print(header)
    print("-" * len(header))
    ok = True
    for n in args.sizes:
        r = measure(n, args.rate, args.seconds)
        ratio = float(r["during"]) / float(r["quiet"])  # type: ignore[arg-type]
        print(
            f"{n:>5}  {r['quiet']:>17,.0f}  {r['during']:>28,.0f}  {ratio:>19.2f}  "
            f"{r['snapshots']:>9}  {r['median_ms']:>12,.0f}, {r['max_ms']:>9,}  "
            f"{r['median_bytes']:>23,.0f}  {'all pass' if r['all_ok'] else r['reasons']}",
            flush=True,
        )
        ok = ok and bool(r["all_ok"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

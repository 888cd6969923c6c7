"""Throughput of a live cluster, with and without a snapshot running, and snapshot times.

For each size (``--sizes``, default 5 and 20 nodes, complete graphs), a
:class:`~snapshotlib.live.LiveCluster` is started with every node sending as fast as its
loop allows (``--rate``). After a warm-up, transfers are counted over ``--seconds`` of
quiet, then over ``--seconds`` during which snapshots run back to back (one triggered as
soon as the last completed, initiators in turn). Printed per size: transfers per second
through the cluster in each window, their ratio (the text promises no pause: the aim is
at least 90 %), the snapshots' durations (median and largest, from the registry), their
recorded size, and whether every snapshot passed the engine's check.

Then what a snapshot records against the sizing arithmetic of lessons 07b and 09
(:class:`~snapshotlib.course.sizing.Sizing`: every recorded channel holds ``rate ×
delay`` records while markers are held up ``delay``). A cluster of ``--sizing-nodes``
holds every marker up ``--delays`` milliseconds, in band (what follows a marker on its
channel waits behind it) and out of band (the text's ``SendMarker``: data overtakes
it); for each, snapshots are taken in turn and the transfers recorded in the
initiator's part and in the other nodes' parts are set beside what ``Sizing`` predicts
from the per-channel rate measured just before (with no marker held up), with how many
snapshots the engine's check passed.

Every process of a cluster shares this machine's cores, so the figures say what one
machine sustains, not what a cluster of machines would; the machine is printed first.

    python3 benchmarks/bench_live.py [--sizes 5 20] [--seconds 5] [--delays 100 300 1000]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine_info import describe as describe_machine

try:
    import snapshotlib  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from snapshotlib.course.sizing import Sizing
from snapshotlib.live import LiveCluster
from snapshotlib.live.storage import read

WARM_UP_S = 2.0


def sent(cluster: LiveCluster) -> int:
    answers = cluster.health()
    missing = [n for n, a in answers.items() if a is None]
    if missing:
        raise RuntimeError(f"nodes stopped answering: {', '.join(missing)}")
    return sum(a["sent"] for a in answers.values() if a is not None)


#: 50 nodes load 2 cores to a load average of about 120, where a heartbeat can be late by
#: seconds: failure detection is not what is measured here, so it is made very patient
PATIENT = {"heartbeat_timeout_ms": 120_000, "ttl_ms": 600_000}


def measure(n: int, rate: float, seconds: float) -> dict[str, object]:
    with (
        tempfile.TemporaryDirectory(prefix="bench-live-") as folder,
        LiveCluster(n, "complete", rate=rate, workdir=folder, **PATIENT) as cluster,
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


def recorded_transfers(cluster: LiveCluster, snapshot_id: str) -> dict[str, int]:
    """How many transfers each node's part of ``snapshot_id`` recorded on its channels."""
    manifest = json.loads(read(cluster.status(snapshot_id)["checkpoint_manifest_uri"]))
    parts = [json.loads(read(p["part_uri"])) for p in manifest["parts"]]
    return {p["node_id"]: sum(len(a) for a in p["channels"].values()) for p in parts}


def sizing_rows(n: int, rate: float, delays: list[int], snapshots: int) -> list[dict[str, Any]]:
    """Recorded transfers against :class:`Sizing` per marker mode and delay (see the
    module docstring)."""
    rows = []
    for markers, delay in itertools.product(("in-band", "out-of-band"), delays):
        with (
            tempfile.TemporaryDirectory(prefix="bench-live-sizing-") as folder,
            LiveCluster(
                n, "complete", rate=rate, workdir=folder, markers=markers,
                marker_delay_ms=delay, **PATIENT,
            ) as cluster,
        ):  # fmt: skip
            assert cluster.spec is not None
            channels = len(cluster.spec.channels)
            time.sleep(WARM_UP_S)
            # the rate before any marker: a held-up marker slows the channels it holds
            before, t0 = sent(cluster), time.perf_counter()
            time.sleep(WARM_UP_S)
            per_channel = (sent(cluster) - before) / (time.perf_counter() - t0) / channels
            initiator, others, passed = [], [], 0
            for k in range(snapshots):
                node = cluster.spec.ids[k % n]
                sid = cluster.trigger(node)
                if cluster.wait(sid, timeout=120)["status"] != "COMPLETED":
                    raise RuntimeError(f"{sid} did not complete")
                counts = recorded_transfers(cluster, sid)
                initiator.append(counts.pop(node))
                others.extend(counts.values())
                passed += cluster.check(sid).ok
        model = Sizing(nodes=n, rate=per_channel, record_bytes=1, delay=delay / 1000)
        rows.append(
            {
                "markers": markers,
                "passed": f"{passed}/{snapshots}",
                "delay": delay,
                "per_channel": per_channel,
                "initiator": statistics.median(initiator),
                "initiator_model": model.initiator_bytes,
                "other": statistics.median(others),
                "other_model": model.other_node_bytes,
            }
        )
    return rows


def print_sizing(n: int, rate: float, delays: list[int], snapshots: int) -> None:
    print(f"\nrecorded transfers (median per part) against Sizing: {n} nodes, complete")
    header = (
        "markers      delay ms  transfers/s per channel  initiator: recorded  Sizing  ratio  "
        "other node: recorded  Sizing  ratio  engine check"
    )
    print(header)
    print("-" * len(header))
    for r in sizing_rows(n, rate, delays, snapshots):
        print(
            f"{r['markers']:<11}  {r['delay']:>8,.0f}  {r['per_channel']:>23,.1f}  "
            f"{r['initiator']:>19,.0f}  "
            f"{r['initiator_model']:>6,.0f}  {r['initiator'] / r['initiator_model']:>5.2f}  "
            f"{r['other']:>20,.0f}  {r['other_model']:>6,.0f}  "
            f"{r['other'] / r['other_model']:>5.2f}  {r['passed']:>7} pass",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each window")
    parser.add_argument(
        "--rate", type=float, default=100_000.0, help="transfers a node starts per second"
    )
    parser.add_argument(
        "--delays", type=int, nargs="*", default=[100, 300, 1000],
        help="out-of-band marker delays (ms) for the sizing table; none: skip it",
    )  # fmt: skip
    parser.add_argument("--sizing-nodes", type=int, default=5)
    parser.add_argument(
        "--sizing-rate", type=float, default=200.0, help="transfers a node starts per second"
    )
    parser.add_argument("--sizing-snapshots", type=int, default=5, help="per delay")
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
    if args.delays:
        print_sizing(args.sizing_nodes, args.sizing_rate, args.delays, args.sizing_snapshots)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""The live lab over time: does a node's memory stay flat while the cluster runs and
snapshots?

    python benchmarks/bench_live_rss.py [--minutes 10] [--rate 50] [--every 5] [--retain 10]
                                        [--segment-lines 50000]

Starts a 3-node cluster sending ``--rate`` transfers a second per node, triggers a
snapshot every ``--every`` seconds (keeping the last ``--retain``; 0 keeps all), and
samples the resident memory (VmRSS from /proc) of each node and of the controller every
15 s. Prints the samples, then per node its RSS after the first
minute (the warm-up: imports, gRPC's pools) and at the end, and the growth in between
as MB per hour, over the whole run and over its second half. The reference in the
same run is the first minute's RSS: a node that kept every message would grow linearly
from it (about 1.5 MB a minute at rate 50); one that keeps what it needs levels off.

The disk too: the nodes' logs (MB on disk, the segments kept, and the actions logged
so far, from the newest segments' names) and the checkpoints. With ``--retain`` the logs
are pruned to what the retained snapshots' checks need, a whole segment
(``--segment-lines`` actions) at a time: the segments kept level off, where without
pruning they grow with the actions logged. (In MB the newest segment of each node, not
yet compressed, weighs as much as several compressed ones: hence the count.)
Linux only (reads /proc). Needs the live extra.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from snapshotlib.live.action_log import SEGMENT_LINES
from snapshotlib.live.cluster import LiveCluster

SAMPLE_EVERY_S = 15.0
WARM_UP_S = 60.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def log_segments(logs: Path) -> tuple[int, int]:
    """The segments kept, and the actions the nodes logged (at least: each log's newest
    segment's first action)."""
    newest: dict[tuple[Path, str], int] = {}
    segments = set()
    for path in logs.rglob("*.jsonl*"):
        node, first = path.name.split(".")[:2]
        key = (path.parent, node)
        segments.add((*key, first))
        newest[key] = max(newest.get(key, 0), int(first))
    return len(segments), sum(newest.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long (an hour: 60)")
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--every", type=float, default=5.0, help="seconds between snapshots")
    parser.add_argument(
        "--retain", type=int, default=10, help="completed snapshots kept (0: every one)"
    )
    parser.add_argument("--segment-lines", type=int, default=SEGMENT_LINES)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="bench-rss-") as folder,
        LiveCluster(
            3,
            rate=args.rate,
            workdir=folder,
            retain=args.retain or None,
            log_segment_lines=args.segment_lines,
        ) as cluster,
    ):
        nodes = [n for n in cluster.pids if n != "controller"]
        processes = [*nodes, "controller"]
        began = time.monotonic()
        end = began + args.minutes * 60
        next_sample = began
        next_snapshot = began + args.every
        samples: list[tuple[float, dict[str, float]]] = []
        logs = Path(folder) / "logs"
        disk: list[tuple[float, float, int, int]] = []  # (s, MB, segments, actions logged)
        taken = completed = 0
        kept = f"the last {args.retain} kept" if args.retain else "every one kept"
        print(f"3 nodes, rate {args.rate}/s each, a snapshot every {args.every} s, {kept}")
        print(
            "   min  "
            + "  ".join(f"{n} RSS MB" for n in processes)
            + "  logs MB  segments  actions logged  checkpoints MB"
        )
        while (now := time.monotonic()) < end:
            if now >= next_snapshot:
                try:
                    sid = cluster.trigger(nodes[taken % len(nodes)])
                    taken += 1
                    completed += cluster.wait(sid, timeout=60)["status"] == "COMPLETED"
                except Exception as e:  # a busy moment: the next one comes
                    print(f"  (snapshot not taken: {e})")
                next_snapshot = time.monotonic() + args.every
            if now >= next_sample:
                pids = cluster.pids
                rss = {n: rss_mb(pids[n]) for n in processes}
                samples.append((now - began, rss))
                disk.append((now - began, folder_mb(logs), *log_segments(logs)))
                checkpoints = folder_mb(Path(folder) / "checkpoints")
                print(
                    f"{(now - began) / 60:6.1f}  "
                    + "  ".join(f"{rss[n]:{len(n) + 7}.1f}" for n in processes)
                    + f"  {disk[-1][1]:7.1f}  {disk[-1][2]:8d}  {disk[-1][3]:14d}"
                    + f"  {checkpoints:14.1f}"
                )
                next_sample += SAMPLE_EVERY_S
            time.sleep(0.05)
        warm = [s for s in samples if s[0] >= WARM_UP_S]
        if len(warm) < 2:
            raise SystemExit("run longer than two minutes to see a trend")
        (t0, first), (t1, last) = warm[0], warm[-1]
        # the second half alone: memory that levels off (allocator arenas, gRPC's pools
        # filling) shows here as flat, a leak as the same slope as over the whole run
        tm, middle = min(warm, key=lambda s: abs(s[0] - (t0 + t1) / 2))
        print(f"\nsnapshots: {completed} of {taken} completed")
        print("process     RSS at 1 min MB  RSS at end MB  growth MB/h  2nd half MB/h  end/start")
        for n in processes:
            growth = (last[n] - first[n]) / ((t1 - t0) / 3600)
            late = (last[n] - middle[n]) / ((t1 - tm) / 3600)
            ratio = last[n] / first[n]
            print(
                f"{n:10}  {first[n]:15.1f}  {last[n]:13.1f}  {growth:11.1f}  {late:13.1f}"
                f"  {ratio:9.2f}"
            )
        # a segment goes only when the base passes it: the count saw-tooths, so the most
        # kept over each half says whether it levels off
        half = len(disk) // 2
        first_half, second_half = disk[:half], disk[half:]
        print(
            f"\nlog segments kept: at most {max(d[2] for d in first_half)} in the first half, "
            f"{max(d[2] for d in second_half)} in the second; actions logged "
            f"{first_half[-1][3]} at half time, {disk[-1][3]} at the end; "
            f"logs {max(d[1] for d in second_half):.1f} MB at most in the second half"
        )


if __name__ == "__main__":
    main()

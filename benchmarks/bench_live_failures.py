"""The live lab under failure: how long a crash takes to fail a snapshot, what a cleanup
frees, how long a restore takes against the size of the state restored.

    python benchmarks/bench_live_failures.py [--nodes 3] [--repeats 3]

Needs the live extra. Every figure is wall time on this machine, with every node and the
controller sharing its cores; the crash figure is bounded below by the heartbeat
timeout by design (a node is taken for gone only after that long a silence).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from snapshotlib.live.cluster import LiveCluster


def until(what: Any, backstop_s: float = 120.0) -> Any:
    deadline = time.monotonic() + backstop_s
    while not (value := what()):
        if time.monotonic() > deadline:
            raise SystemExit("the cluster did not get there within the backstop")
        time.sleep(0.02)
    return value


def nodes_view(cluster: LiveCluster) -> dict[str, dict[str, Any]]:
    return {n["id"]: n for n in cluster.cluster()["nodes"]}


def crash_to_failed(nodes: int, beat_ms: int, timeout_ms: int) -> tuple[float, int, int]:
    """Seconds from a crash to FAILED (no restart: only the heartbeats tell), and what
    the initiator had buffered and freed."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-crash-") as folder,
        LiveCluster(
            nodes,
            rate=60.0,
            marker_delay_ms=timeout_ms * 3,  # the snapshot stays open through the crash
            restart_crashed=False,
            heartbeat_ms=beat_ms,
            heartbeat_timeout_ms=timeout_ms,
            workdir=folder,
        ) as cluster,
    ):
        sid = cluster.trigger("P1")
        buffered = until(lambda: nodes_view(cluster)["P1"]["buffered_messages"])
        time.sleep(0.5)
        buffered = nodes_view(cluster)["P1"]["buffered_messages"]
        began = time.monotonic()
        cluster.crash(f"P{nodes}")
        until(lambda: cluster.status(sid)["status"] == "FAILED")
        took = time.monotonic() - began

        def freed() -> int | None:
            try:
                answer = cluster.cleanup(sid)
            except Exception:
                return None
            return next(n["freed_messages"] for n in answer["nodes"] if n["node_id"] == "P1")

        return took, int(buffered), int(until(lambda: freed() is not None and freed()) or 0)


def restore_time(nodes: int, keys: int, key_bytes: int) -> tuple[float, int]:
    """Milliseconds of a restore (the controller's own figure) and the bytes of state
    restored, for each node's money kept in ``keys`` accounts padded by ``key_bytes``."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-restore-") as folder,
        LiveCluster(
            nodes,
            rate=30.0,
            state_keys=keys,
            key_bytes=key_bytes,
            chunk_keys=max(1, keys // 64),
            workdir=folder,
        ) as cluster,
    ):
        sid = cluster.trigger("P1")
        size = int(cluster.wait(sid, timeout=120)["total_size_bytes"])
        answer = cluster.restore(sid)
        assert answer["total_money"] == cluster._spec().total_money
        return float(answer["duration_ms"]), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    print(f"crash -> FAILED, {args.nodes} nodes, median of {args.repeats}")
    print("heartbeat ms  timeout ms  crash->FAILED s  P1 buffered  P1 freed")
    for beat_ms, timeout_ms in ((200, 1000), (500, 5000)):
        runs = [crash_to_failed(args.nodes, beat_ms, timeout_ms) for _ in range(args.repeats)]
        took = statistics.median(r[0] for r in runs)
        buffered = statistics.median(r[1] for r in runs)
        freed = statistics.median(r[2] for r in runs)
        print(f"{beat_ms:12}  {timeout_ms:10}  {took:15.2f}  {buffered:11.0f}  {freed:8.0f}")

    print(f"\nrestore, {args.nodes} nodes, median of {args.repeats}")
    print("accounts/node  bytes/account  snapshot bytes  restore ms")
    for keys, key_bytes in ((1, 0), (1000, 100), (1000, 1000), (4000, 1000)):
        runs = [restore_time(args.nodes, keys, key_bytes) for _ in range(args.repeats)]
        ms = statistics.median(r[0] for r in runs)
        size = statistics.median(r[1] for r in runs)
        print(f"{keys:13}  {key_bytes:13}  {size:14,.0f}  {ms:10.0f}")


if __name__ == "__main__":
    main()

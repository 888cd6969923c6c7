"""Lesson 10, the live lab under failure: what the notebook runs on a real cluster.

The cluster is the live lab's (:mod:`snapshotlib.live`): OS processes speaking gRPC, a
REST controller, a registry and checkpoint storage. These helpers start it with the
lesson's settings and turn its answers into short tables; the notebook itself calls the
cluster's API, as a learner would.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from .feedback import Feedback, is_blank, no_answer_yet
from .scratch import lesson_folder
from .tables import Table

#: the lesson's cluster: markers held up 0.8 s (still in band, so FIFO holds) so that a
#: snapshot is in progress long enough to crash a node in it; heartbeats every 200 ms, a
#: node gone after 2 s of silence; money kept in 400 accounts of about 400 bytes per
#: node, 2 to a chunk
SETTINGS: dict[str, Any] = {
    "nodes": 4,
    "rate": 10.0,
    "marker_delay_ms": 800,
    "heartbeat_ms": 200,
    "heartbeat_timeout_ms": 2000,
    "ttl_ms": 20_000,
    "state_keys": 400,
    "key_bytes": 400,
    "chunk_keys": 2,
}


def start_cluster(**overrides: Any) -> Any:
    """A started :class:`~snapshotlib.live.cluster.LiveCluster` with the lesson's
    settings (``overrides`` change some), its files in a new temporary folder."""
    from .. import live as lab

    missing = lab.missing_modules()
    if missing:
        raise RuntimeError(
            f"This lesson runs the live lab, whose extra is not installed "
            f"({', '.join(missing)} missing): pip install 'snapshotlib[live]' "
            "(make lab installs it)."
        )
    from ..live.cluster import LiveCluster

    folder = lesson_folder("lesson10-", remove_at_exit=False)
    cluster = LiveCluster(workdir=folder, **{**SETTINGS, **overrides})
    cluster.start()
    # the cluster stays up until the learner stops it (the LiveExplorer's Stop cluster,
    # or stop()); when the kernel ends first, its processes and files go with it
    atexit.register(_stop_at_exit, cluster, folder)
    return cluster


def _stop_at_exit(cluster: Any, folder: Path) -> None:
    with contextlib.suppress(Exception):
        cluster.stop()
    shutil.rmtree(folder, ignore_errors=True)


#: a cluster whose runs stay short enough to read action by action: 3 nodes sending
#: slowly, markers held up a little so that some transfers fall inside the snapshot
SMALL: dict[str, Any] = {
    "nodes": 3,
    "rate": 5.0,
    "marker_delay_ms": 200,
    "state_keys": 1,
    "key_bytes": 0,
    "chunk_keys": 1,
}


def small_check(initiator: str = "P1") -> Any:
    """One snapshot on a small cluster of its own (:data:`SMALL`), started and stopped
    here: the engine's check of it, whose replayed run is a few dozen actions at most."""
    cluster = start_cluster(**SMALL)
    try:
        sid = cluster.trigger(initiator)
        cluster.wait(sid)
        return cluster.check(sid)
    finally:
        stop(cluster)


def stop(cluster: Any, explorer: Any = None) -> str:
    """Stop the explorer's refreshes, every process of ``cluster``, and remove the files
    :func:`start_cluster` made for it (logs, registry, checkpoints)."""
    if explorer is not None:
        explorer.close()
    cluster.stop()
    if explorer is not None:
        explorer.mark_stopped()
    folder = Path(cluster.workdir)
    if folder.name.startswith("lesson10-") and folder.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(folder, ignore_errors=True)
    return "stopped; its files are removed"


def verdict(check: Any) -> str:
    """The engine's verdict on a live snapshot, in three lines."""
    return "\n".join(
        (
            f"consistent cut, Dijkstra's argument holds: {check.verdict.ok}",
            f"money recorded: {check.recorded_total:,} of {check.expected_total:,}",
            f"the engine's replay records what the nodes recorded: {check.same_as_engine}",
        )
    )


def cleanup_table(before: dict[str, Any], cleanup: dict[str, Any], after: dict[str, Any]) -> Table:
    """Per node: messages buffered for snapshots before the crash, what the cleanup
    freed, and what is buffered after it (``before``/``after``: ``cluster.cluster()``)."""
    freed = {n["node_id"]: n for n in cleanup["nodes"]}
    rows = []
    for node in before["nodes"]:
        node_id = node["id"]
        now = next(n for n in after["nodes"] if n["id"] == node_id)
        answer = freed.get(node_id)
        rows.append(
            (
                node_id,
                _count(node.get("buffered_messages")),
                "not asked (down)" if answer is None else _count(answer["freed_messages"]),
                _count(now.get("buffered_messages")),
                str(now["health"]),
            )
        )
    return Table(
        ("node", "buffered before", "freed by the cleanup", "buffered after", "now"),
        rows,
        notes=("messages recorded for snapshots in progress, from the nodes' heartbeats",),
    )


def bytes_table(cluster: Any, snapshot_ids: list[str]) -> Table:
    """Per snapshot: its type and the bytes its parts and chunks took to write, against
    the first (full) one."""
    rows = []
    first = None
    for sid in snapshot_ids:
        status = cluster.status(sid)
        size = int(status["total_size_bytes"] or 0)
        first = first or size
        rows.append(
            (
                sid,
                str(status["snapshot_type"]),
                f"{size:,}",
                f"{size / first:.0%}" if first else "-",
            )
        )
    return Table(
        ("snapshot", "type", "bytes written", "of the full one"),
        rows,
        notes=("parts and chunks written by every node; the manifest not counted",),
    )


#: the store of the jitter experiment: S3 takes 3,500 writes a second per key prefix;
#: scaled down to a cluster of 8 nodes writing under one prefix, 20 a second
MAX_RATE = 20
#: and at most 10 at once: fewer than a snapshot's 17 writes (a part and a chunk per
#: node, and the manifest), so writes made at the same moment always meet the limit,
#: however long the store has been quiet
BURST = 10


def jitter_run(
    jitter_ms: int, nodes: int = 8, snapshots: int = 3, timeout_s: float = 60.0
) -> dict[str, Any]:
    """``snapshots`` snapshots of a cluster of ``nodes`` writing to a store that takes
    :data:`MAX_RATE` writes a second under one key prefix (100 ms each, :data:`BURST` at
    once) and answers "503 Slow Down" beyond, each node waiting
    a random 0..``jitter_ms`` ms before it writes: the writes refused and done, the
    snapshots failed, the median duration (ms) of those completed (``None``: none)."""
    from ..live.cluster import LiveCluster
    from ..live.throttled_store import ThrottledStore

    with (
        tempfile.TemporaryDirectory(prefix="live-jitter-") as folder,
        ThrottledStore(
            Path(folder) / "store", max_rate=MAX_RATE, write_ms=100, burst=BURST
        ) as store,
        LiveCluster(
            nodes,
            rate=20.0,
            workdir=Path(folder) / "cluster",
            storage=store.uri,
            upload_jitter_ms=jitter_ms,
        ) as cluster,
    ):
        durations, failed = [], 0
        for _ in range(snapshots):
            answer = cluster.wait(cluster.trigger("P1"), timeout=timeout_s)
            if answer["status"] == "COMPLETED":
                durations.append(int(answer["duration_ms"]))
            else:
                failed += 1
        stats = store.stats()
    return {
        "slowed": stats["slowed_down"],
        "written": stats["written"],
        "failed": failed,
        "median_ms": statistics.median(durations) if durations else None,
    }


def jitter_table(nodes: int = 8, snapshots: int = 3, jitters: tuple[int, ...] = (0, 500)) -> Table:
    """:func:`jitter_run` without and with jittered uploads, as a table, with a line that
    reads this run's figures (they change from run to run; the reading follows them)."""
    runs = [(jitter_ms, jitter_run(jitter_ms, nodes, snapshots)) for jitter_ms in jitters]
    rows = [
        (
            f"{jitter_ms} ms",
            str(run["slowed"]),
            f"{run['failed']} of {snapshots}",
            "-" if run["median_ms"] is None else f"{run['median_ms']:,.0f}",
        )
        for jitter_ms, run in runs
    ]
    return Table(
        ("jitter", "writes answered 503", "snapshots failed", "median duration ms"),
        rows,
        notes=(
            f"{nodes} nodes writing under one prefix of a store that takes {MAX_RATE} "
            "writes a second per prefix; a write answered 503 is tried again after a "
            "random, growing wait, 5 tries at most",
            jitter_reading(runs[0][1], runs[-1][1], jitters[-1]),
        ),
    )


def jitter_reading(without: dict[str, Any], with_: dict[str, Any], jitter_ms: int) -> str:
    """What one pair of :func:`jitter_run` results shows, in one line."""

    def median(run: dict[str, Any]) -> str:
        return "none completed" if run["median_ms"] is None else f"{run['median_ms']:,.0f} ms"

    return (
        f"this run, without and with {jitter_ms} ms of jitter: writes answered 503 "
        f"{without['slowed']}, then {with_['slowed']}; snapshots failed {without['failed']}, "
        f"then {with_['failed']}; median duration {median(without)}, then {median(with_)}"
    )


def check_restore_choice(answer: Any, cluster: Any) -> Feedback:
    """Which snapshot will ``cluster.restore()`` roll back to now? ``answer`` is a
    snapshot id from the registry."""
    if is_blank(answer):
        return no_answer_yet(
            hint="Answer with a snapshot id from the registry, such as 'snap-0002-1a2b3'."
        )
    try:
        rows = cluster.request("GET", "/v1/snapshots")["snapshots"]
    except Exception as e:  # a stopped cluster is a state of the lesson, not a crash
        from ..widgets.live_explorer import one_line

        return Feedback(
            False,
            f"The registry cannot be read: {one_line(e)}.",
            "Start the cluster again with the cells at the top of the lesson, then trigger "
            "a snapshot or two.",
        )
    done = [r for r in rows if r["status"] == "COMPLETED"]
    expected = done[-1]["snapshot_id"] if done else None
    status = {r["snapshot_id"]: r["status"] for r in rows}
    if expected is None:
        return Feedback(False, "No snapshot is COMPLETED yet: a restore would be refused (409).")
    if answer == expected:
        return Feedback(
            True,
            f"Right: {expected} is the newest COMPLETED snapshot, the one whose manifest "
            "was written; a FAILED one, or one still in progress, is never used.",
        )
    if answer not in status:
        return Feedback(False, f"{answer!r} is not in the registry: copy an id from its table.")
    why = {
        "FAILED": "it FAILED: some node's part is missing, so there is no state to restore",
        "INITIATED": "it is still in progress: no manifest yet",
        "IN_PROGRESS": "it is still in progress: no manifest yet",
        "COMPLETED": "it is COMPLETED, but a newer one is too, and a restore takes the newest",
    }[str(status[answer])]
    return Feedback(False, f"Not {answer}: {why}.", answer=f"{expected}.")


def _count(value: Any) -> str:
    return "-" if value is None else f"{int(value):,}"

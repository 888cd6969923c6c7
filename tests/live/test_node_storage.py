"""A node writes and reads parts only where its cluster stores, and never over a part
written before, whoever names the place: the controller's Initiate, a marker from a
peer, a restore call. The controller checks a trigger's target too, but a caller holding
the cluster's token can call a node directly (a forged Initiate, a forged marker).

White-box, in-process: the node is driven as its gRPC services would drive it, its
reports to the controller are collected instead of sent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from live_support import require_live, run_async

require_live()

from snapshotlib.live.node import Node, Target  # noqa: E402
from snapshotlib.live.restore_part import RestoreError  # noqa: E402
from snapshotlib.live.rpc import protos  # noqa: E402
from snapshotlib.live.spec import ClusterSpec, NodeSpec, topology  # noqa: E402
from snapshotlib.live.storage_policy import StoragePolicy  # noqa: E402

SPEC = ClusterSpec(
    nodes=tuple(NodeSpec(f"P{i}", "127.0.0.1", 1) for i in (1, 2, 3)),
    channels=tuple((c.src, c.dst) for c in topology("complete", 3).channels),
)
SNAP = "snap-0001-aaaaa"


def marker(sender: str, target: str) -> Any:
    return protos.Envelope(
        sender_node_id=sender,
        clock=[0, 0, 0],
        marker=protos.MarkerRequest(snapshot_id=SNAP, sender_node_id=sender),
        target_storage_uri=target,
    )


def make_node(tmp_path: Path, logs: str, reports: list[dict[str, Any]]) -> Node:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    policy = StoragePolicy.around(str(root), (root / "snaps").as_uri() + "/")
    node = Node(SPEC, "P1", tmp_path / logs / "run-1", storage_policy=policy)
    node._queues = {ch: asyncio.Queue() for ch in node.outputs}  # the streams
    node.controller.report = lambda sid, report: reports.append(report)  # type: ignore[method-assign]
    return node


def take_part(node: Node, target: str) -> None:
    """P1 records on P2's marker and finishes on P3's, each carrying ``target``."""
    node.accept(marker("P2", target))
    node.accept(marker("P3", target))


def test_a_target_outside_the_storage_root_is_refused_from_the_controller_and_from_a_marker(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "elsewhere"
    reports: list[dict[str, Any]] = []

    async def run() -> None:
        node = make_node(tmp_path, "logs", reports)
        reason = node.initiate(SNAP, Target(outside.as_uri() + "/"))
        assert reason.startswith("target_storage_uri: a file:// URI must be in the cluster's")
        assert str(tmp_path / "root") in reason
        assert SNAP not in node.algorithm.snapshot_records()  # nothing was started
        # the same place, named by a peer's marker: P1 takes part, but writes nothing
        take_part(node, outside.as_uri() + "/")
        await asyncio.gather(*node._tasks)
        node.log.close()

    run_async(run())
    assert not outside.exists()
    [report] = reports
    assert report["ok"] is False
    assert report["error"].startswith("P1: target_storage_uri: a file:// URI must be in")


def test_a_marker_reusing_a_finished_snapshot_s_id_never_replaces_its_part(
    tmp_path: Path,
) -> None:
    """A node restarted (or a restore: a new epoch forgets which snapshots were done)
    takes part again in an old id a forged marker names: the part stays as written."""
    target = (tmp_path / "root" / "snaps").as_uri() + "/"
    reports: list[dict[str, Any]] = []

    async def first() -> None:
        node = make_node(tmp_path, "logs-1", reports)
        take_part(node, target)
        await asyncio.gather(*node._tasks)
        node.log.close()

    run_async(first())
    part = tmp_path / "root" / "snaps" / f"{SNAP}.P1.json"
    written = part.read_bytes()
    assert reports[0]["ok"] is True

    async def again() -> None:
        node = make_node(tmp_path, "logs-2", reports)
        node.state.credit(500)  # a different balance: a part that would differ
        take_part(node, target)
        await asyncio.gather(*node._tasks)
        node.log.close()

    run_async(again())
    assert part.read_bytes() == written
    assert reports[1]["ok"] is False
    assert "already written, and written once" in reports[1]["error"]


@pytest.mark.parametrize("where", ["outside", "dotdot"])
def test_a_restore_reads_no_part_outside_the_storage_root(tmp_path: Path, where: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / f"{SNAP}.P1.json").write_text("{}")
    uri = (
        (elsewhere / f"{SNAP}.P1.json").as_uri()
        if where == "outside"
        else (tmp_path / "root").as_uri() + f"/../elsewhere/{SNAP}.P1.json"
    )
    reports: list[dict[str, Any]] = []

    async def run() -> str:
        node = make_node(tmp_path, "logs", reports)
        try:
            await node.prepare_restore(SNAP, uri, "0" * 64, 1)
        except RestoreError as e:
            return str(e)
        finally:
            node.log.close()
        raise AssertionError("a part outside the storage root was read")

    message = run_async(run())
    assert message.startswith(f"P1's part of {SNAP} ({uri}): cannot be read (part_uri: ")

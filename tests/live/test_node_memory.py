"""A node keeps only what its open snapshots need: the messages they recorded. Every
other message it met, and every finished snapshot's record, is forgotten, so a node
that runs for hours holds no more than one that just started (benchmarks/bench_live_rss.py
measures the process's memory over time).

White-box, in-process: the node is driven by envelopes as its streams would hand them
over, its outgoing streams are plain queues.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from live_support import require_live, run_async

require_live()

from snapshotlib.live.node import FORGET_EVERY, Node, Target  # noqa: E402
from snapshotlib.live.rpc import protos  # noqa: E402
from snapshotlib.live.spec import ClusterSpec, NodeSpec, topology  # noqa: E402

SPEC = ClusterSpec(
    nodes=tuple(NodeSpec(f"P{i}", "127.0.0.1", 1) for i in (1, 2, 3)),
    channels=tuple((c.src, c.dst) for c in topology("complete", 3).channels),
)


def transfer(sender: str) -> object:
    return protos.Envelope(
        sender_node_id=sender, clock=[0, 0, 0], transfer=protos.Transfer(amount=1)
    )


def marker(sender: str, snapshot_id: str) -> object:
    return protos.Envelope(
        sender_node_id=sender,
        clock=[0, 0, 0],
        marker=protos.MarkerRequest(snapshot_id=snapshot_id, sender_node_id=sender),
    )


def test_a_node_forgets_every_message_no_open_snapshot_recorded(tmp_path: Path) -> None:
    storage = (tmp_path / "snaps").as_uri() + "/"

    async def run() -> None:
        node = Node(SPEC, "P1", tmp_path / "logs" / "run-1")
        node._queues = {ch: asyncio.Queue() for ch in node.outputs}  # the streams
        for _ in range(10 * FORGET_EVERY):
            node.accept(transfer("P2"))
        assert len(node.host.messages) <= FORGET_EVERY
        # a snapshot records P2->P1 until P2's marker comes: those messages are kept
        assert node.initiate("snap-0001-aaaaa", Target(storage)) == ""
        for _ in range(3 * FORGET_EVERY):
            node.accept(transfer("P2"))
        assert len(node.host.messages) >= 3 * FORGET_EVERY
        node.accept(marker("P3", "snap-0001-aaaaa"))
        node.accept(marker("P2", "snap-0001-aaaaa"))
        await asyncio.gather(*node._tasks)  # the part is written
        # ... and forgotten once it is done, with the snapshot's record
        for _ in range(2 * FORGET_EVERY):
            node.accept(transfer("P3"))
        assert len(node.host.messages) <= FORGET_EVERY
        assert "snap-0001-aaaaa" not in node.algorithm.records
        assert node.initiate("snap-0001-aaaaa", Target(storage)).endswith(
            "already took part in snap-0001-aaaaa"
        )
        node.log.close()

    run_async(run())
    part = json.loads((tmp_path / "snaps" / "snap-0001-aaaaa.P1.json").read_text())
    assert part["channels"] == {"P2->P1": [1] * (3 * FORGET_EVERY), "P3->P1": []}
    assert part["balance"] == 1000 + 10 * FORGET_EVERY

"""The LiveExplorer widget over a stand-in cluster: what it draws from the controller's
answers, and that each button is one call of the cluster's API (a refusal is shown, not
raised). Its run against a real cluster in a browser is tests/browser."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("ipywidgets", reason="the widgets need the widgets extra")

from snapshotlib.viz.style import RED_FILL, WHITE_FILL
from snapshotlib.widgets import LiveExplorer
from snapshotlib.widgets.common import find_button
from snapshotlib.widgets.live_explorer import network_svg


@dataclass
class Spec:
    ids: tuple[str, ...] = ("P1", "P2", "P3")


@dataclass
class StandIn:
    """Answers as LiveCluster does; records the calls."""

    spec: Spec = field(default_factory=Spec)
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    sent: int = 0
    refuse: str | None = None

    def cluster(self) -> dict[str, Any]:
        return {
            "nodes": [
                {"id": "P1", "health": "up", "epoch": 0, "balance": 900,
                 "buffered_messages": 4, "open_snapshots": ["snap-0002-aaaaa"]},
                {"id": "P2", "health": "down", "epoch": 0, "balance": None,
                 "buffered_messages": None, "open_snapshots": None},
                {"id": "P3", "health": "awaiting-restore", "epoch": 0, "balance": 0,
                 "buffered_messages": 0, "open_snapshots": []},
            ],
            "channels": ["P1->P2", "P2->P1", "P1->P3", "P3->P1", "P2->P3", "P3->P2"],
        }  # fmt: skip

    def request(self, method: str, path: str) -> dict[str, Any]:
        row = {
            "snapshot_id": "snap-0001-bbbbb", "snapshot_type": "full", "status": "FAILED",
            "nodes_completed": 2, "duration_ms": None, "total_size_bytes": None,
            "error": "membership changed: P2 left (no heartbeat for 5.2 s)",
        }  # fmt: skip
        return {"snapshots": [row]}

    def health(self) -> dict[str, Any]:
        self.sent += 50
        return {"P1": {"sent": self.sent}, "P2": None, "P3": {"sent": 0}}

    def trigger(self, node: str, kind: str) -> str:
        self.calls.append(("trigger", node, kind))
        if self.refuse:
            raise RuntimeError(self.refuse)
        return "snap-0003-ccccc"

    def crash(self, node: str) -> dict[str, Any]:
        self.calls.append(("crash", node))
        return {"node_id": node, "detail": "killed; the controller notices within 5000 ms"}

    def restore(self) -> dict[str, Any]:
        self.calls.append(("restore",))
        return {"snapshot_id": "snap-0001-bbbbb", "epoch": 1, "duration_ms": 12,
                "total_money": 3000, "nodes": [{"reinjected": 2}, {"reinjected": 0}]}  # fmt: skip


def plain(shown: str) -> str:
    """A view's HTML without its inline styles."""
    return re.sub(r" style='[^']*'", "", shown)


def test_the_views_show_each_node_s_standing_and_the_registry() -> None:
    cluster = StandIn()
    explorer = LiveExplorer(cluster, auto=False)
    try:
        nodes = plain(explorer.nodes.value)
        assert "awaiting-restore" in nodes and "down" in nodes
        assert "snap-0002-aaaaa" in nodes and "4 msgs" in nodes
        registry = explorer.registry.value
        assert "snap-0001-bbbbb" in registry and "2/3" in registry
        assert "membership changed: P2 left" in registry
        # a second look gives a rate from the sends counted in between
        explorer.refresh()
        assert "<td>P1</td><td>up</td><td>0</td><td>900</td><td>–</td>" in nodes  # no rate yet
        assert re.search(
            r"<td>P1</td><td>up</td><td>0</td><td>900</td><td>\d+</td>", plain(explorer.nodes.value)
        )
        assert "<td>P2</td><td>down</td><td>0</td><td>–</td><td>–</td>" in plain(
            explorer.nodes.value
        )
    finally:
        explorer.close()


def test_each_button_is_one_call_and_a_refusal_is_shown() -> None:
    cluster = StandIn()
    explorer = LiveExplorer(cluster, auto=False)
    try:
        # Crash has a menu of its own, set apart from Trigger's: P1 initiates, P3 crashes
        assert (explorer.node_choice.value, explorer.crash_choice.value) == ("P1", "P3")
        explorer.node_choice.value = "P3"
        explorer.type_choice.value = "incremental"
        find_button(explorer.box, "Trigger").click()
        assert "snap-0003-ccccc: a incremental snapshot, initiated by P3" in explorer.status.value
        explorer.crash_choice.value = "P2"
        find_button(explorer.box, "Crash").click()
        find_button(explorer.box, "Restore latest").click()
        assert "restored snap-0001-bbbbb in epoch 1" in explorer.status.value
        assert "2 recorded messages delivered again, money 3000" in explorer.status.value
        assert cluster.calls == [("trigger", "P3", "incremental"), ("crash", "P2"), ("restore",)]
        cluster.refuse = "409 cluster: P2 is down"
        find_button(explorer.box, "Trigger").click()
        assert explorer.status.value.startswith("refused: 409 cluster: P2 is down")
        # the controller's JSON answer is read, not shown as it came
        cluster.refuse = (
            'POST /v1/snapshots/trigger: 409 {"detail":"cluster: P2 is down; a snapshot '
            'needs every node"}'
        )
        find_button(explorer.box, "Trigger").click()
        assert explorer.status.value == (
            "refused: cluster: P2 is down; a snapshot needs every node (409)"
        )
        assert len(explorer.history) == 5
    finally:
        explorer.close()


def test_nodes_are_white_circles_before_they_record_red_squares_after_grey_when_down() -> None:
    svg = network_svg(StandIn().cluster()["nodes"], StandIn().cluster()["channels"])
    assert svg.count("<circle") == 2 and svg.count("<rect") == 1 and svg.count("<line") == 6
    assert re.search(f'<rect [^>]*fill="{RED_FILL}"', svg)  # P1 records snap-0002
    assert not re.search(f'<circle [^>]*fill="{RED_FILL}"', svg)  # red is always square
    assert "M" in svg and "L" in svg  # P2 crossed out
    quiet = network_svg([{"id": "P1", "health": "up", "open_snapshots": []}], [])
    assert f'fill="{WHITE_FILL}"' in quiet


def test_the_legend_says_what_each_shape_and_colour_means() -> None:
    explorer = LiveExplorer(StandIn(), auto=False)
    try:
        legend = explorer.legend.value
        for said in ("not recording", "recording a snapshot", "down", "Restore latest"):
            assert said in legend
        # a node started again after a crash shows no epoch or balance, as the legend says
        assert "<td>P3</td><td>awaiting-restore</td><td>–</td><td>–</td>" in plain(
            explorer.nodes.value
        )
    finally:
        explorer.close()


@dataclass
class Gone(StandIn):
    """A cluster that was stopped: every call is refused by the operating system."""

    def cluster(self) -> dict[str, Any]:
        raise ConnectionRefusedError("[Errno 111] Connection refused")


def test_a_cluster_that_does_not_answer_is_said_so_in_one_line_and_nothing_looks_up() -> None:
    explorer = LiveExplorer(Gone(), auto=False)
    try:
        assert explorer.status.value == (
            "the cluster does not answer: it is stopped, or still starting"
        )
        assert explorer.nodes.value == "" and explorer.network.value == ""
    finally:
        explorer.close()


def test_stop_cluster_stops_it_and_the_explorer_shows_it_stopped() -> None:
    stopped: list[bool] = []

    @dataclass
    class Stoppable(StandIn):
        def stop(self) -> None:
            stopped.append(True)

    cluster = Stoppable()
    explorer = LiveExplorer(cluster)  # auto-refresh on, as in the lesson
    find_button(explorer.box, "Stop cluster").click()
    assert stopped == [True]
    assert "The cluster is stopped" in explorer.status.value
    assert find_button(explorer.box, "Trigger").disabled
    assert not explorer._ticker.is_alive()
    find_button(explorer.box, "Trigger").click()  # a click on a disabled button: nothing
    assert ("trigger", "P1", "full") not in cluster.calls

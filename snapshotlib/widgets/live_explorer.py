"""The live lab on screen: a running cluster's nodes and channels, its rates, each
node's snapshot progress and the registry, with buttons to trigger, crash and restore.

Thin over :class:`~snapshotlib.live.cluster.LiveCluster` (any object with its methods
will do, so this module imports nothing of the live lab): every button is one call of
its API, every view is drawn from one ``GET`` of the controller and the nodes' health.
Nodes are drawn as Dijkstra colours them: white before they record their state for a
snapshot in progress, red after; a node that is down is grey and crossed out.
"""

from __future__ import annotations

import html
import math
import threading
import time
from typing import Any

import ipywidgets as w

from ..viz.style import RED_FILL, WHITE_FILL
from .common import make_button, row, widget_bundle

#: how many of the newest snapshots the registry table shows
REGISTRY_ROWS = 8
#: tables that read on a projector: cells apart, numbers to the right
TABLE = "<table style='border-collapse:collapse;margin:4px 0'>"
CELL = "padding:2px 10px;text-align:left;border-bottom:1px solid #ddd"
#: refreshes in a row the cluster does not answer before auto-refresh gives up
MAX_SILENT = 5
DOWN_FILL = "#bbbbbb"
AWAITING_FILL = "#ffd27f"


def network_svg(nodes: list[dict[str, Any]], channels: list[str], size: int = 260) -> str:
    """The nodes on a circle, channels as lines; a node's fill says its standing."""
    n = max(1, len(nodes))
    centre, radius = size / 2, size / 2 - 34
    where = {
        node["id"]: (
            centre + radius * math.cos(2 * math.pi * k / n - math.pi / 2),
            centre + radius * math.sin(2 * math.pi * k / n - math.pi / 2),
        )
        for k, node in enumerate(nodes)
    }
    lines = []
    for name in channels:
        src, _, dst = name.partition("->")
        if src in where and dst in where:
            (x1, y1), (x2, y2) = where[src], where[dst]
            lines.append(
                f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" '
                'stroke="#999" stroke-width="1"/>'
            )
    circles = []
    for node in nodes:
        x, y = where[node["id"]]
        health = node.get("health")
        fill = {"down": DOWN_FILL, "awaiting-restore": AWAITING_FILL}.get(
            str(health), RED_FILL if node.get("open_snapshots") else WHITE_FILL
        )
        circles.append(
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="20" fill="{fill}" stroke="#333" '
            f'stroke-width="1.5"><title>{html.escape(str(node["id"]))}: {health}</title>'
            "</circle>"
        )
        colour = "#fff" if fill == RED_FILL else "#000"
        circles.append(
            f'<text x="{x:.0f}" y="{y + 5:.0f}" text-anchor="middle" font-size="13" '
            f'fill="{colour}">{html.escape(str(node["id"]))}</text>'
        )
        if health == "down":
            circles.append(
                f'<path d="M{x - 14:.0f},{y - 14:.0f} L{x + 14:.0f},{y + 14:.0f} '
                f'M{x + 14:.0f},{y - 14:.0f} L{x - 14:.0f},{y + 14:.0f}" stroke="#333" '
                'stroke-width="2"/>'
            )
    return (
        f'<svg width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img" '
        'aria-label="the cluster\'s nodes and channels">' + "".join(lines + circles) + "</svg>"
    )


def nodes_table(nodes: list[dict[str, Any]], rates: dict[str, float | None]) -> str:
    """Per node: standing, epoch, balance, transfers sent per second, what it buffers
    for snapshots, and the snapshots it is recording."""
    head = (
        "<tr><th>node</th><th>health</th><th>epoch</th><th>balance</th>"
        "<th>sent/s</th><th>buffered</th><th>recording</th></tr>"
    )
    rows = []
    for node in nodes:
        rate = rates.get(node["id"])
        buffered = node.get("buffered_messages")
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (
                    node["id"],
                    node.get("health"),
                    _dash(node.get("epoch")),
                    _dash(node.get("balance")),
                    "–" if rate is None else f"{rate:.0f}",
                    "–" if buffered is None else f"{buffered} msgs",
                    ", ".join(node.get("open_snapshots") or []) or "–",
                )
            )
            + "</tr>"
        )
    return _table(head, rows)


def registry_table(snapshots: list[dict[str, Any]], nodes: int) -> str:
    """The newest snapshots: id, type, status, parts in, duration, bytes written, why
    it failed."""
    head = (
        "<tr><th>snapshot</th><th>type</th><th>status</th><th>parts</th>"
        "<th>ms</th><th>bytes</th><th>error</th></tr>"
    )
    rows = []
    for s in snapshots[-REGISTRY_ROWS:][::-1]:
        error = str(s.get("error") or "")
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (
                    s["snapshot_id"],
                    s["snapshot_type"],
                    s["status"],
                    f"{s['nodes_completed']}/{nodes}",
                    _dash(s.get("duration_ms")),
                    _dash(s.get("total_size_bytes")),
                    error if len(error) <= 90 else error[:87] + "...",
                )
            )
            + "</tr>"
        )
    if not rows:
        rows.append('<tr><td colspan="7">no snapshot yet: press Trigger</td></tr>')
    return _table(head, rows)


def _table(head: str, rows: list[str]) -> str:
    styled = (head + "".join(rows)).replace("<td>", f"<td style='{CELL}'>")
    return TABLE + styled.replace("<th>", f"<th style='{CELL}'>") + "</table>"


def _dash(value: Any) -> Any:
    return "–" if value is None else value


class LiveExplorer:
    """Views of a live cluster and buttons on it (see the module docstring).

    Parameters
    ----------
    cluster
        A started :class:`~snapshotlib.live.cluster.LiveCluster`.
    every_s
        With *auto-refresh* ticked, how often the views are redrawn (seconds).
    auto
        Whether *auto-refresh* starts ticked.
    """

    def __init__(self, cluster: Any, every_s: float = 1.0, auto: bool = True) -> None:
        self.cluster = cluster
        self.every_s = every_s
        self.history: list[str] = []
        self._sent: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        ids = list(cluster.spec.ids)
        short = {"description_width": "initial"}
        self.node_choice = w.Dropdown(
            options=ids, value=ids[0], description="node", style=short,
            layout=w.Layout(width="110px"),
        )  # fmt: skip
        self.type_choice = w.Dropdown(
            options=["full", "incremental"], value="full", description="type", style=short,
            layout=w.Layout(width="160px"),
        )  # fmt: skip
        self.trigger_button = make_button("Trigger", "camera", "the node initiates a snapshot")
        self.crash_button = make_button("Crash", "bolt", "the node is killed (SIGKILL)")
        self.restore_button = make_button(
            "Restore latest", "history", "every node rolls back to the latest COMPLETED snapshot"
        )
        self.refresh_button = make_button("Refresh", "refresh", "draw the views again now")
        self.auto = w.Checkbox(value=auto, description="auto-refresh", indent=False)
        self.network = w.HTML()
        self.nodes = w.HTML()
        self.registry = w.HTML()
        self.status = w.HTML("Ready.")
        for view, name in (
            (self.network, "live-network"),
            (self.nodes, "live-nodes"),
            (self.registry, "live-registry"),
            (self.status, "live-status"),
        ):
            view.add_class(name)
        self.trigger_button.on_click(lambda _: self._do(self._trigger))
        self.crash_button.on_click(lambda _: self._do(self._crash))
        self.restore_button.on_click(lambda _: self._do(self._restore))
        self.refresh_button.on_click(lambda _: self.refresh())
        self.box = w.VBox(
            [
                row(
                    [
                        self.node_choice,
                        self.type_choice,
                        self.trigger_button,
                        self.crash_button,
                        self.restore_button,
                        self.refresh_button,
                        self.auto,
                    ]
                ),
                row([self.network, w.VBox([self.nodes, self.registry])]),
                self.status,
            ]
        )
        self.refresh()
        self._ticker = threading.Thread(target=self._tick, name="live-explorer", daemon=True)
        self._ticker.start()

    # ------------------------------------------------------------- actions
    def _trigger(self) -> str:
        node, kind = self.node_choice.value, self.type_choice.value
        sid = self.cluster.trigger(node, kind)
        return f"{sid}: a {kind} snapshot, initiated by {node}"

    def _crash(self) -> str:
        answer = self.cluster.crash(self.node_choice.value)
        return f"{answer['node_id']} {answer['detail']}"

    def _restore(self) -> str:
        a = self.cluster.restore()
        return (
            f"restored {a['snapshot_id']} in epoch {a['epoch']} ({a['duration_ms']} ms): "
            f"{sum(n['reinjected'] for n in a['nodes'])} recorded messages delivered again, "
            f"money {a['total_money']}"
        )

    def _do(self, action: Any) -> None:
        try:
            said = action()
        except Exception as e:  # the controller's refusal is the lesson: show it
            said = f"refused: {e}"
        self.history.append(said)
        self.status.value = html.escape(said)
        self.refresh()

    # --------------------------------------------------------------- views
    def refresh(self) -> bool:
        """Draw every view from the controller's and the nodes' answers now; whether the
        cluster answered."""
        try:  # asked outside the lock: a node that does not answer takes seconds
            view = self.cluster.cluster()
            snapshots = self.cluster.request("GET", "/v1/snapshots")["snapshots"]
            health = self.cluster.health()
        except Exception as e:
            self.status.value = html.escape(f"the cluster does not answer: {e}")
            return False
        with self._lock:
            now = time.monotonic()
            rates: dict[str, float | None] = {}
            for node_id, answer in health.items():
                before = self._sent.get(node_id)
                if answer is None:
                    rates[node_id] = None
                    continue
                if before is not None and now > before[1] and answer["sent"] >= before[0]:
                    rates[node_id] = (answer["sent"] - before[0]) / (now - before[1])
                else:
                    rates[node_id] = None
                self._sent[node_id] = (answer["sent"], now)
            self.network.value = network_svg(view["nodes"], view["channels"])
            self.nodes.value = nodes_table(view["nodes"], rates)
            self.registry.value = registry_table(snapshots, len(view["nodes"]))
            return True

    def _tick(self) -> None:
        silent = 0
        while not self._stop.wait(self.every_s):
            if self.auto.value:
                try:
                    silent = 0 if self.refresh() else silent + 1
                except Exception as e:  # an answer of an unexpected shape: say it, go on
                    self.status.value = html.escape(f"could not draw the cluster: {e}")
                    silent += 1
            if silent >= MAX_SILENT:
                return  # the cluster was stopped: nothing more to draw

    def close(self) -> None:
        """Stop redrawing (the cluster goes on)."""
        self._stop.set()
        self._ticker.join()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return widget_bundle(self.box, "LiveExplorer", **kwargs)

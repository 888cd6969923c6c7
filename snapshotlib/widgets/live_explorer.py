"""The live lab on screen: a running cluster's nodes and channels, its rates, each
node's snapshot progress and the registry, with buttons to trigger, crash and restore.

Thin over :class:`~snapshotlib.live.cluster.LiveCluster` (any object with its methods
will do, so this module imports nothing of the live lab): every button is one call of
its API, every view is drawn from one ``GET`` of the controller and the nodes' health.
Nodes are drawn as the course draws processes everywhere: a white circle before they
record their state for a snapshot in progress, a red square after; a node that is down
is grey and crossed out, and one started again after a crash, holding nothing until a
restore, is yellow. A legend under the picture says so.
"""

from __future__ import annotations

import html
import json
import math
import re
import threading
import time
from typing import Any

import ipywidgets as w

from ..viz.style import RED_FILL, WHITE_FILL
from .common import make_button, off_slide, row, widget_bundle

#: how many of the newest snapshots the registry table shows
REGISTRY_ROWS = 8
#: tables that read on a projector: cells apart, numbers to the right
TABLE = "<table style='border-collapse:collapse;margin:4px 0'>"
CELL = "padding:2px 10px;text-align:left;border-bottom:1px solid #ddd"
#: refreshes in a row the cluster does not answer before auto-refresh gives up
MAX_SILENT = 5
DOWN_FILL = "#bbbbbb"
AWAITING_FILL = "#ffd27f"


#: what the picture's shapes and colours mean
LEGEND = (
    "<div style='font-size:90%;line-height:1.4;margin:2px 0 6px'>"
    "<span style='color:#333'>&#9675;</span> not recording<br>"
    f"<span style='color:{RED_FILL}'>&#9632;</span> recording a snapshot (its state is "
    "recorded)<br>"
    f"<span style='color:{DOWN_FILL}'>&#10005;</span> down<br>"
    f"<span style='color:{AWAITING_FILL}'>&#9679;</span> started again after a crash: it "
    "holds nothing (no epoch, no balance) until <i>Restore latest</i></div>"
)
#: what the views show once the cluster is stopped
STOPPED = (
    "<p><b>The cluster is stopped.</b> These buttons do nothing now: start a new cluster "
    "to go on.</p>"
)


def network_svg(nodes: list[dict[str, Any]], channels: list[str], size: int = 260) -> str:
    """The nodes on a circle, channels as lines; a node's shape and fill say its
    standing: a red square records, a white circle does not."""
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
        title = f"<title>{html.escape(str(node['id']))}: {html.escape(str(health))}</title>"
        if fill == RED_FILL:  # red always comes with the square, as in every lesson
            circles.append(
                f'<rect x="{x - 19:.0f}" y="{y - 19:.0f}" width="38" height="38" '
                f'fill="{fill}" stroke="#333" stroke-width="1.5">{title}</rect>'
            )
        else:
            circles.append(
                f'<circle cx="{x:.0f}" cy="{y:.0f}" r="20" fill="{fill}" stroke="#333" '
                f'stroke-width="1.5">{title}</circle>'
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
        # a node started again after a crash holds nothing until a restore: its epoch
        # (-1) and balance (0) are placeholders, not figures
        empty = node.get("health") == "awaiting-restore"
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (
                    node["id"],
                    node.get("health"),
                    "–" if empty else _dash(node.get("epoch")),
                    "–" if empty else _dash(node.get("balance")),
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


def one_line(error: Exception) -> str:
    """A refusal in one line: the controller's ``detail`` out of its JSON answer, with
    its status code, rather than the answer as it came."""
    text = str(error).strip()
    found = re.search(r"\b(\d{3}) (\{.*\})\s*$", text, re.S)
    if found:
        try:
            detail = json.loads(found.group(2)).get("detail")
        except (ValueError, AttributeError):
            detail = None
        if isinstance(detail, list):  # FastAPI's validation errors: the first one
            first = detail[0] if detail and isinstance(detail[0], dict) else {}
            detail = first.get("msg")
        if isinstance(detail, str):
            return f"{detail} ({found.group(1)})"
    if "Connection refused" in text or "timed out" in text:
        return "the cluster does not answer: it is stopped, or still starting"
    return text.splitlines()[0] if text else type(error).__name__


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
        self.stopped = False
        # one menu per button: crashing a node while another's snapshot is in progress
        # must not mean switching a shared menu within the second the markers take
        self.node_choice = w.Dropdown(
            options=ids, value=ids[0], description="at", style=short,
            layout=w.Layout(width="100px"),
        )  # fmt: skip
        self.crash_choice = w.Dropdown(
            options=ids, value=ids[-1], description="node", style=short,
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
        self.stop_button = make_button(
            "Stop cluster", "stop", "stop every process of the cluster (and these refreshes)"
        )
        self.auto = w.Checkbox(
            value=auto, description="auto-refresh", indent=False, layout=w.Layout(width="auto")
        )
        self.network = w.HTML()
        # as wide as the picture, so that the tables stay beside it
        self.legend = w.HTML(LEGEND, layout=w.Layout(width="260px"))
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
        self.stop_button.on_click(lambda _: self.stop_cluster())
        upkeep = row([self.refresh_button, self.auto, self.stop_button])
        self.box = w.VBox(
            [
                row([self.trigger_button, self.node_choice, self.type_choice]),
                row([self.crash_button, self.crash_choice, self.restore_button]),
                upkeep,
                row([w.VBox([self.network, self.legend]), w.VBox([self.nodes, self.registry])]),
                self.status,
            ]
        )
        self.box.add_class("live-explorer")
        # a lecture acts and watches (auto-refresh on); the legend is the presenter's to say
        off_slide(upkeep, self.legend)
        self.refresh()
        self._ticker = threading.Thread(target=self._tick, name="live-explorer", daemon=True)
        self._ticker.start()

    # ------------------------------------------------------------- actions
    def _trigger(self) -> str:
        node, kind = self.node_choice.value, self.type_choice.value
        sid = self.cluster.trigger(node, kind)
        return f"{sid}: a {kind} snapshot, initiated by {node}"

    def _crash(self) -> str:
        answer = self.cluster.crash(self.crash_choice.value)
        return f"{answer['node_id']} {answer['detail']}"

    def _restore(self) -> str:
        a = self.cluster.restore()
        return (
            f"restored {a['snapshot_id']} in epoch {a['epoch']} ({a['duration_ms']} ms): "
            f"{sum(n['reinjected'] for n in a['nodes'])} recorded messages delivered again, "
            f"money {a['total_money']}"
        )

    def _do(self, action: Any) -> None:
        if self.stopped:
            self.status.value = STOPPED
            return
        try:
            said = action()
        except Exception as e:  # the controller's refusal is the lesson: show it
            said = f"refused: {one_line(e)}"
        self.history.append(said)
        self.status.value = html.escape(said)
        self.refresh()

    # --------------------------------------------------------------- views
    def refresh(self) -> bool:
        """Draw every view from the controller's and the nodes' answers now; whether the
        cluster answered."""
        if self.stopped:
            return False
        try:  # asked outside the lock: a node that does not answer takes seconds
            view = self.cluster.cluster()
            snapshots = self.cluster.request("GET", "/v1/snapshots")["snapshots"]
            health = self.cluster.health()
        except Exception as e:
            self.status.value = html.escape(one_line(e))
            # what was drawn is no longer known: nothing may look "up"
            self.nodes.value = self.network.value = ""
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

    def mark_stopped(self) -> None:
        """Show the cluster as stopped, with its buttons off (it was stopped elsewhere)."""
        self.close()
        self.stopped = True
        for button in (self.trigger_button, self.crash_button, self.restore_button,
                       self.refresh_button, self.stop_button):  # fmt: skip
            button.disabled = True
        self.network.value = self.nodes.value = ""
        self.status.value = STOPPED

    def stop_cluster(self) -> None:
        """The *Stop cluster* button: every process of the cluster, then the views."""
        self.close()
        try:
            self.cluster.stop()
        except Exception as e:  # already gone: say so, and show it stopped all the same
            self.history.append(f"stop: {one_line(e)}")
        self.mark_stopped()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return widget_bundle(self.box, "LiveExplorer", **kwargs)

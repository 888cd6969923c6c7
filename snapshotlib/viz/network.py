"""The network view: processes, channels, and what is in flight on them right now.

Processes are laid out with networkx and filled white or red for the chosen snapshot;
each channel is an arrow (the two directions between a pair run side by side); the
messages and markers in flight sit on their channel in FIFO order, the head nearest
the receiver; channels whose state is being recorded are highlighted. Hovering a
process shows its recorded state, hovering a channel its recorded messages.

The figure always has the same traces in the same order (see :data:`TRACES`), so a
widget can copy a new figure's data into the one on screen instead of rebuilding it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import networkx as nx

from ..colouring import turned_red
from ..model import Network
from ..simulator import Simulator
from ..snapshot import GlobalSnapshot
from ..trace import APP
from . import style
from .build import Figure, build_figure

#: names of the traces, in order
TRACES = ("channels", "recording", "messages", "markers", "processes")
#: up to this many messages and markers in flight, each is named beside its dot
MAX_LABELLED = 16

Point = tuple[float, float]


def circular_positions(nodes: list[str]) -> dict[str, Point]:
    """networkx's ``circular_layout`` of ``nodes``, worked out with :mod:`math`: evenly
    spaced on a circle counter-clockwise from the right, centred and scaled so the
    largest coordinate is 1. networkx computes it with numpy, which the browser's
    Python (Pyodide, in the course's static site) does not have.

    >>> circular_positions(["a", "b", "c", "d"])["b"]
    (0.0, 1.0)
    """
    n = len(nodes)
    if n == 0:
        return {}
    if n == 1:
        return {nodes[0]: (0.0, 0.0)}
    raw = [(math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n)) for i in range(n)]
    mean_x, mean_y = sum(x for x, _ in raw) / n, sum(y for _, y in raw) / n
    centred = [(x - mean_x, y - mean_y) for x, y in raw]
    limit = max((max(abs(x), abs(y)) for x, y in centred), default=1.0) or 1.0
    return {p: (round(x / limit, 12) + 0.0, round(y / limit, 12) + 0.0)
            for p, (x, y) in zip(nodes, centred, strict=True)}  # fmt: skip


def network_layout(network: Network, kind: str = "circular", seed: int = 0) -> dict[str, Point]:
    """Positions of the processes: ``circular`` (default, stable) or ``spring`` (seeded;
    networkx computes it with numpy, so it needs numpy installed)."""
    if kind == "spring":
        graph = nx.DiGraph()
        graph.add_nodes_from(network.processes)
        graph.add_edges_from((c.src, c.dst) for c in network.channels)
        pos = nx.spring_layout(graph, seed=seed)
    elif kind == "circular":
        # counter-clockwise from the right; mirrored in y = x, the first process is at
        # the top and the rest follow clockwise, as people draw rings
        pos = {p: (y, x) for p, (x, y) in circular_positions(list(network.processes)).items()}
    else:
        raise ValueError(f"unknown layout {kind!r}: expected 'circular' or 'spring'")
    return {p: (float(x), float(y)) for p, (x, y) in pos.items()}


def _segment(a: Point, b: Point, offset: float) -> tuple[Point, Point]:
    """The drawn part of channel a->b: shortened at both ends, shifted to its right."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy) or 1.0
    nx_, ny_ = dy / length * offset, -dx / length * offset
    shrink = min(0.14, 0.45 * length) / length
    start = (a[0] + dx * shrink + nx_, a[1] + dy * shrink + ny_)
    end = (b[0] - dx * shrink + nx_, b[1] - dy * shrink + ny_)
    return start, end


def _along(seg: tuple[Point, Point], t: float) -> Point:
    (x0, y0), (x1, y1) = seg
    return (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)


def _describe_state(sim: Simulator, snap: GlobalSnapshot | None, process: str) -> str:
    now = sim.app.describe(sim.states[process], tuple(sim.trace.labels_before(process, sim.time)))
    lines = [f"<b>{process}</b>", f"now: {now}"]
    if snap is not None:
        rec = snap.processes.get(process)
        if rec is None:
            lines.append(f"{snap.id}: not recorded yet (white)")
        else:
            lines.append(f"{snap.id}: recorded {sim.app.describe(rec.state, rec.events)}")
            lines.append("part done" if rec.done else "still recording input channels")
    return "<br>".join(lines)


@dataclass(frozen=True)
class _Geometry:
    """Where each channel is drawn: fixed for a network and a layout, so computed once."""

    segments: tuple[tuple[Point, Point], ...]
    x: tuple[float | None, ...]  # start, middle, end, gap per channel
    y: tuple[float | None, ...]
    sizes: tuple[float, ...]


@lru_cache(maxsize=16)
def _geometry(net: Network, positions: tuple[tuple[str, Point], ...]) -> _Geometry:
    pos = dict(positions)
    pairs = {(c.src, c.dst) for c in net.channels}
    segments = []
    xs: list[float | None] = []
    ys: list[float | None] = []
    for c in net.channels:
        offset = 0.035 if (c.dst, c.src) in pairs else 0.0
        seg = _segment(pos[c.src], pos[c.dst], offset)
        (x0, y0), (x1, y1) = seg
        xm, ym = _along(seg, 0.5)
        segments.append(seg)
        xs += [x0, xm, x1, None]
        ys += [y0, ym, y1, None]
    return _Geometry(tuple(segments), tuple(xs), tuple(ys), (0, 0, 11, 0) * len(segments))


def network_figure(
    sim: Simulator,
    snapshot_id: str | None = None,
    positions: Mapping[str, Point] | None = None,
) -> Figure:
    """The network as it is now, coloured for snapshot ``snapshot_id`` (if given)."""
    return build_figure(network_spec(sim, snapshot_id, positions))


def network_spec(
    sim: Simulator,
    snapshot_id: str | None = None,
    positions: Mapping[str, Point] | None = None,
) -> dict[str, Any]:
    """:func:`network_figure` as plain ``{"data": [...], "layout": {...}}``."""
    net = sim.network
    pos = dict(positions) if positions is not None else network_layout(net)
    geometry = _geometry(net, tuple(sorted(pos.items())))
    trace = sim.trace
    started = snapshot_id and snapshot_id in sim.snapshot_ids()
    snap = sim.snapshot(snapshot_id) if snapshot_id and started else None
    red_from = snap.red_from if snap is not None else {}
    names = [str(c) for c in net.channels]

    ch_text: list[str] = []
    rec_x: list[float | None] = []
    rec_y: list[float | None] = []
    msg_x, msg_y, msg_text, msg_fill, msg_line, msg_label = [], [], [], [], [], []
    mk_x, mk_y, mk_text, mk_label = [], [], [], []
    for i, seg in enumerate(geometry.segments):
        queue = sim.queues[i]
        hover = f"<b>{names[i]}</b>"  # no in-flight count: the dots show it, and an
        # unchanged channels trace is not sent to the browser again
        recorded = snap.channels.get(names[i]) if snap is not None else None
        if snap is not None and recorded is not None:
            shown = ", ".join(m.label or repr(m.payload) for m in recorded) or "empty"
            pending = names[i] in snap.pending_channels
            hover += f"<br>{snap.id} {'recording' if pending else 'recorded'}: {shown}"
            if pending:
                (x0, y0), (x1, y1) = seg
                rec_x += [x0, x1, None]
                rec_y += [y0, y1, None]
        ch_text += [hover, hover, hover, ""]
        if not queue:
            continue
        step = min(0.16, 0.7 / len(queue))
        for k, m in enumerate(queue):  # the head (k = 0) is nearest the receiver
            x, y = _along(seg, 0.82 - k * step)
            msg = trace.messages[m]
            if msg.kind == APP:
                sender = trace.actions[msg.sent_by].process
                red = turned_red(red_from, sender, msg.sent_by)
                msg_x.append(x)
                msg_y.append(y)
                msg_text.append(f"{trace.message_name(m)} on {names[i]} ({k + 1} of {len(queue)})")
                msg_label.append(trace.message_name(m))
                msg_fill.append(style.fill(red))
                msg_line.append(style.outline(red))
            else:
                mk_x.append(x)
                mk_y.append(y)
                mk_text.append(f"{msg.kind} {msg.tag} on {names[i]} ({k + 1} of {len(queue)})")
                mk_label.append(str(msg.tag))

    red_set = set(red_from)
    proc_fill, proc_line, proc_width, proc_symbol, proc_text = [], [], [], [], []
    for p in net.processes:
        red = p in red_from
        proc_fill.append(style.fill(red))
        proc_line.append(style.outline(red))
        proc_width.append(style.width(red))
        proc_symbol.append(style.symbol(red))
        proc_text.append(_describe_state(sim, snap, p))

    n = len(net.processes)
    size = 46 if n <= 6 else 34 if n <= 20 else 14
    # what is in flight is named on the picture while the names stay readable
    labelled = len(msg_x) + len(mk_x) <= MAX_LABELLED
    data: list[dict[str, Any]] = [
        style.channels_trace(geometry.x, geometry.y, geometry.sizes, ch_text),
        dict(
            type="scatter",
            name="recording",
            x=rec_x,
            y=rec_y,
            mode="lines",
            line={"color": style.RECORDING, "width": 3.5},  # narrow: both directions stay visible
            opacity=0.55,
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="messages",
            x=msg_x,
            y=msg_y,
            mode="markers+text" if labelled else "markers",
            text=msg_label if labelled else None,
            textposition="top center",
            textfont={"size": 11, "color": style.MESSAGE},
            marker={
                "size": 13,
                "color": msg_fill,
                "line": {"color": msg_line, "width": 2},
                "symbol": "circle",
            },
            hovertext=msg_text,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="markers",
            x=mk_x,
            y=mk_y,
            mode="markers+text" if labelled else "markers",
            text=mk_label if labelled else None,
            textposition="bottom center",
            textfont={"size": 11, "color": style.MARKER},
            marker={
                "size": 13,
                "color": style.MARKER,
                "symbol": style.MARKER_SYMBOL,
                "line": {"color": style.HIGHLIGHT, "width": 1.5},
            },
            hovertext=mk_text,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="processes",
            x=[pos[p][0] for p in net.processes],
            y=[pos[p][1] for p in net.processes],
            mode="markers+text",
            text=list(net.processes),
            textposition="middle center",
            textfont={
                "color": [style.label_colour(p in red_set) for p in net.processes]
                if n <= 20
                else "rgba(0,0,0,0)"
            },
            marker={
                "size": size,
                "color": proc_fill,
                "symbol": proc_symbol,
                "line": {"color": proc_line, "width": proc_width},
            },
            hovertext=proc_text,
            hoverinfo="text",
        ),
    ]
    title = f"snapshot {snapshot_id}" if snapshot_id else "no snapshot selected"
    layout = dict(
        title={"text": f"Network after {sim.time} actions: {title}", "font": {"size": 15}},
        showlegend=False,
        font=style.FONT,
        modebar=style.MODEBAR,
        xaxis={"visible": False, "range": [-1.35, 1.35]},
        yaxis={"visible": False, "range": [-1.3, 1.3], "scaleanchor": "x"},
        margin={"l": 10, "r": 10, "t": 40, "b": 30},
        plot_bgcolor="#fafafa",
        # fits a projector's 1280x720 screen at 150% zoom (853x480 CSS pixels)
        height=340,
        width=400,
        uirevision="network",
        annotations=[
            {
                "text": "○ white: not recorded · ■ red: recorded · ◆ marker · ● message",
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": -0.06,
                "showarrow": False,
                "font": {"size": 11, "color": "#555555"},
                "xanchor": "left",
            }
        ],
    )
    return {"data": data, "layout": layout}

"""The dataflow view: a streaming job's graph as it runs.

The graph is laid out left to right, sources first and sinks last
(:func:`~snapshotlib.viz.layered.dataflow_layout`; back edges, which close a cycle, are
arcs above the graph). Each operator shows its kind and state (a source's offset, a
count's counts, how many records a sink holds) and is white or red for the checkpoint
shown: red once it has recorded its state. On each channel sit the records in flight
(circles, the head nearest the receiver, red when sent after their sender recorded its
state) and the barriers among them (tall diamonds, one colour per checkpoint) at their
place in the queue, which is what alignment is about; a small number beside the
channel counts its records. A blocked input is drawn dashed in dark red and labelled
with the checkpoint whose barrier holds it; a crashed operator is crossed out.

The figure always has the same traces in the same order (:data:`TRACES`), so a widget
updates it in place (:func:`~snapshotlib.viz.update_in_place`).

>>> from snapshotlib.dataflow import StreamJob, word_count
>>> job = StreamJob(word_count(records=6), "aligned", seed=0, interval=5).run(max_steps=8)
>>> [t["name"] for t in dataflow_spec(job)["data"]] == list(TRACES)
True
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..colouring import turned_red
from ..dataflow.app import Record
from ..dataflow.coordinator import COMPLETED, INITIATED
from ..trace import APP, InputBlocked, InputUnblocked
from . import style
from .build import Figure, build_figure
from .layered import Point, along, beside, channel_geometry, dataflow_layout

if TYPE_CHECKING:
    from ..dataflow.job import StreamJob
    from ..simulator import Simulator
    from ..snapshot import GlobalSnapshot

#: names of the traces, in order
TRACES = (
    "channels",
    "recording",
    "blocked",
    "records",
    "barriers",
    "counts",
    "operators",
    "states",
    "crashed",
)

HEAD, SPREAD = 0.86, 0.72  # where a channel's queue starts and how much of it it may fill
BLOCKED = "#8b0000"  # dark red: a held-back input, dark in greyscale too
CRASHED = "#111111"
#: one colour per checkpoint (c1, c2, ...), none of them white or red
CHECKPOINT_COLOURS = ("#1f77b4", "#9467bd", "#17becf", "#8c564b", "#bcbd22", "#e377c2")
STALE = "#bbbbbb"  # a barrier of a checkpoint that has failed: ignored when it arrives
MAX_COUNTS_SHOWN = 3  # keys of a count shown under it; the hover shows all


def checkpoint_colour(checkpoint_id: str | None) -> str:
    """The colour of checkpoint ``c<k>``'s barriers (the same in every view).

    >>> checkpoint_colour("c1") == CHECKPOINT_COLOURS[0]
    True
    """
    digits = "".join(ch for ch in checkpoint_id or "" if ch.isdigit())
    k = int(digits) - 1 if digits else 0
    return CHECKPOINT_COLOURS[k % len(CHECKPOINT_COLOURS)]


def shown_checkpoint(job: StreamJob) -> str | None:
    """The checkpoint the graph colours by default: the newest one in progress, else the
    newest COMPLETED one this run of the job has a record of, else none."""
    taken = set(job.sim.snapshot_ids())
    entries = [e for e in job.coordinator.entries.values() if e.id in taken]
    pending = [e.id for e in entries if e.status == INITIATED]
    if pending:
        return pending[-1]
    done = [e.id for e in entries if e.status == COMPLETED]
    return done[-1] if done else None


def record_name(sim: Simulator, message: int) -> str:
    """A record's name (``S1#3``: the source and offset it was read at), even replayed."""
    payload = sim.trace.messages[message].payload
    if isinstance(payload, Record):
        return f"{payload.origin[0]}#{payload.origin[1]}"
    return sim.trace.message_name(message)


def state_summary(job: StreamJob, operator: str, state: Any) -> str:
    """The short line under an operator: its kind and the gist of its state.

    >>> from snapshotlib.dataflow import StreamJob, word_count
    >>> job = StreamJob(word_count(records=6))
    >>> state_summary(job, "S1", 2), state_summary(job, "C1", (("k0", 3), ("k1", 1)))
    ('source<br>offset 2/6', 'count<br>k0:3 k1:1')
    """
    kind = job.app.kind[operator]
    if kind == "source":
        gist = f"offset {state}/{len(job.app.log[operator])}"
    elif kind == "count":
        items = [f"{k}:{v}" for k, v in state]
        more = len(items) - MAX_COUNTS_SHOWN
        gist = " ".join(items[:MAX_COUNTS_SHOWN]) + (f" +{more}" if more > 0 else "")
        gist = gist or "no counts yet"
    elif kind == "sink":
        gist = f"{len(state)} output{'s' if len(state) != 1 else ''}"
    else:
        gist = "stateless"
    return f"{kind}<br>{gist}"


def _operator_hover(
    job: StreamJob, snap: GlobalSnapshot | None, operator: str, blocked: Sequence[str]
) -> str:
    sim = job.sim
    kind = job.app.kind[operator]
    lines = [
        f"<b>{operator}</b> ({kind})",
        f"now: {_short(job.app.describe(sim.states[operator]))}",
    ]
    if snap is not None:
        part = snap.processes.get(operator)
        if part is not None:
            lines.append(f"{snap.id}: recorded {_short(job.app.describe(part.state))}")
            open_inputs = [
                name
                for name in (str(sim.network.channels[c]) for c in sim.input_channels(operator))
                if not snap.closed(name)
            ]
            if open_inputs:
                lines.append(f"still logging {', '.join(open_inputs)}")
        else:
            lines.append(f"{snap.id}: not recorded yet (white)")
    if blocked:
        lines.append(f"blocked input{'s' if len(blocked) > 1 else ''}: {', '.join(blocked)}")
    if job.crashed == operator:
        lines.append("CRASHED: the job is halted until a restore")
    return "<br>".join(lines)


def _short(value: Any, limit: int = 160) -> str:
    text = html.escape(str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _blocking_checkpoint(sim: Simulator, channel: int) -> str | None:
    """The checkpoint whose barrier holds ``channel`` back (aligned barriers): the one
    that blocked it last, unless something has unblocked it since."""
    for event in reversed(sim.trace.events):
        if isinstance(event, InputBlocked | InputUnblocked) and event.channel == channel:
            return event.snapshot_id if isinstance(event, InputBlocked) else None
    return None


def dataflow_figure(
    job: StreamJob,
    checkpoint_id: str | None = None,
    positions: Mapping[str, Point] | None = None,
) -> Figure:
    """The job's graph as it is now, coloured for ``checkpoint_id`` (default: the
    newest in progress, see :func:`shown_checkpoint`)."""
    return build_figure(dataflow_spec(job, checkpoint_id, positions))


def dataflow_spec(
    job: StreamJob,
    checkpoint_id: str | None = None,
    positions: Mapping[str, Point] | None = None,
) -> dict[str, Any]:
    """:func:`dataflow_figure` as plain ``{"data": [...], "layout": {...}}``."""
    sim = job.sim
    net = sim.network
    pos = dict(positions) if positions is not None else dataflow_layout(job.flow)
    geometry = channel_geometry(net, tuple(sorted(pos.items())))
    messages = sim.trace.messages
    cid = checkpoint_id if checkpoint_id is not None else shown_checkpoint(job)
    taken = set(sim.snapshot_ids())
    snap = sim.snapshot(cid) if cid and cid in taken else None
    red_from = snap.red_from if snap is not None else {}
    names = [str(c) for c in net.channels]

    ch_text = [""] * len(geometry.owner)
    rec_x: list[float | None] = []
    rec_y: list[float | None] = []
    bl_x: list[float | None] = []
    bl_y: list[float | None] = []
    bl_text: list[str] = []
    bl_hover: list[str] = []
    r_x, r_y, r_text, r_fill, r_line = [], [], [], [], []
    b_x, b_y, b_text, b_hover, b_fill = [], [], [], [], []
    n_x, n_y, n_text, n_hover = [], [], [], []
    blocked_at: dict[str, list[str]] = {p: [] for p in net.processes}
    hover_of: list[str] = []
    for i, path in enumerate(geometry.paths):
        queue = sim.queues[i]
        kinds = [messages[m].kind for m in queue]
        n_records = kinds.count(APP)
        # what changes at every step (the queue) is told by the counts and the dots, so
        # the channels trace, large and mostly unchanged, is rarely sent again
        hover = f"<b>{names[i]}</b>"
        if snap is not None and names[i] in snap.pending_channels:
            logged = len(snap.channels[names[i]])
            hover += f"<br>{snap.id}: logging this channel ({logged} so far)"
            rec_x += [x for x, _ in path] + [None]
            rec_y += [y for _, y in path] + [None]
        if i in sim.blocked:
            holder = _blocking_checkpoint(sim, i)
            why = f"barrier {holder} arrived" if holder else "held back"
            hover += f"<br>BLOCKED ({why}): waiting for the other inputs' barriers"
            blocked_at[net.channels[i].dst].append(names[i])
            middle = len(path) // 2
            bl_x += [x for x, _ in path] + [None]
            bl_y += [y for _, y in path] + [None]
            label = f"blocked ({holder})" if holder else "blocked"
            bl_text += [label if k == middle else "" for k in range(len(path))] + [""]
            bl_hover += [f"<b>{names[i]}</b> blocked ({why})"] * len(path) + [""]
        hover_of.append(hover)
        if n_records:
            x, y = beside(geometry, i, 0.3, 0.07)
            n_x.append(x)
            n_y.append(y)
            n_text.append(str(n_records))
            detail = f"<b>{names[i]}</b>: {n_records} record{'s' if n_records != 1 else ''}"
            for k, m in enumerate(queue):
                if kinds[k] != APP:
                    detail += f"<br>barrier {messages[m].tag} behind {k} record(s)"
            n_hover.append(detail)
        if not queue:
            continue
        step = min(0.1, SPREAD / len(queue))
        for k, m in enumerate(queue):  # the head (k = 0) is nearest the receiver
            x, y = along(geometry, i, HEAD - k * step)
            msg = messages[m]
            where = f"on {names[i]} ({k + 1} of {len(queue)} from the head)"
            if msg.kind == APP:
                sender = net.channels[i].src
                red = turned_red(red_from, sender, msg.sent_by)
                r_x.append(x)
                r_y.append(y)
                r_text.append(f"record {record_name(sim, m)} {where}")
                r_fill.append(style.fill(red))
                r_line.append(style.outline(red))
            else:
                live = msg.tag in taken
                b_x.append(x)
                b_y.append(y)
                b_text.append(str(msg.tag))
                b_hover.append(f"{msg.kind} {msg.tag} {where}" + ("" if live else " (failed)"))
                b_fill.append(checkpoint_colour(msg.tag) if live else STALE)
    for k, channel in enumerate(geometry.owner):
        if channel >= 0:
            ch_text[k] = hover_of[channel]

    ops = list(net.processes)
    recorded = [p in red_from for p in ops]
    crashed = [p for p in ops if p == job.crashed]
    data: list[dict[str, Any]] = [
        style.channels_trace(geometry.x, geometry.y, geometry.sizes, ch_text),
        dict(
            type="scatter",
            name="recording",
            x=rec_x,
            y=rec_y,
            mode="lines",
            line={"color": style.RECORDING, "width": 6},
            opacity=0.5,
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="blocked",
            x=bl_x,
            y=bl_y,
            mode="lines+text",
            line={"color": BLOCKED, "width": 3, "dash": "dash"},
            text=bl_text,
            textposition="top center",
            textfont={"color": BLOCKED, "size": 12},
            hovertext=bl_hover,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="records",
            x=r_x,
            y=r_y,
            mode="markers",
            marker={"size": 10, "color": r_fill, "line": {"color": r_line, "width": 1.5}},
            hovertext=r_text,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="barriers",
            x=b_x,
            y=b_y,
            mode="markers+text",
            marker={
                "size": 18,
                "symbol": "diamond-tall",
                "color": b_fill,
                "line": {"color": style.MARKER, "width": 1.5},
            },
            text=b_text,
            textposition="bottom center",
            textfont={"size": 10, "color": "#333333"},
            hovertext=b_hover,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="counts",
            x=n_x,
            y=n_y,
            mode="text",
            text=n_text,
            textfont={"size": 11, "color": "#555555"},
            hovertext=n_hover,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="operators",
            x=[pos[p][0] for p in ops],
            y=[pos[p][1] for p in ops],
            mode="markers+text",
            text=ops,
            textposition="middle center",
            textfont={"color": [style.label_colour(r) for r in recorded]},
            marker={
                "size": 40,
                "color": [style.fill(r) for r in recorded],
                "symbol": [style.symbol(r) for r in recorded],
                "line": {
                    "color": [style.outline(r) for r in recorded],
                    "width": [style.width(r) for r in recorded],
                },
            },
            hovertext=[_operator_hover(job, snap, p, blocked_at[p]) for p in ops],
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="states",
            x=[pos[p][0] for p in ops],
            y=[pos[p][1] - 0.17 for p in ops],
            mode="text",
            text=[state_summary(job, p, sim.states[p]) for p in ops],
            textposition="bottom center",
            textfont={"size": 11, "color": "#333333"},
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="crashed",
            x=[pos[p][0] for p in crashed],
            y=[pos[p][1] for p in crashed],
            mode="markers+text",
            text=["crashed" for _ in crashed],
            textposition="top center",
            textfont={"color": CRASHED, "size": 13},
            marker={"size": 46, "symbol": "x-thin", "line": {"color": CRASHED, "width": 5}},
            hovertext=[f"{p} crashed: restore to resume" for p in crashed],
            hoverinfo="text",
        ),
    ]
    xs = [x for x, _ in pos.values()]
    ys = [y for y in geometry.y if y is not None] + [y for _, y in pos.values()]
    layout = dict(
        title={"text": _title(job, cid), "font": {"size": 15}},
        showlegend=False,
        font=style.FONT,
        modebar=style.MODEBAR,
        xaxis={"visible": False, "range": [min(xs) - 0.45, max(xs) + 0.45]},
        yaxis={
            "visible": False,
            "range": [min(ys) - 0.5, max(ys) + 0.3],
            "scaleanchor": "x",
        },
        margin={"l": 10, "r": 10, "t": 40, "b": 30},
        plot_bgcolor="#fafafa",
        height=340,
        width=style.FIGURE_WIDTH,
        uirevision="dataflow",
        annotations=[
            {
                "text": "○ white: not recorded · ■ red: recorded · ◆ barrier · ● record · "
                "dashed: blocked input · ✕ crashed",
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


def _title(job: StreamJob, cid: str | None) -> str:
    head = f"{job.variant} · step {job.steps}"
    if job.crashed:
        colours = f" · colours: {cid}" if cid else ""
        return f"{head} · halted: {job.crashed} crashed (restore to resume){colours}"
    if cid is None:
        return f"{head} · no checkpoint {'in progress' if job.coordinator.entries else 'yet'}"
    entry = job.coordinator.entries.get(cid)
    status = entry.status if entry is not None else "?"
    done = len(entry.nodes_completed) if entry is not None else 0
    return f"{head} · checkpoint {cid} {status} ({done}/{len(job.network.processes)} done)"

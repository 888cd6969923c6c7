"""The space-time diagram: a line per process, time running left to right.

Events are labelled dots, white or red for the chosen snapshot (red ones are also
squares with a thick outline, for greyscale); messages are arrows from send to
receive; markers are dashed arrows; messages and markers still in flight end at "now"
with a dotted line; the events inside the chosen snapshot's recorded state are circled;
every snapshot's cut is drawn as a line, the chosen one bold.

The x axis is the action number in the trace (the engine's notion of time), so the
picture is exactly the recorded interleaving. The figure always has the traces of
:data:`TRACES`, in that order, so a widget can update it in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..colouring import turned_red
from ..simulator import Simulator
from ..trace import APP, APP_KINDS, CONTROL, NOT_RECEIVED, RECEIVE, SNAPSHOT
from . import style
from .build import Figure, build_figure

TRACES = (
    "timelines",
    "messages",
    "messages in flight",
    "markers",
    "markers in flight",
    "events",
    "recorded",
    "algorithm",
    "other cuts",
    "cut",
)


def _arrow(
    xs: list[float | None],
    ys: list[float | None],
    sizes: list[float],
    a: tuple[float, float],
    b: tuple[float, float],
) -> None:
    xs += [a[0], b[0], None]
    ys += [a[1], b[1], None]
    sizes += [0, 10, 0]


def spacetime_figure(
    sim: Simulator, snapshot_id: str | None = None, cut: Mapping[str, int] | None = None
) -> Figure:
    """The execution so far, coloured and cut for snapshot ``snapshot_id`` (if given).

    ``cut`` draws a cut of the learner's own instead (trace-index limits per process,
    as :func:`snapshotlib.checks.cut.cut_limits` makes them): its events are circled and
    it is the bold line; every snapshot's cut is then drawn thin.
    """
    return build_figure(spacetime_spec(sim, snapshot_id, cut))


#: the algorithm's own actions (a snapshot started, a marker taken) sit this far below
#: their process's line (rows are 1 apart), so they never cover an event's label
ALGORITHM_OFFSET = 0.22


def spacetime_spec(
    sim: Simulator, snapshot_id: str | None = None, cut: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """:func:`spacetime_figure` as plain ``{"data": [...], "layout": {...}}``."""
    net = sim.network
    trace = sim.trace
    row = {p: k for k, p in enumerate(net.processes)}
    now = len(trace.actions)
    cuts = {sid: sim.red_from(sid) for sid in sim.snapshot_ids()}
    chosen = cuts.get(snapshot_id) if snapshot_id else None
    red_from = chosen if chosen is not None else {}

    line_x: list[float | None] = []
    line_y: list[float | None] = []
    for p in net.processes:
        line_x += [-0.5, now + 0.5, None]
        line_y += [row[p], row[p], None]

    # messages and markers, drawn from their send action to their receipt
    msg = ([], [], [])  # type: tuple[list[float | None], list[float | None], list[float]]
    msg_live = ([], [], [])  # type: tuple[list[float | None], list[float | None], list[float]]
    mk = ([], [], [])  # type: tuple[list[float | None], list[float | None], list[float]]
    mk_live = ([], [], [])  # type: tuple[list[float | None], list[float | None], list[float]]
    channels = net.channels
    for m, rec in enumerate(trace.messages):
        src_y = row[channels[rec.channel].src]
        dst_y = row[channels[rec.channel].dst]
        start = (float(rec.sent_by), float(src_y))
        got = trace.received_by[m]
        if got != NOT_RECEIVED:
            target = msg if rec.kind == APP else mk
            _arrow(*target, start, (float(got), float(dst_y)))
        else:  # still in flight: it ends at "now", part of the way to its receiver
            target = msg_live if rec.kind == APP else mk_live
            _arrow(*target, start, (now + 0.3, src_y + (dst_y - src_y) * 0.5))

    ev_x, ev_y, ev_text, ev_hover = [], [], [], []
    ev_fill, ev_line, ev_width, ev_symbol = [], [], [], []
    rec_x, rec_y = [], []
    alg_x, alg_y, alg_hover = [], [], []
    for i, a in enumerate(trace.actions):
        y = row[a.process]
        if a.kind in APP_KINDS:
            red = turned_red(red_from, a.process, i)
            name = trace.action_name(i)
            ev_x.append(i)
            ev_y.append(y)
            ev_text.append(a.label or "")
            what = a.kind
            if a.kind == RECEIVE:
                what += f" {trace.message_name(a.message)} from {channels[a.channel].src}"
            elif a.kind == "send":
                what += f" {trace.message_name(a.message)} to {channels[a.channel].dst}"
            colour = ("red" if red else "white") if chosen is not None else "-"
            ev_hover.append(f"<b>{name}</b> at {a.process}, t={i}<br>{what}<br>colour: {colour}")
            ev_fill.append(style.fill(red))
            ev_line.append(style.outline(red))
            ev_width.append(style.width(red))
            ev_symbol.append(style.symbol(red))
            inside = (
                (i < cut.get(a.process, now))
                if cut is not None
                else (a.process in red_from and not red)  # in its recorded state
            )
            if inside:
                rec_x.append(i)
                rec_y.append(y)
        elif a.kind in (SNAPSHOT, CONTROL):
            alg_x.append(i)
            alg_y.append(y + ALGORITHM_OFFSET)  # below the line, clear of events' labels
            if a.kind == SNAPSHOT:
                alg_hover.append(f"{a.process} initiates snapshot {a.label}")
            else:
                control = trace.messages[a.message]
                alg_hover.append(
                    f"{a.process} accepts {control.kind} {control.tag} "
                    f"from {channels[a.channel].src}"
                )

    cut_x: list[float | None] = []
    cut_y: list[float | None] = []
    other_x: list[float | None] = []
    other_y: list[float | None] = []
    if cut is not None:
        for p in net.processes:
            limit = cut.get(p, now)
            cut_x.append(limit - 0.5 if limit > 0 else -0.5)
            cut_y.append(row[p])
    for sid, turned_at in cuts.items():
        mine = sid == snapshot_id and cut is None
        xs, ys = (cut_x, cut_y) if mine else (other_x, other_y)
        for p in net.processes:
            turned = turned_at.get(p)
            xs.append(now + 0.5 if turned is None else turned - 0.5 if turned > 0 else -0.5)
            ys.append(row[p])
        xs.append(None)
        ys.append(None)

    arrow_marker = {"symbol": "arrow", "angleref": "previous"}
    data: list[dict[str, Any]] = [
        dict(
            type="scatter",
            name="timelines",
            x=line_x,
            y=line_y,
            mode="lines",
            line={"color": "#444444", "width": 1.5},
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="messages",
            x=msg[0],
            y=msg[1],
            mode="lines+markers",
            line={"color": style.MESSAGE, "width": 1.6},
            marker={**arrow_marker, "size": msg[2], "color": style.MESSAGE},
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="messages in flight",
            x=msg_live[0],
            y=msg_live[1],
            mode="lines+markers",
            line={"color": style.MESSAGE, "width": 1.6, "dash": "dot"},
            marker={**arrow_marker, "size": msg_live[2], "color": style.MESSAGE},
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="markers",
            x=mk[0],
            y=mk[1],
            mode="lines+markers",
            line={"color": style.MARKER, "width": 1.2, "dash": "dash"},
            marker={**arrow_marker, "size": mk[2], "color": style.MARKER},
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="markers in flight",
            x=mk_live[0],
            y=mk_live[1],
            mode="lines+markers",
            line={"color": style.MARKER, "width": 1.2, "dash": "dot"},
            marker={**arrow_marker, "size": mk_live[2], "color": style.MARKER},
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="events",
            x=ev_x,
            y=ev_y,
            mode="markers+text",
            text=ev_text,
            textposition="top center",
            marker={
                "size": 13,
                "color": ev_fill,
                "symbol": ev_symbol,
                "line": {"color": ev_line, "width": ev_width},
            },
            hovertext=ev_hover,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="recorded",
            x=rec_x,
            y=rec_y,
            mode="markers",
            marker={
                "size": 24,
                "symbol": "circle-open",
                "line": {"color": style.CUT, "width": 2},
                "color": style.CUT,
            },
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="algorithm",
            x=alg_x,
            y=alg_y,
            mode="markers",
            marker={"size": 9, "symbol": "x-thin", "line": {"color": "#555555", "width": 2}},
            hovertext=alg_hover,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="other cuts",
            x=other_x,
            y=other_y,
            mode="lines",
            line={"color": style.OTHER_CUT, "width": 2},
            hoverinfo="skip",
        ),
        dict(
            type="scatter",
            name="cut",
            x=cut_x,
            y=cut_y,
            mode="lines",
            line={"color": style.CUT, "width": 3.5},
            hoverinfo="skip",
        ),
    ]
    n = len(net.processes)
    layout = dict(
        title={
            "text": f"Space-time diagram: {now} actions"
            + (f", cut of snapshot {snapshot_id}" if chosen is not None else ""),
            "font": {"size": 15},
        },
        showlegend=False,
        font=style.FONT,
        modebar=style.MODEBAR,
        xaxis={
            "title": {"text": "time (action number)"},
            "range": [-1, max(now, 8) + 1],
            "zeroline": False,
            "showgrid": False,
        },
        yaxis={
            "tickvals": list(range(n)),
            "ticktext": list(net.processes),
            "range": [n - 0.4, -0.6],
            "zeroline": False,
            "showgrid": False,
        },
        margin={"l": 60, "r": 20, "t": 40, "b": 50},
        plot_bgcolor="#ffffff",
        height=max(260, 70 * n + 100) if n <= 12 else 900,
        width=style.FIGURE_WIDTH,
        uirevision="spacetime",
    )
    return {"data": data, "layout": layout}

"""The checkpoint registry: the coordinator's table of checkpoints, over a timeline.

The table lists every checkpoint as the coordinator's metadata endpoint would
(:meth:`~snapshotlib.dataflow.CheckpointCoordinator.rows`), each row tinted by its
status; below it, each checkpoint is a bar from the step it was triggered to the step
it ended (or now, while INITIATED): amber in progress, green COMPLETED, dark red
FAILED. The top row of the timeline marks the job's crashes (✕) and restores (▶).

The figure always has the same traces in the same order (:data:`TRACES`).

>>> from snapshotlib.dataflow import StreamJob, word_count
>>> job = StreamJob(word_count(records=6), "aligned", seed=0, interval=5).run()
>>> spec = registry_spec(job)
>>> [t["name"] for t in spec["data"]] == list(TRACES)
True
>>> spec["data"][-1]["cells"]["values"][1][:2]
['COMPLETED', 'COMPLETED']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..dataflow.coordinator import COMPLETED, FAILED, INITIATED
from . import style
from .build import Figure, build_figure
from .dataflow import CRASHED

if TYPE_CHECKING:
    from ..dataflow.job import StreamJob

#: names of the traces, in order
TRACES = ("initiated", "completed", "failed", "now", "events", "table")

STATUS_COLOURS = {INITIATED: style.RECORDING, COMPLETED: "#2a9d4b", FAILED: "#b00020"}
STATUS_FILLS = {INITIATED: "#fff1dc", COMPLETED: "#e2f4e7", FAILED: "#fbe0e4"}

COLUMNS = ("checkpoint", "status", "triggered", "ended", "duration", "nodes", "bytes", "reason")


def registry_figure(job: StreamJob) -> Figure:
    """The coordinator's registry as a table, above a timeline of the checkpoints."""
    return build_figure(registry_spec(job))


def registry_spec(job: StreamJob) -> dict[str, Any]:
    """:func:`registry_figure` as plain ``{"data": [...], "layout": {...}}``."""
    rows = job.coordinator.rows()
    now = job.steps
    n_nodes = len(job.network.processes)
    bars: dict[str, tuple[list[Any], list[Any], list[str]]] = {
        s: ([], [], []) for s in (INITIATED, COMPLETED, FAILED)
    }
    for k, row in enumerate(rows):
        xs, ys, texts = bars[row["status"]]
        end = row["ended_at"] if row["ended_at"] is not None else now
        what = f"{row['snapshot_id']} {row['status']}: steps {row['triggered_at']}–{end}"
        if row["reason"]:
            what += f" ({row['reason']})"
        xs += [row["triggered_at"], end, None]
        ys += [k, k, None]
        texts += [what, what, ""]
    ev_x, ev_y, ev_text, ev_symbol = [], [], [], []
    crashes = {f"{p} crashed" for p in job.network.processes}
    for step, text in job.events:
        if text in crashes or text.startswith("restored"):
            ev_x.append(step)
            ev_y.append(-1)
            ev_text.append(f"step {step}: {text}")
            ev_symbol.append("x" if text in crashes else "triangle-right")
    status_traces = [
        dict(
            type="scatter",
            name=status.lower(),
            x=bars[status][0],
            y=bars[status][1],
            mode="lines+markers",
            line={"color": STATUS_COLOURS[status], "width": 9},
            marker={"size": 4, "color": STATUS_COLOURS[status]},
            hovertext=bars[status][2],
            hoverinfo="text",
        )
        for status in (INITIATED, COMPLETED, FAILED)
    ]
    table = dict(
        type="table",
        name="table",
        domain={"x": [0, 1], "y": [0.42, 1]},
        columnwidth=[1.4, 1.4, 1.2, 1, 1.1, 0.9, 1, 2],
        header={
            "values": [f"<b>{c}</b>" for c in COLUMNS],
            "fill": {"color": "#eeeeee"},
            "align": "left",
            "font": {"size": 12},
        },
        cells={
            "values": [
                [r["snapshot_id"] for r in rows],
                [r["status"] for r in rows],
                [r["triggered_at"] for r in rows],
                ["" if r["ended_at"] is None else r["ended_at"] for r in rows],
                ["" if r["duration"] is None else r["duration"] for r in rows],
                [f"{r['nodes_completed']}/{n_nodes}" for r in rows],
                [r["total_size_bytes"] for r in rows],
                [r["reason"] for r in rows],
            ],
            "fill": {"color": [[STATUS_FILLS[r["status"]] for r in rows]] * len(COLUMNS)},
            "align": "left",
            "font": {"size": 12},
        },
    )
    data: list[dict[str, Any]] = [
        *status_traces,
        dict(
            type="scatter",
            name="now",
            x=[now, now],
            y=[-1.5, max(len(rows), 1) - 0.5],
            mode="lines",
            line={"color": "#555555", "width": 1, "dash": "dot"},
            hovertext=[f"now: step {now}"] * 2,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="events",
            x=ev_x,
            y=ev_y,
            mode="markers",
            marker={"size": 12, "symbol": ev_symbol, "color": CRASHED},
            hovertext=ev_text,
            hoverinfo="text",
        ),
        table,
    ]
    ticks = [-1, *range(len(rows))]
    layout = dict(
        title={"text": f"Checkpoint registry · step {now}", "font": {"size": 15}},
        showlegend=False,
        font=style.FONT,
        modebar=style.MODEBAR,
        xaxis={
            "domain": [0, 1],
            "title": {"text": "step"},
            "range": [0, max(now, 1) * 1.02],
            "zeroline": False,
        },
        yaxis={
            "domain": [0, 0.36],
            "tickvals": ticks,
            "ticktext": ["job", *(r["snapshot_id"] for r in rows)],
            "range": [max(len(rows), 1) - 0.5, -1.5],
            "zeroline": False,
        },
        margin={"l": 50, "r": 10, "t": 40, "b": 40},
        plot_bgcolor="#fafafa",
        height=340,
        width=style.FIGURE_WIDTH,
        uirevision="registry",
    )
    return {"data": data, "layout": layout}

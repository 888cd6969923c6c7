"""The costs of the checkpoint variants, side by side: pure functions from measured rows
to plotly figures.

A row is a mapping (or a dataclass such as :class:`snapshotlib.course.lesson_07.Costs`)
with a ``variant`` and one number per metric. :func:`costs_figure` draws one small bar
chart per metric, a bar per variant; :func:`backpressure_figure` draws, per metric, one
line per variant against the channel capacity.

>>> rows = [{"variant": "aligned", "latency": 59, "blocked": 190},
...         {"variant": "unaligned", "latency": 18, "blocked": 0}]
>>> fig = costs_figure(rows, [("latency", "latency (steps)"), ("blocked", "blocked")])
>>> fig.data[0].customdata, fig.data[0].y, fig.layout.annotations[0].text
(('aligned', 'unaligned'), (59.0, 18.0), 'latency (steps)')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from . import style
from .build import Figure, build_figure

#: one colour per variant, the two baselines of lesson 07b included (with the variant's
#: name on its axis, colour is never the only cue); red and white are kept for recorded
#: and not recorded, grey for a variant without a colour of its own
COLOURS = {
    "chandy-lamport": "#1f77b4",
    "aligned": "#2ca02c",
    "unaligned": "#ff7f0e",
    "at-least-once": "#9467bd",
    "stop-the-world": "#8c564b",
    "fork (COW)": "#17becf",
}
OTHER = "#7f7f7f"
#: axis labels, broken to fit under narrow bars
LABELS = {
    "chandy-lamport": "Chandy-<br>Lamport",
    "at-least-once": "at-least-<br>once",
    "stop-the-world": "stop-the-<br>world",
    "fork (COW)": "fork<br>(COW)",
}

#: the metrics drawn by default: (key of a row, panel title)
METRICS = (
    ("latency", "checkpoint latency (steps)"),
    ("blocked", "channel-steps blocked"),
    ("peak_buffered", "peak records buffered"),
    ("state_bytes", "recorded state (B)"),
    ("inflight_bytes", "recorded in flight (B)"),
    ("duplicates", "duplicates after a crash"),
)

BACKPRESSURE_METRICS = (
    ("peak_in_flight", "peak records in the channels"),
    ("peak_buffered", "peak records buffered (aligned)"),
    ("inflight_bytes", "recorded in flight (B)"),
)


def _row(row: Any) -> Mapping[str, Any]:
    if isinstance(row, Mapping):
        return row
    if dataclasses.is_dataclass(row) and not isinstance(row, type):
        return dataclasses.asdict(row)
    raise TypeError(f"a row must be a mapping or a dataclass, not {type(row).__name__}")


def _panels(
    n: int, columns: int, gap: float = 0.08, vgap: float = 0.24
) -> list[tuple[list[float], list[float]]]:
    """x and y domains of ``n`` panels laid out in rows of ``columns``."""
    rows = -(-n // columns)
    width = (1 - gap * (columns - 1)) / columns
    height = (1 - vgap * (rows - 1)) / rows
    out = []
    for i in range(n):
        r, c = divmod(i, columns)
        x0 = c * (width + gap)
        y1 = 1 - r * (height + vgap)
        out.append(([_unit(x0), _unit(x0 + width)], [_unit(y1 - height), _unit(y1)]))
    return out


def _unit(v: float) -> float:
    return round(min(1.0, max(0.0, v)), 6)


def _axes(i: int) -> tuple[str, str]:
    return ("x", "y") if i == 0 else (f"x{i + 1}", f"y{i + 1}")


def _layout(titles: Sequence[str], columns: int, title: str | None) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "font": style.FONT,
        "modebar": style.MODEBAR,
        "plot_bgcolor": "#ffffff",
        "showlegend": False,
        "margin": {"l": 50, "r": 20, "t": 70 if title else 40, "b": 40},
        "annotations": [],
        "height": 300 * -(-len(titles) // columns) + (40 if title else 0),
    }
    if title:
        layout["title"] = {"text": title, "x": 0.5}
    for i, ((xd, yd), name) in enumerate(zip(_panels(len(titles), columns), titles, strict=True)):
        xa, ya = _axes(i)
        layout["xaxis" if i == 0 else f"xaxis{i + 1}"] = {
            "domain": xd,
            "anchor": ya,
            "type": "category",
            "tickangle": 0,
            "tickfont": {"size": 11},
        }
        layout["yaxis" if i == 0 else f"yaxis{i + 1}"] = {
            "domain": yd,
            "anchor": xa,
            "rangemode": "tozero",
            "gridcolor": "#e5e5e5",
            "zeroline": True,
            "zerolinecolor": "#9a9a9a",
        }
        layout["annotations"].append(
            {
                "text": name,
                "xref": "paper",
                "yref": "paper",
                "x": (xd[0] + xd[1]) / 2,
                "y": yd[1] + 0.02,
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 13},
            }
        )
    return layout


def costs_spec(
    rows: Sequence[Any],
    metrics: Sequence[tuple[str, str]] = METRICS,
    *,
    columns: int = 3,
    title: str | None = None,
) -> dict[str, Any]:
    """:func:`costs_figure` as plain ``{"data": [...], "layout": {...}}``."""
    table = [_row(r) for r in rows]
    variants = tuple(str(r["variant"]) for r in table)
    labels = tuple(LABELS.get(v, v) for v in variants)
    colours = [COLOURS.get(v, OTHER) for v in variants]
    data = []
    layout = _layout([n for _, n in metrics], columns, title)
    for i, (key, name) in enumerate(metrics):
        xa, ya = _axes(i)
        values = tuple(float(r[key]) for r in table)
        top = max(values, default=0.0)
        layout["yaxis" if i == 0 else f"yaxis{i + 1}"]["range"] = [0, top * 1.25 or 1]
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": labels,
                "y": values,
                "customdata": variants,
                "xaxis": xa,
                "yaxis": ya,
                "marker": {"color": colours, "line": {"color": "#333333", "width": 1}},
                "text": [f"{v:,.0f}" if v.is_integer() else f"{v:,.1f}" for v in values],
                "textposition": "outside",
                "cliponaxis": False,
                "hovertemplate": f"%{{customdata}}<br>{name}: %{{y}}<extra></extra>",
            }
        )
    return {"data": data, "layout": layout}


def costs_figure(
    rows: Sequence[Any],
    metrics: Sequence[tuple[str, str]] = METRICS,
    *,
    columns: int = 3,
    title: str | None = None,
) -> Figure:
    """One bar chart per metric (``(key, title)`` pairs), a bar per row's variant."""
    return build_figure(costs_spec(rows, metrics, columns=columns, title=title))


def _capacity(value: Any) -> str:
    return "unbounded" if value is None else str(value)


def backpressure_spec(
    rows: Sequence[Any],
    metrics: Sequence[tuple[str, str]] = BACKPRESSURE_METRICS,
    *,
    title: str | None = None,
) -> dict[str, Any]:
    """:func:`backpressure_figure` as plain ``{"data": [...], "layout": {...}}``."""
    table = [_row(r) for r in rows]
    variants = list(dict.fromkeys(str(r["variant"]) for r in table))
    capacities = list(dict.fromkeys(_capacity(r["capacity"]) for r in table))
    data = []
    for i, (key, name) in enumerate(metrics):
        xa, ya = _axes(i)
        for v in variants:
            points = {_capacity(r["capacity"]): float(r[key]) for r in table if r["variant"] == v}
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": v,
                    "legendgroup": v,
                    "showlegend": i == 0,
                    "x": tuple(capacities),
                    "y": tuple(points.get(c) for c in capacities),
                    "xaxis": xa,
                    "yaxis": ya,
                    "line": {"color": COLOURS.get(v, OTHER), "width": 2},
                    "marker": {"size": 7},
                    "hovertemplate": f"{v}<br>capacity %{{x}}<br>{name}: %{{y}}<extra></extra>",
                }
            )
    layout = _layout([n for _, n in metrics], len(metrics), title)
    layout["showlegend"] = True
    layout["legend"] = {"orientation": "h", "x": 0.5, "xanchor": "center", "y": -0.25}
    layout["height"] = 330 + (40 if title else 0)
    layout["margin"]["b"] = 90
    for i in range(len(metrics)):
        layout["xaxis" if i == 0 else f"xaxis{i + 1}"]["title"] = {"text": "channel capacity"}
        layout["xaxis" if i == 0 else f"xaxis{i + 1}"]["tickangle"] = 0
    return {"data": data, "layout": layout}


def backpressure_figure(
    rows: Sequence[Any],
    metrics: Sequence[tuple[str, str]] = BACKPRESSURE_METRICS,
    *,
    title: str | None = None,
) -> Figure:
    """Per metric, one line per variant against the channel capacity (rows with
    ``capacity``, ``variant`` and the metrics, as :func:`snapshotlib.course.lesson_07.
    backpressure` returns them)."""
    return build_figure(backpressure_spec(rows, metrics, title=title))

"""Sweep results as figures: pure functions from per-cell numbers to plotly figures.

:func:`delay_figure` draws recorded in-flight bytes against the marker delay, one line
of markers per algorithm, and optionally a model line; :func:`rate_figure` draws rates
(fractions of executions) against a parameter, one line per series.

>>> fig = delay_figure({"chandy-lamport": {1: 2000.0, 2: 2400.0}}, model=(1600.0, 400.0))
>>> [t.name for t in fig.data], fig.data[1].y
(['chandy-lamport', 'model'], (2000.0, 2400.0))
>>> rate_figure({"FIFO": {1: 0.0, 4: 0.0}}, "spread").data[0].x
(1, 4)
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from .costs import COLOURS, OTHER

_LAYOUT = {"template": "simple_white", "height": 380, "margin": {"l": 70, "r": 20, "t": 50}}


def delay_figure(
    series: Mapping[str, Mapping[int, float]],
    model: tuple[float, float] | None = None,
    title: str = "recorded in-flight bytes against the marker delay",
) -> go.Figure:
    """One line per algorithm (``{algorithm: {delay: bytes}}``); ``model`` is the line
    ``(intercept, slope)`` drawn dashed over the delays of the series."""
    fig = go.Figure()
    delays = sorted({d for points in series.values() for d in points})
    for name, points in series.items():
        colour = COLOURS.get(name, OTHER)
        fig.add_trace(
            go.Scatter(x=list(points), y=list(points.values()), name=name, mode="lines+markers",
                       line={"color": colour}, marker={"size": 8})
        )  # fmt: skip
    if model is not None and delays:
        a, b = model
        fig.add_trace(
            go.Scatter(x=delays, y=[a + b * d for d in delays], name="model", mode="lines",
                       line={"dash": "dash", "color": "black"})
        )  # fmt: skip
    fig.update_layout(title=title, **_LAYOUT)
    fig.update_xaxes(title="marker delay (ticks)")
    fig.update_yaxes(title="recorded in flight (bytes, mean)")
    return fig


def rate_figure(
    series: Mapping[str, Mapping[float, float]],
    x_title: str,
    y_title: str = "inconsistent snapshots (fraction)",
    title: str = "",
) -> go.Figure:
    """One line per series (``{name: {x: rate}}``), rates on a 0..1 axis."""
    fig = go.Figure()
    for name, points in series.items():
        fig.add_trace(
            go.Scatter(x=list(points), y=list(points.values()), name=name, mode="lines+markers",
                       line={"color": COLOURS.get(name, None)}, marker={"size": 8})
        )  # fmt: skip
    fig.update_layout(title=title, **_LAYOUT)
    fig.update_xaxes(title=x_title)
    fig.update_yaxes(title=y_title, range=[-0.03, 1.03])
    return fig

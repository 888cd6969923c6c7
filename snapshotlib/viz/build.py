"""Assembling plotly figures from plain dictionaries.

The figures are rebuilt on every step of a widget, and plotly's per-property
validation costs about ten times as much as everything else in a redraw, so they are
built from plain dicts without it (``_validate=False``, as plotly express does). The
tests validate every kind of figure once, so a misspelt property still fails there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plotly.graph_objects import Figure

__all__ = ["Figure", "build_figure"]


def build_figure(spec: Mapping[str, Any]) -> Figure:
    """A :class:`plotly.graph_objects.Figure` from ``{"data": [...], "layout": {...}}``,
    unvalidated."""
    return Figure(data=list(spec["data"]), layout=dict(spec["layout"]), _validate=False)

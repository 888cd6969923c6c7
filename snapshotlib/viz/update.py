"""Update a figure on screen from a freshly computed one, in place.

Figures here are pure functions of the engine's state that always return the same
traces in the same order, so a widget never needs to rebuild its ``FigureWidget``: it
sends only what changed since the last update (which properties of which traces, and
of the layout) inside one ``batch_update``: a single message to the browser, the
user's zoom kept through ``uirevision``, and plotly's validation spent only on the few
properties that moved (the channels of a large network are not sent again).

A ``FigureWidget`` must be a validated one: plotly only tells the browser about
changes made through its validated setters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

_LAST = "_snapshotlib_last_spec"
_MISSING = object()


def _spec_of(figure: go.Figure) -> dict[str, Any]:
    spec = figure.to_plotly_json()
    spec["layout"].pop("template", None)  # the same every time, and costly to compare
    return {"data": list(spec["data"]), "layout": dict(spec["layout"])}


def changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of ``new`` that differ from ``old`` (nested dicts compared key by key).

    >>> changes({"x": [1], "marker": {"color": "red", "size": 3}},
    ...         {"x": [1], "marker": {"color": "white", "size": 3}})
    {'marker': {'color': 'white'}}
    """
    out: dict[str, Any] = {}
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before == value:
            continue
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            inner = changes(before, value)
            if inner:
                out[key] = inner
        else:
            out[key] = value
    return out


def update_in_place(target: go.Figure, source: go.Figure | Mapping[str, Any]) -> None:
    """Make ``target`` (typically a ``go.FigureWidget``) show what ``source`` shows.

    ``source`` is a figure or, cheaper, a spec ``{"data": [...], "layout": {...}}`` as the
    ``*_spec`` functions of :mod:`snapshotlib.viz` return.
    """
    spec = _spec_of(source) if isinstance(source, go.Figure) else dict(source)
    data = [dict(trace) for trace in spec["data"]]
    layout = dict(spec["layout"])
    last = getattr(target, _LAST, None)
    if last is None:
        last = _spec_of(target)
    with target.batch_update():
        if len(target.data) != len(data):
            target.data = ()
            target.add_traces(data)
        else:
            for trace, old, new in zip(target.data, last["data"], data, strict=True):
                delta = changes(old, new)
                if delta:
                    trace.update(delta)
        delta = changes(last["layout"], layout)
        # lists of objects (annotations, shapes) are replaced whole: plotly's update
        # would zip old and new items, merging them and ignoring the surplus
        lists = {k: delta.pop(k) for k in list(delta) if isinstance(delta[k], list | tuple)}
        if delta:
            target.layout.update(delta)
        if lists:
            target.layout.update(lists, overwrite=True)
    setattr(target, _LAST, {"data": data, "layout": layout})

"""Update a figure on screen from a freshly computed one, in place.

Figures here are pure functions of the engine's state that always return the same
traces in the same order, so a widget never needs to rebuild its ``FigureWidget``: it
sends only what changed since the last update (which properties of which traces, and
of the layout) inside one ``batch_update``: a single message to the browser, the
user's zoom kept through ``uirevision``, and plotly's validation spent only on the few
properties that moved (the channels of a large network are not sent again).

A ``FigureWidget`` must be a validated one: plotly only tells the browser about
changes made through its validated setters.

The changes alone are not enough for a view that is not drawn yet. The browser keeps a
copy of the figure per widget and draws a new view from it; it applies changes to that
copy only once the widget's JavaScript has loaded, which on a busy machine can be after
a notebook's first cells have already stepped the widget: the changes made meanwhile
are lost, and the view draws an old or empty figure that later changes cannot mend. So
until a view of the widget reports that it has drawn (plotly's view sends its first
``_js2py_*`` message then), each update also writes the whole figure to the copy the
browser draws from (as plotly does when a figure is displayed): a view drawn at any
moment shows the figure as it is. When that first report comes, the whole figure is sent
once more as changes (:func:`redraw`), in case the view drew before the latest copy
arrived. From then on the widget's JavaScript is loaded and the changes alone keep every
view right, at a fraction of the cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from copy import deepcopy
from typing import Any

import plotly.graph_objects as go

_LAST = "_snapshotlib_last_spec"
_DRAWN = "_snapshotlib_drawn"  # a view of this FigureWidget has drawn in a browser
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
    if hasattr(target, "_widget_data") and not _has_drawn(target):
        target._widget_data = deepcopy(target._data)  # the state a new view draws from
        target._widget_layout = deepcopy(target._layout_obj._props)


def _has_drawn(widget: Any) -> bool:
    """Whether a browser view of ``widget`` has drawn (watched from the first call on)."""
    drawn = getattr(widget, _DRAWN, None)
    if drawn is None:
        setattr(widget, _DRAWN, False)

        def on_view_message(change: Mapping[str, Any]) -> None:
            if change["new"] is not None and not getattr(widget, _DRAWN):
                setattr(widget, _DRAWN, True)
                redraw(widget)

        widget.observe(on_view_message, names=["_js2py_traceDeltas", "_js2py_layoutDelta"])
        return False
    return bool(drawn)


def redraw(widget: Any) -> None:
    """Send the browser the whole figure as changes: every trace replaced, the layout set.

    Done once, when the first view reports it has drawn. The browser drops a widget's
    messages that arrive before its model exists there, and may draw a view from its
    copy before the messages waiting behind the widget's code are applied: on a busy
    machine a view could draw the figure as it was when the widget opened and never
    catch up (the changes that follow are relative to what it missed). The Python
    figure is left as it is; only the messages go.
    """
    traces = len(widget.data)
    if traces:
        widget._send_deleteTraces_msg(list(range(traces)))
        widget._send_addTraces_msg(deepcopy(widget._data))
    widget._send_relayout_msg(deepcopy(widget._layout_obj._props))

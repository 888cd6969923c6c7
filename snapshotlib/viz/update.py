"""Update a figure on screen from a freshly computed one, in place.

Figures here are pure functions of the engine's state that always return the same
traces in the same order, so a widget never needs to rebuild its ``FigureWidget``: it
copies the new data and layout into the old one inside one ``batch_update`` (a single
message to the browser, and the user's zoom kept through ``uirevision``). Traces that
did not change since the last update (the channels of a large network, say) are not
sent again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

_LAST = "_snapshotlib_last_spec"


def update_in_place(target: go.Figure, source: go.Figure | Mapping[str, Any]) -> None:
    """Make ``target`` (typically a ``go.FigureWidget``) show what ``source`` shows.

    ``source`` is a figure or, cheaper, a spec ``{"data": [...], "layout": {...}}`` as the
    ``*_spec`` functions of :mod:`snapshotlib.viz` return.
    """
    if isinstance(source, go.Figure):
        spec = source.to_plotly_json()
        spec["layout"].pop("template", None)  # the same every time, and costly to copy
    else:
        spec = dict(source)
    data = list(spec["data"])
    layout = dict(spec["layout"])
    last = getattr(target, _LAST, None) or {"data": [], "layout": None}
    with target.batch_update():
        if len(target.data) != len(data):
            target.data = ()
            target.add_traces(data)
        else:
            for k, (old, new) in enumerate(zip(target.data, data, strict=True)):
                if k < len(last["data"]) and last["data"][k] == new:
                    continue
                old.update(new, overwrite=True)
        if layout != last["layout"]:
            target.layout.update(layout, overwrite=True)
    setattr(target, _LAST, {"data": data, "layout": layout})

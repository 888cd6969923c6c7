"""Update a figure on screen from a freshly computed one, in place.

Figures here are pure functions of the engine's state that always return the same
traces in the same order, so a widget never needs to rebuild its ``FigureWidget``: it
copies the new data and layout into the old one inside one ``batch_update`` (a single
message to the browser, and the user's zoom kept through ``uirevision``).
"""

from __future__ import annotations

import plotly.graph_objects as go


def update_in_place(target: go.Figure, source: go.Figure) -> None:
    """Make ``target`` (typically a ``go.FigureWidget``) show what ``source`` shows."""
    with target.batch_update():
        if len(target.data) != len(source.data):
            target.data = ()
            target.add_traces(list(source.data))
        else:
            for old, new in zip(target.data, source.data, strict=True):
                old.update(new.to_plotly_json(), overwrite=True)
        layout = source.layout.to_plotly_json()
        layout.pop("template", None)  # the same every time, and the costliest part to copy
        target.layout.update(layout, overwrite=True)

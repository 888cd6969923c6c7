"""Pieces the widgets share: figure widgets, labels and the recorded-state table."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as w

from ..actions import Deliver
from ..simulator import Simulator
from ..snapshot_text import (
    CHANNEL,
    NOT_RECORDED,
    PROCESS,
    SnapshotStyle,
    heading,
    snapshot_rows,
)
from ..trace import APP

#: above this many channels, those recorded empty are counted rather than listed
MAX_QUIET_CHANNELS = 30


def widget_bundle(
    widget: Any, what: str, views: Sequence[Any] = (), **kwargs: Any
) -> dict[str, Any]:
    """A widget's display bundle whose plain-text part reads well where widgets cannot run.

    A notebook viewed without a kernel shows the ``text/plain`` part: say what the widget
    is rather than print its tree of children. ``views`` are the FigureWidgets inside it:
    a FigureWidget sends the browser its changes only, and its whole state only when it
    is displayed by itself, so inside a box the changes made before the widget is shown
    (a notebook that steps first) would be lost; asking each for its own bundle sends its
    whole state now.
    """
    for view in views:
        view._repr_mimebundle_()
    bundle = dict(widget._repr_mimebundle_(**kwargs))
    bundle["text/plain"] = f"[{what}: an interactive widget; run the notebook to use it]"
    return bundle


def delivery_label(sim: Simulator, action: Deliver) -> str:
    """What a delivery button says: the channel and what arrives on it."""
    i = sim.network.channel_index(action.channel)
    queue = sim.queues[i]
    m = queue[0] if action.message is None else action.message
    rec = sim.trace.messages[m]
    what = f"{rec.kind} {rec.tag}" if rec.kind != APP else sim.trace.message_name(m)
    return f"{action.channel.src}→{action.channel.dst}: {what}"


def _cell(value: Any) -> str:
    return html.escape(str(value))


def state_table_html(sim: Simulator, snapshot_id: str | None) -> str:
    """The chosen snapshot's recorded process and channel states, as an HTML table."""
    if not snapshot_id or snapshot_id not in sim.snapshot_ids():
        return "<p class='snapshot-table'><i>No snapshot yet: start one at a process.</i></p>"
    snap = sim.snapshot(snapshot_id)
    style = SnapshotStyle(
        process=lambda p, part: sim.app.describe(part.state, part.events),
        quiet_over=MAX_QUIET_CHANNELS,
    )
    rows, chan_rows = [], []
    for r in snapshot_rows(sim, snap, style):
        name = _cell(r.name)
        if r.kind == PROCESS and r.part is None:
            rows.append(
                f"<tr data-process='{name}'><td>{name}</td><td>white</td>"
                f"<td>{NOT_RECORDED}</td><td></td></tr>"
            )
        elif r.kind == PROCESS and r.part is not None:
            rows.append(
                f"<tr data-process='{name}'><td>{name}</td><td>red</td>"
                f"<td>{_cell(', '.join(r.part.events) or '(no events)')}</td>"
                f"<td>{_cell(r.text)}{' (recording inputs)' if r.open else ''}</td></tr>"
            )
        elif r.kind == CHANNEL:
            status = "recording" if r.open else "recorded" if r.recorded else "not begun"
            chan_rows.append(
                f"<tr data-channel='{name}'><td>{name}</td><td>{status}</td>"
                f"<td colspan='2'>{_cell(r.text)}</td></tr>"
            )
        else:  # a large network: only the channels with something to say get a row
            what = "recorded empty" if r.recorded else NOT_RECORDED
            chan_rows.append(f"<tr><td colspan='4'><i>{name} more channel(s) {what}</i></td></tr>")
    return (
        "<div class='snapshot-table' style='max-height:320px;overflow:auto;"
        "overflow-wrap:anywhere'>"
        f"<div class='snapshot-heading'><b>{_cell(heading(snap))}</b></div>"
        "<table style='border-collapse:collapse;width:100%'>"
        "<thead><tr><th>process</th><th>colour</th><th>recorded events</th>"
        "<th>recorded state</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody><thead><tr><th>channel</th><th>status</th><th colspan='2'>recorded"
        " messages</th></tr></thead><tbody>" + "".join(chan_rows) + "</tbody></table></div>"
    )


def row(children: Sequence[w.Widget]) -> w.HBox:
    """A row of controls that wraps onto a second line where the screen is narrow.

    A row that cannot wrap widens the whole widget past a projector's narrow notebook
    column, and the figures below, which take the widget's width, are cut off.
    """
    return w.HBox(list(children), layout=w.Layout(flex_flow="row wrap"))


#: the class of a widget's parts that a lecture's slide leaves out (notebooks/rise.css
#: hides them on RISE's slides; the notebook shows them)
OFF_SLIDE = "off-slide"


def off_slide(*parts: w.Widget) -> None:
    """Leave these parts of a widget off the lecture's slides (they stay in the notebook)."""
    for part in parts:
        part.add_class(OFF_SLIDE)


def make_button(text: str, icon: str, tooltip: str) -> w.Button:
    """A button sized to its text, as every widget of the course uses."""
    return w.Button(description=text, icon=icon, tooltip=tooltip, layout=w.Layout(width="auto"))


def find_button(widget: w.Widget, description: str) -> w.Button:
    """The button with this description anywhere inside ``widget`` (for tests and notebooks)."""
    for b in _walk(widget):
        if isinstance(b, w.Button) and b.description == description:
            return b
    raise KeyError(f"no button {description!r}")


def _walk(widget: w.Widget) -> Any:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)

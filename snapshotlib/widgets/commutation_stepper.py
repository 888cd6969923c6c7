"""The commutation stepper: Dijkstra's swaps, one at a time, forwards and back."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import ipywidgets as w

from ..checks.commutation import check_commutation
from ..colouring import colouring, snapshot_state
from ..formats.scenario import Scenario, load_scenario, run_scenario
from ..simulator import Simulator
from ..text_colours import WRONG
from ..viz import commutation_figure, commutation_spec, update_in_place
from .common import row, widget_bundle
from .figure_widget import figure_widget

#: executions with more inversions than this are summarised, not animated
MAX_SWAPS = 400


class CommutationStepper:
    """Step through the swaps that turn the recorded execution into whites-then-reds.

    At the end the dashed line marks SSS, the state between the two parts; on an
    execution where a red message is accepted in a white action, the swap that cannot be
    made is shown with the message named.
    """

    def __init__(
        self, source: Simulator | Scenario | str | Path, snapshot_id: str | None = None
    ) -> None:
        if isinstance(source, (str, Path)):
            source = load_scenario(source)
        self.sim = run_scenario(source) if isinstance(source, Scenario) else source
        ids = self.sim.snapshot_ids()
        if not ids:
            raise ValueError("the execution has no snapshot to reorder around")
        self.snapshot_id = snapshot_id if snapshot_id is not None else ids[0]
        self.result = check_commutation(self.sim, self.snapshot_id, max_swaps=MAX_SWAPS)
        self.colouring = colouring(self.sim, self.snapshot_id)
        n = len(self.result.swaps or ())
        self.position = w.IntSlider(value=0, min=0, max=n, description="swaps")
        self.first = w.Button(
            description="First", icon="fast-backward", tooltip="the recorded execution"
        )
        self.back = w.Button(description="Back", icon="step-backward", tooltip="undo one swap")
        self.forward = w.Button(
            description="Forward", icon="step-forward", tooltip="make the next swap"
        )
        self.last = w.Button(
            description="Last", icon="fast-forward", tooltip="all white actions, then all red ones"
        )
        self.first.on_click(lambda _: self.go(0))
        self.back.on_click(lambda _: self.go(self.position.value - 1))
        self.forward.on_click(lambda _: self.go(self.position.value + 1))
        self.last.on_click(lambda _: self.go(self.position.max))
        self.position.observe(lambda _: self.refresh(), names="value")
        self.explanation = w.HTML()
        self.view = figure_widget(commutation_figure(self.colouring, self.result, 0))
        self.widget = w.VBox(
            [
                row([self.first, self.back, self.forward, self.last, self.position]),
                self.view,
                self.explanation,
            ]
        )
        self.widget.add_class("commutation-stepper")
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return widget_bundle(self.widget, "CommutationStepper", (self.view,), **kwargs)

    def go(self, done: int) -> None:
        """Show the arrangement after ``done`` swaps (clamped to the available range)."""
        self.position.value = max(self.position.min, min(self.position.max, done))

    def refresh(self) -> None:
        done = self.position.value
        update_in_place(self.view, commutation_spec(self.colouring, self.result, done))
        r = self.result
        parts = []
        if r.swaps is None:
            parts.append(f"{r.inversions} inversions: too many to animate.")
        if not r.holds:
            parts.append(
                f"<b style='color:{WRONG}'>The argument fails:</b> {html.escape(r.reason)}"
            )
        elif done == self.position.max:
            sss = snapshot_state(self.sim, self.snapshot_id)
            recorded = self.sim.snapshot(self.snapshot_id).processes
            app = self.sim.app
            states = "; ".join(
                f"{p}: {html.escape(str(app.describe(r.state, r.events)))}"
                for p, r in recorded.items()
            )
            names = self.sim.trace.message_name
            chans = (
                "; ".join(
                    f"{c}: {', '.join(names(m) for m in ms)}"
                    for c, ms in sss.channels.items()
                    if ms
                )
                or "every channel empty"
            )
            parts.append(
                "<b>All white actions now precede all red ones.</b> Between them the system "
                f"is in SSS. Machines: {states}. Channels: {html.escape(chans)}."
            )
        else:
            parts.append(f"{r.inversions - done} inversion(s) left to remove.")
        self.explanation.value = "<div class='commutation-text'>" + "<br>".join(parts) + "</div>"

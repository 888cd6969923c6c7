"""The cut checker: draw a cut on the space-time diagram, get a verdict at once."""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ipywidgets as w

from ..checks.cut import CutResult, check_frontier, cut_limits
from ..formats.scenario import Scenario, load_scenario, run_scenario
from ..simulator import Simulator
from ..text_colours import RIGHT, WRONG
from ..viz import spacetime_figure, spacetime_spec, update_in_place
from .common import row, widget_bundle
from .figure_widget import figure_widget


class CutChecker:
    """Pick how many events of each process are inside the cut; is it consistent?

    A slider per process sets its frontier; clicking an event on the diagram moves that
    process's frontier to just after the event (clicking the last event inside takes it
    out again). The verdict names the message that makes a cut inconsistent.
    """

    def __init__(
        self, source: Simulator | Scenario | str | Path, frontier: Mapping[str, int] | None = None
    ) -> None:
        if isinstance(source, (str, Path)):
            source = load_scenario(source)
        self.sim = run_scenario(source) if isinstance(source, Scenario) else source
        trace = self.sim.trace
        self._quiet = False
        self.sliders = {}
        for p in self.sim.network.processes:
            n = len(trace.process_actions(p))
            start = n if frontier is None else frontier.get(p, n)
            s = w.IntSlider(value=start, min=0, max=n, description=p, continuous_update=True)
            s.observe(lambda _: None if self._quiet else self.refresh(), names="value")
            self.sliders[p] = s
        self.verdict = w.HTML()
        self.view = figure_widget(spacetime_figure(self.sim, None, self._limits()))
        self.view.data[5].on_click(self._on_click)  # trace 5: the events
        self.widget = w.VBox([row([w.VBox(list(self.sliders.values())), self.verdict]), self.view])
        self.widget.add_class("cut-checker")
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return widget_bundle(self.widget, "CutChecker", (self.view,), **kwargs)

    @property
    def frontier(self) -> dict[str, int]:
        """Number of events of each process inside the cut."""
        return {p: s.value for p, s in self.sliders.items()}

    def set_frontier(self, **frontier: int) -> None:
        """Move some processes' frontiers at once (one refresh)."""
        self._quiet = True  # one refresh at the end, not one per slider
        try:
            for p, n in frontier.items():
                self.sliders[p].value = n
        finally:
            self._quiet = False
        self.refresh()

    def _limits(self) -> dict[str, int]:
        return cut_limits(self.sim.trace, self.frontier)

    def check(self) -> CutResult:
        return check_frontier(self.sim.trace, self.frontier)

    def refresh(self) -> None:
        result = self.check()
        update_in_place(self.view, spacetime_spec(self.sim, None, self._limits()))
        colour = RIGHT if result.ok else WRONG
        word = "Consistent" if result.ok else "Inconsistent"
        self.verdict.value = (
            f"<div class='cut-verdict' style='color:{colour};max-width:420px'><b>{word}.</b> "
            f"{html.escape(result.reason)}</div>"
        )

    def _on_click(self, trace: Any, points: Any, state: Any) -> None:
        for index in points.point_inds:
            action = int(trace.x[index])
            self.click_event(action)

    def click_event(self, action: int) -> None:
        """Clicking event ``action`` (a trace index): the frontier moves just past it."""
        p = self.sim.trace.actions[action].process
        position = self.sim.trace.process_actions(p).index(action) + 1
        slider = self.sliders[p]
        slider.value = position - 1 if slider.value == position else position

"""The course's plotly ``FigureWidget``: whole when first shown, its code loaded once a page."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import plotly.graph_objects as go
import traitlets
from plotly.basewidget import BaseFigureWidget

#: the browser code of every course figure: it loads plotly's widget module once per page
LOADER = Path(__file__).with_name("plotly_once.js").read_text(encoding="utf-8")


class CourseFigureWidget(go.FigureWidget):  # type: ignore[misc]
    """A ``FigureWidget`` whose browser copy starts whole and shares plotly's code.

    Whole: ipywidgets opens a widget's channel to the browser inside its constructor, and
    plotly puts the figure in only after that, as updates (CSS classes come later still).
    On a busy machine the browser has drawn a view from the state the channel was opened
    with, an empty figure with no classes, that the updates never reached: the learner
    saw a blank figure. So the channel is opened last, with everything in.

    Shared code: see ``plotly_once.js``. plotly's module still travels with each figure
    (``_plotly_esm``), because a page opened later, or reloaded, has not loaded it yet.
    """

    _esm = LOADER
    _plotly_esm = traitlets.Unicode().tag(sync=True)

    def __init__(self, fig: go.Figure, classes: Sequence[str]) -> None:
        self._hold_open = True
        super().__init__(fig)
        self._dom_classes = tuple(classes)
        self._hold_open = False
        self.open()

    @traitlets.default("_plotly_esm")
    def _plotly_module(self) -> str:
        return str(BaseFigureWidget._esm)

    def open(self) -> None:
        if not getattr(self, "_hold_open", False):
            super().open()


def figure_widget(fig: go.Figure, *classes: str) -> go.FigureWidget:
    """A ``FigureWidget`` showing ``fig``, with CSS ``classes``, updated in place from
    then on.

    Validated, unlike the figures: plotly only sends the browser the changes made
    through its validated setters (see :mod:`snapshotlib.viz.update`).
    """
    return CourseFigureWidget(fig, classes)

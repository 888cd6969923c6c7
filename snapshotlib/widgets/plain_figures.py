"""Plain plotly figures in the browser's Python (Pyodide, in the course's static site).

plotly shows a figure in a notebook by its mime type, which needs plotly's JupyterLab
extension on the page, and refuses to unless nbformat is installed, which it only uses
to check the notebook format's version (nbformat's schema checker needs a compiled
package the browser's Python lacks). There a plain figure is shown as the course's
figure widget instead (:mod:`.figure_widget`), which draws with the script inside
plotly's package: the site then needs no extension of plotly's (another copy of
plotly.js, a twelfth of the site). Anywhere else plotly's own renderers stay.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io.base_renderers import ExternalRenderer

from .figure_widget import figure_widget

#: the renderer's name in ``plotly.io.renderers``
RENDERER = "snapshotlib_figure_widget"


class FigureWidgetRenderer(ExternalRenderer):  # type: ignore[misc]
    """Displays a figure as a figure widget of the same figure."""

    def render(self, fig_dict: dict[str, Any]) -> None:
        from IPython.display import display

        display(figure_widget(go.Figure(fig_dict)))  # type: ignore[no-untyped-call]


def show_as_figure_widgets_in_the_browser() -> bool:
    """In the browser's Python, make :class:`FigureWidgetRenderer` plotly's default, unless
    the learner chose one (``PLOTLY_RENDERER``); say whether it did."""
    if sys.platform != "emscripten" or os.environ.get("PLOTLY_RENDERER"):
        return False
    pio.renderers[RENDERER] = FigureWidgetRenderer()
    pio.renderers.default = RENDERER
    return True

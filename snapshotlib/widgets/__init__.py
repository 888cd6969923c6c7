"""Widgets for JupyterLab: thin ipywidgets controllers over the engine and the figures.

A new widget goes in a module of its own here: it steps the engine and redraws a figure
of :mod:`snapshotlib.viz`; it computes nothing the engine or the checks do not.

Needs the ``widgets`` extra (ipywidgets, anywidget, plotly, networkx).
"""

from .commutation_stepper import CommutationStepper
from .concept_check import ConceptCheck
from .cut_checker import CutChecker
from .dataflow_explorer import DataflowExplorer
from .explorer import Explorer
from .live_explorer import LiveExplorer
from .plain_figures import show_as_figure_widgets_in_the_browser
from .static import show_static, static_png

show_as_figure_widgets_in_the_browser()

__all__ = [
    "CommutationStepper",
    "ConceptCheck",
    "CutChecker",
    "DataflowExplorer",
    "Explorer",
    "LiveExplorer",
    "show_static",
    "static_png",
]

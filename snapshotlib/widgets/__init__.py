"""Widgets for JupyterLab: thin ipywidgets controllers over the engine and the figures.

Needs the ``widgets`` extra (ipywidgets, anywidget, plotly, networkx).
"""

from .commutation_stepper import CommutationStepper
from .cut_checker import CutChecker
from .dataflow_explorer import DataflowExplorer
from .explorer import Explorer
from .static import show_static, static_png

__all__ = [
    "CommutationStepper",
    "CutChecker",
    "DataflowExplorer",
    "Explorer",
    "show_static",
    "static_png",
]

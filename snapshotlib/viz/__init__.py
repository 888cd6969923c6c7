"""Figures: pure functions from the engine's state to plotly figures.

Needs the ``viz`` extra (plotly, networkx). Importing :mod:`snapshotlib` alone never
imports this package.
"""

from .commutation import commutation_figure
from .network import network_figure, network_layout
from .spacetime import spacetime_figure
from .update import update_in_place

__all__ = [
    "commutation_figure",
    "network_figure",
    "network_layout",
    "spacetime_figure",
    "update_in_place",
]

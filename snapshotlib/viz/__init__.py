"""Figures: pure functions from the engine's state to plotly figures.

Needs the ``viz`` extra (plotly, networkx). Importing :mod:`snapshotlib` alone never
imports this package.
"""

from .commutation import commutation_figure, commutation_spec
from .network import network_figure, network_layout, network_spec
from .spacetime import spacetime_figure, spacetime_spec
from .update import update_in_place

__all__ = [
    "commutation_figure",
    "commutation_spec",
    "network_figure",
    "network_layout",
    "network_spec",
    "spacetime_figure",
    "spacetime_spec",
    "update_in_place",
]

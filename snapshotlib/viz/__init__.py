"""Figures: pure functions from the engine's state to plotly figures.

A new figure is a function here (a module per kind of figure) taking a simulator, a
snapshot or a job and returning a plotly figure; shared colours and marks are in
:mod:`.style`, Dijkstra's colours come from :mod:`snapshotlib.colouring`. A widget that
shows it goes in :mod:`snapshotlib.widgets`.

Needs the ``viz`` extra (plotly, networkx). Importing :mod:`snapshotlib` alone never
imports this package.
"""

from .checkpoints import registry_figure, registry_spec
from .commutation import commutation_figure, commutation_spec
from .costs import backpressure_figure, costs_figure
from .dataflow import dataflow_figure, dataflow_spec
from .lattice import lattice_figure, lattice_layout, lattice_spec
from .layered import dataflow_layout
from .network import network_figure, network_layout, network_spec
from .scale import delay_figure, rate_figure
from .spacetime import spacetime_figure, spacetime_spec
from .update import update_in_place

__all__ = [
    "backpressure_figure",
    "commutation_figure",
    "commutation_spec",
    "costs_figure",
    "dataflow_figure",
    "dataflow_layout",
    "dataflow_spec",
    "delay_figure",
    "lattice_figure",
    "lattice_layout",
    "lattice_spec",
    "network_figure",
    "network_layout",
    "network_spec",
    "rate_figure",
    "registry_figure",
    "registry_spec",
    "spacetime_figure",
    "spacetime_spec",
    "update_in_place",
]

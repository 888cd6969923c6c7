"""Checks on recorded executions; each returns data (``ok``/``holds``, ``reason``, ``witness``)."""

from .causality import concurrent, happens_before, vector_clocks
from .commutation import CommutationResult, Swap, check_commutation, count_inversions
from .cut import CutResult, check_cut, check_frontier, check_snapshot

__all__ = [
    "CommutationResult",
    "CutResult",
    "Swap",
    "check_commutation",
    "check_cut",
    "check_frontier",
    "check_snapshot",
    "concurrent",
    "count_inversions",
    "happens_before",
    "vector_clocks",
]

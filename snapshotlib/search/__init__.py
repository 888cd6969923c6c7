"""Exhaustive search over every schedule of a small system, with the shortest
counterexample (standard library only).

>>> from snapshotlib.search import search, system_of_scenario
>>> from snapshotlib.formats.scenario import EXAMPLES, load_scenario
>>> result = search(system_of_scenario(load_scenario(EXAMPLES / "token-ring.json")))
>>> result.ok
True
"""

from .counterexample import counterexample_scenario, replay
from .explore import BUILT_IN, Invariant, SearchResult, SearchStats, Violation, search
from .system import SnapshotPlan, System, each_sends, system_of_scenario

__all__ = [
    "BUILT_IN",
    "Invariant",
    "SearchResult",
    "SearchStats",
    "SnapshotPlan",
    "System",
    "Violation",
    "counterexample_scenario",
    "each_sends",
    "replay",
    "search",
    "system_of_scenario",
]

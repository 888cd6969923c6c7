"""Which snapshot algorithm a live cluster's nodes run: the engine's Chandy–Lamport, or
a class of the learner's own (``snapshotlib live up --algorithm my_markers.py:MarkerRules``).

Every node loads the class the spec names, and so does the check that replays the
nodes' logs in the engine (:mod:`.runlog`): the engine's checks then judge the
snapshots the learner's class took, on real processes. What a node carries between
processes is a marker, a snapshot id and nothing else, so the class must be a marker
algorithm: its control messages are markers (``control_kind``), it holds no channel
back and needs no call before every action. Exercise 2's class is one; Lai–Yang (whose
markers carry counts) and the barrier classes are not: a node refuses a marker with a
payload, and this module refuses the other kinds before any process starts.

A class written for the simulator may read ``self.sim.states`` and
``self.sim.trace.messages``: a node answers both for itself (:class:`~.host.NodeHost`).
It need not write trace events either: a node sees from the records when its part is
recorded and done.

Standard library only.
"""

from __future__ import annotations

import functools
from pathlib import Path

from ..algorithms.base import SnapshotAlgorithm
from ..algorithms.chandy_lamport import ChandyLamport
from ..named import NamedObjectError, load
from ..trace import MARKER
from .spec import ClusterSpec, SpecError


class AlgorithmChoiceError(SpecError):
    """An algorithm a live cluster cannot run, saying why."""


def algorithm_class(spec: ClusterSpec) -> type[SnapshotAlgorithm]:
    """The class every node of ``spec`` runs."""
    if not spec.algorithm:
        return ChandyLamport
    return load_algorithm(spec.algorithm, spec.algorithm_path)


def load_algorithm(reference: str, search_path: str = "") -> type[SnapshotAlgorithm]:
    """The class ``reference`` names, if a live node can run it;
    :class:`AlgorithmChoiceError` naming what is wrong if not. A file is loaded again
    once it has changed (a learner mends the class and runs the lab again)."""
    where = reference.rpartition(":")[0]
    try:
        stamp = Path(where).stat().st_mtime_ns if where.endswith(".py") else 0
    except OSError:
        stamp = 0  # said by the loader: there is no such file
    return _load(reference, search_path, stamp)


@functools.lru_cache(maxsize=8)  # a check replays with it at every snapshot
def _load(reference: str, search_path: str, stamp: int) -> type[SnapshotAlgorithm]:
    try:
        found = load(reference, "algorithm", search_path)
    except NamedObjectError as e:
        raise AlgorithmChoiceError(str(e)) from None
    where = f"algorithm {reference!r}"
    if not isinstance(found, type) or not issubclass(found, SnapshotAlgorithm):
        raise AlgorithmChoiceError(
            f"{where}: expected a subclass of snapshotlib.algorithms.SnapshotAlgorithm, "
            f"got {found!r}"
        )
    if found is SnapshotAlgorithm or found.start is SnapshotAlgorithm.start:
        raise AlgorithmChoiceError(f"{where}: {found.__name__} has no start(): nothing starts it")
    if found.control_kind != MARKER:
        raise AlgorithmChoiceError(
            f"{where}: its control messages are {found.control_kind!r}; a live node carries "
            "markers (a snapshot id and nothing more) only"
        )
    if found.watches_actions:
        raise AlgorithmChoiceError(
            f"{where}: it watches every action (watches_actions), which a live node does not report"
        )
    try:
        found()
    except Exception as e:
        raise AlgorithmChoiceError(
            f"{where}: {found.__name__}() failed: {type(e).__name__}: {e}"
        ) from None
    return found

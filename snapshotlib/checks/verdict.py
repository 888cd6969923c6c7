"""The verdict on a run's snapshots, computed once for every reader.

A snapshot is right when it is a consistent cut with the right channel states
(:func:`~snapshotlib.checks.cut.check_snapshot`), Dijkstra's commutation argument holds
for it (:func:`~snapshotlib.checks.commutation.check_commutation`), and, for an
application that conserves a quantity, the quantity recorded is the quantity there was
(:func:`~snapshotlib.checks.predicates.conservation`). ``snapshotlib run`` and
``check``, sweeps and bulk trace checks all read this verdict.

>>> from snapshotlib.workloads import random_execution, ring
>>> sim = random_execution(ring(3), seed=4, n_actions=30)
>>> run = run_verdict(sim)
>>> run.ok, [v.snapshot_id for v in run.snapshots], run.reason
(True, ['s1'], None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .commutation import CommutationResult, check_commutation
from .cut import CutResult, check_snapshot
from .predicates import PredicateResult, conservation

if TYPE_CHECKING:
    from ..simulator import Simulator


@dataclass(frozen=True)
class SnapshotVerdict:
    """What the checks say of one snapshot; ``reason`` is the first failure's."""

    snapshot_id: str
    cut: CutResult
    dijkstra: CommutationResult
    #: ``None`` for an application that conserves nothing
    conserved: PredicateResult | None

    @property
    def consistent(self) -> bool:
        return self.cut.ok

    @property
    def ok(self) -> bool:
        return self.reason is None

    @property
    def reason(self) -> str | None:
        """The first failed check's one-line reason (the cut's reason as it is, since it
        says what is inconsistent), ``None`` when every check holds."""
        if not self.cut.ok:
            return self.cut.reason
        if not self.dijkstra.holds:
            return f"Dijkstra's argument fails: {self.dijkstra.reason}"
        if self.conserved is not None and not self.conserved.holds:
            return self.conserved.reason
        return None


@dataclass(frozen=True)
class RunVerdict:
    """The verdict on every snapshot of a run, in the order they were started."""

    snapshots: tuple[SnapshotVerdict, ...]

    @property
    def ok(self) -> bool:
        """Whether the run took a snapshot and every snapshot is right."""
        return bool(self.snapshots) and all(v.ok for v in self.snapshots)

    @property
    def reason(self) -> str | None:
        """``None`` when :attr:`ok`; else no snapshot was taken, or the first wrong
        snapshot's id and reason."""
        if not self.snapshots:
            return "no snapshot was taken"
        for v in self.snapshots:
            if not v.ok:
                prefix = "inconsistent: " if not v.consistent else ""
                return f"{v.snapshot_id}: {prefix}{v.reason}"
        return None


def snapshot_verdict(sim: Simulator, snapshot_id: str) -> SnapshotVerdict:
    """The checks of one snapshot of a finished run."""
    cut = check_snapshot(sim, snapshot_id)
    dijkstra = check_commutation(sim, snapshot_id, max_swaps=0)
    conserved = conservation(sim, snapshot_id) if sim.app.conserved is not None else None
    return SnapshotVerdict(snapshot_id, cut, dijkstra, conserved)


def run_verdict(sim: Simulator) -> RunVerdict:
    """The checks of every snapshot of a finished run."""
    return RunVerdict(tuple(snapshot_verdict(sim, sid) for sid in sim.snapshots()))

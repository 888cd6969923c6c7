"""Checks on recorded executions; each returns data (``ok``/``holds``, ``reason``, ``witness``).

A new check goes in the module of its kind (causality, cuts, commutation, lattices of
cuts, predicates, recovery lines, the true state at a moment) or a module of its own
here, standard library only; what every reader decides about a run (``snapshotlib run``/``check``,
sweeps, bulk checks) is :mod:`.verdict`.
"""

from .causality import (
    concurrent,
    happens_before,
    lamport_clocks,
    lamport_order,
    vector_clocks,
)
from .commutation import CommutationResult, Swap, check_commutation, count_inversions
from .cut import CutResult, check_cut, check_frontier, check_snapshot
from .lattice import (
    CutLattice,
    GlobalState,
    Modality,
    SnapshotWindow,
    cut_lattice,
    run_path,
    snapshot_cut,
    snapshot_window,
)
from .recovery import (
    Rollback,
    domino_effect,
    forced_checkpoints,
    recovery_line,
    rollback_propagation,
)
from .verdict import RunVerdict, SnapshotVerdict, run_verdict, snapshot_verdict

__all__ = [
    "CommutationResult",
    "CutLattice",
    "CutResult",
    "GlobalState",
    "Modality",
    "Rollback",
    "RunVerdict",
    "SnapshotVerdict",
    "SnapshotWindow",
    "Swap",
    "check_commutation",
    "check_cut",
    "check_frontier",
    "check_snapshot",
    "concurrent",
    "count_inversions",
    "cut_lattice",
    "domino_effect",
    "forced_checkpoints",
    "happens_before",
    "lamport_clocks",
    "lamport_order",
    "recovery_line",
    "rollback_propagation",
    "run_path",
    "run_verdict",
    "snapshot_cut",
    "snapshot_verdict",
    "snapshot_window",
    "vector_clocks",
]

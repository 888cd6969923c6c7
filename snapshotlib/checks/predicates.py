"""Stable predicates evaluated on a recorded snapshot.

A stable predicate, once true, stays true (EWD 864a). Because the snapshot state SSS is
reachable from the state when the snapshot began and the state when it ended is
reachable from SSS, a stable predicate that holds in SSS has held since the end of the
snapshot at the latest, and one that held at its start holds in SSS. This is how an
initiator detects termination or deadlock from the pieces it collected.

Each function returns a :class:`PredicateResult`: data, never printing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..simulator import Simulator
    from ..snapshot import GlobalSnapshot


@dataclass(frozen=True)
class PredicateResult:
    """``holds`` with a one-line ``reason``; ``details`` carries the figures behind it."""

    holds: bool
    reason: str
    details: Mapping[str, Any] = field(default_factory=dict)


def _snapshot(sim: Simulator, snapshot: str | GlobalSnapshot) -> GlobalSnapshot:
    return sim.snapshot(snapshot) if isinstance(snapshot, str) else snapshot


def _count(n: int, what: str) -> str:
    """``"1 token"``, ``"3 tokens"``, ``"5 money"``: singular where the word has a plural s."""
    return f"{n} {what[:-1]}" if n == 1 and what.endswith("s") else f"{n} {what}"


def conservation(sim: Simulator, snapshot: str | GlobalSnapshot) -> PredicateResult:
    """Tokens (or money) in recorded processes plus recorded channels equal the initial total."""
    app = sim.app
    snap = _snapshot(sim, snapshot)
    what = app.conserved
    if what is None:
        return PredicateResult(False, f"the {app.name} application conserves no quantity")
    initial = sum(
        app.amount(app.initial_state(p, sim.initial.get(p))) or 0 for p in sim.network.processes
    )
    in_processes = sum(app.amount(r.state) or 0 for r in snap.processes.values())
    in_channels = sum(
        app.message_amount(m.payload) for msgs in snap.channels.values() for m in msgs
    )
    details = {"initial": initial, "processes": in_processes, "channels": in_channels}
    recorded = in_processes + in_channels
    if not snap.complete:
        return PredicateResult(False, f"snapshot {snap.id} is not complete yet", details)
    if recorded == initial:
        return PredicateResult(
            True,
            f"{_count(recorded, what)} recorded ({in_processes} in processes, "
            f"{in_channels} in transit) = {initial} at the start",
            details,
        )
    return PredicateResult(
        False,
        f"{_count(recorded, what)} recorded ({in_processes} in processes, {in_channels} in "
        f"transit) but {initial} at the start: "
        f"{'some created' if recorded > initial else 'some lost'}",
        details,
    )


def termination(sim: Simulator, snapshot: str | GlobalSnapshot) -> PredicateResult:
    """Every recorded process passive and every recorded channel empty."""
    snap = _snapshot(sim, snapshot)
    if not snap.complete:
        return PredicateResult(False, f"snapshot {snap.id} is not complete yet")
    busy = [p for p, r in snap.processes.items() if not sim.app.is_passive(r.state)]
    if busy:
        return PredicateResult(False, f"{busy[0]} is still active", {"active": busy})
    carrying = [c for c, msgs in snap.channels.items() if msgs]
    if carrying:
        return PredicateResult(
            False, f"channel {carrying[0]} still carries a message", {"channels": carrying}
        )
    return PredicateResult(True, "every process is passive and every channel is empty")


def deadlock(sim: Simulator, snapshot: str | GlobalSnapshot) -> PredicateResult:
    """A cycle of processes, each waiting for the next, with nothing in transit to unblock them.

    A waiting process ``p`` stays blocked on ``q`` when no message from ``q`` to ``p``
    is recorded in transit; a cycle of such waits is a deadlock, which is stable.
    """
    snap = _snapshot(sim, snapshot)
    if not snap.complete:
        return PredicateResult(False, f"snapshot {snap.id} is not complete yet")
    edges: dict[str, list[str]] = {}
    for p, r in snap.processes.items():
        for q in sorted(sim.app.waits_for(p, r.state)):
            if not snap.channels.get(f"{q}->{p}"):
                edges.setdefault(p, []).append(q)
    cycle = _find_cycle(edges)
    if cycle:
        return PredicateResult(
            True, "deadlock: " + " waits for ".join([*cycle, cycle[0]]), {"cycle": cycle}
        )
    return PredicateResult(False, "no cycle of blocked processes", {"waits": edges})


def _find_cycle(edges: Mapping[str, list[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    path: list[str] = []

    def visit(p: str) -> list[str] | None:
        state[p] = 1
        path.append(p)
        for q in edges.get(p, []):
            if state.get(q) == 1:
                return path[path.index(q) :]
            if q not in state:
                found = visit(q)
                if found:
                    return found
        path.pop()
        state[p] = 2
        return None

    for p in sorted(edges):
        if p not in state:
            found = visit(p)
            if found:
                return found
    return None

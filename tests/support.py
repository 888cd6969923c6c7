"""Helpers shared by several test modules."""

from __future__ import annotations

from typing import Any

from snapshotlib import Simulator


def whole(sim: Simulator) -> tuple[Any, ...]:
    """Everything observable about a run: the whole trace, states, queues and snapshots."""
    t = sim.trace
    return (
        list(t.actions),
        list(t.messages),
        list(t.received_by),
        dict(sim.states),
        [list(q) for q in sim.queues],
        sim.snapshots(),
    )

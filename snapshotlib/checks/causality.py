"""Happens-before, computed on demand with vector clocks.

The simulator records no clocks while it runs (the hot path stays lean); this module
derives them from the trace in one pass when they are needed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..trace import APP_KINDS, CONTROL, RECEIVE, Trace

VectorClock = tuple[int, ...]


def vector_clocks(
    trace: Trace, processes: Sequence[str], include_control: bool = False
) -> list[VectorClock | None]:
    """The vector clock of every action (``None`` for actions left out).

    Entry ``k`` counts the events of ``processes[k]`` that happen before or at the
    action. With ``include_control`` snapshot initiations and marker receipts are
    events too (markers then carry causality like messages).

    >>> from snapshotlib import Network, Simulator, Send, Internal
    >>> sim = Simulator(Network(["a", "b"]))
    >>> sim.step(Internal("a", "x")); sim.step(Send("a", "b")); _ = sim.run()
    >>> vector_clocks(sim.trace, ["a", "b"])
    [(1, 0), (2, 0), (2, 1)]
    """
    index = {p: k for k, p in enumerate(processes)}
    current = {p: [0] * len(processes) for p in processes}
    clocks: list[VectorClock | None] = []
    messages = trace.messages
    for a in trace.actions:
        if a.kind not in APP_KINDS and not include_control:
            clocks.append(None)
            continue
        vc = current[a.process]
        if a.kind in (RECEIVE, CONTROL):
            sender = clocks[messages[a.message].sent_by]
            if sender is not None:
                for k, v in enumerate(sender):
                    if v > vc[k]:
                        vc[k] = v
        vc[index[a.process]] += 1
        clocks.append(tuple(vc))
    return clocks


def happens_before(clocks: Sequence[VectorClock | None], a: int, b: int) -> bool:
    """Whether action ``a`` happens before action ``b`` (both must have clocks)."""
    ca, cb = clocks[a], clocks[b]
    if ca is None or cb is None:
        raise ValueError("happens_before needs two actions that have vector clocks")
    return ca != cb and all(x <= y for x, y in zip(ca, cb, strict=True))


def concurrent(clocks: Sequence[VectorClock | None], a: int, b: int) -> bool:
    """Neither action happens before the other."""
    return a != b and not happens_before(clocks, a, b) and not happens_before(clocks, b, a)

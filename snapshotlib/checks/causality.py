"""Happens-before, computed on demand: Lamport clocks and vector clocks.

The simulator records no clocks while it runs (the hot path stays lean); this module
derives them from the trace in one pass when they are needed.

Lamport's clocks (1978) give each event one number with the *clock condition*: if
*e* happens before *f*, then L(*e*) < L(*f*). Ordering events by (L, process) gives a
total order every process can compute and that never contradicts happens-before. The
converse does not hold: L(*e*) < L(*f*) also when *e* and *f* are concurrent, so one
number cannot tell concurrency. Vector clocks (Fidge 1988; Mattern 1989) can: *e*
happens before *f* exactly when V(*e*) < V(*f*).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..trace import APP_KINDS, CONTROL, RECEIVE, Trace

VectorClock = tuple[int, ...]


def lamport_clocks(
    trace: Trace, processes: Sequence[str], include_control: bool = False
) -> list[int | None]:
    """The Lamport time of every action (``None`` for actions left out).

    Each process counts its events; an event's time is one more than the time of the
    event before it at its process, and a receive's is one more than the larger of that
    and its message's send time. With ``include_control`` snapshot initiations and
    marker receipts are events too.

    >>> from snapshotlib import Network, Simulator, Send, Internal
    >>> sim = Simulator(Network(["a", "b"]))
    >>> sim.step(Internal("a", "x")); sim.step(Internal("a", "y")); sim.step(Send("a", "b"))
    >>> sim.step(Internal("b", "z")); _ = sim.run()
    >>> lamport_clocks(sim.trace, ["a", "b"])
    [1, 2, 3, 1, 4]
    """
    current = dict.fromkeys(processes, 0)
    times: list[int | None] = []
    messages = trace.messages
    for a in trace.actions:
        if a.kind not in APP_KINDS and not include_control:
            times.append(None)
            continue
        time = current[a.process]
        if a.kind in (RECEIVE, CONTROL):
            sent = times[messages[a.message].sent_by]
            if sent is not None and sent > time:
                time = sent
        current[a.process] = time + 1
        times.append(time + 1)
    return times


def lamport_order(times: Sequence[int | None], trace: Trace, processes: Sequence[str]) -> list[int]:
    """The actions that have a Lamport time, in Lamport's total order: by time, ties
    broken by the process's place in ``processes``. Every process can compute it from
    what it knows, and it never puts an event before one that happens before it.

    >>> from snapshotlib import Network, Simulator, Send, Internal
    >>> sim = Simulator(Network(["a", "b"]))
    >>> sim.step(Internal("b", "z")); sim.step(Send("a", "b")); _ = sim.run()
    >>> lamport_order(lamport_clocks(sim.trace, ["a", "b"]), sim.trace, ["a", "b"])
    [1, 0, 2]
    """
    rank = {p: k for k, p in enumerate(processes)}
    timed = [i for i, t in enumerate(times) if t is not None]
    return sorted(timed, key=lambda i: (times[i], rank[trace.actions[i].process]))


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

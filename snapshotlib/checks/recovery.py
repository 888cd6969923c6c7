"""Rollback recovery: the recovery line of a run's checkpoints, and the domino effect.

A process saves checkpoints as it runs; after a failure every process rolls back to
one of its own. A checkpoint is named by how many of its process's events it holds
(``0``: the initial state, always there). One checkpoint per process is a cut, and the
processes may restart from it only if it is consistent: no message received inside it
was sent outside it (an *orphan*: the receiver would remember a message its sender
never sent). The **recovery line** is the latest consistent cut made of checkpoints.

Consistent cuts are closed under taking, process by process, the later of two (lesson
06b's lattice), so among the consistent cuts of checkpoints there is one that holds every
other: the recovery line is unique. :func:`recovery_line` finds it by rollback
propagation, as a recovering system does: start from every process's latest checkpoint
and, while an orphan remains, roll its receiver back to its latest checkpoint before
the receive. Checkpoints taken each on its own, with no coordination, can roll every
process back to its start: the **domino effect** (Randell 1975; Elnozahy et al. 2002).
A coordinated checkpoint, such as a Chandy–Lamport snapshot, is consistent by
construction, so it is a recovery line by itself. Between the two lie
*communication-induced* checkpoints (:func:`forced_checkpoints`): each process still
checkpoints on its own, and messages carry enough to make the receiver take an extra
one, just before a receive, where an orphan could come of it.

>>> from snapshotlib.course.lesson_01 import small_execution
>>> trace = small_execution().trace
>>> recovery_line(trace, {"P1": [2, 3], "P2": [1], "P3": [1]})  # a3 receives c2: P1 to 2
{'P1': 2, 'P2': 1, 'P3': 1}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..trace import APP, RECEIVE, Trace
from .cut import check_frontier


@dataclass(frozen=True)
class Rollback:
    """One step of rollback propagation: ``process`` goes back to ``to`` events because
    it received message ``message`` (by name) that its sender had not sent by its own
    checkpoint."""

    process: str
    to: int
    message: str


def checkpoint_sets(
    trace: Trace, checkpoints: Mapping[str, Sequence[int]]
) -> dict[str, tuple[int, ...]]:
    """Each process's checkpoints in order, the initial state (0) included, checked
    against the run: :class:`ValueError` names a process the run does not have or a
    checkpoint that is not a whole number from 0 to that process's number of events."""
    processes = {a.process for a in trace.actions}
    out: dict[str, tuple[int, ...]] = {}
    for p, marks in checkpoints.items():
        if p not in processes:
            raise ValueError(f"checkpoints of {p!r}: the run has no such process")
        events = len(trace.process_actions(p))
        for k in marks:
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= events:
                raise ValueError(
                    f"checkpoints of {p}: {k!r} is not a number of events from 0 to {events}"
                )
        out[p] = tuple(sorted({0, *marks}))
    for p in sorted(processes - set(out)):
        out[p] = (0,)
    return out


def rollback_propagation(
    trace: Trace, checkpoints: Mapping[str, Sequence[int]]
) -> tuple[dict[str, int], list[Rollback]]:
    """The recovery line and the rollbacks that lead to it from the latest checkpoints,
    in the order a recovering system takes them."""
    marks = checkpoint_sets(trace, checkpoints)
    line = {p: m[-1] for p, m in marks.items()}
    steps: list[Rollback] = []
    while not (verdict := check_frontier(trace, line)).ok:
        assert verdict.witness is not None
        receive = trace.received_by[verdict.witness]
        p = trace.actions[receive].process
        before = trace.process_actions(p).index(receive)
        line[p] = max(k for k in marks[p] if k <= before)
        steps.append(Rollback(p, line[p], trace.message_name(verdict.witness)))
    return line, steps


def recovery_line(trace: Trace, checkpoints: Mapping[str, Sequence[int]]) -> dict[str, int]:
    """The latest consistent cut made of the given checkpoints (per process, numbers of
    its events; every process also has its initial state, 0); see the module docstring."""
    return rollback_propagation(trace, checkpoints)[0]


def domino_effect(trace: Trace, checkpoints: Mapping[str, Sequence[int]]) -> bool:
    """Whether the checkpoints roll every process back to its initial state although
    some process saved a later checkpoint."""
    line = recovery_line(trace, checkpoints)  # checks the checkpoints too
    saved = any(k > 0 for marks in checkpoints.values() for k in marks)
    return saved and all(k == 0 for k in line.values())


def forced_checkpoints(
    trace: Trace, checkpoints: Mapping[str, Sequence[int]]
) -> dict[str, tuple[int, ...]]:
    """The checkpoints an index-based communication-induced protocol (Briatico,
    Ciuffoletti and Simoncini 1984) forces on top of the processes' own.

    Every process numbers its checkpoints (its initial state is 0, each checkpoint of
    its own the next number) and puts its current number on every message it sends. A
    message carrying a higher number than its receiver's forces the receiver to take a
    checkpoint with that number just before it delivers the message. Then, for every
    number ``n``, each process's first checkpoint numbered ``n`` or more forms a
    consistent cut, so no rollback goes further back than that: no domino effect.

    Returns, per process, the event counts of its forced checkpoints (those it had not
    taken anyway); :func:`recovery_line` takes them together with the process's own.

    >>> from snapshotlib.course.lesson_01 import small_execution
    >>> trace = small_execution().trace
    >>> forced_checkpoints(trace, {"P1": [2, 3], "P2": [1], "P3": [1]})
    {'P1': (), 'P2': (), 'P3': ()}
    """
    own = checkpoint_sets(trace, checkpoints)
    number = dict.fromkeys(own, 0)  # each process's latest checkpoint's number
    done = dict.fromkeys(own, 0)  # each process's events so far
    forced: dict[str, list[int]] = {p: [] for p in own}
    carried: dict[int, int] = {}  # message -> the number its sender put on it
    sent_in: dict[int, list[int]] = {}  # action -> the application messages it sent
    for m, msg in enumerate(trace.messages):
        if msg.kind == APP:
            sent_in.setdefault(msg.sent_by, []).append(m)
    for i, a in trace.app_actions():
        p = a.process
        if done[p] > 0 and done[p] in own[p]:
            number[p] += 1
        if a.kind == RECEIVE and carried.get(a.message, 0) > number[p]:
            number[p] = carried[a.message]
            if done[p] not in own[p]:  # else its own checkpoint here takes the number
                forced[p].append(done[p])
        # a send, or a receive whose handling sends (a reply): the number as it is now
        for m in sent_in.get(i, ()):
            carried[m] = number[p]
        done[p] += 1
    return {p: tuple(ks) for p, ks in forced.items()}

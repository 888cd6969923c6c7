"""Successors read from a table rather than run: what lets the search skip the simulator
for most of the actions it takes.

An algorithm that declares its actions local (``local_actions``) touches, in each call,
its own process's part of the state, its input channels and the tails of its output
channels; the application's handlers change their own process's state and send on its
channels. So what an action does depends on the acting process's part of the state
alone: its application state, its part of the algorithm's records and recordings, its
program counter, the message it takes, the channels it holds back, and the part of the
algorithm no process owns (:func:`algorithm_parts`). The first time the search takes an
action from such a part it runs it in the simulator and writes down what changed
(:class:`Effect`); every later time, in whatever state the rest of the system is, it
applies the same change to the key's parts without a run. Different states share the
same parts all the time (a marker arriving at a process that has recorded nothing, in
thousands of interleavings of the others' messages), so most actions are looked up.

What a lookup cannot decide is left to a run: an action after which a snapshot is
complete (its verdict reads every channel), and a state whose checks need a run (where
nothing more can happen, for ``completes`` and invariants of one's own).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from ..algorithms.base import SnapshotRecord
from ..algorithms.state import freeze
from ..simulator import Simulator
from .state import Audit, Content, Names, _messages_key, reds


def splittable(sim: Simulator, inputs: Sequence[Sequence[int]]) -> bool:
    """Whether the search may split the state of ``sim``'s algorithm by process: it
    declares its actions local and its state splits
    (:meth:`~snapshotlib.algorithms.base.SnapshotAlgorithm.state_parts`)."""
    algorithm = sim.algorithm
    if not algorithm.local_actions:
        return False
    return algorithm.state_parts(Names(sim, reds(sim)), inputs) is not None


def algorithm_parts(
    sim: Simulator,
    records: list[tuple[str, SnapshotRecord]],
    inputs: Sequence[Sequence[int]],
    procs: Sequence[str],
) -> tuple[tuple[Hashable, ...], Hashable]:
    """The algorithm's state as one part per process and a part of no process.

    A process's part: for each snapshot, whether it initiated it, its recorded state
    (if it recorded), and for each of its input channels the messages recorded there
    and whether the recording is closed; and its part of what the algorithm's
    :meth:`~snapshotlib.algorithms.base.SnapshotAlgorithm.state_parts` says. The rest
    (which snapshots exist, the part of no process) is shared. Together they hold what
    :func:`~.state.algorithm_key` holds, so two states with equal parts are the same."""
    split = sim.algorithm.state_parts(Names(sim, records), inputs)
    assert split is not None, "the search splits only what splittable() allowed"
    fields, shared = split
    parts = []
    for p, ins, own in zip(procs, inputs, fields, strict=True):
        mine: list[Hashable] = []
        for sid, rec in records:
            red = p in rec.red_from
            began = [ch for ch in ins if ch in rec.channels or ch in rec.closed]
            if not red and not began and p not in rec.initiators:
                continue
            chans = tuple(
                (ch, _messages_key(sim, ch, rec.channels[ch], records), ch in rec.closed)
                if ch in rec.channels
                else (ch, None, True)
                for ch in began
            )
            state = freeze(rec.states[p]) if red else None
            mine.append((sid, p in rec.initiators, red, state, chans))
        parts.append((tuple(mine), own))
    return tuple(parts), (tuple(sid for sid, _ in records), shared)


@dataclass(frozen=True)
class Effect:
    """What one action did to the acting process's part of the state (see the module
    docstring), as the parts of a key hold it."""

    part: Hashable
    shared: Hashable
    state: Hashable
    #: the acting process's input channels held back after it
    blocked: frozenset[int]
    paused: bool
    #: per output channel: what the action put on its tail
    sent: tuple[tuple[int, tuple[Content, ...]], ...]
    #: per unfinished snapshot: the red message accepted in a white action (or None),
    #: and white messages accepted by a red receiver, by channel
    audit: tuple[tuple[str, Content | None, tuple[tuple[int, tuple[Content, ...]], ...]], ...]
    #: snapshots the acting process has recorded, and made its part of, after it
    recorded: frozenset[str]
    done: frozenset[str]
    #: whether those two changed in this action (else the state's sets are kept as
    #: they are, which is most actions)
    marks: bool
    #: the conserved amount it moved in or out of the system (0 for a sound system)
    amount: int


def contribution(own: Audit) -> tuple[Any, ...]:
    """One action's own audit (what :func:`~.state.update_audit` makes of it from an
    empty audit) as :attr:`Effect.audit`: per snapshot, the red message it accepted in a
    white action, and the white messages it accepted as a red receiver, by channel."""
    return tuple((sid, orphan, tuple(expected.items())) for sid, (orphan, expected) in own.items())


def apply_audit(audit: Audit, change: tuple[Any, ...]) -> Audit:
    """``audit`` with :attr:`Effect.audit` applied: an orphan already there stays (the
    first is the one the audit keeps), the messages are appended."""
    if not change:
        return audit
    new = dict(audit)
    for sid, orphan, grown in change:
        old_orphan, expected = new.get(sid, (None, {}))
        expected = dict(expected)
        for ch, items in grown:
            expected[ch] = (*expected.get(ch, ()), *items)
        new[sid] = (old_orphan or orphan, expected)
    return new

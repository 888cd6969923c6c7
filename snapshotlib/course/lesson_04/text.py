"""Lesson 04's facts: inversions, legal and illegal swaps, the white-then-red order and a
channel's story, read from a run's colouring.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from ...checks.commutation import count_inversions
from ...colouring import Colouring, colouring
from ...simulator import Simulator
from ...trace import APP, APP_KINDS, NOT_RECEIVED, RECEIVE, Trace

#: the execution the lesson pre-fills as the learner's own (colours: W R R W W R W R)
MY_RUN: dict[str, Any] = {
    "processes": ["P1", "P2", "P3"],
    "app": "tokens",
    "initial": {"P1": 2, "P2": 2, "P3": 2},
    "steps": [
        {"do": "send", "from": "P2", "to": "P3", "label": "a", "payload": 1},
        {"do": "snapshot", "at": "P1", "id": "s1"},
        {"do": "internal", "at": "P1", "label": "b"},
        {"do": "send", "from": "P1", "to": "P2", "label": "c", "payload": 1},
        {"do": "deliver", "from": "P2", "to": "P3", "label": "d"},
        {"do": "internal", "at": "P2", "label": "e"},
        {"do": "deliver", "from": "P1", "to": "P2"},
        {"do": "deliver", "from": "P1", "to": "P2", "label": "f"},
        {"do": "send", "from": "P3", "to": "P1", "label": "g", "payload": 2},
        {"do": "deliver", "from": "P1", "to": "P3"},
        {"do": "deliver", "from": "P3", "to": "P1", "label": "h"},
        {"do": "run"},
    ],
}


#: the lesson's proposal: move F to the front of the worked example, A B I C F G H D E J
PROPOSAL: tuple[tuple[str, str], ...] = (
    ("C", "F"),
    ("B", "I"),
    ("B", "F"),
    ("I", "F"),
    ("A", "F"),
)


class Unanswerable(ValueError):
    """The question cannot be asked of this execution (no snapshot, unknown id)."""


def colouring_of(sim: Simulator, snapshot_id: str | None) -> Colouring:
    ids = sim.snapshot_ids()
    if not ids:
        raise Unanswerable(
            "this execution has no snapshot, so nothing in it is red: start one (the "
            "explorer's Start snapshot button, or a snapshot step) and run it again"
        )
    sid = ids[0] if snapshot_id is None else snapshot_id
    if sid not in ids:
        raise Unanswerable(f"there is no snapshot {sid!r}; the snapshots are {', '.join(ids)}")
    return colouring(sim, sid)


def inversions(sim: Simulator, snapshot_id: str | None = None) -> int:
    """Pairs of the computation's actions in which a red one comes before a white one.

    ``snapshot_id`` defaults to the first snapshot taken.
    """
    reds = [red for _, red in colouring_of(sim, snapshot_id).app_actions()]
    return count_inversions(reds)


def swap_problem(trace: Trace, left: int, right: int) -> str | None:
    """Why the neighbouring actions ``left`` then ``right`` cannot change places.

    ``None`` when they commute: different machines, and ``left`` sends nothing that
    ``right`` accepts.

    >>> from snapshotlib import Network, Simulator, Send
    >>> sim = Simulator(Network(["P", "Q"]))
    >>> sim.step(Send("P", "Q", label="s")); _ = sim.run()
    >>> print(swap_problem(sim.trace, 0, 1))
    receive#1 accepts the message that s sends: a message cannot be accepted before it is sent
    """
    a, b = trace.actions[left], trace.actions[right]
    name = trace.action_name
    if a.process == b.process:
        return (
            f"{name(left)} and {name(right)} are both actions of {a.process}: the actions "
            "of one machine keep their order (each starts from the state the one before left)"
        )
    if b.kind == RECEIVE and trace.messages[b.message].sent_by == left:
        return (
            f"{name(right)} accepts the message that {name(left)} sends: a message cannot be "
            "accepted before it is sent"
        )
    return None


def adjacent_red_white(col: Colouring) -> list[tuple[int, int]]:
    coloured = col.app_actions()
    return [(i, j) for (i, red_i), (j, red_j) in pairwise(coloured) if red_i and not red_j]


def first_legal_swap(sim: Simulator, snapshot_id: str | None = None) -> tuple[str, str] | None:
    """The leftmost red action directly followed by a white one it commutes with.

    Names the two actions as they stand (red, white); ``None`` when there is none (no
    inversion left, or every neighbouring red–white pair fails to commute). It is the
    first swap that :class:`~snapshotlib.widgets.CommutationStepper` makes.
    """
    pair = first_legal_pair(sim, colouring_of(sim, snapshot_id))
    if pair is None:
        return None
    return sim.trace.action_name(pair[0]), sim.trace.action_name(pair[1])


def first_legal_pair(sim: Simulator, col: Colouring) -> tuple[int, int] | None:
    for i, j in adjacent_red_white(col):
        if swap_problem(sim.trace, i, j) is None:
            return i, j
    return None


def app_order(trace: Trace) -> list[int]:
    return [i for i, a in enumerate(trace.actions) if a.kind in APP_KINDS]


def trace_of(execution: Simulator | Trace) -> Trace:
    return execution if isinstance(execution, Trace) else execution.trace


def resolve_actions(trace: Trace, name: Any, allowed: Sequence[int]) -> int:
    """The trace index of the action called ``name``; ValueError saying why not."""
    if isinstance(name, int) and not isinstance(name, bool):
        if not 0 <= name < len(trace.actions):
            raise ValueError(f"there is no action at trace index {name}")
        index = name
    elif isinstance(name, str):
        found = [i for i in range(len(trace.actions)) if trace.action_name(i) == name]
        if not found:
            known = ", ".join(trace.action_name(i) for i in allowed)
            raise ValueError(f"there is no action named {name!r}; the actions are {known}")
        if len(found) > 1:
            raise ValueError(
                f"several actions are named {name!r}; give their trace indices "
                f"({', '.join(map(str, found))}) instead"
            )
        index = found[0]
    else:
        raise ValueError(f"{name!r} is not an action's name (a string) or trace index")
    if index not in allowed:
        raise ValueError(
            f"{trace.action_name(index)} belongs to the snapshot algorithm, not to the "
            "computation: only internal events, sends and receives are reordered"
        )
    return index


def action_pair(trace: Trace, answer: Any, allowed: Sequence[int]) -> tuple[int, int]:
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Sequence) or len(answer) != 2:
        raise ValueError(f"{answer!r} is not a pair: write the two actions' names, e.g. ('C', 'F')")
    return resolve_actions(trace, answer[0], allowed), resolve_actions(trace, answer[1], allowed)


def first_illegal_swap(
    execution: Simulator | Trace, proposal: Sequence[Sequence[Any]]
) -> tuple[int, str] | None:
    """The first swap of ``proposal`` that cannot be made, numbered from 1, and why.

    ``proposal`` lists swaps of neighbours, each a pair of action names (or trace
    indices), made one after the other starting from the recorded order of the
    computation's actions. ``None`` when every swap can be made.

    >>> from snapshotlib import Network, Simulator, Send, Internal
    >>> sim = Simulator(Network(["P", "Q"]))
    >>> sim.step(Internal("Q", "q")); sim.step(Send("P", "Q", label="s")); _ = sim.run()
    >>> first_illegal_swap(sim, [("q", "s"), ("q", "receive#2")])
    (2, 'q and receive#2 are both actions of Q: ...')
    """
    trace = trace_of(execution)
    order = app_order(trace)
    for number, swap in enumerate(proposal, start=1):
        a, b = action_pair(trace, swap, order)
        pa, pb = order.index(a), order.index(b)
        left, right = min(pa, pb), max(pa, pb)
        if right != left + 1:
            between = ", ".join(trace.action_name(i) for i in order[left + 1 : right])
            return number, (
                f"{trace.action_name(a)} and {trace.action_name(b)} are not neighbours at this "
                f"point (between them: {between}); only neighbours change places"
            )
        problem = swap_problem(trace, order[left], order[right])
        if problem is not None:
            return number, problem
        order[left], order[right] = order[right], order[left]
    return None


def coloured_order(sim: Simulator, snapshot_id: str | None = None) -> str:
    """The computation's actions in the order they happened, each with its colour.

    >>> from snapshotlib import Internal, Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P", "Q"]))
    >>> for a in [Internal("Q", "q"), StartSnapshot("P"), Internal("P", "p")]:
    ...     sim.step(a)
    >>> coloured_order(sim)
    'q white · p red'
    """
    col = colouring_of(sim, snapshot_id)
    name = sim.trace.action_name
    return " · ".join(f"{name(i)} {col.action(i)}" for i, _ in col.app_actions())


def channel_story(sim: Simulator, snapshot_id: str | None = None) -> list[str]:
    """One line per channel: what it carried in the order sent, each message's colour.

    Markers appear where they were sent. When a channel delivered in another order
    than it was sent (a channel that is not FIFO), or a red message was accepted in a
    white action, a second line shows the order in which the messages were accepted.
    """
    col = colouring_of(sim, snapshot_id)
    trace = sim.trace
    names = [str(c) for c in sim.network.channels]
    width = max(len(n) for n in names)
    lines = []
    for k, channel in enumerate(names):
        sent = [m for m, msg in enumerate(trace.messages) if msg.channel == k]

        def show(m: int, accepted: bool = False) -> str:
            msg = trace.messages[m]
            if msg.kind != APP:
                return trace.message_name(m)
            text = f"{trace.message_name(m)} {col.message(m)}"
            by = trace.received_by[m]
            if accepted and col.message(m) == "red" and not col.is_red(by):
                text += f" (by white {trace.action_name(by)})"
            return text

        lines.append(f"{channel:<{width}}  sent: " + (" · ".join(map(show, sent)) or "nothing"))
        taken = sorted((m for m in sent if trace.received_by[m] != NOT_RECEIVED), key=_by(trace))
        accepted = [show(m, True) for m in taken]
        if taken != sent[: len(taken)] or accepted != [show(m) for m in taken]:
            lines.append(f"{'':<{width}}  accepted: " + " · ".join(accepted))
    return lines


def _by(trace: Trace) -> Any:
    return lambda m: trace.received_by[m]

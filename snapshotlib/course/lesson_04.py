"""Checks for lesson 04, Dijkstra's proof: inversions, swaps and proposed reorderings.

Every checker takes an execution and the learner's answer and returns a
:class:`~snapshotlib.course.Feedback`, so the same functions serve the lesson, where the
execution may be the learner's own, and graded exercises. An execution is a
:class:`~snapshotlib.Simulator` that has run (its trace and the colouring of one of its
snapshots are read); the swap checks need only the trace, so they also take a
:class:`~snapshotlib.trace.Trace`.

Actions are named as everywhere else in the course: by their label, or ``kind#index``
for an unlabelled one (``send#12``); a whole number is taken as a trace index. Only the
computation's own actions (internal events, sends, receives) are reordered: starting a
snapshot and accepting a marker belong to the snapshot algorithm.

A wrong answer gets a hint that names the slip; the right answer, explained, is folded
under *Show answer*. :data:`MY_RUN` and :data:`PROPOSAL` are the lesson's pre-filled
execution and proposed swaps, and :func:`expected_answers` gives one right answer per
try-it, for the lesson's tests.

>>> from snapshotlib.formats.scenario import parse_scenario, run_scenario
>>> sim = run_scenario(parse_scenario({
...     "processes": ["P", "Q"],
...     "steps": [{"do": "snapshot", "at": "P"},
...               {"do": "internal", "at": "P", "label": "p1"},
...               {"do": "internal", "at": "Q", "label": "q1"},
...               {"do": "run"}]}))
>>> inversions(sim), first_legal_swap(sim)
(1, ('p1', 'q1'))
>>> print(check_inversions(sim, 1))  # doctest: +ELLIPSIS
✓ 1 inversion(s): right. Each legal swap removes exactly one, so 1 swap(s) put every ...
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ..checks.commutation import count_inversions
from ..colouring import Colouring, colouring
from ..trace import APP, APP_KINDS, NOT_RECEIVED, RECEIVE, SEND, Trace
from .feedback import Feedback, is_blank, no_answer_yet

if TYPE_CHECKING:
    from ..simulator import Simulator

__all__ = [
    "MY_RUN",
    "PROPOSAL",
    "channel_story",
    "check_first_swap",
    "check_illegal_swap",
    "check_inversions",
    "coloured_order",
    "expected_answers",
    "first_illegal_swap",
    "first_legal_swap",
    "inversions",
    "swap_problem",
]

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

_RULE = (
    "Two neighbouring actions of different machines commute unless the first sends the "
    "message that the second accepts"
)


class _Unanswerable(ValueError):
    """The question cannot be asked of this execution (no snapshot, unknown id)."""


# ----------------------------------------------------------------------- the facts


def _colouring(sim: Simulator, snapshot_id: str | None) -> Colouring:
    ids = sim.snapshot_ids()
    if not ids:
        raise _Unanswerable(
            "this execution has no snapshot, so nothing in it is red: start one (the "
            "explorer's Start snapshot button, or a snapshot step) and run it again"
        )
    sid = ids[0] if snapshot_id is None else snapshot_id
    if sid not in ids:
        raise _Unanswerable(f"there is no snapshot {sid!r}; the snapshots are {', '.join(ids)}")
    return colouring(sim, sid)


def inversions(sim: Simulator, snapshot_id: str | None = None) -> int:
    """Pairs of the computation's actions in which a red one comes before a white one.

    ``snapshot_id`` defaults to the first snapshot taken.
    """
    reds = [red for _, red in _colouring(sim, snapshot_id).app_actions()]
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


def _adjacent_red_white(col: Colouring) -> list[tuple[int, int]]:
    coloured = col.app_actions()
    return [(i, j) for (i, red_i), (j, red_j) in pairwise(coloured) if red_i and not red_j]


def first_legal_swap(sim: Simulator, snapshot_id: str | None = None) -> tuple[str, str] | None:
    """The leftmost red action directly followed by a white one it commutes with.

    Names the two actions as they stand (red, white); ``None`` when there is none (no
    inversion left, or every neighbouring red–white pair fails to commute). It is the
    first swap that :class:`~snapshotlib.widgets.CommutationStepper` makes.
    """
    pair = _first_legal_pair(sim, _colouring(sim, snapshot_id))
    if pair is None:
        return None
    return sim.trace.action_name(pair[0]), sim.trace.action_name(pair[1])


def _first_legal_pair(sim: Simulator, col: Colouring) -> tuple[int, int] | None:
    for i, j in _adjacent_red_white(col):
        if swap_problem(sim.trace, i, j) is None:
            return i, j
    return None


def _app_order(trace: Trace) -> list[int]:
    return [i for i, a in enumerate(trace.actions) if a.kind in APP_KINDS]


def _trace_of(execution: Simulator | Trace) -> Trace:
    return execution if isinstance(execution, Trace) else execution.trace


def _resolve(trace: Trace, name: Any, allowed: Sequence[int]) -> int:
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


def _pair(trace: Trace, answer: Any, allowed: Sequence[int]) -> tuple[int, int]:
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Sequence) or len(answer) != 2:
        raise ValueError(f"{answer!r} is not a pair: write the two actions' names, e.g. ('C', 'F')")
    return _resolve(trace, answer[0], allowed), _resolve(trace, answer[1], allowed)


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
    trace = _trace_of(execution)
    order = _app_order(trace)
    for number, swap in enumerate(proposal, start=1):
        a, b = _pair(trace, swap, order)
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
    col = _colouring(sim, snapshot_id)
    name = sim.trace.action_name
    return " · ".join(f"{name(i)} {col.action(i)}" for i, _ in col.app_actions())


def channel_story(sim: Simulator, snapshot_id: str | None = None) -> list[str]:
    """One line per channel: what it carried in the order sent, each message's colour.

    Markers appear where they were sent. When a channel delivered in another order
    than it was sent (a channel that is not FIFO), or a red message was accepted in a
    white action, a second line shows the order in which the messages were accepted.
    """
    col = _colouring(sim, snapshot_id)
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


# ------------------------------------------------------------------- the checkers


def check_inversions(sim: Simulator, answer: Any, snapshot_id: str | None = None) -> Feedback:
    """Is ``answer`` the number of inversions of the execution (for ``snapshot_id``)?

    Typical slips get their own hint: counting only neighbouring pairs, counting
    the snapshot algorithm's actions too, or counting actions instead of pairs.

    >>> from snapshotlib import Internal, Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P", "Q"]))
    >>> for a in [StartSnapshot("P"), Internal("P", "p"), Internal("Q", "q"), Internal("Q", "r")]:
    ...     sim.step(a)
    >>> print(check_inversions(sim, 1))  # doctest: +ELLIPSIS
    ✗ 1 inversion(s) is not it. Hint: You seem to have counted only neighbouring ...
    >>> print(check_inversions(sim, 2))  # doctest: +ELLIPSIS
    ✓ 2 inversion(s): right. ...
    """
    what = "the number of inversions"
    try:
        col = _colouring(sim, snapshot_id)
    except _Unanswerable as e:
        return Feedback(False, f"{what}: cannot be asked yet.", str(e))
    if is_blank(answer):
        return no_answer_yet(what, "Write a whole number.")
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, f"{what}: {answer!r} is not a whole number.", "Write e.g. 4.")
    coloured = col.app_actions()
    reds = [r for _, r in coloured]
    right = count_inversions(reds)
    reveal = _count_explained(sim, col, right)
    if answer == right:
        return Feedback(
            True,
            f"{right} inversion(s): right. Each legal swap removes exactly one, so {right} "
            "swap(s) put every white action before every red one.",
        )
    every = [col.is_red(i) for i in range(len(sim.trace.actions))]
    slips = [
        (
            sum(1 for a, b in pairwise(reds) if a and not b),
            "You seem to have counted only neighbouring red–white pairs; an inversion is "
            "any pair (red earlier, white later), however far apart.",
        ),
        (
            count_inversions(every),
            "You seem to have counted the snapshot algorithm's actions (starting the "
            "snapshot, accepting markers) too; only the computation's internal events, "
            "sends and receives count.",
        ),
        (
            sum(1 for k, r in enumerate(reds) if r and not all(reds[k:])),
            "You seem to have counted red actions that have a white one after them; count "
            "pairs instead: a red action with three white ones after it makes three.",
        ),
        (
            sum(1 for k, r in enumerate(reds) if not r and any(reds[:k])),
            "You seem to have counted white actions that have a red one before them; count "
            "pairs instead: a white action with two red ones before it makes two.",
        ),
        (
            count_inversions([not r for r in reds]),
            "You seem to have counted the pairs already in order (white before red); an "
            "inversion is a red action before a white one.",
        ),
    ]
    for value, hint in slips:
        if answer == value != right:
            return Feedback(False, f"{answer} inversion(s) is not it.", hint, reveal)
    return Feedback(
        False,
        f"{answer} inversion(s) is not it.",
        "For each red action of the computation, count the white actions anywhere after "
        "it, and add up; a red action with three white ones after it makes three.",
        reveal,
    )


def _count_explained(sim: Simulator, col: Colouring, right: int) -> str:
    """The count of inversions, red action by red action."""
    name = sim.trace.action_name
    coloured = col.app_actions()
    parts = []
    for k, (i, red) in enumerate(coloured):
        if red:
            whites = [name(j) for j, r in coloured[k + 1 :] if not r]
            parts.append(
                f"{name(i)}: {len(whites)}" + (f" ({', '.join(whites)})" if whites else "")
            )
    if not parts:
        return f"{right}: no action of the computation is red."
    return f"{right}. The white actions after each red one: {'; '.join(parts)}. Together {right}."


def check_first_swap(sim: Simulator, answer: Any, snapshot_id: str | None = None) -> Feedback:
    """Is ``answer`` (a pair of action names) the first legal swap of the execution?

    The first legal swap is the leftmost red action directly followed by a white
    action it commutes with (:func:`first_legal_swap`); the two may be named in either
    order. ``()`` answers "no swap is needed".

    >>> from snapshotlib import Internal, Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P", "Q"]))
    >>> for a in [StartSnapshot("P"), Internal("P", "p"), Internal("Q", "q"), Internal("Q", "r")]:
    ...     sim.step(a)
    >>> print(check_first_swap(sim, ("p", "q")))  # doctest: +ELLIPSIS
    ✓ (p, q): right. p is red, q is white, ...
    >>> print(check_first_swap(sim, ("p", "r")))  # doctest: +ELLIPSIS
    ✗ p and r are not neighbours (between them: q). Hint: Only neighbours change places...
    """
    what = "the first legal swap"
    try:
        col = _colouring(sim, snapshot_id)
    except _Unanswerable as e:
        return Feedback(False, f"{what}: cannot be asked yet.", str(e))
    trace = sim.trace
    expected = first_legal_swap(sim, snapshot_id)
    if is_blank(answer):
        return no_answer_yet(what, "Write the two actions' names, e.g. ('C', 'F').")
    if expected is None:
        reveal = f"(): there is none: {_why_none(col)}"
    else:
        pair = _first_legal_pair(sim, col)
        assert pair is not None
        left, right = pair
        reveal = (
            f"{expected}: reading from the left, {expected[0]} is the first red action "
            f"directly followed by a white one, {expected[1]}, that it can change places "
            f"with ({_why_legal(trace, left, right)})."
        )
    order = _app_order(trace)
    if isinstance(answer, Sequence) and not isinstance(answer, str) and len(answer) == 0:
        if expected is None:
            return Feedback(True, f"{what}: right, there is none: {_why_none(col)}")
        return Feedback(
            False,
            f"{what}: there is one.",
            "Look for a red action directly followed by a white one.",
            reveal,
        )
    try:
        a, b = _pair(trace, answer, order)
    except ValueError as e:
        return Feedback(
            False, f"{what}: {e}.", "Name two neighbouring actions, red then white.", reveal
        )
    na, nb = trace.action_name(a), trace.action_name(b)
    pa, pb = order.index(a), order.index(b)
    if pa > pb:
        a, b, na, nb, pa, pb = b, a, nb, na, pb, pa
    if pb != pa + 1:
        between = ", ".join(trace.action_name(i) for i in order[pa + 1 : pb])
        return Feedback(
            False,
            f"{na} and {nb} are not neighbours (between them: {between}).",
            "Only neighbours change places: look at actions that stand side by side.",
            reveal,
        )
    red_a, red_b = col.is_red(a), col.is_red(b)
    if not red_a or red_b:
        colours = f"{na} is {col.action(a)} and {nb} is {col.action(b)}"
        why = (
            "they are already in the final order, white before red; exchanging them would "
            "add an inversion."
            if not red_a and red_b
            else "exchanging two actions of the same colour removes no inversion."
        )
        return Feedback(
            False,
            f"{colours}: {why}",
            "A useful swap has a red action first, a white one next.",
            reveal,
        )
    problem = swap_problem(trace, a, b)
    if problem is not None:
        return Feedback(False, f"({na}, {nb}) cannot be swapped: {problem}.", f"{_RULE}.", reveal)
    if expected is not None and (na, nb) != expected:
        return Feedback(
            False,
            f"({na}, {nb}) is a legal swap, but not the first.",
            "There is a red action directly followed by a white one further left.",
            reveal,
        )
    left = inversions(sim, snapshot_id) - 1
    return Feedback(
        True,
        f"({na}, {nb}): right. {na} is red, {nb} is white, they stand side by side, belong "
        f"to different machines and {na} sends nothing that {nb} accepts; after the swap "
        f"{left} inversion(s) are left.",
    )


def _why_none(col: Colouring) -> str:
    if not _adjacent_red_white(col):
        return "every white action already precedes every red one."
    return "every red action directly followed by a white one sends it the message it accepts."


def check_illegal_swap(
    execution: Simulator | Trace, proposal: Sequence[Sequence[Any]], answer: Any
) -> Feedback:
    """Is ``answer`` the first swap in ``proposal`` that cannot be made?

    ``proposal`` is as in :func:`first_illegal_swap`. ``answer`` is the swap's number
    (from 1) or its pair of names; ``0`` answers "every swap can be made".

    >>> from snapshotlib import Internal, Network, Send, Simulator
    >>> sim = Simulator(Network(["P", "Q"]))
    >>> sim.step(Send("P", "Q", label="s")); sim.step(Internal("P", "p"))
    >>> _ = sim.run()  # Q accepts s in receive#2
    >>> proposal = [("p", "receive#2"), ("s", "receive#2")]
    >>> print(check_illegal_swap(sim, proposal, 1))  # doctest: +ELLIPSIS
    ✗ swap 1 (p, receive#2) can be made: ... Hint: ...
    >>> print(check_illegal_swap(sim, proposal, 2))  # doctest: +ELLIPSIS
    ✓ swap 2 (s, receive#2): right, it cannot be made: receive#2 accepts the message that s sends...
    """
    what = "the illegal swap"
    trace = _trace_of(execution)
    verdict = first_illegal_swap(trace, proposal)
    n = len(proposal)
    if is_blank(answer):
        return no_answer_yet(what, f"Write the number of the swap, from 1 to {n}.")
    if verdict is None:
        reveal = "0: every proposed swap can be made."
    else:
        k = verdict[0]
        named = "(" + ", ".join(str(x) for x in proposal[k - 1]) + ")"
        reveal = f"{k}: swap {k} {named} cannot be made: {verdict[1]}."
    number: int | None = None
    if isinstance(answer, int) and not isinstance(answer, bool):
        number = answer
    elif isinstance(answer, Sequence) and not isinstance(answer, str) and len(answer) == 2:
        want = {str(x) for x in answer}
        number = next((k for k, s in enumerate(proposal, 1) if {str(x) for x in s} == want), None)
        if number is None:
            return Feedback(
                False,
                f"{what}: {tuple(answer)!r} is not one of the proposed swaps.",
                f"Answer with the number of a swap, from 1 to {n}.",
                reveal,
            )
    else:
        return Feedback(
            False, f"{what}: {answer!r} is not a swap's number.", f"Write a number from 1 to {n}."
        )
    if number == 0:
        if verdict is None:
            return Feedback(True, f"{what}: right, none; every proposed swap can be made.")
        return Feedback(False, f"{what}: one of them cannot be made.", f"{_RULE}.", reveal)
    if not 1 <= number <= n:
        return Feedback(
            False,
            f"{what}: there is no swap {number}.",
            f"The swaps are numbered 1 to {n}.",
            reveal,
        )
    first = verdict[0] if verdict is not None else n + 1
    shown = "(" + ", ".join(str(x) for x in proposal[number - 1]) + ")"
    if number == first and verdict is not None:
        return Feedback(True, f"swap {number} {shown}: right, it cannot be made: {verdict[1]}.")
    if number > first:
        return Feedback(
            False,
            f"swap {number} {shown} comes after a swap that already cannot be made.",
            "Check the swaps in order, each on the arrangement the ones before it left.",
            reveal,
        )
    order = _app_order(trace)
    a, b = sorted((_resolve(trace, x, order) for x in proposal[number - 1]), key=order.index)
    return Feedback(
        False,
        f"swap {number} {shown} can be made: {_why_legal(trace, a, b)}.",
        f"{_RULE}; redo the swaps one by one.",
        reveal,
    )


def _why_legal(trace: Trace, left: int, right: int) -> str:
    """Why the neighbours ``left`` then ``right`` (which commute) may change places."""
    name = trace.action_name
    a, b = trace.actions[left], trace.actions[right]
    why = f"{name(left)} ({a.process}) and {name(right)} ({b.process}) are different machines"
    if a.kind == SEND and b.kind == RECEIVE:
        sender = name(trace.messages[b.message].sent_by)
        return (
            f"{why}, and the message {name(right)} accepts was sent at {sender}, "
            f"not at {name(left)}"
        )
    return f"{why}, and {name(left)} sends nothing that {name(right)} accepts"


def expected_answers() -> dict[str, Any]:
    """One right answer for each try-it of the lesson, by the name of its answer variable:
    on :data:`MY_RUN` as pre-filled, and on the worked example with :data:`PROPOSAL`.

    >>> expected_answers()
    {'my_inversions': 7, 'my_first_swap': ('c', 'd'), 'illegal': 4}
    """
    from ..formats.scenario import parse_scenario, run_scenario
    from .lesson_03 import worked_example

    mine = run_scenario(parse_scenario(MY_RUN, source="my_run"))
    verdict = first_illegal_swap(worked_example(), PROPOSAL)
    return {
        "my_inversions": inversions(mine),
        "my_first_swap": first_legal_swap(mine),
        "illegal": verdict[0] if verdict is not None else 0,
    }

"""Lesson 04's try-it checkers: each takes a run (the lesson's, or the learner's own) and
the learner's answer, and returns a Feedback; ``expected_answers`` gives one right
answer to each.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from ...checks.commutation import count_inversions
from ...colouring import Colouring
from ...formats.scenario import parse_scenario, run_scenario
from ...simulator import Simulator
from ...trace import RECEIVE, SEND, Trace
from ..feedback import Feedback, is_blank, no_answer_yet
from ..lesson_03 import worked_example
from .text import (
    MY_RUN,
    PROPOSAL,
    Unanswerable,
    action_pair,
    adjacent_red_white,
    app_order,
    colouring_of,
    first_illegal_swap,
    first_legal_pair,
    first_legal_swap,
    inversions,
    resolve_actions,
    swap_problem,
    trace_of,
)

_RULE = (
    "Two neighbouring actions of different machines commute unless the first sends the "
    "message that the second accepts"
)


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
        col = colouring_of(sim, snapshot_id)
    except Unanswerable as e:
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
        col = colouring_of(sim, snapshot_id)
    except Unanswerable as e:
        return Feedback(False, f"{what}: cannot be asked yet.", str(e))
    trace = sim.trace
    expected = first_legal_swap(sim, snapshot_id)
    if is_blank(answer):
        return no_answer_yet(what, "Write the two actions' names, e.g. ('C', 'F').")
    if expected is None:
        reveal = f"(): there is none: {_why_none(col)}"
    else:
        pair = first_legal_pair(sim, col)
        assert pair is not None
        left, right = pair
        reveal = (
            f"{expected}: reading from the left, {expected[0]} is the first red action "
            f"directly followed by a white one, {expected[1]}, that it can change places "
            f"with ({_why_legal(trace, left, right)})."
        )
    order = app_order(trace)
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
        a, b = action_pair(trace, answer, order)
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
    if not adjacent_red_white(col):
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
    trace = trace_of(execution)
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
    order = app_order(trace)
    a, b = sorted((resolve_actions(trace, x, order) for x in proposal[number - 1]), key=order.index)
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
    mine = run_scenario(parse_scenario(MY_RUN, source="my_run"))
    verdict = first_illegal_swap(worked_example(), PROPOSAL)
    return {
        "my_inversions": inversions(mine),
        "my_first_swap": first_legal_swap(mine),
        "illegal": verdict[0] if verdict is not None else 0,
    }

"""Lesson 01 try-its on order: the orphan message of a clock snapshot, happens-before
between events, the slowest clock rate that stays consistent, Lamport times by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

from ...checks.cut import check_snapshot
from ...formats.scenario import Scenario
from ...simulator import Simulator
from ...trace import APP
from ..feedback import Feedback, is_blank, no_answer_yet
from .text import (
    LAMPORT_EVENTS,
    RELATIONS,
    causal_chain,
    consistent_at,
    event_index,
    lamport_time,
    relation,
    rerun_with_clocks,
    slowest_rate,
    small_execution,
)


def check_orphan_message(sim: Simulator, answer: Any, snapshot_id: str = "clock") -> Feedback:
    """Which message is received in the recorded state but never sent in it?

    ``answer`` is the message's name (a message is named after its send event).

    >>> from snapshotlib.formats.scenario import parse_scenario, run_scenario

    >>> sc = parse_scenario({"processes": ["P1", "P2"], "algorithm": {"name": "clock",
    ...     "at": 1, "rate": {"P2": 0.4}}, "steps": [
    ...     {"do": "internal", "at": "P1", "label": "x"},
    ...     {"do": "send", "from": "P1", "to": "P2", "label": "m"},
    ...     {"do": "deliver", "from": "P1", "to": "P2", "label": "got-m"}]})
    >>> print(check_orphan_message(run_scenario(sc), "m"))  # doctest: +ELLIPSIS
    ✓ Right: message m is received in P2's recorded state ...
    """
    trace = sim.trace
    result = check_snapshot(sim, snapshot_id)
    if result.ok or result.witness is None:
        return Feedback(False, "This snapshot has no such message: it is consistent.")
    m = result.witness
    name = trace.message_name(m)
    send, receive = trace.messages[m].sent_by, trace.received_by[m]
    sender, receiver = trace.actions[send].process, trace.actions[receive].process
    if is_blank(answer):
        return no_answer_yet(
            hint="Compare the recorded events of the two processes: which receive event is "
            "recorded whose send is not?"
        )
    why = (
        f"message {name} is received in {receiver}'s recorded state (event "
        f"{trace.action_name(receive)}) but its send, event {trace.action_name(send)} "
        f"of {sender}, came after {sender} recorded. An effect without its cause."
    )
    if answer == name:
        return Feedback(True, f"Right: {why}")
    reveal = f"{name}: {why}"
    if answer == trace.action_name(receive):
        return Feedback(
            False,
            f"{answer} is the event where {receiver} receives a message, not a message.",
            "A message is named after the event that sends it.",
            reveal,
        )
    messages = {trace.message_name(k) for k, rec in enumerate(trace.messages) if rec.kind == APP}
    if answer not in messages:
        return Feedback(
            False,
            f"{answer!r} is not a message of this run; its messages are "
            f"{', '.join(sorted(messages))}.",
            "Look for a receive event among the recorded events.",
            reveal,
        )
    return Feedback(
        False,
        f"Message {answer} does not break the cut.",
        "Which recorded receive event has its send outside the recorded state?",
        reveal,
    )


def check_slowest_rate(
    scenario: Scenario, answer: Any, process: str = "P2", snapshot_id: str = "clock"
) -> Feedback:
    """Is ``answer`` the slowest rate of ``process``'s clock that gives a consistent record?

    Answers are read to the hundredth: a rate that works while one a hundredth slower
    does not is right.

    >>> from snapshotlib.formats.scenario import load_scenario

    >>> from snapshotlib.course.lesson_01 import SCENARIOS

    >>> drift = load_scenario(SCENARIOS / "clock-drift.json")
    >>> print(check_slowest_rate(drift, 2))  # doctest: +ELLIPSIS
    ✗ With rate 2 the record is consistent, but a slower clock works too. Hint: ...
    >>> print(check_slowest_rate(drift, 0.75))  # doctest: +ELLIPSIS
    ✓ Right, 0.75: P2's clock must read the agreed time by step 4, when message token lands...
    """
    what = f"the slowest rate of {process}'s clock"
    if is_blank(answer):
        return no_answer_yet(
            what,
            "Change the rate in the cell above and run it until the record is consistent; "
            "then look for the slowest rate that still works.",
        )
    if isinstance(answer, bool) or not isinstance(answer, (int, float)) or answer <= 0:
        return Feedback(False, f"{what}: {answer!r} is not a rate.", "Write a number, e.g. 0.9.")
    best = slowest_rate(scenario, process, snapshot_id)
    reveal = f"{best:g}."
    slower = rerun_with_clocks(scenario, rate={process: max(best - 0.01, 0.001)})
    witness = check_snapshot(slower, snapshot_id).witness
    if witness is not None:
        trace = slower.trace
        reveal = (
            f"{best:g}: {process}'s clock must read the agreed time by step "
            f"{trace.received_by[witness]}, when message {trace.message_name(witness)} "
            f"lands; any slower and {process} records after receiving it."
        )
    works = consistent_at(scenario, process, float(answer), snapshot_id)
    if not works:
        return Feedback(
            False,
            f"With rate {answer:g} the record is still inconsistent.",
            f"{process}'s clock must reach the agreed time before the message that breaks "
            "the record arrives: try faster clocks.",
            reveal,
        )
    if consistent_at(scenario, process, float(answer) - 0.01, snapshot_id):
        return Feedback(
            False,
            f"With rate {answer:g} the record is consistent, but a slower clock works too.",
            "Try slower rates, a hundredth at a time near the edge.",
            reveal,
        )
    return Feedback(True, f"Right, {reveal}")


def check_relations(
    answers: Mapping[tuple[str, str], Any], sim: Simulator | None = None
) -> Feedback:
    """Check answers ``{(x, y): "before" | "after" | "concurrent"}`` about the small
    execution (``"before"``: ``x`` happens before ``y``).

    >>> print(check_relations({("c1", "a4"): "before"}))  # doctest: +ELLIPSIS
    ✓ All 1 right. c1 happens before a4: c1 → c2 → a3 → a4.
    """
    sim = sim or small_execution()
    if not answers:
        return no_answer_yet(hint="Give a dict {(x, y): relation}.")
    right = 0
    notes = []
    wrong: list[tuple[str, str, Any, str]] = []
    for (x, y), answer in answers.items():
        try:
            truth = relation(sim, x, y)
        except ValueError as e:
            return Feedback(False, str(e))
        notes.append(_explain(sim, x, y, truth))
        if answer == truth:
            right += 1
        else:
            wrong.append((x, y, answer, truth))
    if not wrong:
        return Feedback(True, f"All {right} right. " + " ".join(notes))
    total = len(answers)
    how = f"Answer each pair with one of {', '.join(map(repr, RELATIONS))}."
    if all(is_blank(a) for a in answers.values()):
        return no_answer_yet(hint=how)
    tried = [w for w in wrong if not is_blank(w[2])]
    if not tried:
        x, y = wrong[0][:2]
        return Feedback(False, f"{right} of {total} right; ({x}, {y}) has no answer yet.", how)
    x, y, answer, truth = tried[0]
    reveal = "\n".join(
        f"({a}, {b}): {relation(sim, a, b)}. {note}"
        for (a, b), note in zip(answers, notes, strict=True)
    )
    if answer not in RELATIONS:
        return Feedback(
            False,
            f"({x}, {y}): {answer!r} is not one of {', '.join(map(repr, RELATIONS))}.",
        )
    message = f"{right} of {total} right; ({x}, {y}) is not {answer!r}."
    if truth == "concurrent":
        hint = (
            f"Can you walk from {x} to {y}, or from {y} to {x}, moving only right along a "
            "process line and along message arrows? Coming first in time is not enough."
        )
    elif answer == "concurrent":
        hint = (
            "Look for a walk that changes process: along a line, across a message arrow, "
            "along the next line, and so on. It may pass through the third process."
        )
    else:
        hint = (
            "Check the direction of your walk: it may only go rightwards along a process "
            "line, and from a send to its receive along an arrow."
        )
    return Feedback(False, message, hint, reveal)


def _explain(sim: Simulator, x: str, y: str, truth: str) -> str:
    if truth == "concurrent":
        return f"{x} and {y} are concurrent: no chain of events leads from either to the other."
    first, second = (x, y) if truth == "before" else (y, x)
    chain = causal_chain(sim, first, second) or [first, second]
    return f"{first} happens before {second}: {' → '.join(chain)}."


def check_lamport_times(
    answers: Any, sim: Simulator | None = None, events: Sequence[str] = LAMPORT_EVENTS
) -> Feedback:
    """Check Lamport times worked out by hand, ``{event: time}``, on the small execution:
    those of ``events``, and of any other event the answer gives. A time may be written
    as any whole number (``3`` or ``3.0``).

    >>> print(check_lamport_times({"b2": 3, "c3": 5}))  # doctest: +ELLIPSIS
    ✓ Both right. L(b2) = max(L(b1), L(a2)) + 1 = max(1, 2) + 1 = 3 (b2 receives a2); ...
    >>> print(check_lamport_times({"b2": 2, "c3": 5}))  # doctest: +ELLIPSIS
    ✗ b2: 2 is its place on P2 (its 2nd event), not its Lamport time. Hint: ...
    """
    sim = sim or small_execution()
    how = (
        "An event's time is one more than the larger of the time of the event before it "
        "on its process and, for a receive, the time at which its message was sent."
    )
    if not isinstance(answers, Mapping) or not answers:
        if is_blank(answers) or isinstance(answers, Mapping):
            return no_answer_yet(hint='Give a dict {event: time}, e.g. {"b2": 1}. ' + how)
        return Feedback(
            False, f"{answers!r} is not a dict of event names to times.", 'E.g. {"b2": 1}.'
        )
    asked = list(dict.fromkeys([*events, *answers]))
    try:
        truths = {name: lamport_time(sim, name) for name in asked}
    except (ValueError, TypeError) as e:
        return Feedback(False, str(e))
    if all(is_blank(a) for a in answers.values()):
        return no_answer_yet(hint=how)
    reveal = "\n".join(why for _, why in truths.values())
    notes = "; ".join(why for _, why in truths.values())
    for name in asked:
        answer: Any = answers.get(name)
        time, _ = truths[name]
        if is_blank(answer):
            return Feedback(False, f"{name} has no answer yet.", how)
        if isinstance(answer, tuple | list):
            return Feedback(
                False,
                f"{name}: {answer!r} looks like a vector clock; a Lamport time is one number.",
                how,
                reveal,
            )
        whole = isinstance(answer, Real) and not isinstance(answer, bool)
        if not whole or not float(answer).is_integer():
            return Feedback(False, f"{name}: {answer!r} is not a whole number.", how, reveal)
        answer = int(answer)
        if answer == time:
            continue
        trace = sim.trace
        i = event_index(sim, name)
        place = trace.process_actions(trace.actions[i].process).index(i) + 1
        if answer == place and place != time:
            message = (
                f"{name}: {answer} is its place on {trace.actions[i].process} (its "
                f"{_ordinal(place)} event), not its Lamport time."
            )
            hint = "A receive also counts what the sender knew when it sent. " + how
        elif answer == time - 1:
            message = f"{name}: {answer} is one short."
            hint = "Take the larger of the two times, then add one for the event itself."
        else:
            message = f"{name}: {answer} is not its Lamport time."
            hint = how
        return Feedback(False, message, hint, reveal)
    word = "Both" if len(asked) == 2 else f"All {len(asked)}"
    return Feedback(True, f"{word} right. {notes}.")


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th ... 11th, 12th, 13th ... 21st."""
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"

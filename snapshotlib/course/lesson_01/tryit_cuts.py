"""Lesson 01 try-its on cuts: an inconsistent frontier and the smallest consistent cut
holding an event; ``expected_answers`` gives one right answer to every try-it of the
lesson.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...checks.causality import vector_clocks
from ...checks.cut import check_frontier, check_snapshot, describe_message
from ...formats.scenario import load_scenario, run_scenario
from ...simulator import Simulator
from ...trace import APP
from ..feedback import Feedback, is_blank, no_answer_yet
from .text import (
    CONSISTENT,
    LAMPORT_EVENTS,
    RELATION_PAIRS,
    SCENARIOS,
    event_index,
    lamport_time,
    offending_messages,
    relation,
    slowest_rate,
    small_execution,
)


def _read_frontier(sim: Simulator, frontier: Any) -> dict[str, int] | Feedback:
    """The frontier as a dict, or the feedback that explains what is wrong with it."""
    procs = sim.network.processes
    example = ", ".join(f'"{p}": 1' for p in procs)
    if is_blank(frontier):
        return no_answer_yet(
            hint=f"Give a frontier like {{{example}}}: how many events of each process are "
            "inside the cut (checker.frontier gives the one set on the sliders)."
        )
    if not isinstance(frontier, Mapping):
        return Feedback(False, f"A frontier is a dict like {{{example}}}, not {frontier!r}.")
    unknown = [p for p in frontier if p not in procs]
    if unknown:
        return Feedback(
            False, f"{', '.join(map(str, unknown))}: not a process; they are {', '.join(procs)}."
        )
    missing = [p for p in procs if p not in frontier]
    if missing:
        return Feedback(False, f"Say how many events of {', '.join(missing)} are inside too.")
    out = {}
    for p in procs:
        n = frontier[p]
        events = len(sim.trace.process_actions(p))
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= events:
            return Feedback(False, f"{p}'s frontier must be a whole number from 0 to {events}.")
        out[p] = n
    return out


def check_inconsistent_frontier(
    frontier: Any, message: str | None = None, sim: Simulator | None = None
) -> Feedback:
    """Is ``frontier`` (events per process inside the cut) an inconsistent cut of the
    small execution, made so by ``message`` (when given)?

    >>> print(check_inconsistent_frontier({"P1": 4, "P2": 4, "P3": 3}))  # doctest: +ELLIPSIS
    ✗ This cut is consistent: ... Hint: ...
    >>> print(check_inconsistent_frontier({"P1": 1, "P2": 2, "P3": 0}, "c2"))  # doctest: +ELLIPSIS
    ✗ Inconsistent, but because of a2, not c2. Hint: Find c2's arrow in the diagram: ...
    """
    sim = sim or small_execution()
    read = _read_frontier(sim, frontier)
    if isinstance(read, Feedback):
        return read
    trace = sim.trace
    bad = offending_messages(sim, read)
    if message is not None:
        m = _message_named(sim, message)
        if message in bad:
            return Feedback(
                True,
                f"Inconsistent, as asked: {describe_message(trace, m)} is received inside "
                "the cut but sent outside it.",
            )
        if trace.received_by[m] < 0:
            return Feedback(False, f"{message} is never received, so it cannot break a cut.")
        hint = (
            f"Find {message}'s arrow in the diagram: its receive must be inside the cut and "
            "its send outside. Move the receiver's frontier past the receive, and the "
            "sender's back before the send."
        )
        reveal = _breaking_cut(sim, m)
        if bad:
            return Feedback(
                False,
                f"Inconsistent, but because of {', '.join(bad)}, not {message}.",
                hint,
                reveal,
            )
        return Feedback(False, CONSISTENT, hint, reveal)
    if bad:
        result = check_frontier(trace, read)
        return Feedback(True, f"Inconsistent, as asked: {result.reason}.")
    first = next(
        k for k, msg in enumerate(trace.messages) if msg.kind == APP and trace.received_by[k] >= 0
    )
    return Feedback(
        False,
        CONSISTENT,
        "Put a receive event inside the cut and leave its send outside: move the "
        "receiver's frontier past the receive and the sender's back before the send.",
        _breaking_cut(sim, first),
    )


def _message_named(sim: Simulator, name: str) -> int:
    trace = sim.trace
    named = [k for k in range(len(trace.messages)) if trace.message_name(k) == name]
    if len(named) != 1 or trace.messages[named[0]].kind != APP:
        raise ValueError(f"no message called {name!r} in this run")
    return named[0]


def _breaking_limits(sim: Simulator, m: int) -> tuple[str, int, str, int]:
    """The sender and the most of its events a cut broken by ``m`` may hold, the receiver
    and the fewest of its events it must hold."""
    trace = sim.trace
    send, receive = trace.messages[m].sent_by, trace.received_by[m]
    sender, receiver = trace.actions[send].process, trace.actions[receive].process
    at_most = trace.process_actions(sender).index(send)
    at_least = trace.process_actions(receiver).index(receive) + 1
    return sender, at_most, receiver, at_least


def _breaking_frontier(sim: Simulator, m: int) -> dict[str, int]:
    """The smallest frontier that message ``m`` makes inconsistent."""
    sender, at_most, receiver, at_least = _breaking_limits(sim, m)
    return {
        p: at_least if p == receiver else at_most if p == sender else 0
        for p in sim.network.processes
    }


def _breaking_cut(sim: Simulator, m: int) -> str:
    """Which frontiers break the cut with message ``m``, in words, with one example."""
    trace = sim.trace
    send, receive = trace.messages[m].sent_by, trace.received_by[m]
    sender, at_most, receiver, at_least = _breaking_limits(sim, m)
    example = _breaking_frontier(sim, m)
    return (
        f"Any frontier with {receiver} at least {at_least} (its receive "
        f"{trace.action_name(receive)} inside) and {sender} at most {at_most} (the send "
        f"{trace.action_name(send)} outside), e.g. {example}."
    )


def check_smallest_cut(event: str, frontier: Any, sim: Simulator | None = None) -> Feedback:
    """Is ``frontier`` the smallest consistent cut of the small execution that contains
    ``event``? (It is the event's causal past: itself and every event before it.)

    >>> print(check_smallest_cut("a4", {"P1": 4, "P2": 0, "P3": 2}))  # doctest: +ELLIPSIS
    ✓ Right: ...
    """
    sim = sim or small_execution()
    read = _read_frontier(sim, frontier)
    if isinstance(read, Feedback):
        return read
    trace = sim.trace
    index = event_index(sim, event)
    owner = trace.actions[index].process
    position = trace.process_actions(owner).index(index) + 1
    vc = vector_clocks(trace, sim.network.processes)[index]
    assert vc is not None
    smallest = dict(zip(sim.network.processes, vc, strict=True))
    reveal = (
        f"{smallest}: {event} and exactly the events that happen before it, which is what "
        f"{event}'s vector clock {vc} counts."
    )
    if read[owner] < position:
        return Feedback(
            False,
            f"{event} is not inside this cut: {owner}'s frontier must be at least {position}.",
            f"{event} is event number {position} of {owner}.",
            reveal,
        )
    result = check_frontier(trace, read)
    if not result.ok:
        assert result.witness is not None
        send = trace.messages[result.witness].sent_by
        sender = trace.actions[send].process
        need = trace.process_actions(sender).index(send) + 1
        return Feedback(
            False,
            f"Inconsistent: {result.reason}.",
            f"Bring the send inside as well: {sender}'s frontier must be at least {need}.",
            reveal,
        )
    extra = [p for p in sim.network.processes if read[p] > smallest[p]]
    if extra:
        return Feedback(
            False,
            f"Consistent and it contains {event}, but it is not the smallest: it can shrink "
            "and stay consistent.",
            f"Keep only {event} and the events that happen before it: which events of "
            f"{' and '.join(extra)} does {event} not depend on?",
            reveal,
        )
    return Feedback(
        True,
        f"Right: {read} holds {event} and exactly the events that happen before it. "
        f"Compare {event}'s vector clock, {vc}.",
    )


def expected_answers() -> dict[str, Any]:
    """One right answer for each try-it of the lesson, by the name of its answer variable.

    The lesson's tests check each against its checker and make sure no output of the
    stored notebook gives it away before the learner has answered.

    >>> expected_answers()["smallest"]
    {'P1': 2, 'P2': 3, 'P3': 3}
    """
    drift_scenario = load_scenario(SCENARIOS / "clock-drift.json")
    drift = run_scenario(drift_scenario)
    result = check_snapshot(drift, "clock")
    assert result.witness is not None
    sim = small_execution()
    vc = vector_clocks(sim.trace, sim.network.processes)[event_index(sim, "c3")]
    assert vc is not None
    return {
        "orphan": drift.trace.message_name(result.witness),
        "slowest_rate": slowest_rate(drift_scenario),
        "relations": {pair: relation(sim, *pair) for pair in RELATION_PAIRS},
        "broken": _breaking_frontier(sim, _message_named(sim, "c2")),
        "smallest": dict(zip(sim.network.processes, vc, strict=True)),
        "lamport": {name: lamport_time(sim, name)[0] for name in LAMPORT_EVENTS},
    }

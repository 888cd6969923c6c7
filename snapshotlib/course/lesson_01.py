"""Lesson 01, global state without a global clock: the runs it uses and its checks.

The lesson shows a snapshot taken by the clock ("everyone record at 12:00") that records
a message as received although it was never sent, then happens-before on a small
execution of three processes, consistent and inconsistent cuts of it, and vector
clocks. The functions here build that execution, print what the notebook shows as
text, and check the learner's answers (each returns a
:class:`~snapshotlib.course.Feedback`: a hint when wrong, the answer only folded).
:func:`expected_answers` gives one right answer per try-it, for the lesson's tests.

>>> sim = small_execution()
>>> relation(sim, "a1", "c3"), relation(sim, "a3", "b3")
('before', 'concurrent')
>>> print(check_inconsistent_frontier({"P1": 1, "P2": 2, "P3": 0}))  # doctest: +ELLIPSIS
✓ Inconsistent, as asked: message a2 (sent by P1 at a2, received by P2 at b2) is ...
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from itertools import pairwise
from typing import Any

from ..algorithms.clock import ClockSnapshot
from ..checks.causality import concurrent, happens_before, vector_clocks
from ..checks.cut import check_frontier, check_snapshot, cut_limits, describe_message
from ..formats.scenario import EXAMPLES, Scenario, load_scenario, parse_scenario, run_scenario
from ..simulator import Simulator
from ..trace import APP, RECEIVE, SEND
from .feedback import Feedback, is_blank, no_answer_yet

__all__ = [
    "RELATION_PAIRS",
    "SCENARIOS",
    "SMALL_EXECUTION",
    "causal_chain",
    "check_inconsistent_frontier",
    "check_orphan_message",
    "check_relations",
    "check_slowest_rate",
    "check_smallest_cut",
    "clock_timeline",
    "describe_execution",
    "event_index",
    "expected_answers",
    "offending_messages",
    "relation",
    "rerun_with_clocks",
    "slowest_rate",
    "small_execution",
]

#: The three-process execution of the lesson, as a scenario document. Events of P1 are
#: a1..a4, of P2 b1..b4, of P3 c1..c3; a message is named after its send event.
SMALL_EXECUTION: dict[str, Any] = {
    "name": "three-processes",
    "processes": ["P1", "P2", "P3"],
    "steps": [
        {"do": "internal", "at": "P1", "label": "a1"},
        {"do": "internal", "at": "P3", "label": "c1"},
        {"do": "send", "from": "P1", "to": "P2", "label": "a2"},
        {"do": "internal", "at": "P2", "label": "b1"},
        {"do": "send", "from": "P3", "to": "P1", "label": "c2"},
        {"do": "deliver", "from": "P1", "to": "P2", "label": "b2"},
        {"do": "send", "from": "P2", "to": "P3", "label": "b3"},
        {"do": "deliver", "from": "P3", "to": "P1", "label": "a3"},
        {"do": "deliver", "from": "P2", "to": "P3", "label": "c3"},
        {"do": "internal", "at": "P1", "label": "a4"},
        {"do": "internal", "at": "P2", "label": "b4"},
    ],
}

RELATIONS = ("before", "after", "concurrent")
#: the pairs of events the lesson asks about, ``(x, y)``: is x before, after or concurrent to y?
RELATION_PAIRS = (("a1", "c3"), ("b1", "c2"), ("a3", "b3"), ("c3", "b2"), ("b4", "c3"))
#: the example scenarios of the course (in a checkout of the repository)
SCENARIOS = EXAMPLES
CONSISTENT = "This cut is consistent: every message received inside it was sent inside it."


def small_execution() -> Simulator:
    """The lesson's three-process execution, run to the end (no snapshot is taken).

    >>> print(describe_execution(small_execution()))
    P1: a1 · a2 (send to P2) · a3 (receive c2 from P3) · a4
    P2: b1 · b2 (receive a2 from P1) · b3 (send to P3) · b4
    P3: c1 · c2 (send to P1) · c3 (receive b3 from P2)
    """
    return run_scenario(parse_scenario(SMALL_EXECUTION, source="lesson 01"))


def describe_execution(sim: Simulator) -> str:
    """One line per process: its events in order, sends and receives explained."""
    trace = sim.trace
    channels = sim.network.channels
    lines = []
    for p in sim.network.processes:
        parts = []
        for i in trace.process_actions(p):
            a = trace.actions[i]
            name = trace.action_name(i)
            if a.kind == SEND:
                name += f" (send to {channels[a.channel].dst})"
            elif a.kind == RECEIVE:
                name += f" (receive {trace.message_name(a.message)} from {channels[a.channel].src})"
            parts.append(name)
        lines.append(f"{p}: {' · '.join(parts) or '(no events)'}")
    return "\n".join(lines)


def event_index(sim: Simulator, name: str) -> int:
    """The trace index of the application event called ``name``.

    :class:`ValueError` lists the event names when there is no such event.

    >>> event_index(small_execution(), "b2")
    5
    """
    names = {}
    for i, _ in sim.trace.app_actions():
        names[sim.trace.action_name(i)] = i
    if name not in names:
        raise ValueError(f"no event called {name!r}; the events are {', '.join(names)}")
    return names[name]


def relation(sim: Simulator, x: str, y: str) -> str:
    """``"before"`` if event ``x`` happens before ``y``, ``"after"`` if ``y`` happens
    before ``x``, ``"concurrent"`` otherwise (``"same"`` for one event).

    >>> sim = small_execution()
    >>> relation(sim, "c3", "b2"), relation(sim, "c1", "a4")
    ('after', 'before')
    """
    i, j = event_index(sim, x), event_index(sim, y)
    if i == j:
        return "same"
    clocks = vector_clocks(sim.trace, sim.network.processes)
    if happens_before(clocks, i, j):
        return "before"
    if happens_before(clocks, j, i):
        return "after"
    assert concurrent(clocks, i, j)
    return "concurrent"


def causal_chain(sim: Simulator, x: str, y: str) -> list[str] | None:
    """A shortest chain of events from ``x`` to ``y``, each step along a process line
    or a message arrow; ``None`` when ``x`` does not happen before ``y``.

    >>> causal_chain(small_execution(), "a1", "c3")
    ['a1', 'a2', 'b2', 'b3', 'c3']
    """
    trace = sim.trace
    start, goal = event_index(sim, x), event_index(sim, y)
    nexts: dict[int, list[int]] = {}
    for p in sim.network.processes:
        mine = trace.process_actions(p)
        for before, after in pairwise(mine):
            nexts.setdefault(before, []).append(after)
    for i, action in trace.app_actions():
        if action.kind == SEND and trace.received_by[action.message] >= 0:
            nexts.setdefault(i, []).append(trace.received_by[action.message])
    came_from: dict[int, int] = {start: start}
    todo = deque([start])
    while todo:
        i = todo.popleft()
        for j in nexts.get(i, []):
            if j not in came_from:
                came_from[j] = i
                todo.append(j)
    if goal == start or goal not in came_from:
        return None
    chain = [goal]
    while chain[-1] != start:
        chain.append(came_from[chain[-1]])
    return [trace.action_name(i) for i in reversed(chain)]


# ------------------------------------------------------------ the clock snapshot


def clock_timeline(sim: Simulator) -> str:
    """Every action of a run under :class:`ClockSnapshot`, with each local clock at that
    step, and where each process recorded its state.

    >>> sc = parse_scenario({"processes": ["P1", "P2"], "algorithm": {"name": "clock",
    ...     "at": 0.5, "rate": {"P2": 0.5}, "offset": {"P1": -1}}, "steps": [
    ...     {"do": "internal", "at": "P1", "label": "x"},
    ...     {"do": "internal", "at": "P2", "label": "y"}]})
    >>> print(clock_timeline(run_scenario(sc)))
    step  event                           P1 clock  P2 clock
       0  P1: x                               -1.0       0.0
          P2 records its state: its clock reads 0.5
       1  P2: y                                0.0       0.5
          P1 records its state at the end: its clock reads 1
    """
    alg = sim.algorithm
    if not isinstance(alg, ClockSnapshot):
        raise TypeError("clock_timeline needs a run under the clock snapshot")
    trace = sim.trace
    procs = sim.network.processes
    channels = sim.network.channels
    red_from = sim.red_from(alg.snapshot_id)
    clock_heads = "".join(f"{p + ' clock':>10}" for p in procs)
    lines = [f"step  {'event':<30}{clock_heads}"]
    for t, a in enumerate(trace.actions):
        for p in procs:
            if red_from.get(p) == t:
                lines.append(f"      {p} records its state: its clock reads {alg.clock(p, t):g}")
        what = trace.action_name(t)
        if a.kind == SEND:
            what += f" (send to {channels[a.channel].dst})"
        elif a.kind == RECEIVE:
            what += f" (receive {trace.message_name(a.message)})"
        clocks = "".join(f"{alg.clock(p, t):10.1f}" for p in procs)
        lines.append(f"{t:4d}  {a.process + ': ' + what:<30}{clocks}")
    end = len(trace.actions)
    for p in procs:
        if red_from.get(p) == end:
            lines.append(
                f"      {p} records its state at the end: its clock reads {alg.clock(p, end):g}"
            )
    return "\n".join(lines)


def rerun_with_clocks(
    scenario: Scenario,
    rate: Mapping[str, float] | None = None,
    offset: Mapping[str, float] | None = None,
) -> Simulator:
    """Run a clock-snapshot scenario again with other clocks (the agreed time stays).

    Processes not named in ``rate`` or ``offset`` keep the scenario's setting.

    >>> sc = parse_scenario({"processes": ["P1", "P2"],
    ...     "algorithm": {"name": "clock", "at": 1, "rate": {"P2": 0.5}},
    ...     "steps": [{"do": "internal", "at": "P2", "label": "y"}]})
    >>> rerun_with_clocks(sc, rate={"P2": 2}).algorithm.rate
    {'P2': 2}
    """
    spec = dict(scenario.algorithm)
    if spec.get("name") != "clock":
        raise ValueError("rerun_with_clocks needs a scenario that uses the clock snapshot")
    spec["rate"] = {**spec.get("rate", {}), **(rate or {})}
    spec["offset"] = {**spec.get("offset", {}), **(offset or {})}
    return run_scenario(replace(scenario, algorithm=spec))


def check_orphan_message(sim: Simulator, answer: Any, snapshot_id: str = "clock") -> Feedback:
    """Which message is received in the recorded state but never sent in it?

    ``answer`` is the message's name (a message is named after its send event).

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


def _consistent_at(scenario: Scenario, process: str, rate: float, snapshot_id: str) -> bool:
    return check_snapshot(rerun_with_clocks(scenario, rate={process: rate}), snapshot_id).ok


def slowest_rate(scenario: Scenario, process: str = "P2", snapshot_id: str = "clock") -> float:
    """The slowest clock rate of ``process``, in hundredths, that gives a consistent record.

    >>> slowest_rate(load_scenario(SCENARIOS / "clock-drift.json"))  # P2 must read 3 at step 4
    0.75
    """
    for hundredths in range(1, 1001):
        if _consistent_at(scenario, process, hundredths / 100, snapshot_id):
            return hundredths / 100
    raise ValueError(f"no rate of {process}'s clock up to 10 gives a consistent record")


def check_slowest_rate(
    scenario: Scenario, answer: Any, process: str = "P2", snapshot_id: str = "clock"
) -> Feedback:
    """Is ``answer`` the slowest rate of ``process``'s clock that gives a consistent record?

    Answers are read to the hundredth: a rate that works while one a hundredth slower
    does not is right.

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
    works = _consistent_at(scenario, process, float(answer), snapshot_id)
    if not works:
        return Feedback(
            False,
            f"With rate {answer:g} the record is still inconsistent.",
            f"{process}'s clock must reach the agreed time before the message that breaks "
            "the record arrives: try faster clocks.",
            reveal,
        )
    if _consistent_at(scenario, process, float(answer) - 0.01, snapshot_id):
        return Feedback(
            False,
            f"With rate {answer:g} the record is consistent, but a slower clock works too.",
            "Try slower rates, a hundredth at a time near the edge.",
            reveal,
        )
    return Feedback(True, f"Right, {reveal}")


# ------------------------------------------------------------- happens-before


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


# ---------------------------------------------------------------------- cuts


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


def offending_messages(sim: Simulator, frontier: Mapping[str, int]) -> list[str]:
    """The messages received inside the cut given by ``frontier`` but sent outside it.

    >>> offending_messages(small_execution(), {"P1": 1, "P2": 2, "P3": 3})
    ['a2', 'b3']
    """
    trace = sim.trace
    limits = cut_limits(trace, frontier)
    end = len(trace.actions)
    out = []
    for m, msg in enumerate(trace.messages):
        got = trace.received_by[m]
        if msg.kind != APP or got < 0:
            continue
        sender, receiver = trace.actions[msg.sent_by].process, trace.actions[got].process
        if got < limits.get(receiver, end) and msg.sent_by >= limits.get(sender, end):
            out.append(trace.message_name(m))
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


# ------------------------------------------------------------- the try-its' answers


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
    }

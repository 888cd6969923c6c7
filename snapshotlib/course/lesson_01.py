"""Lesson 01, global state without a global clock: the runs it uses and its checks.

The lesson shows a snapshot taken by the clock ("everyone record at 12:00") that records
a message as received although it was never sent, then happens-before on a small
execution of three processes, and consistent and inconsistent cuts of it. The
functions here build that execution, print what the notebook shows as text, and check
the learner's answers (each returns a :class:`~snapshotlib.course.Feedback`).

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
from ..formats.scenario import Scenario, parse_scenario, run_scenario
from ..simulator import Simulator
from ..trace import APP, RECEIVE, SEND
from .feedback import Feedback

__all__ = [
    "SMALL_EXECUTION",
    "causal_chain",
    "check_inconsistent_frontier",
    "check_orphan_message",
    "check_relations",
    "check_smallest_cut",
    "clock_timeline",
    "describe_execution",
    "event_index",
    "offending_messages",
    "relation",
    "rerun_with_clocks",
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
    red_from = alg.records[alg.snapshot_id].red_from
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
    if answer is None or answer is Ellipsis:
        return Feedback(
            False,
            "No answer yet.",
            "Compare the recorded events of the two processes: which receive event is "
            "recorded whose send is not?",
        )
    if answer == name:
        return Feedback(
            True,
            f"Right: message {name} is received in {receiver}'s recorded state (event "
            f"{trace.action_name(receive)}) but its send, event {trace.action_name(send)} "
            f"of {sender}, came after {sender} recorded. An effect without its cause.",
        )
    if answer == trace.action_name(receive):
        return Feedback(
            False,
            f"{answer} is the event where {receiver} receives the message, not the message.",
            "A message is named after the event that sends it.",
        )
    messages = {trace.message_name(k) for k, rec in enumerate(trace.messages) if rec.kind == APP}
    if answer not in messages:
        return Feedback(
            False,
            f"{answer!r} is not a message of this run; its messages are "
            f"{', '.join(sorted(messages))}.",
            "Look for a receive event among the recorded events.",
        )
    return Feedback(
        False,
        f"Message {answer} does not break the cut.",
        "Which recorded receive event has its send outside the recorded state?",
    )


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
        return Feedback(False, "No answers yet.")
    right = 0
    notes = []
    wrong: list[tuple[str, str, Any, str]] = []
    for (x, y), answer in answers.items():
        try:
            truth = relation(sim, x, y)
        except ValueError as e:
            return Feedback(False, str(e))
        if answer == truth:
            right += 1
            notes.append(_explain(sim, x, y, truth))
        else:
            wrong.append((x, y, answer, truth))
    if not wrong:
        return Feedback(True, f"All {right} right. " + " ".join(notes))
    x, y, answer, truth = wrong[0]
    total = len(answers)
    if answer is None or answer is Ellipsis:
        return Feedback(
            False,
            f"{right} of {total} right; ({x}, {y}) has no answer yet.",
            f"Answer each pair with one of {', '.join(map(repr, RELATIONS))}.",
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
    else:
        first, second = (x, y) if truth == "before" else (y, x)
        hint = (
            f"There is a walk from {first} to {second} along process lines and message "
            f"arrows: look for it through the other process(es)."
        )
    return Feedback(False, message, hint)


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
    if frontier is None or frontier is Ellipsis:
        return Feedback(
            False,
            "No answer yet.",
            f"Give a frontier like {{{example}}}: how many events of each process are "
            "inside the cut (checker.frontier gives the one set on the sliders).",
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
    ✗ Inconsistent, but because of a2, not c2. Hint: c2 is received at a3: put a3 ...
    """
    sim = sim or small_execution()
    read = _read_frontier(sim, frontier)
    if isinstance(read, Feedback):
        return read
    trace = sim.trace
    bad = offending_messages(sim, read)
    if message is not None:
        named = [k for k in range(len(trace.messages)) if trace.message_name(k) == message]
        if len(named) != 1 or trace.messages[named[0]].kind != APP:
            raise ValueError(f"no message called {message!r} in this run")
        m = named[0]
        if message in bad:
            return Feedback(
                True,
                f"Inconsistent, as asked: {describe_message(trace, m)} is received inside "
                "the cut but sent outside it.",
            )
        if trace.received_by[m] < 0:
            hint = f"{message} is never received, so it cannot break a cut."
        else:
            receive = trace.action_name(trace.received_by[m])
            hint = (
                f"{message} is received at {receive}: put {receive} inside the cut and leave "
                f"{message}'s send outside."
            )
        if bad:
            return Feedback(
                False, f"Inconsistent, but because of {', '.join(bad)}, not {message}.", hint
            )
        return Feedback(False, CONSISTENT, hint)
    if bad:
        result = check_frontier(trace, read)
        return Feedback(True, f"Inconsistent, as asked: {result.reason}.")
    return Feedback(
        False,
        CONSISTENT,
        "Put a receive event inside the cut and leave its send outside: move the "
        "receiver's frontier past the receive and the sender's back before the send.",
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
    if read[owner] < position:
        return Feedback(
            False,
            f"{event} is not inside this cut: {owner}'s frontier must be at least {position}.",
            f"{event} is event number {position} of {owner}.",
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
        )
    vc = vector_clocks(trace, sim.network.processes)[index]
    assert vc is not None
    smallest = dict(zip(sim.network.processes, vc, strict=True))
    extra = [
        f"{p} by {read[p] - smallest[p]}" for p in sim.network.processes if read[p] > smallest[p]
    ]
    if extra:
        return Feedback(
            False,
            f"Consistent and it contains {event}, but it is not the smallest: it can shrink "
            f"({', '.join(extra)}) and stay consistent.",
            f"Keep only {event} and the events that happen before it.",
        )
    return Feedback(
        True,
        f"Right: {read} holds {event} and exactly the events that happen before it. "
        f"Compare {event}'s vector clock, {vc}.",
    )

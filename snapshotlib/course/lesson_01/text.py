"""Lesson 01 in words: the small execution, happens-before, the clock snapshot's timeline.
Built from runs of the engine and deterministic, so the notebook can compare what it
prints with its stored output.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from itertools import pairwise
from typing import Any

from ...algorithms.clock import ClockSnapshot
from ...checks.causality import (
    concurrent,
    happens_before,
    lamport_clocks,
    lamport_order,
    vector_clocks,
)
from ...checks.cut import check_snapshot, cut_limits
from ...formats.scenario import EXAMPLES, Scenario, parse_scenario, run_scenario
from ...simulator import Simulator
from ...trace import APP, RECEIVE, SEND

#: the events whose Lamport times the learner works out by hand: a receive whose
#: message carries a larger time than its process had, and one that needs the first
LAMPORT_EVENTS = ("b2", "c3")

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


def lamport_time(sim: Simulator, name: str) -> tuple[int, str]:
    """Event ``name``'s Lamport time, with how the rule gives it.

    >>> lamport_time(small_execution(), "b2")
    (3, 'L(b2) = max(L(b1), L(a2)) + 1 = max(1, 2) + 1 = 3 (b2 receives a2)')
    """
    trace = sim.trace
    i = event_index(sim, name)
    times = lamport_clocks(trace, sim.network.processes)
    time = times[i]
    assert time is not None
    mine = trace.process_actions(trace.actions[i].process)
    k = mine.index(i)
    before = trace.action_name(mine[k - 1]) if k else None
    prev = f"L({before})" if before else "0"
    prev_time = times[mine[k - 1]] if k else 0
    action = trace.actions[i]
    if action.kind == RECEIVE:
        send = trace.messages[action.message].sent_by
        sent = trace.action_name(send)
        return time, (
            f"L({name}) = max({prev}, L({sent})) + 1 = max({prev_time}, {times[send]}) + 1 "
            f"= {time} ({name} receives {trace.message_name(action.message)})"
        )
    return time, f"L({name}) = {prev} + 1 = {time}"


def lamport_table(sim: Simulator) -> str:
    """Every event with its Lamport time, one line per process, then Lamport's total
    order: by time, ties broken by the process's place (P1 before P2 ...).

    >>> print(lamport_table(small_execution()))
    P1: a1 1 · a2 2 · a3 3 · a4 4
    P2: b1 1 · b2 3 · b3 4 · b4 5
    P3: c1 1 · c2 2 · c3 5
    total order: a1 b1 c1 a2 c2 a3 b2 a4 b3 b4 c3
    """
    trace = sim.trace
    procs = sim.network.processes
    times = lamport_clocks(trace, procs)
    lines = [
        f"{p}: "
        + " · ".join(f"{trace.action_name(i)} {times[i]}" for i in trace.process_actions(p))
        for p in procs
    ]
    order = lamport_order(times, trace, procs)
    lines.append("total order: " + " ".join(trace.action_name(i) for i in order))
    return "\n".join(lines)


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


def consistent_at(scenario: Scenario, process: str, rate: float, snapshot_id: str) -> bool:
    return check_snapshot(rerun_with_clocks(scenario, rate={process: rate}), snapshot_id).ok


def slowest_rate(scenario: Scenario, process: str = "P2", snapshot_id: str = "clock") -> float:
    """The slowest clock rate of ``process``, in hundredths, that gives a consistent record.

    >>> from snapshotlib.formats.scenario import load_scenario

    >>> slowest_rate(load_scenario(SCENARIOS / "clock-drift.json"))  # P2 must read 3 at step 4
    0.75
    """
    for hundredths in range(1, 1001):
        if consistent_at(scenario, process, hundredths / 100, snapshot_id):
            return hundredths / 100
    raise ValueError(f"no rate of {process}'s clock up to 10 gives a consistent record")


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

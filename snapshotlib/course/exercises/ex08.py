"""Exercise 8, *A termination detector*: recorded global states as plain data, the runs
they come from, and the run of question 3.

A **collected snapshot** is what an initiator holds: the list of every process and the
*parts* that have reached it so far. A process's part is its recorded state and the
recorded states of the channels leading *to* it (lesson 06a)::

    {"processes": ["P1", "P2", "P3"],
     "parts": {"P1": {"passive": False, "waiting_for": ["P2"],
                      "channels": {"P2->P1": [], "P3->P1": ["request"]}},
               "P2": {...}}}                 # a part not yet in is absent

A channel's state is the list of messages recorded in transit on it, each ``"request"``
or ``"reply"``. :func:`collected` makes one from a snapshot of a run of the ``requests``
application (:func:`requests_run`, :func:`replay` for a run stopped part way), and
:func:`random_state` draws one at random, where a process may wait for several others.

Question 3 is about :func:`counting_run`, a run of the :class:`Jobs` application with no
snapshot, described by :func:`describe_counting`.

>>> snap = collected(requests_run(1), "s1")
>>> sorted(snap["parts"]) == snap["processes"]
True
>>> sorted(random_state(3)["parts"]["P1"])
['channels', 'passive', 'waiting_for']
"""

from __future__ import annotations

import random
from typing import Any

from ...actions import Send, StartSnapshot
from ...apps import AppError, Application, SendFn
from ...model import Network
from ...schedulers import RandomOrder
from ...simulator import Simulator
from ...trace import RECEIVE, SEND

NAME = "08_termination_detector"
VARIANT = False

#: the engine's stable predicates (and the checkers and the sweep built on them) decide what
#: the answers are asked to decide
_PREDICATES = (
    "snapshotlib.checks.predicates:termination",
    "snapshotlib.checks.predicates:deadlock",
    "snapshotlib.checks.predicates:_find_cycle",
    "snapshotlib.course.lesson_06:check_termination",
    "snapshotlib.course.lesson_06:check_deadlock",
    "snapshotlib.sweeps.stability:_truth",
)
REFUSE: dict[str, tuple[str, ...]] = {"terminated": _PREDICATES, "deadlocked": _PREDICATES}

_LETTERS = "abcdefgh"


def collected(sim: Simulator, snapshot_id: str) -> dict[str, Any]:
    """The parts of snapshot ``snapshot_id`` of a ``requests`` run that are complete (every
    input channel recorded), as plain data: what the initiator has collected so far."""
    app = sim.app
    net = sim.network
    snap = sim.snapshot(snapshot_id)
    parts: dict[str, Any] = {}
    for p, part in snap.processes.items():
        if not part.done:
            continue
        parts[p] = {
            "passive": bool(app.is_passive(part.state)),
            "waiting_for": sorted(app.waits_for(p, part.state)),
            "channels": {
                str(c): [m.payload for m in snap.channels.get(str(c), ())] for c in net.inputs(p)
            },
        }
    return {"processes": list(net.processes), "parts": parts}


def requests_run(seed: int, processes: int = 4) -> Simulator:
    """A random run of the ``requests`` application on FIFO channels, every pair joined.

    At the start each process asks a random other one with probability 0.6 (nobody asks
    later, so termination is stable); then messages are delivered in a random order,
    snapshots ``s1``, ``s2``, ... are begun at random moments (up to four), and one more
    after everything has been delivered.
    """
    rng = random.Random(f"{NAME}/requests/{seed}")
    names = [f"P{k}" for k in range(1, processes + 1)]
    sim = Simulator(Network(names), "requests")
    for p in names:
        if rng.random() < 0.6:
            sim.step(Send(p, rng.choice([q for q in names if q != p]), "request"))
    scheduler = RandomOrder(rng.randrange(2**31))
    begun = 0
    while True:
        if begun < 4 and rng.random() < 0.25:
            begun += 1
            sim.step(StartSnapshot(rng.choice(names), f"s{begun}"))
        action = scheduler.choose(sim)
        if action is None:
            break
        sim.step(action)
    sim.step(StartSnapshot(rng.choice(names), f"s{begun + 1}"))
    sim.run(scheduler)
    return sim


def replay(sim: Simulator, until: int) -> Simulator:
    """The run ``sim`` stopped after its first ``until`` actions (a copy; ``sim`` stays)."""
    return sim.fork(until)


def random_state(seed: int) -> dict[str, Any]:
    """A random collected snapshot (see the module's docstring) of two to seven processes,
    every pair joined by a channel. A process may wait for several others at once (it is
    blocked until each of them has replied); a process that waits is not passive, and one
    that does not may be passive or busy. Some parts may be missing."""
    rng = random.Random(f"{NAME}/state/{seed}")
    n = rng.randint(2, 7)
    names = [f"P{k}" for k in range(1, n + 1)]
    calm = rng.random() < 0.35  # nearly quiet: nobody waits, hardly a message
    weights = (100, 0, 0, 0) if calm else (35, 45, 15, 5)
    p_message, p_passive = (0.04, 0.95) if calm else (0.3, 0.75)
    parts: dict[str, Any] = {}
    for p in names:
        others = [q for q in names if q != p]
        k = min(rng.choices((0, 1, 2, 3), weights=weights)[0], len(others))
        waits = sorted(rng.sample(others, k))
        channels = {}
        for q in others:
            msgs: list[str] = []
            if rng.random() < p_message:
                msgs.append(rng.choice(("request", "reply")))
            if q in waits and rng.random() < 0.3:
                msgs.append(rng.choice(("request", "reply")))
            rng.shuffle(msgs)
            channels[f"{q}->{p}"] = msgs
        passive = not waits and rng.random() < p_passive
        parts[p] = {"passive": passive, "waiting_for": waits, "channels": channels}
    if rng.random() < 0.25:
        for p in rng.sample(names, rng.randint(1, max(1, n // 3))):
            del parts[p]
    return {"processes": names, "parts": parts}


def cycle_problem(snapshot: dict[str, Any], cycle: Any) -> str | None:
    """What is wrong with ``cycle`` as a deadlock cycle of ``snapshot`` (question 2), or
    None when each of its processes is blocked on the next and the last on the first.

    >>> two = {"processes": ["P1", "P2"], "parts": {
    ...     "P1": {"passive": False, "waiting_for": ["P2"], "channels": {"P2->P1": []}},
    ...     "P2": {"passive": False, "waiting_for": ["P1"], "channels": {"P1->P2": ["reply"]}}}}
    >>> print(cycle_problem(two, ["P1", "P2"]))
    P2 is not blocked on P1: a reply from P1 is in transit on P1->P2
    """
    parts = snapshot["parts"]
    if not isinstance(cycle, (list, tuple)) or not all(isinstance(p, str) for p in cycle):
        return f"{cycle!r} is not a list of process names"
    if len(cycle) < 2 or len(set(cycle)) != len(cycle):
        return f"{list(cycle)} is not a cycle of two or more different processes"
    for p, q in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
        if p not in parts:
            return f"the part of {p} has not reached the initiator: nothing is known of it"
        if q not in parts[p]["waiting_for"]:
            return f"{p} does not wait for {q}"
        if "reply" in parts[p]["channels"].get(f"{q}->{p}", []):
            return f"{p} is not blocked on {q}: a reply from {q} is in transit on {q}->{p}"
    return None


# ------------------------------------------------------------------- question 3


class Jobs(Application):
    """Work that spreads. A process holds a number of jobs and is active while it holds
    one: working on it, it may hand a new job to another process (a send), and it
    finishes one with an internal event. A process with no job is passive and acts only
    when a job arrives, so termination is stable."""

    name = "jobs"

    def initial_state(self, process: str, value: Any) -> Any:
        return int(value or 0)

    def on_send(self, process: str, state: Any, dst: str, payload: Any) -> Any:
        if state < 1:
            raise AppError(f"{process} holds no job, so it cannot hand one out")
        return state

    def on_internal(self, process: str, state: Any, label: str | None, send: SendFn) -> Any:
        if state < 1:
            raise AppError(f"{process} holds no job to finish")
        return state - 1

    def on_receive(self, process: str, state: Any, src: str, payload: Any, send: SendFn) -> Any:
        return state + 1

    def is_passive(self, state: Any) -> bool:
        return bool(state == 0)


#: the run of question 3: ("send", from, to), ("deliver", from, to) or ("done", process)
_COUNTING_STEPS = (
    ("send", "P1", "P2"),
    ("done", "P1"),
    ("deliver", "P1", "P2"),
    ("send", "P2", "P1"),
    ("send", "P2", "P3"),
    ("deliver", "P2", "P1"),
    ("done", "P1"),
    ("deliver", "P2", "P3"),
    ("done", "P3"),
    ("send", "P2", "P3"),
    ("done", "P2"),
    ("deliver", "P2", "P3"),
    ("done", "P3"),
)


def counting_run() -> Simulator:
    """The run of question 3: three processes of the :class:`Jobs` application, P1 with
    one job at the start, no snapshot. Events are named ``a1, a2, ...`` for P1, ``b1,
    ...`` for P2 and ``c1, ...`` for P3; a message is named after the event that sends
    it."""
    names = ["P1", "P2", "P3"]
    sim = Simulator(Network(names), Jobs(), {"P1": 1})
    letter = dict(zip(names, _LETTERS, strict=False))
    count = dict.fromkeys(names, 0)

    def label(p: str) -> str:
        count[p] += 1
        return f"{letter[p]}{count[p]}"

    net = sim.network
    for kind, *who in _COUNTING_STEPS:
        if kind == "done":
            sim.internal(who[0], label(who[0]))
            continue
        channel = net.channel_index(net.channel(who[0], who[1]))
        if kind == "send":
            sim.send(who[0], channel, "job", label(who[0]))
        else:
            sim.deliver(channel, 0, label(who[1]))
    return sim


def message_names(sim: Simulator) -> dict[int, str]:
    """Message id -> its name: the name of the event that sent it."""
    trace = sim.trace
    return {m: trace.action_name(msg.sent_by) for m, msg in enumerate(trace.messages)}


def describe_counting() -> str:
    """The run of question 3 in words, one line per process, with the number of jobs
    each process holds after each of its events, then the order in which the events
    happened (which events of different processes cannot tell: the polls' order depends
    on it)."""
    sim = counting_run()
    trace = sim.trace
    channels = sim.network.channels
    app = sim.app
    held = {p: app.initial_state(p, sim.initial.get(p)) for p in sim.network.processes}
    lines: dict[str, list[str]] = {p: [] for p in sim.network.processes}
    for i, a in enumerate(trace.actions):
        p = a.process
        if a.kind == SEND:
            what = f"hands job {trace.action_name(i)} to {channels[a.channel].dst}"
        elif a.kind == RECEIVE:
            sent_by = trace.messages[a.message].sent_by
            what = f"receives job {trace.action_name(sent_by)} from {channels[a.channel].src}"
            held[p] += 1
        else:
            what = "finishes a job"
            held[p] -= 1
        jobs = f"{held[p]} job{'' if held[p] == 1 else 's'} left" if held[p] else "passive"
        lines[p].append(f"{trace.action_name(i)} {what} ({jobs})")
    out = []
    for p, events in lines.items():
        jobs = sim.initial.get(p, 0)
        start = f"{jobs} job{'' if jobs == 1 else 's'}" if jobs else "passive"
        out.append(f"{p} ({start} at the start): " + " · ".join(events))
    order = ", ".join(trace.action_name(i) for i in range(len(trace.actions)))
    out.append(f"the events in the order they happened: {order}")
    return "\n".join(out)

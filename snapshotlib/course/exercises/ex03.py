"""Exercise 3, *Predict the snapshot*: each learner's three runs, told in words.

Every learner predicts the snapshots of three runs of the *tokens* application, made
from their variant, with the shapes of the exercise:

1. a **ring** of three processes, one snapshot ``s1``;
2. a **triangle**: three processes, every channel in both directions, one snapshot ``s1``;
3. **two processes** and two snapshots at once, ``s1`` and ``s2``, started by different
   processes.

Each run is drawn again until it has what its question needs (a message in transit on
some channel, a message behind a marker, a marker relayed, two snapshots that differ).
The notebook shows the runs with :func:`describe` only, in words: the steps, and which
channel's head arrives when, never what it is. The scenario documents
(:func:`scenario_of`) are for the grader's tests, which play them with the engine.

>>> print(describe(7, 1).splitlines()[0])  # doctest: +ELLIPSIS
Three processes on a ring: P1->P2, P2->P3, P3->P1. Tokens at the start: ...
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ...actions import Deliver, Send, StartSnapshot
from ...colouring import AFTER, colouring
from ...formats.scenario import parse_scenario, run_scenario
from ...model import Network
from ...simulator import Simulator
from ...trace import APP

NAME = "03_predict_the_snapshot"
VARIANT = True

#: the answers of each run (process states, channel states), by question
ANSWERS = {
    1: ("ring_processes", "ring_channels"),
    2: ("triangle_processes", "triangle_channels"),
    3: ("s1_processes", "s1_channels", "s2_processes", "s2_channels"),
}
#: playing a run on the engine gives its snapshots away: the cells that define the
#: answers may not do it
_PLAY = (
    "snapshotlib.course.exercises.ex03:scenario_of",
    "snapshotlib.formats.scenario:run_scenario",
    "snapshotlib.formats.scenario:parse_scenario",
    "snapshotlib.course.lesson_05:run_with",
    "snapshotlib.simulator:Simulator",
)
REFUSE: dict[str, tuple[str, ...]] = {a: _PLAY for names in ANSWERS.values() for a in names}

_SHAPES = {1: "ring", 2: "triangle", 3: "two"}
_LABELS = "abcdefghijklmnopqrstuvwxyz"


def _draw(rng: random.Random, shape: str) -> dict[str, Any]:
    """A random run of ``shape`` as a scenario document, every step explicit."""
    if shape == "two":
        procs, channels = ["P1", "P2"], "complete"
        initial = {p: rng.randint(3, 5) for p in procs}
        sends, ids = rng.randint(2, 3), ["s1", "s2"]
    else:
        procs, channels = ["P1", "P2", "P3"], "ring" if shape == "ring" else "complete"
        if shape == "ring":
            initial = {p: rng.randint(0, 3) for p in procs}
            initial[rng.choice(procs)] += 2
        else:
            initial = {p: rng.randint(3, 6) for p in procs}
        sends, ids = rng.randint(3, 4), ["s1"]
    net = Network(procs, channels)
    sim = Simulator(net, "tokens", initial)
    initiators = rng.sample(procs, len(ids))
    # the application's actions and the initiations, in a random order; deliveries between
    plan = ["send"] * sends + ["start"] * len(ids)
    rng.shuffle(plan)
    started = 0
    steps: list[dict[str, Any]] = []
    labels = iter(_LABELS)

    def deliver() -> None:
        busy = [c for c, q in zip(net.channels, sim.queues, strict=True) if q]
        ch = rng.choice(busy)
        sim.step(Deliver(ch))
        steps.append({"do": "deliver", "from": ch.src, "to": ch.dst})

    for what in plan:
        while any(sim.queues) and rng.random() < 0.45:
            deliver()
        if what == "start":  # s1 first, then s2
            k, started = started, started + 1
            sim.step(StartSnapshot(initiators[k], ids[k]))
            steps.append({"do": "snapshot", "at": initiators[k], "id": ids[k]})
            continue
        rich = [p for p in procs if sim.states[p] > 0]
        if not rich:
            continue
        p = rng.choice(rich)
        dst = rng.choice(net.outputs(p)).dst
        amount = rng.randint(1, min(3, sim.states[p]))
        label = next(labels)
        sim.step(Send(p, dst, amount, label))
        steps.append({"do": "send", "from": p, "to": dst, "label": label, "payload": amount})
    while any(sim.queues):
        deliver()
    return {"processes": procs, "channels": channels, "app": "tokens",
            "initial": initial, "steps": steps}  # fmt: skip


def _fits(doc: dict[str, Any], shape: str) -> bool:
    """Whether the run has what its question needs."""
    sim = run_scenario(parse_scenario(doc))
    snaps = sim.snapshots()
    if not all(s.complete for s in snaps.values()):
        return False
    trace, channels = sim.trace, sim.network.channels

    def in_transit(sid: str) -> set[str | None]:
        return {m.label for msgs in snaps[sid].channels.values() for m in msgs}

    def behind_a_marker(sid: str) -> bool:
        col = colouring(sim, sid)
        return any(
            msg.kind == APP and trace.received_by[m] >= 0 and col.where(m) == AFTER
            for m, msg in enumerate(trace.messages)
        )

    if shape == "two":
        s1, s2 = snaps["s1"], snaps["s2"]
        differ = any(s1.processes[p].state != s2.processes[p].state for p in s1.processes)
        return (
            differ
            and in_transit("s1") != in_transit("s2")
            and bool(in_transit("s1") | in_transit("s2"))
        )
    relayed = any(
        trace.actions[r.red_from].kind == "control"
        and channels[trace.actions[r.red_from].channel].src not in snaps["s1"].initiators
        for r in snaps["s1"].processes.values()
    )
    return bool(in_transit("s1")) and behind_a_marker("s1") and (shape == "ring" or relayed)


def scenario_of(variant: int, run: int) -> dict[str, Any]:
    """Run ``run`` (1, 2 or 3) of ``variant``, as a scenario document (for the tests)."""
    shape = _SHAPES[run]
    for attempt in itertools.count():
        doc = _draw(random.Random(f"{NAME}/{variant}/{run}/{attempt}"), shape)
        if _fits(doc, shape):
            return doc
    raise AssertionError("unreachable")


def describe(variant: int, run: int) -> str:
    """Run ``run`` (1, 2 or 3) of ``variant`` in words: the network, the tokens at the
    start and every step, without running it."""
    doc = scenario_of(variant, run)
    procs = doc["processes"]
    if doc["channels"] == "ring":
        names = [f"{a}->{b}" for a, b in zip(procs, procs[1:] + procs[:1], strict=True)]
        head = f"Three processes on a ring: {', '.join(names)}."
    elif len(procs) == 3:
        head = "Three processes, a channel each way between every two of them (six channels)."
    else:
        head = "Two processes, a channel each way: P1->P2 and P2->P1."
    tokens = ", ".join(f"{p} {n}" for p, n in doc["initial"].items())
    lines = [f"{head} Tokens at the start: {tokens}.", "Steps, in order:"]
    for number, step in enumerate(doc["steps"], start=1):
        if step["do"] == "send":
            n = step["payload"]
            what = (
                f"{step['from']} sends message {step['label']} ({n} token{'s' * (n != 1)}) "
                f"to {step['to']}"
            )
        elif step["do"] == "snapshot":
            what = f"{step['at']} starts snapshot {step['id']}"
        else:
            what = (
                f"the head of {step['from']}->{step['to']} (a message or a marker) arrives "
                f"at {step['to']}"
            )
        lines.append(f"{number:>3}. {what}")
    return "\n".join(lines)

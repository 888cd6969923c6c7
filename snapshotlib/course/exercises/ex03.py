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
(:func:`scenario_of`) are for the tests, which play them with the engine.

The three questions are practice (they earn no points): a learner could play a run on
the engine in another notebook, so nothing here is refused. Every test reads an answer
with :func:`read_processes` and :func:`read_channels`, so the public and hidden tests
accept the same forms.

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
from .forms import is_whole, shown, whole_number

NAME = "03_predict_the_snapshot"
VARIANT = True

#: the answers of each run (process states, channel states), by question
ANSWERS = {
    1: ("ring_processes", "ring_channels"),
    2: ("triangle_processes", "triangle_channels"),
    3: ("s1_processes", "s1_channels", "s2_processes", "s2_channels"),
}
#: nothing is refused: every question is practice (a run played on the engine in another
#: notebook would give its snapshots away, so refusing it here would prove nothing)
REFUSE: dict[str, tuple[str, ...]] = {}

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


# ------------------------------------------------------------------ reading the answers


def network_of(variant: int, run: int) -> tuple[list[str], list[str]]:
    """The processes and the channels (``"SRC->DST"``) of run ``run`` of ``variant``,
    without playing it.

    >>> network_of(7, 3)
    (['P1', 'P2'], ['P1->P2', 'P2->P1'])
    """
    doc = scenario_of(variant, run)
    net = Network(doc["processes"], doc["channels"])
    return sorted(net.processes), [str(c) for c in net.channels]


def channel_key(key: Any) -> str:
    """A channel as the answers may write it, normalised: ``"P3 \u2192 P2"`` and
    ``"P3 -> P2"`` are ``"P3->P2"``.

    >>> channel_key("P3 \u2192 P2"), channel_key(" P3 -> P2")
    ('P3->P2', 'P3->P2')
    """
    return str(key).replace("\u2192", "->").replace(" ", "")


def read_processes(answer: Any, what: str, variant: int, run: int) -> dict[str, int]:
    """The recorded process states ``answer`` gives for run ``run``: a dict naming each
    process of the run once, to a whole number of tokens; AssertionError saying what to
    write otherwise.

    >>> read_processes({"P1": 2, "P2": 3.0}, "s1_processes", 7, 3)
    {'P1': 2, 'P2': 3}
    >>> read_processes({"P1": 2}, "s1_processes", 7, 3)
    Traceback (most recent call last):
    AssertionError: s1_processes must name each of P1, P2 once; it names P1
    """
    processes, _ = network_of(variant, run)
    if not isinstance(answer, dict):
        raise AssertionError(
            f"{what} must be a dict from process to tokens, like "
            f"{dict.fromkeys(processes, 0)}, not {shown(answer)}"
        )
    named = [str(p) for p in answer]
    if not all(isinstance(p, str) for p in answer) or sorted(named) != processes:
        raise AssertionError(
            f"{what} must name each of {', '.join(processes)} once; it names "
            f"{', '.join(named) or 'none'}"
        )
    return {
        p: whole_number(answer[p], f"{what}[{p!r}]", low=0, why="a number of tokens")
        for p in processes
    }


def read_channels(answer: Any, what: str, variant: int, run: int) -> dict[str, list[int]]:
    """The recorded channel states ``answer`` gives for run ``run``: a dict from channels
    of the run (normalised by :func:`channel_key`, each at most once) to lists of whole
    numbers of tokens; every channel of the run, the ones left out empty.
    AssertionError saying what to write otherwise.

    >>> read_channels({"P2 -> P1": (1.0,)}, "s1_channels", 7, 3)
    {'P1->P2': [], 'P2->P1': [1]}
    >>> read_channels({"P2->P1": [1], "P2 -> P1": [1]}, "s1_channels", 7, 3)
    Traceback (most recent call last):
    AssertionError: s1_channels names channel P2->P1 twice: as 'P2->P1' and as 'P2 -> P1'
    """
    _, channels = network_of(variant, run)
    if not isinstance(answer, dict):
        raise AssertionError(
            f"{what} must be a dict from channel to a list of messages (their tokens), "
            f"like {{{channels[0]!r}: [1]}}, not {shown(answer)}"
        )
    given: dict[str, Any] = {}
    written: dict[str, Any] = {}
    for key, msgs in answer.items():
        channel = channel_key(key)
        if channel not in channels:
            raise AssertionError(
                f"{key!r} is not a channel of this network; its channels are "
                f"{', '.join(channels)} (write them as 'SRC->DST')"
            )
        if channel in given:
            raise AssertionError(
                f"{what} names channel {channel} twice: as {written[channel]!r} and as {key!r}"
            )
        given[channel], written[channel] = msgs, key
        if not isinstance(msgs, (list, tuple)) or not all(map(is_whole, msgs)):
            raise AssertionError(
                f"{what}[{key!r}] must be a list of whole numbers, the tokens each recorded "
                f"message carries (e.g. [2] or []), not {msgs!r}"
            )
    return {c: [int(x) for x in given.get(c, [])] for c in channels}

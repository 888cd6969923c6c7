"""Exercise 6, *Break it*: each learner's brief for a breaking run, and a broken run of
their own to explain.

Question 1 asks for a run on non-FIFO channels whose snapshot is wrong in two ways at
once while the tokens it records still add up: a white message missed on a given
channel, and a red message either accepted in a white action or recorded in transit
(:func:`brief`). Question 2 gives a broken run in words (:func:`describe`) and asks for
every message that spoils its snapshot and how; :func:`to_blame` is the truth the tests
use. The scenario document (:func:`scenario_of`) is for the tests.

Questions 2 and 3 are practice (they earn no points): lesson 05a's diagnosis answers them
in a single call, which a learner can make in another notebook, so nothing here is
refused. Their tests read the answers with :func:`read_blamed` and
:func:`~.forms.whole_number`, public and hidden alike. :func:`play`, which every test of
question 1 calls first (through :func:`play_answer`), refuses a scenario with more than
:data:`MAX_PROCESSES` processes or :data:`MAX_STEPS` steps, or that could take more than
:data:`MAX_ACTIONS` actions, before playing it.

>>> brief(7)["processes"]
['P1', 'P2', 'P3']
>>> print(describe(7).splitlines()[0])  # doctest: +ELLIPSIS
Three processes, P1, P2 and P3, a channel each way between every two of them...
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ...actions import Deliver, Send, StartSnapshot
from ...colouring import AFTER, BACKWARDS, IN_TRANSIT, colouring
from ...formats.scenario import ScenarioError, parse_scenario, run_scenario
from ...model import Network
from ...simulator import Simulator
from ..lesson_05 import MISSED, RED_IN_WHITE, RED_RECORDED
from .forms import scenario_within, shown

NAME = "06_break_it"
VARIANT = True

#: nothing is refused: questions 2 and 3 are practice (lesson 05a's diagnosis answers them
#: in a single call, which a learner can make in another notebook)
REFUSE: dict[str, tuple[str, ...]] = {}

#: the largest scenario :func:`play` takes from a learner: the tests check every step
MAX_PROCESSES = 6
MAX_STEPS = 200
MAX_ACTIONS = 2000
#: the ways a message breaks a snapshot, by the names the notebook imports them as
WAYS = {"RED_IN_WHITE": RED_IN_WHITE, "RED_RECORDED": RED_RECORDED, "MISSED": MISSED}

_PROCESSES = ["P1", "P2", "P3"]
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def brief(variant: int) -> dict[str, Any]:
    """What the learner's breaking run of question 1 must have: the processes and their
    tokens at the start, who starts ``s1``, the channel of the missed white message and
    the other way the snapshot breaks."""
    rng = random.Random(f"{NAME}/brief/{variant}")
    src, dst = rng.sample(_PROCESSES, 2)
    return {
        "processes": list(_PROCESSES),
        "initial": {p: rng.randint(2, 5) for p in _PROCESSES},
        "initiator": rng.choice(_PROCESSES),
        "missed_on": f"{src}->{dst}",
        "also": rng.choice([RED_IN_WHITE, RED_RECORDED]),
    }


class ScenarioTooLarge(ScenarioError):
    """A learner's scenario larger than :func:`play` takes."""


def play(doc: Any, source: str = "my_scenario") -> Simulator:
    """Play a learner's scenario document, with a final ``run`` step added when it has
    none so the snapshot completes; :class:`~snapshotlib.formats.scenario.ScenarioError`
    names what is wrong with it. A scenario with more than :data:`MAX_PROCESSES`
    processes or :data:`MAX_STEPS` steps, or that could take more than
    :data:`MAX_ACTIONS` actions, is refused before it is played.

    >>> play({"processes": [f"P{k}" for k in range(100)], "steps": []})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    snapshotlib.course.exercises.ex06.ScenarioTooLarge: my_scenario has 100 processes; this ...
    """
    if not isinstance(doc, dict):
        raise ScenarioError(f"{source} is a {type(doc).__name__}, not a dict")
    scenario_within(
        doc,
        source,
        processes=MAX_PROCESSES,
        steps=MAX_STEPS,
        actions=MAX_ACTIONS,
        error=ScenarioTooLarge,
    )
    steps = doc.get("steps")
    if isinstance(steps, list) and not (
        steps and isinstance(steps[-1], dict) and steps[-1].get("do") == "run"
    ):
        doc = {**doc, "steps": [*steps, {"do": "run"}]}
    return run_scenario(parse_scenario(doc, source=source))


def play_answer(my_scenario: Any) -> Simulator:
    """Play the learner's ``my_scenario`` with :func:`play`, as every test of question 1
    does first; AssertionError saying what to change when it cannot be played (or is
    too large).

    >>> play_answer({"processes": ["P1", "P2"], "steps": [{"do": "wait"}]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: your scenario cannot be played: my_scenario: step 1: ... Hint: check the ...
    """
    try:
        return play(my_scenario)
    except ScenarioTooLarge as e:
        raise AssertionError(str(e)) from None
    except ScenarioError as e:
        raise AssertionError(
            f"your scenario cannot be played: {e}. Hint: check the step it names; on a "
            "non-FIFO channel pick a message with 'msg': LABEL, a marker with 'marker': ID"
        ) from None


def recorded_tokens(sim: Simulator, snapshot_id: str = "s1") -> int:
    """The tokens a snapshot of a ``tokens`` run records, in processes and channels."""
    snap = sim.snapshot(snapshot_id)
    held = sum(int(part.state) for part in snap.processes.values())
    return held + sum(int(m.payload) for msgs in snap.channels.values() for m in msgs)


def to_blame(sim: Simulator, snapshot_id: str = "s1") -> dict[str, str]:
    """Every application message that spoils snapshot ``snapshot_id``, by name, and how:
    :data:`RED_IN_WHITE`, :data:`RED_RECORDED` or :data:`MISSED` (lesson 05a)."""
    trace, snap = sim.trace, sim.snapshot(snapshot_id)
    recorded = {m.id for msgs in snap.channels.values() for m in msgs}
    col = colouring(sim, snapshot_id)
    kinds: dict[str, str] = {}
    for m, msg in enumerate(trace.messages):
        if msg.kind != "app":
            continue
        where = col.where(m)
        if where == BACKWARDS:
            kinds[trace.message_name(m)] = RED_IN_WHITE
        elif where == AFTER and m in recorded:
            kinds[trace.message_name(m)] = RED_RECORDED
        elif where == IN_TRANSIT and m not in recorded:
            kinds[trace.message_name(m)] = MISSED
    return kinds


def read_blamed(answer: Any, what: str = "blamed") -> dict[str, str]:
    """The messages to blame and how (question 2): a non-empty dict from message names
    (strings) to ways, each written as lesson 05a's constant (``RED_IN_WHITE``, the value
    the notebook imports) or as its name in quotes (``"RED_IN_WHITE"``); the ways as the
    constants' values. AssertionError saying what to write otherwise.

    >>> read_blamed({"e": RED_RECORDED, "f": "RED_IN_WHITE"}) == {
    ...     "e": RED_RECORDED, "f": RED_IN_WHITE}
    True
    >>> read_blamed({"e": "late"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: blamed['e'] is 'late': write RED_IN_WHITE, RED_RECORDED or MISSED (imported ...
    """
    if not isinstance(answer, dict) or not answer:
        raise AssertionError(
            f"{what} is {shown(answer)}: write a dict from message names to ways of breaking, "
            'e.g. {"x": MISSED}'
        )
    ways: dict[str, str] = {}
    for name, way in answer.items():
        if not isinstance(name, str):
            raise AssertionError(f"{name!r} is not a message's name (a string)")
        if isinstance(way, str) and way in WAYS.values():
            ways[name] = way
        elif isinstance(way, str) and way in WAYS:
            ways[name] = WAYS[way]
        else:
            raise AssertionError(
                f"{what}[{name!r}] is {way!r}: write RED_IN_WHITE, RED_RECORDED or MISSED "
                "(imported at the top)"
            )
    return ways


def _draw(rng: random.Random) -> dict[str, Any]:
    """A random run on non-FIFO channels as a scenario document, every step explicit."""
    net = Network(_PROCESSES, "complete", fifo=False)
    initial = {p: rng.randint(3, 6) for p in _PROCESSES}
    sim = Simulator(net, "tokens", initial)
    names = iter(_LETTERS)
    steps: list[dict[str, Any]] = []
    plan = ["send"] * rng.randint(5, 7)
    plan.insert(rng.randint(1, 3), "start")

    def deliver() -> None:
        m = rng.choice(sim.in_flight())
        msg = sim.trace.messages[m]
        channel = net.channels[msg.channel]
        step: dict[str, Any] = {"do": "deliver", "from": channel.src, "to": channel.dst}
        if msg.kind == "app":
            step.update(msg=msg.label, label=next(names))
        else:
            step["marker"] = "s1"
        sim.step(Deliver(channel, m, step.get("label")))
        steps.append(step)

    for what in plan:
        while sim.in_flight() and rng.random() < 0.5:
            deliver()
        if what == "start":
            p = rng.choice(_PROCESSES)
            sim.step(StartSnapshot(p, "s1"))
            steps.append({"do": "snapshot", "at": p, "id": "s1"})
            continue
        p = rng.choice([q for q in _PROCESSES if sim.states[q] > 0])
        to = rng.choice([q for q in _PROCESSES if q != p])
        amount, label = rng.randint(1, min(2, sim.states[p])), next(names)
        sim.step(Send(p, to, amount, label))
        steps.append({"do": "send", "from": p, "to": to, "label": label, "payload": amount})
    while sim.in_flight():
        deliver()
    return {"name": NAME, "processes": _PROCESSES, "fifo": False, "app": "tokens",
            "initial": initial, "steps": steps}  # fmt: skip


def _fits(doc: dict[str, Any]) -> bool:
    """Broken by at least two messages, in at least two ways."""
    from ...formats.scenario import parse_scenario, run_scenario

    blamed = to_blame(run_scenario(parse_scenario(doc)))
    return len(blamed) >= 2 and len(set(blamed.values())) >= 2


def scenario_of(variant: int) -> dict[str, Any]:
    """The broken run of question 2, as a scenario document (for the tests)."""
    for attempt in itertools.count():
        doc = _draw(random.Random(f"{NAME}/{variant}/{attempt}"))
        if _fits(doc):
            return doc
    raise AssertionError("unreachable")


def describe(variant: int) -> str:
    """The broken run of question 2 in words: the network, the tokens at the start and
    every step, without running it."""
    doc = scenario_of(variant)
    tokens = ", ".join(f"{p} {n}" for p, n in doc["initial"].items())
    lines = [
        "Three processes, P1, P2 and P3, a channel each way between every two of them; "
        f"the channels are not FIFO. Tokens at the start: {tokens}.",
        "Steps, in order:",
    ]
    for number, step in enumerate(doc["steps"], start=1):
        if step["do"] == "send":
            n = step["payload"]
            what = (
                f"{step['from']} sends message {step['label']} ({n} token{'s' * (n != 1)}) "
                f"to {step['to']}"
            )
        elif step["do"] == "snapshot":
            what = f"{step['at']} starts snapshot s1"
        elif "msg" in step:
            what = (
                f"{step['to']} receives message {step['msg']} from {step['from']} "
                f"(event {step['label']})"
            )
        else:
            what = f"the marker from {step['from']} arrives at {step['to']}"
        lines.append(f"{number:>3}. {what}")
    return "\n".join(lines)

"""Lesson 05, why FIFO matters: what went wrong in a broken snapshot, and the try-it check.

On a non-FIFO channel a message and a marker can swap places, and the marker algorithm
breaks in one of three ways:

* a **red message accepted in a white action**: a message sent after its sender
  recorded overtakes the marker, so the receiver accepts it before recording. The
  receipt is inside the cut, the send outside: an inconsistent cut (EWD 864a's
  forbidden case).
* a **red message recorded in transit**: the same overtaking, but the receiver has
  recorded already (a marker reached it on another channel) and is still recording
  this channel, so it takes the message for one in transit. The sender's recorded
  state still counts what the message carries, and now the channel does too.
* a **white message missed**: the marker overtakes a message sent before the sender
  recorded, so the receiver closes the channel before the message arrives. The message
  is in transit across the cut but no recorded state holds it.

Examples
--------
>>> steps = [
...     {"do": "snapshot", "at": "P1"},
...     {"do": "send", "from": "P1", "to": "P2", "label": "m"},
...     {"do": "deliver", "from": "P1", "to": "P2", "msg": "m", "label": "r"},
... ]
>>> print(check_breaking_run(steps))  # doctest: +ELLIPSIS
✓ It breaks: a red message accepted in a white action. Message m was sent by P1 ...
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..algorithms.base import SnapshotAlgorithm
from ..checks.cut import check_snapshot
from ..colouring import AFTER, BACKWARDS, IN_TRANSIT, colouring
from ..formats.scenario import Scenario, ScenarioError, parse_scenario, run_scenario
from ..model import Network
from ..schedulers import FifoOrder, Scripted
from ..simulator import ActionError, Simulator
from ..workloads import actions_of, random_execution
from .feedback import Feedback, is_blank, no_answer_yet
from .tables import Table

RED_IN_WHITE = "a red message accepted in a white action"
RED_RECORDED = "a red message recorded in transit"
MISSED = "a white message missed"


@dataclass(frozen=True)
class Break:
    """Why a snapshot is wrong: the ``kind`` of break, the ``message`` and its ``channel``."""

    kind: str
    message: str
    channel: str
    explanation: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.explanation}"


def diagnose(sim: Simulator, snapshot_id: str = "s1") -> Break | None:
    """``None`` when the snapshot is right, else the :class:`Break` that spoils it.

    >>> from snapshotlib import Network, Simulator, Send, StartSnapshot, Deliver
    >>> net = Network(["P1", "P2"], fifo=False)
    >>> sim = Simulator(net, "tokens", {"P1": 1})
    >>> sim.step(Send("P1", "P2", 1, label="w"))        # white: sent before P1 records
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> marker = sim.in_flight("P1->P2")[-1]
    >>> sim.step(Deliver(net.channel("P1", "P2"), marker))  # the marker overtakes w
    >>> _ = sim.run()
    >>> diagnose(sim).kind
    'a white message missed'
    """
    result = check_snapshot(sim, snapshot_id)
    if result.ok:
        return None
    m = result.witness
    trace = sim.trace
    if m is None:
        return Break("not complete", "", "", result.reason)
    msg = trace.messages[m]
    channel = sim.network.channels[msg.channel]
    name = trace.message_name(m)
    sender, receiver = channel.src, channel.dst
    sent = trace.action_name(msg.sent_by)
    got = trace.received_by[m]
    received = trace.action_name(got) if got >= 0 else "(not yet)"
    where = colouring(sim, snapshot_id).where(m)
    if where == BACKWARDS:
        return Break(
            RED_IN_WHITE,
            name,
            str(channel),
            f"Message {name} was sent by {sender} in event {sent}, after {sender} recorded (red), "
            f"and accepted by {receiver} in event {received}, before {receiver} recorded (white): "
            f"it overtook the marker on {channel}. {receiver}'s recorded state includes its "
            f"receipt but {sender}'s does not include its sending.",
        )
    if where == AFTER and got >= 0:
        return Break(
            RED_RECORDED,
            name,
            str(channel),
            f"Message {name} was sent by {sender} in event {sent}, after {sender} recorded "
            f"(red), and reached {receiver} in event {received}, after {receiver} recorded "
            f"but before the marker on {channel} arrived: it overtook the marker, so "
            f"{receiver} recorded it as in transit. It belongs to the future of the cut, "
            f"yet the recorded state of {channel} holds it.",
        )
    if where == IN_TRANSIT:
        return Break(
            MISSED,
            name,
            str(channel),
            f"Message {name} was sent by {sender} in event {sent}, before {sender} recorded "
            f"(white), and reached {receiver} in event {received}, after the marker on "
            f"{channel} had already closed that channel's recording: the marker overtook it. "
            "It was in "
            "transit across the cut, yet no recorded state holds it.",
        )
    return Break("wrong channel state", name, str(channel), result.reason)


def narrate(sim: Simulator, snapshot_id: str = "s1") -> list[str]:
    """One line per action of ``sim``, as lesson 03's commentary would say it.

    The run is replayed on a fresh simulator (same network, application, initial values
    and algorithm), so ``sim`` itself is left as it is.

    >>> from snapshotlib.workloads import ring
    >>> lines = narrate(random_execution(ring(2), seed=1, n_actions=3))
    >>> print(lines[1])  # doctest: +ELLIPSIS
    [2] P2 starts snapshot s1: it records its state (no events yet; state 3), sends a marker...
    """
    from .lesson_03 import describe_step

    replay = sim.fork(0)
    lines = []
    for action in actions_of(sim):
        replay.step(action)
        lines.append(describe_step(replay, snapshot_id))
    return lines


def steps_table(lines: Iterable[str]) -> Table:
    """Commentary lines such as ``"[3] P1 sends ..."`` (from :func:`narrate` or lesson
    03's ``describe_step``) as a table: one row per step.

    >>> print(steps_table(["[1] P1 starts snapshot s1", "[2] P1 sends late"]))
    step  what happens
    1     P1 starts snapshot s1
    2     P1 sends late
    """
    rows = []
    for line in lines:
        found = re.match(r"\[(\d+)\] (.*)$", line, re.S)
        rows.append((found.group(1), found.group(2)) if found else ("", line))
    return Table(("step", "what happens"), rows)


def checks_table(sim: Simulator, snapshot_id: str = "s1") -> Table:
    """The engine's verdicts on a snapshot, one row each: the cut check, Dijkstra's
    argument, token conservation (for the ``tokens`` application) and, when the snapshot
    is wrong, :func:`diagnose`'s account of what broke it."""
    from ..checks import check_commutation
    from ..checks.predicates import conservation

    rows = [
        ("cut", check_snapshot(sim, snapshot_id).reason),
        ("Dijkstra", check_commutation(sim, snapshot_id).reason),
    ]
    if sim.app.name == "tokens":
        rows.append(("tokens", conservation(sim, snapshot_id).reason))
    broken = diagnose(sim, snapshot_id)
    if broken is not None:
        rows.append(("diagnosis", str(broken)))
    return Table(("check", "verdict"), rows)


# ------------------------------------------------------------------- surveys


def run_with(scenario: Scenario, algorithm: SnapshotAlgorithm) -> Simulator:
    """Run a scenario's steps under another snapshot algorithm (e.g. the Lai–Yang fix).

    Markers are picked by snapshot id as in the scenario, so the same application
    actions happen in the same order; only what the algorithm does with them changes.
    """
    return run_scenario(scenario, algorithm=algorithm)


def tally(
    network: Network,
    seeds: Iterable[int],
    n_actions: int,
    algorithm: Callable[[], SnapshotAlgorithm] | None = None,
) -> Counter[str]:
    """How many random runs (one per seed) give a right snapshot, and how the others break.

    >>> from snapshotlib.workloads import complete
    >>> tally(complete(3, fifo=True), range(20), n_actions=10)
    Counter({'right': 20})
    """
    counts: Counter[str] = Counter()
    for seed in seeds:
        sim = random_execution(
            network,
            seed=seed,
            n_actions=n_actions,
            algorithm=algorithm() if algorithm is not None else None,
        )
        found = diagnose(sim, "s1")
        counts["right" if found is None else found.kind] += 1
    return counts


# ------------------------------------------------------------------- the try-it


def _scenario_from(answer: Any) -> Scenario:
    """A learner's run as a scenario: a list of steps, or a whole scenario document."""
    if isinstance(answer, Mapping):
        doc = dict(answer)
    else:
        steps = list(answer)
        names: list[str] = []
        for step in steps:
            if isinstance(step, Mapping):
                for key in ("at", "from", "to"):
                    p = step.get(key)
                    if isinstance(p, str) and p not in names:
                        names.append(p)
        names.sort()
        if len(names) < 2:
            names = sorted({*names, "P1", "P2"})
        doc = {"processes": names, "fifo": False, "app": "events", "steps": steps}
    steps = list(doc.get("steps", []))
    if not steps or not (isinstance(steps[-1], Mapping) and steps[-1].get("do") == "run"):
        steps.append({"do": "run"})  # let everything arrive, so the snapshot completes
    doc["steps"] = steps
    return parse_scenario(doc, source="your run")


def _learner_sim(answer: Any) -> Simulator:
    if isinstance(answer, Simulator):
        # replay the learner's actions on a fresh simulator, then let everything arrive
        # (the learner's own simulator is left as it is)
        sim = Simulator(answer.network, answer.app, answer.initial)
        sim.run(Scripted(actions_of(answer)))
        sim.run(FifoOrder())
        return sim
    from ..formats.scenario import run_scenario

    return run_scenario(_scenario_from(answer))


def check_breaking_run(
    answer: Any, kind: str | None = None, channel: str | None = None
) -> Feedback:
    """Does the learner's non-FIFO run break the snapshot? Names the message if it does.

    Parameters
    ----------
    answer
        A list of scenario steps (processes are taken from the steps; channels are
        non-FIFO; a final ``{"do": "run"}`` is added when missing), a whole scenario
        document, or a :class:`~snapshotlib.Simulator` (e.g. an explorer's ``sim``);
        ``None`` while there is no answer yet.
    kind
        :data:`RED_IN_WHITE`, :data:`RED_RECORDED` or :data:`MISSED` to ask for that
        kind of break; any break counts when not given.
    channel
        Ask for the message that breaks it to travel on this channel, e.g. ``"P2->P3"``.

    Examples
    --------
    >>> fine = [{"do": "snapshot", "at": "P1"}]
    >>> print(check_breaking_run(fine))  # doctest: +ELLIPSIS
    ✗ Snapshot s1 of your run is right: ...
    """
    if is_blank(answer):
        return no_answer_yet(
            "Your run",
            "Write a list of steps such as {'do': 'snapshot', 'at': 'P1'} and run again.",
        )
    try:
        sim = _learner_sim(answer)
    except (ScenarioError, ActionError, TypeError, ValueError) as e:
        return Feedback(
            False,
            f"Your run cannot be played: {e}",
            "Check the step it names; a message is picked on a non-FIFO channel with "
            "{'do': 'deliver', 'from': ..., 'to': ..., 'msg': LABEL}.",
        )
    snapshots = sim.snapshot_ids()
    if not snapshots:
        return Feedback(
            False,
            "Your run takes no snapshot.",
            "Add a step {'do': 'snapshot', 'at': 'P1'}.",
        )
    if sim.network.fifo:
        return Feedback(
            False,
            "Your run has FIFO channels, and on those the marker algorithm never breaks.",
            "Set 'fifo': False in your scenario (a plain list of steps is non-FIFO already).",
        )
    breaks = [b for sid in snapshots if (b := diagnose(sim, sid)) is not None]
    wanted = [
        b
        for b in breaks
        if (kind is None or b.kind == kind) and (channel is None or b.channel == channel)
    ]
    if wanted:
        b = wanted[0]
        return Feedback(True, f"It breaks: {b.kind}. {b.explanation}")
    if breaks and channel is not None and all(b.channel != channel for b in breaks):
        src, _, dst = channel.partition("->")
        return Feedback(
            False,
            f"Your run breaks ({breaks[0].kind}), but the message to blame, "
            f"{breaks[0].message}, travels on {breaks[0].channel}, not on {channel}.",
            f"Make {src} record first (a marker must reach it), then let it send on "
            f"{channel} and deliver that message before any marker reaches {dst}.",
        )
    if breaks:
        return Feedback(
            False,
            f"Your run breaks, but as {breaks[0].kind} (message {breaks[0].message}), "
            f"not as {kind}.",
            _HINTS.get(kind or "", ""),
        )
    return Feedback(
        False,
        f"Snapshot {snapshots[0]} of your run is right: a consistent cut, and every channel "
        "holds exactly the messages in transit.",
        _HINTS[kind or RED_IN_WHITE],
    )


_HINTS = {
    RED_IN_WHITE: (
        "Make a message overtake a marker: start the snapshot at the sender, then let it "
        "send, and deliver that message (pick it with 'msg') before the marker reaches "
        "the receiver."
    ),
    RED_RECORDED: (
        "Let the receiver record first (start the snapshot there), let its marker reach "
        "the sender, then have the sender send and deliver that message before the "
        "sender's own marker."
    ),
    MISSED: (
        "Make a marker overtake a message: let the sender send first, then start the "
        "snapshot at it, and deliver the marker (pick it with 'marker': 's1') before the "
        "message."
    ),
}


__all__ = [
    "MISSED",
    "RED_IN_WHITE",
    "RED_RECORDED",
    "Break",
    "check_breaking_run",
    "checks_table",
    "diagnose",
    "narrate",
    "run_with",
    "steps_table",
    "tally",
]

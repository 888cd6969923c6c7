"""Lessons 05a and 05b in words: what broke in a non-FIFO snapshot (diagnose), the run narrated, the
tally over many runs. Built from runs of the engine and deterministic, so the notebook
can compare what it prints with its stored output.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...algorithms.base import SnapshotAlgorithm
from ...checks import check_commutation
from ...checks.cut import check_snapshot
from ...checks.predicates import conservation
from ...colouring import AFTER, BACKWARDS, IN_TRANSIT, colouring
from ...formats.scenario import Scenario, run_scenario
from ...model import Network
from ...simulator import Simulator
from ...workloads import actions_of, random_execution
from ..lesson_03 import describe_step
from ..tables import Table

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

"""Exercise 4, *A state that never occurred*: the one check every test of a learner's
scenario starts with.

The learner writes ``my_scenario``, a run whose Chandy–Lamport snapshot ``s1`` records a
global state the run never passed through, to a brief of their own (:func:`brief`: the
processes, who starts ``s1``, and a channel on which it records a message in transit),
which no run of the lessons meets for most learners and which differs between them.
Every test, public or hidden, plays it with :func:`play` first, so they all accept and
refuse the same scenarios: one no larger than :data:`MAX_PROCESSES` processes,
:data:`MAX_STEPS` steps and :data:`MAX_ACTIONS` actions (checked before it is played: the
tests check every moment of the run), that plays, takes its snapshot with Chandy–Lamport
and completes ``s1``.

>>> sim = play({"processes": ["P1", "P2"], "app": "tokens", "initial": {"P1": 2},
...             "steps": [{"do": "snapshot", "at": "P1", "id": "s1"}, {"do": "run"}]})
>>> sim.snapshot("s1").complete
True
"""

from __future__ import annotations

import random
from typing import Any

from .forms import scenario_within

NAME = "04_never_occurred"
VARIANT = True
REFUSE: dict[str, tuple[str, ...]] = {}

#: the largest scenario the tests take: they compare every moment of the run
MAX_PROCESSES = 8
MAX_STEPS = 200
MAX_ACTIONS = 2000


def play(my_scenario: Any) -> Any:
    """Play ``my_scenario`` as every test of the exercise does, and return the run (a
    :class:`~snapshotlib.simulator.Simulator`) if it is a scenario the question asks
    for: small enough, playable, its snapshot ``s1`` taken by Chandy–Lamport and
    complete. AssertionError saying what to change otherwise.

    >>> play({"processes": ["P1", "P2"], "algorithm": {"name": "lai-yang"},
    ...       "steps": [{"do": "snapshot", "at": "P1", "id": "s1"}, {"do": "run"}]})
    Traceback (most recent call last):
    AssertionError: take the snapshot with Chandy-Lamport: leave out the 'algorithm' field
    >>> play({"processes": [f"P{k}" for k in range(100)], "steps": []})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: my_scenario has 100 processes; this exercise takes at most 8 (the grader...
    """
    from ...algorithms import ChandyLamport
    from ...formats.scenario import ScenarioError, parse_scenario, run_scenario

    if not isinstance(my_scenario, dict):
        raise AssertionError(
            "my_scenario must be a scenario dict like the example above, not "
            f"{type(my_scenario).__name__}"
        )
    scenario_within(
        my_scenario, "my_scenario", processes=MAX_PROCESSES, steps=MAX_STEPS, actions=MAX_ACTIONS
    )
    try:
        sim = run_scenario(parse_scenario(my_scenario, source="my_scenario"))
    except ScenarioError as e:
        raise AssertionError(f"the scenario does not run: {e}") from None
    if not isinstance(sim.algorithm, ChandyLamport):
        raise AssertionError(
            "take the snapshot with Chandy-Lamport: leave out the 'algorithm' field"
        )
    snapshots = sim.snapshots()
    if "s1" not in snapshots:
        raise AssertionError(
            f"the run has no snapshot s1 (it has {', '.join(snapshots) or 'none'}): "
            "add a step {'do': 'snapshot', 'at': ..., 'id': 's1'}"
        )
    snap = sim.snapshot("s1")
    if not snap.complete:
        raise AssertionError(
            "snapshot s1 is not complete (still recording "
            f"{', '.join(snap.pending_channels) or 'at some process'}): end the steps with "
            "{'do': 'run'} so that every marker arrives"
        )
    return sim


def brief(variant: int) -> dict[str, Any]:
    """What the learner's run must have: exactly these processes, ``s1`` started by the
    initiator alone, and at least one application message recorded in transit on the
    channel ``in_transit_on`` (whose ends are neither each other nor the initiator).

    >>> b = brief(7)
    >>> len(b["processes"]) in (3, 4) and b["initiator"] not in b["in_transit_on"]
    True
    """
    rng = random.Random(f"{NAME}/brief/{variant}")
    processes = [f"P{k}" for k in range(1, rng.choice((3, 4)) + 1)]
    initiator, src, dst = rng.sample(processes, 3)
    return {"processes": processes, "initiator": initiator, "in_transit_on": f"{src}->{dst}"}


def brief_text(wanted: dict[str, Any]) -> str:
    """The brief as the notebook prints it."""
    return (
        f"Your run has the processes {', '.join(wanted['processes'])} (channels joining "
        f"every pair), one snapshot, s1, started by {wanted['initiator']} alone, and s1 "
        f"records at least one message in transit on {wanted['in_transit_on']}."
    )


def brief_problem(sim: Any, wanted: dict[str, Any]) -> str | None:
    """What the run ``sim`` (from :func:`play`) does not meet of ``wanted`` (a
    :func:`brief`), in one sentence; ``None`` when it meets all of it."""
    processes = list(sim.network.processes)
    if processes != wanted["processes"]:
        return (
            f"your run's processes are {', '.join(processes)}; your brief asks for "
            f"{', '.join(wanted['processes'])}, in that order"
        )
    snapshot = sim.snapshot("s1")
    if list(snapshot.initiators) != [wanted["initiator"]]:
        return (
            f"s1 is started by {', '.join(snapshot.initiators)}; your brief asks for "
            f"{wanted['initiator']} alone"
        )
    channel = wanted["in_transit_on"]
    if not snapshot.channels.get(channel):
        return (
            f"s1 records no message in transit on {channel}: your brief asks for at least "
            "one there (sent before its sender records, received after its receiver does)"
        )
    return None

"""Exercise 14, *Lamport clocks*: each learner's run, and the Lamport times the tests
compare answers with.

Question 1 asks for ``lamport_times(trace)``: every event's Lamport time, by its name.
Question 2 asks for a pair of events of the learner's run whose Lamport times are
ordered although neither happens before the other. The question refuses the engine's
Lamport clocks, so the grader draws the learner's run outside the sandbox
(:func:`~.precomputed.precomputed`). The truths, :func:`truth` and
:func:`misleading_pairs` for the learner's run and :func:`random_truth` for the random
runs of the hidden tests (:func:`random_run`), are computed where the tests run, in the
grader; none goes into the sandbox, and an answer that calls one is refused.

>>> sim = execution(7)
>>> sorted(truth(7)) == sorted(sim.trace.action_name(i) for i, _ in sim.trace.app_actions())
True
>>> all(times[x] < times[y] for times in [truth(7)] for x, y in misleading_pairs(7))
True
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ...checks.causality import concurrent, lamport_clocks, vector_clocks
from ...formats.record import recorded_scenario
from ...formats.scenario import parse_scenario, run_scenario
from ...simulator import Simulator
from ...workloads import max_extra_edges, random_execution, random_strongly_connected
from ..lesson_01 import describe_execution
from .ex01 import random_named_run
from .precomputed import precomputed

NAME = "14_lamport_clocks"
VARIANT = True
#: the tests' own answers: an answer that looks them up is refused like the engine's
_TRUTHS = (
    "snapshotlib.course.exercises.ex14:truth",
    "snapshotlib.course.exercises.ex14:random_truth",
    "snapshotlib.course.exercises.ex14:misleading_pairs",
    "snapshotlib.course.exercises.ex14:_times",
    "snapshotlib.course.exercises.ex14:_misleading",
)
REFUSE: dict[str, tuple[str, ...]] = {
    "lamport_times": (
        "snapshotlib.checks.causality:lamport_clocks",
        "snapshotlib.checks.causality:lamport_order",
        "snapshotlib.course.lesson_01.text:lamport_time",
        "snapshotlib.course.lesson_01.text:lamport_table",
        *_TRUTHS,
    ),
    "misleading": _TRUTHS,
}

#: the random runs of the hidden tests: seeds, and their size
RANDOM_SEEDS = tuple(range(30))


def _times(sim: Simulator) -> dict[str, int]:
    """Every application event's Lamport time, by name, in the run's order."""
    trace = sim.trace
    times = lamport_clocks(trace, sim.network.processes)
    return {trace.action_name(i): t for i, t in enumerate(times) if t is not None}


def _misleading(sim: Simulator, named: dict[str, int]) -> list[list[str]]:
    """Every pair (x, y) of events with L(x) < L(y) (``named``: :func:`_times`) that
    are concurrent."""
    trace = sim.trace
    clocks = vector_clocks(trace, sim.network.processes)
    times = {i: named[trace.action_name(i)] for i, _ in trace.app_actions()}
    return [
        [trace.action_name(i), trace.action_name(j)]
        for i, j in itertools.permutations(times, 2)
        if times[i] < times[j] and concurrent(clocks, i, j)
    ]


@precomputed
def _made(variant: int) -> dict[str, Any]:
    """The learner's run, as the scenario that replays it: drawn until it has misleading
    pairs, which takes the engine's clocks, so the grader draws it outside the sandbox.
    Only the run goes into the sandbox: the answers (:func:`truth`,
    :func:`misleading_pairs`) are computed where the tests run, in the grader."""
    for attempt in itertools.count():
        sim = random_named_run(random.Random(f"{NAME}/{variant}/{attempt}"))
        received = sum(1 for m in sim.trace.received_by if m >= 0)
        if received >= 4 and _misleading(sim, _times(sim)):
            return {"run": recorded_scenario(sim, f"exercise 14, variant {variant}")}
    raise AssertionError("unreachable")


def execution(variant: int) -> Simulator:
    """The learner's run: three or four processes, events named as in lesson 01."""
    return run_scenario(parse_scenario(_made(variant)["run"]))


def describe(variant: int) -> str:
    """The learner's run in words, one line per process."""
    return describe_execution(execution(variant))


def truth(variant: int) -> dict[str, int]:
    """Every event of the learner's run with its Lamport time, by name."""
    return _times(execution(variant))


def misleading_pairs(variant: int) -> list[tuple[str, str]]:
    """The pairs of events of the learner's run whose Lamport times are ordered although
    they are concurrent: the right answers to question 2."""
    sim = execution(variant)
    return [(x, y) for x, y in _misleading(sim, _times(sim))]


def random_run(seed: int) -> Simulator:
    """A random run of the hidden tests: two to five processes, markers of a snapshot
    among the events (which are not events of the application: no Lamport time)."""
    n = 2 + seed % 4
    net = random_strongly_connected(
        n, extra_edges=min(seed % 3, max_extra_edges(n)), seed=seed, fifo=seed % 2 == 0
    )
    return random_execution(net, seed=500 + seed, n_actions=40, snapshots=1)


def random_truth(seed: int) -> dict[str, int]:
    """The Lamport time of every application event of :func:`random_run` ``(seed)``."""
    return _times(random_run(seed))

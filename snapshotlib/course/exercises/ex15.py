"""Exercise 15, *Rollback recovery*: each learner's run and checkpoints, the recovery
lines the tests compare answers with, and the brief of a run that falls like dominoes.

Question 1 asks for ``recovery_line(trace, checkpoints)``: the latest consistent cut made
of the checkpoints (event counts per process; every process may also restart from 0).
The question refuses the engine's recovery lines, so the grader draws the learner's run
and checkpoints outside the sandbox (:func:`~.precomputed.precomputed`). The truths,
:func:`truth` for the learner's run and :func:`random_truth` for the random runs of the
hidden tests (:func:`random_case`), are computed where the tests run, in the grader;
none goes into the sandbox, and an answer that calls one is refused.

Question 2 asks for a run and checkpoints, every process saving at least the brief's
number of them (:func:`brief`), whose recovery line is every process's start: the domino
effect. :func:`play` plays it as every test does.

>>> sim, marks = execution(7), checkpoints(7)
>>> line = truth(7)
>>> sorted(line) == sorted(sim.network.processes) and line != latest(7)
True
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from ...checks.recovery import checkpoint_sets, rollback_propagation
from ...formats.record import recorded_scenario
from ...formats.scenario import parse_scenario, run_scenario
from ...simulator import Simulator
from ...workloads import max_extra_edges, random_execution, random_strongly_connected
from ..lesson_01 import describe_execution
from .ex01 import random_named_run
from .forms import scenario_within
from .precomputed import precomputed

NAME = "15_recovery_line"
VARIANT = True
REFUSE: dict[str, tuple[str, ...]] = {
    "recovery_line": (
        "snapshotlib.checks.recovery:recovery_line",
        "snapshotlib.checks.recovery:rollback_propagation",
        "snapshotlib.course.lesson_11.tryit:check_recovery_line",
        # the tests' own answers
        "snapshotlib.course.exercises.ex15:truth",
        "snapshotlib.course.exercises.ex15:random_truth",
    ),
}

#: the random runs of the hidden tests
RANDOM_SEEDS = tuple(range(30))
#: the largest run question 2 takes
MAX_STEPS = 60
MAX_PROCESSES = 4


def _draw(rng: random.Random, sim: Simulator, most: int) -> dict[str, list[int]]:
    """Up to ``most`` checkpoints per process that has events, at random, after its
    start."""
    marks = {}
    for p in sim.network.processes:
        events = len(sim.trace.process_actions(p))
        if events:
            marks[p] = sorted(rng.sample(range(1, events + 1), min(events, rng.randint(0, most))))
    return marks


@precomputed
def _made(variant: int) -> dict[str, Any]:
    """The learner's run (as the scenario that replays it) and checkpoints: drawn until
    reaching the recovery line takes at least two rollbacks and leaves some process past
    its start, which takes the engine's recovery lines, so the grader draws them outside
    the sandbox. Only the run and checkpoints go into the sandbox: the line
    (:func:`truth`) is computed where the tests run, in the grader."""
    for attempt in itertools.count():
        rng = random.Random(f"{NAME}/{variant}/{attempt}")
        sim = random_named_run(rng)
        marks = {p: ks or [1] for p, ks in _draw(rng, sim, 2).items()}
        line, steps = rollback_propagation(sim.trace, marks)
        if len(marks) == len(sim.network.processes) and len(steps) >= 2 and any(line.values()):
            return {
                "run": recorded_scenario(sim, f"exercise 15, variant {variant}"),
                "checkpoints": marks,
            }
    raise AssertionError("unreachable")


def execution(variant: int) -> Simulator:
    """The learner's run: three or four processes, events named as in lesson 01."""
    return run_scenario(parse_scenario(_made(variant)["run"]))


def checkpoints(variant: int) -> dict[str, list[int]]:
    """The checkpoints of the learner's run: event counts per process."""
    return {p: list(ks) for p, ks in _made(variant)["checkpoints"].items()}


def latest(variant: int) -> dict[str, int]:
    """Every process's latest checkpoint: where rollback propagation starts."""
    return {p: max(ks) for p, ks in checkpoints(variant).items()}


def describe(variant: int) -> str:
    """The learner's run in words, one line per process, then its checkpoints."""
    marks = checkpoints(variant)
    saved = "; ".join(
        f"{p} after {' and '.join(map(str, ks))} event{'s' * (ks != [1])}"
        for p, ks in marks.items()
    )
    return describe_execution(execution(variant)) + f"\ncheckpoints: {saved}"


def truth(variant: int) -> dict[str, int]:
    """The recovery line of the learner's checkpoints (computed where the tests run, in
    the grader: it is not handed to the sandbox)."""
    return rollback_propagation(execution(variant).trace, checkpoints(variant))[0]


def random_case(seed: int) -> tuple[Simulator, dict[str, list[int]]]:
    """A random run of the hidden tests (two to five processes, a snapshot's markers
    among its actions, which are not events) and checkpoints on it: none for some
    processes, and, for one seed in five, the last process with checkpoints left out of
    the dict altogether."""
    n = 2 + seed % 4
    net = random_strongly_connected(
        n, extra_edges=min(seed % 3, max_extra_edges(n)), seed=seed, fifo=seed % 2 == 0
    )
    sim = random_execution(net, seed=700 + seed, n_actions=40, snapshots=1)
    rng = random.Random(f"{NAME}/random/{seed}")
    marks = _draw(rng, sim, 3)
    if seed % 5 == 4:
        marks.pop(max(marks))
    return sim, marks


def random_truth(seed: int) -> dict[str, int]:
    """The recovery line of :func:`random_case` ``(seed)``: every process that has
    events."""
    sim, marks = random_case(seed)
    return rollback_propagation(sim.trace, marks)[0]


# ----------------------------------------------------------------------------- question 2


def brief(variant: int) -> dict[str, int]:
    """The learner's brief for question 2: how many processes, and how many checkpoints
    after its start each must save at least.

    >>> b = brief(7)
    >>> 2 <= b["processes"] <= 4 and 1 <= b["checkpoints"] <= 3
    True
    """
    rng = random.Random(f"{NAME}/brief/{variant}")
    return {"processes": rng.choice((2, 3, 4)), "checkpoints": rng.choice((1, 2, 3))}


def brief_text(wanted: dict[str, int]) -> str:
    """The brief as the notebook prints it."""
    n, k = wanted["processes"], wanted["checkpoints"]
    return (
        f"Your run: {n} processes, each saving at least {k} checkpoint{'s' * (k > 1)} "
        "after its start, and a recovery line at every process's start."
    )


def play(my_run: Any, my_checkpoints: Any, wanted: dict[str, int]) -> Simulator:
    """Play ``my_run`` (a scenario dict) as every test of question 2 does and check
    ``my_checkpoints`` against it and the brief ``wanted``; the run if both are what the
    question takes, AssertionError saying what to change otherwise.

    >>> play({"processes": ["P1"], "steps": []}, {}, {"processes": 2, "checkpoints": 1})
    Traceback (most recent call last):
    AssertionError: my_run has 1 process; your brief asks for 2
    """
    from ...formats.scenario import ScenarioError

    if not isinstance(my_run, dict):
        raise AssertionError(
            f"my_run must be a scenario dict like the example, not {type(my_run).__name__}"
        )
    scenario_within(my_run, "my_run", processes=MAX_PROCESSES, steps=MAX_STEPS)
    n = len(my_run.get("processes", []))
    if n != wanted["processes"]:
        raise AssertionError(
            f"my_run has {n} process{'es' * (n != 1)}; your brief asks for {wanted['processes']}"
        )
    try:
        sim = run_scenario(parse_scenario(my_run, source="my_run"))
    except ScenarioError as e:
        raise AssertionError(f"the scenario does not run: {e}") from None
    idle = [p for p in sim.network.processes if not sim.trace.process_actions(p)]
    if idle:
        raise AssertionError(
            f"{', '.join(idle)} took no part in my_run: every process of your brief must "
            "send or receive, and save its checkpoints"
        )
    if not isinstance(my_checkpoints, dict):
        raise AssertionError(
            "my_checkpoints must be a dict from each process to its checkpoints, e.g. "
            f'{{"P1": [2], "P2": [1, 3]}}, not {type(my_checkpoints).__name__}'
        )
    try:
        marks = checkpoint_sets(sim.trace, my_checkpoints)
    except (TypeError, ValueError) as e:
        raise AssertionError(f"my_checkpoints: {e}") from None
    few = [p for p, ks in marks.items() if len(ks) - 1 < wanted["checkpoints"]]
    if few:
        raise AssertionError(
            f"{', '.join(few)} saved fewer than {wanted['checkpoints']} checkpoint(s) after "
            "its start (0 does not count); your brief asks every process for at least that"
        )
    return sim

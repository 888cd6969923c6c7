"""Exercise 1, *Is this cut consistent?*: each learner's execution and the two frontiers
of question 2.

:func:`execution` is a random run of three or four processes whose events are named as
in lesson 01 (``a1, a2, ...`` for P1, ``b1, ...`` for P2, and so on; a message is named
after the event that sends it). It is drawn again until question 2 has what it needs:
a frontier ``F1`` whose cut is inconsistent, and a frontier ``F2`` whose cut is
inconsistent in a way that takes more than one look to repair (a message received
inside ``F2`` was sent after another receive that has to leave the cut).

>>> sim = execution(7)
>>> sim.network.processes == execution(7).network.processes
True
>>> sorted(frontiers(7))
['F1', 'F2']
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from typing import Any

from ...formats.record import recorded_scenario
from ...formats.scenario import parse_scenario, run_scenario
from ...model import Network
from ...simulator import Simulator
from ...trace import APP, RECEIVE, SEND
from ..lesson_01 import describe_execution, offending_messages
from .precomputed import precomputed

NAME = "01_is_this_cut_consistent"
VARIANT = True

#: the engine's cut checks (and the helpers built on them) do the work the answers ask for
_CUT_CHECKS = (
    "snapshotlib.checks.cut:check_frontier",
    "snapshotlib.checks.cut:check_cut",
    "snapshotlib.checks.cut:check_snapshot",
    "snapshotlib.checks.lattice:cut_lattice",
    "snapshotlib.checks.lattice:_Run",  # the consistent cuts, which cut_lattice lists
    "snapshotlib.course.lesson_01:offending_messages",
    "snapshotlib.course.lesson_01:check_inconsistent_frontier",
    "snapshotlib.course.lesson_01:check_smallest_cut",
    "snapshotlib.course.exercises.ex01:_shape",
)
REFUSE: dict[str, tuple[str, ...]] = {
    "offending_message": _CUT_CHECKS,
    "largest_in_f1": _CUT_CHECKS,
    "largest_in_f2": _CUT_CHECKS,
}

_LETTERS = "abcd"


def random_named_run(rng: random.Random) -> Simulator:
    """A random run of three or four processes (more often three) on a complete graph,
    its events named as in lesson 01; some messages may still be in flight at its end."""
    n = rng.choice((3, 3, 4))
    names = [f"P{i + 1}" for i in range(n)]
    sim = Simulator(Network(names, "complete"), "events")
    letter = dict(zip(names, _LETTERS, strict=False))
    counts = dict.fromkeys(names, 0)

    def label(p: str) -> str:
        counts[p] += 1
        return f"{letter[p]}{counts[p]}"

    target = rng.randint(5 * n, 5 * n + 3)
    while sum(counts.values()) < target:
        busy = [i for i, q in enumerate(sim.queues) if q]
        if busy and rng.random() < 0.45:
            ch = rng.choice(busy)
            sim.deliver(ch, 0, label(sim.network.channels[ch].dst))
            continue
        p = rng.choice(names)
        if rng.random() < 0.6:
            ch = rng.choice(sim.output_channels(p))
            sim.send(p, ch, None, label(p))
        else:
            sim.internal(p, label(p))
    return sim


def _shape(sim: Simulator, frontier: Mapping[str, int]) -> tuple[bool, bool]:
    """Whether the cut is inconsistent, and whether repairing it takes a second look: a
    process sends, after a receive that has to leave the cut, a message that is received
    inside the cut before any receive that leaves the cut at its receiver."""
    trace = sim.trace
    bad = set(offending_messages(sim, frontier))
    if not bad:
        return False, False
    inside = {p: trace.process_actions(p)[:n] for p, n in frontier.items()}
    first_bad: dict[str, int] = {}
    for p, events in inside.items():
        for i in events:
            a = trace.actions[i]
            if a.kind == RECEIVE and trace.message_name(a.message) in bad:
                first_bad[p] = i
                break
    for p, events in inside.items():
        for i in events:
            a = trace.actions[i]
            if a.kind != SEND or i < first_bad.get(p, len(trace.actions)):
                continue
            got = trace.received_by[a.message]
            receiver = trace.actions[got].process if got >= 0 else None
            if (
                receiver is not None
                and got in inside[receiver]
                and got < first_bad.get(receiver, len(trace.actions))
            ):
                return True, True
    return True, False


def _candidates(sim: Simulator) -> list[dict[str, int]]:
    procs = sim.network.processes
    sizes = [range(len(sim.trace.process_actions(p)) + 1) for p in procs]
    return [dict(zip(procs, f, strict=True)) for f in itertools.product(*sizes)]


def _pick(sim: Simulator, rng: random.Random) -> dict[str, dict[str, int]] | None:
    """The two frontiers of question 2, or None if this run has none that fit."""
    one: list[dict[str, int]] = []
    two: list[dict[str, int]] = []
    for f in _candidates(sim):
        if 0 in f.values():
            continue  # every process has events inside: no process left out
        bad, cascade = _shape(sim, f)
        if bad:
            (two if cascade else one).append(f)
    if len(one) < 5 or len(two) < 5:
        return None
    return {"F1": rng.choice(one), "F2": rng.choice(two)}


@precomputed
def _made(variant: int) -> dict[str, Any]:
    """The learner's run (as the scenario that replays it) and the two frontiers: made
    with the engine's cut check, so the grader makes them outside the sandbox."""
    for attempt in itertools.count():
        rng = random.Random(f"{NAME}/{variant}/{attempt}")
        sim = random_named_run(rng)
        received = sum(
            1
            for m, msg in enumerate(sim.trace.messages)
            if msg.kind == APP and sim.trace.received_by[m] >= 0
        )
        if received < 4:
            continue
        picked = _pick(sim, rng)
        if picked is not None:
            return {"run": recorded_scenario(sim, f"exercise 1, variant {variant}"),
                    "frontiers": picked}  # fmt: skip
    raise AssertionError("unreachable")


def execution(variant: int) -> Simulator:
    """The learner's execution: a run of three or four processes, no snapshot taken."""
    return run_scenario(parse_scenario(_made(variant)["run"]))


def frontiers(variant: int) -> dict[str, dict[str, int]]:
    """The two frontiers of question 2, ``{"F1": {...}, "F2": {...}}``; both cuts are
    inconsistent."""
    frontiers: dict[str, dict[str, int]] = _made(variant)["frontiers"]
    return frontiers


def describe(variant: int) -> str:
    """The learner's execution in words, one line per process."""
    return describe_execution(execution(variant))

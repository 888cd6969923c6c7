"""Do stable predicates decided on snapshots hold up? Many random runs, checked.

:func:`stability_sweep` takes snapshots along random runs of the ``requests``
application and compares what each said (termination, deadlock) with the true state
when it began and when it completed (:mod:`~snapshotlib.checks.true_state`): a stable
predicate found in a snapshot must hold at its end, and one that held at its start
must be found. Lesson 06a shows the figures (``snapshotlib.course.lesson_06``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..actions import Action, Send, StartSnapshot
from ..checks.predicates import deadlock, termination
from ..checks.true_state import true_state
from ..model import Network
from ..schedulers import RandomOrder
from ..simulator import Simulator
from ..trace import (
    SnapshotComplete,
)


@dataclass(frozen=True)
class StabilitySweep:
    """What :func:`stability_sweep` found, per predicate (``termination``, ``deadlock``).

    Attributes
    ----------
    runs, snapshots
        How many random runs, and how many snapshots were taken in them.
    said_yes
        Snapshots whose recorded state satisfies the predicate.
    yes_but_false_at_end
        Of those, how many were wrong: the true state when the snapshot completed did not
        satisfy it (the theory says none).
    true_at_start, no_but_true_at_start
        Snapshots begun when the predicate already held, and how many of them still
        said no (the theory says none).
    no_but_true_at_end
        Snapshots that said "not yet" although the predicate held by the time they
        completed: late, not wrong.
    pairs, flips
        Pairs (a snapshot that said yes, a snapshot begun after that answer was
        complete), and how many of those pairs had the later snapshot say no.
    """

    runs: int
    snapshots: int
    said_yes: Mapping[str, int] = field(default_factory=dict)
    yes_but_false_at_end: Mapping[str, int] = field(default_factory=dict)
    true_at_start: Mapping[str, int] = field(default_factory=dict)
    no_but_true_at_start: Mapping[str, int] = field(default_factory=dict)
    no_but_true_at_end: Mapping[str, int] = field(default_factory=dict)
    pairs: Mapping[str, int] = field(default_factory=dict)
    flips: Mapping[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"{self.runs} random runs, {self.snapshots} snapshots"]
        for name in ("termination", "deadlock"):
            lines += [
                f"{name}:",
                f"  said yes: {self.said_yes[name]}; "
                f"of these, false when the snapshot completed: {self.yes_but_false_at_end[name]}",
                f"  begun when it already held: {self.true_at_start[name]}; "
                f"of these, said no: {self.no_but_true_at_start[name]}",
                f"  said not yet, though it held by the time the snapshot completed: "
                f"{self.no_but_true_at_end[name]}",
                f"  a yes, then a no from a snapshot begun after the yes: "
                f"{self.flips[name]} of {self.pairs[name]} pairs",
            ]
        return "\n".join(lines)


#: the stable predicates the sweep decides on each snapshot, by name
STABLE_PREDICATES = {"termination": termination, "deadlock": deadlock}


def _truth(sim: Simulator) -> dict[str, bool]:
    """Each predicate on the true state now."""
    now = true_state(sim)
    return {name: f(sim, now).holds for name, f in STABLE_PREDICATES.items()}


class _SweepRun:
    """One run of the sweep: snapshots begun, and the truth when each began and ended."""

    def __init__(self, sim: Simulator, rng: random.Random) -> None:
        self.sim = sim
        self.rng = rng
        self.started: dict[str, int] = {}  # snapshot id -> trace index where it began
        self.finished: dict[str, int] = {}  # snapshot id -> trace length when complete
        self.at_start: dict[str, dict[str, bool]] = {}
        self.at_end: dict[str, dict[str, bool]] = {}

    def begin(self) -> None:
        sid = f"s{len(self.started) + 1}"
        self.at_start[sid] = _truth(self.sim)
        self.started[sid] = self.sim.time
        self.sim.step(StartSnapshot(self.rng.choice(self.sim.network.processes), sid))

    def step(self, action: Action) -> None:
        events = self.sim.trace.events
        seen = len(events)
        self.sim.step(action)
        for e in events[seen:]:
            if isinstance(e, SnapshotComplete) and e.snapshot_id not in self.finished:
                self.finished[e.snapshot_id] = self.sim.time
                self.at_end[e.snapshot_id] = _truth(self.sim)


def stability_sweep(runs: int = 200, processes: int = 4, seed: int = 6) -> StabilitySweep:
    """Test the two guarantees on many random runs of the ``requests`` application.

    In each run, every process asks a random other process with probability one half,
    all at the start (after that a process only reacts to messages, so termination is
    stable); messages are then delivered in a random order, with snapshots begun at
    random moments and one more after everything has settled. For each snapshot the
    verdict on its recorded state (up to four snapshots per run while messages are
    moving) is compared with the true state when it began and
    when it completed.

    >>> result = stability_sweep(runs=20, seed=1)
    >>> result.yes_but_false_at_end, result.flips
    ({'termination': 0, 'deadlock': 0}, {'termination': 0, 'deadlock': 0})
    """
    rng = random.Random(seed)
    names = [f"P{k}" for k in range(1, processes + 1)]
    counts: dict[str, dict[str, int]] = {
        key: dict.fromkeys(STABLE_PREDICATES, 0)
        for key in (
            "said_yes",
            "yes_but_false_at_end",
            "true_at_start",
            "no_but_true_at_start",
            "no_but_true_at_end",
            "pairs",
            "flips",
        )
    }
    total = 0
    for _ in range(runs):
        sim = Simulator(Network(names), app="requests")
        for p in names:
            if rng.random() < 0.5:
                sim.step(Send(p, rng.choice([q for q in names if q != p]), "request"))
        run = _SweepRun(sim, rng)
        scheduler = RandomOrder(rng.randrange(2**31))
        while True:
            if len(run.started) < 4 and rng.random() < 0.2:
                run.begin()
            action = scheduler.choose(sim)
            if action is None:
                break
            run.step(action)
        run.begin()  # one more once everything has been delivered
        while (action := scheduler.choose(sim)) is not None:
            run.step(action)
        started, finished, at_start, at_end = run.started, run.finished, run.at_start, run.at_end
        total += len(started)
        verdicts = {
            sid: {name: f(sim, sid).holds for name, f in STABLE_PREDICATES.items()}
            for sid in started
        }
        for name in STABLE_PREDICATES:
            for sid in started:
                yes = verdicts[sid][name]
                counts["said_yes"][name] += yes
                counts["yes_but_false_at_end"][name] += yes and not at_end[sid][name]
                counts["true_at_start"][name] += at_start[sid][name]
                counts["no_but_true_at_start"][name] += at_start[sid][name] and not yes
                counts["no_but_true_at_end"][name] += at_end[sid][name] and not yes
                if not yes:
                    continue
                for later in started:
                    if started[later] >= finished[sid]:
                        counts["pairs"][name] += 1
                        counts["flips"][name] += not verdicts[later][name]
    return StabilitySweep(runs, total, **counts)

"""The two baselines of lesson 07's trade-off table, measured: stop-the-world and
fork/copy-on-write, on the same job and seeds as the barrier variants.

:func:`baselines` returns one row per baseline in the shape of
:func:`~snapshotlib.dataflow.costs.measure`'s rows (:class:`BaselineCosts` is a
:class:`~snapshotlib.dataflow.costs.Costs` with a few more fields): the shared columns
are measured by ``measure`` itself, running the job with the baseline's algorithm class
(:class:`~snapshotlib.algorithms.stop_the_world.StopTheWorld`,
:class:`~snapshotlib.dataflow.fork.ForkSnapshot`); the extra columns are what the
baselines pay instead of blocked inputs and buffered records: the pause of
stop-the-world (:func:`pauses`) and the pages fork's copy-on-write copies
(:func:`~snapshotlib.dataflow.fork.fork_costs`). Lesson 07b's tables of them are in
``snapshotlib.course.baselines``.

>>> from snapshotlib.dataflow import word_count
>>> rows = baselines(word_count(records=6), seeds=[0, 1], crash_at=(20, "C1"))
>>> [(r.variant, r.blocked, r.same_output) for r in rows]
[('stop-the-world', 0.0, 2), ('fork (COW)', 0.0, 2)]
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..algorithms.base import SnapshotAlgorithm
from ..algorithms.stop_the_world import StopTheWorld
from .costs import Costs, measure
from .fork import CowModel, ForkSnapshot, fork_costs
from .graph import Dataflow
from .job import StreamJob

#: the rows' variant names
STOP_THE_WORLD, FORK = "stop-the-world", "fork (COW)"


@dataclass(frozen=True)
class BaselineCosts(Costs):
    """A row of lesson 07's table (every field of :class:`Costs`), plus what a baseline
    pays instead of blocking: medians, like the rest of the row (``None``: does not
    apply to this baseline).

    Attributes
    ----------
    paused
        How long the sources stood still in one pause, in steps (the median of each
        run's median, as ``latency``): a record that arrives when a pause starts waits
        this long before it is read. Pauses that meet (a checkpoint falls due while the
        one before still holds the sources) count as one. 0 for fork, which never
        pauses them.
    paused_share
        The share of a run's steps begun with the sources paused: the time ingestion
        stood still. (The engine takes one action per step, so the job's total steps
        do not grow with a pause; on machines working in parallel, the sources would
        sit idle for this share of the time.)
    reads_forgone
        Source-steps per run in which a source with records left was paused: at one
        read per source per step, a bound on the reads the pauses deferred.
    state_pages
        Pages of the node's state (fork): the most a snapshot can copy.
    write_rate
        State updates per step the parent made while the child wrote (fork).
    pages_copied, copy_bytes, copy_steps
        Per fork snapshot: pages copied on write, the extra memory they take, and the
        steps the parent spends copying them (the latency it adds).
    """

    paused: float = 0.0
    paused_share: float = 0.0
    reads_forgone: float = 0.0
    state_pages: float | None = None
    write_rate: float | None = None
    pages_copied: float | None = None
    copy_bytes: float | None = None
    copy_steps: float | None = None


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


@dataclass(frozen=True)
class Pauses:
    """The pauses of one run: how long each lasted (in steps begun with a source
    paused; pauses that meet are one), the source-steps in which a source with records
    left was paused, and the run's steps."""

    lengths: tuple[int, ...]
    forgone: int
    steps: int

    @property
    def share(self) -> float:
        """The share of the run's steps begun with a source paused."""
        return sum(self.lengths) / self.steps if self.steps else 0.0


def pauses(job: StreamJob) -> Pauses:
    """Run ``job`` to the end, watching its sources' pauses.

    >>> from snapshotlib.dataflow import word_count
    >>> run = pauses(StreamJob(word_count(records=6), algorithm=StopTheWorld, seed=0))
    >>> run.lengths, run.forgone, run.steps
    ((24,), 48, 48)
    """
    lengths: list[int] = []
    current = forgone = 0
    while True:
        sim = job.sim
        held = [s for s in job.flow.sources if s in sim.paused]
        if job.step() is None:
            break
        if held:
            current += 1
            forgone += sum(job.app.remaining(s, sim.states[s]) > 0 for s in held)
        elif current:
            lengths.append(current)
            current = 0
    if current:
        lengths.append(current)
    return Pauses(tuple(lengths), forgone, job.steps)


def _row(costs: Costs, variant: str, **extra: Any) -> BaselineCosts:
    shared = {f.name: getattr(costs, f.name) for f in fields(Costs)}
    options = {k: v for k, v in costs.options.items() if k != "algorithm"}
    return BaselineCosts(**{**shared, "variant": variant, "options": options, **extra})


def _measure(
    flow: Dataflow,
    seeds: list[int],
    crash_at: tuple[int, str],
    algorithm: type[SnapshotAlgorithm],
    options: dict[str, Any],
) -> Costs:
    # lesson 07's own measurement, with the baseline's class running the job
    (costs,) = measure(flow, seeds, crash_at, ("aligned",), algorithm=algorithm, **options)
    return costs


def baselines(
    flow: Dataflow,
    seeds: Iterable[int] = range(40),
    crash_at: tuple[int, str] = (100, "C1"),
    model: CowModel | None = None,
    **options: Any,
) -> list[BaselineCosts]:
    """Stop-the-world and fork/copy-on-write measured on ``flow`` like lesson 07's
    variants (the same seeds, the same crash, ``options`` for
    :class:`~snapshotlib.dataflow.StreamJob`); ``model`` prices fork's pages (the
    defaults of :class:`~snapshotlib.dataflow.fork.CowModel` when ``None``)."""
    seeds = list(seeds)
    model = model if model is not None else CowModel()
    fork_class = ForkSnapshot.with_model(model)
    paused: dict[str, dict[str, float]] = {}
    cow = []
    for name, algorithm in ((STOP_THE_WORLD, StopTheWorld), (FORK, fork_class)):
        runs = []
        for seed in seeds:
            job = StreamJob(flow, seed=seed, algorithm=algorithm, **options)
            runs.append(pauses(job))
            if algorithm is fork_class:
                cow += fork_costs(job)
        paused[name] = {
            "paused": _median([_median(r.lengths) for r in runs if r.lengths]),
            "paused_share": _median([r.share for r in runs]),
            "reads_forgone": _median([r.forgone for r in runs]),
        }
    stw = _measure(flow, seeds, crash_at, StopTheWorld, options)
    fork = _measure(flow, seeds, crash_at, fork_class, options)
    return [
        _row(stw, STOP_THE_WORLD, **paused[STOP_THE_WORLD]),
        _row(
            fork,
            FORK,
            **paused[FORK],
            state_pages=_median([c.state_pages for c in cow]),
            write_rate=_median([c.write_rate for c in cow]),
            pages_copied=_median([c.pages_copied for c in cow]),
            copy_bytes=_median([c.copy_bytes for c in cow]),
            copy_steps=_median([c.copy_steps for c in cow]),
        ),
    ]

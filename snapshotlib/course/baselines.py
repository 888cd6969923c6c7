"""The two baselines of lesson 07's trade-off table, measured: stop-the-world and
fork/copy-on-write, on the same job and seeds as the other variants.

:func:`baselines` returns one row per baseline in the shape of
:func:`snapshotlib.course.lesson_07.measure`'s rows (:class:`BaselineCosts` is a
:class:`~snapshotlib.course.lesson_07.Costs` with a few more fields), so they can be
appended to that table::

    rows = lesson_07.measure(DAG, seeds=range(40), crash_at=(100, "C1"))
    rows += baselines(DAG, seeds=range(40), crash_at=(100, "C1"))
    print(lesson_07.costs_table(rows))

The shared columns are measured by :func:`~snapshotlib.course.lesson_07.measure`
itself, running the job with the baseline's algorithm class
(:class:`~snapshotlib.algorithms.stop_the_world.StopTheWorld`,
:class:`~snapshotlib.dataflow.fork.ForkSnapshot`). The extra columns are what the
baselines pay instead of blocked inputs and buffered records: the pause of
stop-the-world (steps the sources stand still, reads they forgo) and the pages fork's
copy-on-write copies (:func:`~snapshotlib.dataflow.fork.fork_costs`), both from the
failure-free runs of the same seeds. :func:`baselines_table` shows them, and
:func:`tradeoff_rows` turns the rows of both jobs into rows of lesson 07's corrected
trade-off table::

    extra = tradeoff_rows(baselines(DAG, crash_at=(100, "C1")),
                          baselines(CYCLIC, crash_at=(50, "H")))
    lesson_07.tradeoff_table(dag, cyclic, bounded, extra=extra)

>>> from snapshotlib.course.lesson_07 import costs_table
>>> from snapshotlib.dataflow import word_count
>>> rows = baselines(word_count(records=6), seeds=[0, 1], crash_at=(20, "C1"))
>>> [(r.variant, r.blocked, r.same_output) for r in rows]
[('stop-the-world', 0.0, 2), ('fork (COW)', 0.0, 2)]
>>> [line.split()[0] for line in str(costs_table(rows)).splitlines()[1:3]]
['stop-the-world', 'fork']
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..algorithms.base import SnapshotAlgorithm
from ..algorithms.stop_the_world import StopTheWorld
from ..dataflow import Dataflow, StreamJob
from ..dataflow.fork import CowModel, ForkSnapshot, fork_costs
from .lesson_07 import DAG, Costs, TradeoffRow, measure
from .sizing import num
from .tables import Table

__all__ = [
    "FORK",
    "STOP_THE_WORLD",
    "BaselineCosts",
    "Pauses",
    "baselines",
    "baselines_table",
    "pauses",
    "tradeoff_rows",
]

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
    flow: Dataflow = DAG,
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


def _num(x: float | None) -> str:
    return "-" if x is None else num(x)


def baselines_table(rows: Sequence[BaselineCosts]) -> Table:
    """What the baselines pay instead of blocking inputs or storing records, one row
    per baseline (``-``: does not apply), with a legend.

    >>> from snapshotlib.dataflow import word_count
    >>> rows = baselines(word_count(records=6), seeds=[0], crash_at=(20, "C1"))
    >>> table = baselines_table(rows)
    >>> table.row("stop-the-world")["share of steps paused"], table.row("fork (COW)")["pause"]
    ('50%', '0')
    """
    return Table(
        ("variant", "pause", "share of steps paused", "reads forgone", "pages copied",
         "extra memory", "copy steps"),
        [
            (r.variant, num(r.paused), f"{r.paused_share:.0%}", num(r.reads_forgone),
             "-" if r.pages_copied is None or r.state_pages is None
             else f"{num(r.pages_copied)} of {num(r.state_pages)}",
             "-" if r.copy_bytes is None else f"{num(r.copy_bytes)} B",
             _num(r.copy_steps))
            for r in rows
        ],
        notes=(
            f"Medians over {rows[0].runs if rows else 0} runs (one per seed), without a crash.",
            "pause: steps the sources stand still in one pause. share of steps paused: of a "
            "run's steps, those begun with the sources paused. reads forgone: source-steps "
            "per run in which a source with records left was paused. pages copied: per "
            "checkpoint, the pages of the state that the parent wrote while the child wrote "
            "the image, of all the state's pages; extra memory: their bytes; copy steps: the "
            "steps the parent spent copying them. -: does not apply.",
        ),
    )  # fmt: skip


def _crash_text(c: Costs) -> str:
    # as lesson 07 words its own rows
    if c.runs_with_duplicates:
        return f"duplicates in {c.runs_with_duplicates}/{c.runs} crashed runs"
    return f"exactly once ({c.same_output}/{c.runs} runs as without a crash)"


def tradeoff_rows(
    dag: Sequence[BaselineCosts], cyclic: Sequence[BaselineCosts]
) -> list[TradeoffRow]:
    """Rows of lesson 07's corrected trade-off table
    (:func:`~snapshotlib.course.lesson_07.tradeoff_table`, its ``extra``) for the
    baselines, every cell from the rows :func:`baselines` measured on the word count
    (``dag``) and on the cyclic job (``cyclic``).

    >>> from snapshotlib.dataflow import iteration, word_count
    >>> dag = baselines(word_count(records=6), seeds=[0], crash_at=(20, "C1"))
    >>> cyclic = baselines(iteration(records=4), seeds=[0], crash_at=(10, "H"))
    >>> [(r.method, r.stores_in_flight) for r in tradeoff_rows(dag, cyclic)][0]
    ('stop-the-world', 'none: the channels are drained first')
    """
    c = {r.variant: r for r in cyclic}
    rows = []
    for d in dag:
        on_cycle = c.get(d.variant)
        cycle_bytes = num(on_cycle.inflight_bytes) if on_cycle else "?"
        if d.variant == STOP_THE_WORLD:
            pauses_ = (
                f"yes: every source, {num(d.paused)} steps a pause "
                f"({d.paused_share:.0%} of the steps)"
                if d.paused
                else "no"
            )
            stored = (
                "none: the channels are drained first"
                if d.inflight_bytes == 0 and (on_cycle is None or on_cycle.inflight_bytes == 0)
                else f"{num(d.inflight_bytes)} B on the DAG; {cycle_bytes} B on the cycle"
            )
            holds = (
                f"up to {num(d.peak_held)} records"
                if d.peak_held
                else f"nothing; the sources wait ({num(d.reads_forgone)} reads forgone a run)"
            )
            topology = "FIFO; any graph whose records stop (a cycle drains in more waves)"
        else:
            pauses_ = "yes" if d.paused else "no"
            stored = (
                f"{num(d.inflight_bytes)} B on the DAG; {cycle_bytes} B on the cycle "
                "(the queues, in the image)"
            )
            copied = (
                f"; {num(d.pages_copied)} of {num(d.state_pages)} pages copied "
                f"({num(d.copy_bytes or 0)} B)"
                if d.pages_copied is not None and d.state_pages is not None
                else ""
            )
            holds = f"up to {num(d.peak_held)} records in the image{copied}"
            topology = "one node: the whole job in one process"
        rows.append(TradeoffRow(d.variant, pauses_, stored, holds, topology, _crash_text(d)))
    return rows

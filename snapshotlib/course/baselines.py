"""Lesson 07b's tables of the two baselines, stop-the-world and fork/copy-on-write,
measured by :func:`~snapshotlib.dataflow.baselines.baselines` (re-exported here with
its rows' types): :func:`baselines_table` shows what they pay instead of blocking, and
:func:`tradeoff_rows` turns the rows of both jobs into rows of lesson 07's corrected
trade-off table::

    rows = lesson_07.measure(DAG, seeds=range(40), crash_at=(100, "C1"))
    rows += baselines(DAG, seeds=range(40), crash_at=(100, "C1"))
    print(lesson_07.costs_table(rows))
    extra = tradeoff_rows(baselines(DAG, crash_at=(100, "C1")),
                          baselines(CYCLIC, crash_at=(50, "H")))
    lesson_07.tradeoff_table(dag, cyclic, bounded, extra=extra)

>>> from snapshotlib.course.lesson_07 import costs_table
>>> from snapshotlib.dataflow import word_count
>>> rows = baselines(word_count(records=6), seeds=[0, 1], crash_at=(20, "C1"))
>>> [line.split()[0] for line in str(costs_table(rows)).splitlines()[1:3]]
['stop-the-world', 'fork']
"""

from __future__ import annotations

from collections.abc import Sequence

from ..dataflow.baselines import FORK, STOP_THE_WORLD, BaselineCosts, Pauses, baselines, pauses
from ..dataflow.costs import Costs
from .lesson_07 import TradeoffRow
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
    return f"exactly-once state ({c.same_output}/{c.runs} runs as without a crash)"


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
            # FIFO is not needed: the states are recorded when nothing is in flight, so
            # the order in which the channels delivered cannot matter
            topology = (
                "any channel order; any graph whose records stop (a cycle drains in more waves)"
            )
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

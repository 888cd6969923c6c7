"""Lesson 11's output commit, shown on a streaming job: the same crash and restore with
each of the sinks of :mod:`snapshotlib.dataflow.sinks`."""

from __future__ import annotations

from ...dataflow import StreamJob
from ...dataflow.sinks import SINKS
from ..lesson_07 import DAG
from ..tables import Table

#: lesson 08's job (lesson 07's word count, seed 0) and its crash
SEED = 0
CRASH = (100, "C1")


def sinks_table(variant: str = "aligned", crash: tuple[int, str] = CRASH) -> Table:
    """One row per sink: what the outside world sees after ``crash`` (step, operator)
    and a restore, under ``variant``, and how long records waited to become visible."""
    rows = []
    total = 0
    for sink in SINKS:
        job = StreamJob(DAG, variant, seed=SEED, sink=sink).run(crash_at=crash)
        out = job.output
        total = len(job.outcome().delivered)
        shown = out.visible_output()
        wait = out.summary()
        rows.append(
            (
                sink,
                len(out.writes),
                len(shown),
                len(out.duplicates()),
                f"{wait['mean_latency']:.1f}",
                f"{wait['max_latency']:.0f}",
            )
        )
    step, operator = crash
    return Table(
        ("sink", "writes", "records shown", "shown twice", "mean wait", "longest wait"),
        rows,
        notes=(
            f"{variant} barriers; {operator} crashed at step {step} and the job was restored "
            f"from its last completed checkpoint; {total} records in all",
            "writes: what the sink wrote to the outside world, rewrites included; waits: "
            "steps from a record's arrival at the sink until the outside world sees it",
        ),
    )

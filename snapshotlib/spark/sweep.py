"""Run a sweep on Spark (or in this process) and write its rows and summary.

The points of a sweep are numbered ``0 .. n-1``; Spark only ever sees the numbers.
``spark.range`` splits them into partitions, each Spark task rebuilds its points from
the (small) :class:`~snapshotlib.sweeps.config.Sweep` shipped with the task, simulates
them with :func:`~snapshotlib.sweeps.execute.run_point`, and hands the rows back as
Arrow record batches (``mapInArrow``): no Python object per row crosses into the JVM.
The rows are written as Parquet partitioned by algorithm, read back, and summarised
per grid cell by Spark SQL. Output layout: :mod:`snapshotlib.spark.output`.

``run_sweep_local`` does the same in this process without Spark: for small sweeps, a
machine without Java, and as the reference the Spark results are compared with.

For ``spark-submit``: ``spark-submit snapshotlib/spark/__main__.py sweep CONFIG --out
DIR`` (README, "Sweeps on a cluster").
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..sweeps.config import Sweep
from ..sweeps.execute import run_point
from ..sweeps.params import CELL_COLUMNS, COLUMNS
from ..sweeps.summary import MAXIMA, MEDIANS, POSITIVE_RATES, RATES, SUMMARY_COLUMNS, summarize
from .output import (
    arrow_schema,
    hadoop_path,
    record_batch,
    spark_ddl,
    write_manifest,
    write_rows,
    write_table,
)
from .progress import SparkProgress, Ticker

#: the column the rows are partitioned by on disk
PARTITION = "algorithm"
#: executions per Spark task, about: a few seconds of work, so progress moves and the
#: last wave of tasks is short, while the per-task overhead stays small
TASK_SIZE = 2500
#: rows per Arrow batch handed back to the JVM
BATCH_ROWS = 250
#: seconds between progress lines
PROGRESS_EVERY = 5.0


@dataclass(frozen=True)
class SweepResult:
    """What a sweep did: where its files are and how it went."""

    name: str
    executions: int
    errors: int
    seconds: float
    master: str
    out: Path

    @property
    def rows(self) -> Path:
        return self.out / "rows"

    @property
    def summary(self) -> Path:
        return self.out / "summary.parquet"


def partitions_for(n: int, parallelism: int) -> int:
    """How many Spark tasks for ``n`` executions on ``parallelism`` cores.

    >>> partitions_for(10**5, 2), partitions_for(100, 2), partitions_for(1, 8)
    (40, 4, 1)
    """
    return max(1, min(n, max(2 * parallelism, math.ceil(n / TASK_SIZE))))


def run_sweep(
    sweep: Sweep,
    out: str | Path,
    *,
    spark: Any = None,
    master: str | None = None,
    partitions: int | None = None,
    progress: bool = True,
) -> SweepResult:
    """Run ``sweep`` on Spark; rows and summary go to ``out`` (replacing earlier ones).

    ``spark`` is a running session, else one is started for ``master``
    (:func:`~snapshotlib.spark.session.spark_session`).
    """
    from .session import spark_session

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spark = spark if spark is not None else spark_session(master)
    sc = spark.sparkContext
    started = time.monotonic()
    n = len(sweep)
    slices = partitions or partitions_for(n, sc.defaultParallelism)
    frame = spark.range(0, n, 1, slices).mapInArrow(_executor(sweep), spark_ddl(COLUMNS))
    rows_dir = out / "rows"
    label = f"sweep {sweep.name}"
    with SparkProgress(sc, label, n, PROGRESS_EVERY) if progress else nullcontext():
        frame.write.mode("overwrite").partitionBy(PARTITION).parquet(str(rows_dir))
    # summarised from the files just written: nothing is simulated twice
    written = spark.read.parquet(hadoop_path(rows_dir))
    table = [r.asDict() for r in summary_frame(written).collect()]
    result = SweepResult(sweep.name, n, _errors(table), time.monotonic() - started, sc.master, out)
    _finish(sweep, result, table, partitions=slices)
    return result


def _executor(sweep: Sweep) -> Any:
    """The function each Spark task runs: point numbers in, result rows out (Arrow).

    Rows go back in batches of :data:`BATCH_ROWS`, so the JVM converts and writes one
    batch while the Python worker simulates the next.
    """

    def execute(batches: Iterator[Any]) -> Iterator[Any]:
        schema = arrow_schema(COLUMNS)
        for batch in batches:
            points = batch.column(0).to_pylist()
            for k in range(0, len(points), BATCH_ROWS):
                rows = [run_point(sweep.point(i)) for i in points[k : k + BATCH_ROWS]]
                yield record_batch(rows, schema)

    return execute


def summary_frame(rows: Any) -> Any:
    """The summary table (:mod:`snapshotlib.sweeps.summary`) of a rows DataFrame, by Spark."""
    from pyspark.sql import functions as F

    ok = F.col("error").isNull()
    aggregates = [
        F.count(F.lit(1)).alias("executions"),
        F.sum(F.when(ok, 0).otherwise(1)).cast("bigint").alias("errors"),
    ]
    aggregates += [F.avg(F.when(ok, F.col(c).cast("double"))).alias(n) for n, c in RATES]
    aggregates += [
        F.avg(F.when(ok, (F.col(c) > 0).cast("double"))).alias(n) for n, c in POSITIVE_RATES
    ]
    aggregates += [
        F.median(F.when(ok, F.col(m))).cast("double").alias(f"median_{m}") for m in MEDIANS
    ]
    aggregates += [F.max(F.when(ok, F.col(m))).alias(f"max_{m}") for m in MAXIMA]
    names = [name for name, _ in SUMMARY_COLUMNS]
    return rows.groupBy(*CELL_COLUMNS).agg(*aggregates).select(*names).orderBy(*CELL_COLUMNS)


def run_sweep_local(sweep: Sweep, out: str | Path, *, progress: bool = True) -> SweepResult:
    """Run ``sweep`` in this process, writing the same files as :func:`run_sweep`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    label = f"sweep {sweep.name}"
    ticker = Ticker(label, len(sweep), "executions", PROGRESS_EVERY) if progress else None
    rows = []
    for point in sweep.points():
        rows.append(run_point(point))
        if ticker is not None:
            ticker.update(len(rows))
    write_rows(rows, out / "rows", COLUMNS, PARTITION)
    table = summarize(rows)
    result = SweepResult(
        sweep.name, len(rows), _errors(table), time.monotonic() - started, "this process", out
    )
    _finish(sweep, result, table, partitions=1)
    return result


def _errors(table: list[dict[str, Any]]) -> int:
    return sum(cell["errors"] for cell in table)


def _finish(sweep: Sweep, result: SweepResult, table: list[dict[str, Any]], **extra: Any) -> None:
    write_table(table, result.out / "summary", SUMMARY_COLUMNS)
    write_manifest(
        result.out,
        {
            "sweep": sweep.name,
            "config": sweep.source,
            "executions": result.executions,
            "cells": len(sweep.cells),
            "seeds": len(sweep.seeds),
            "errors": result.errors,
            "master": result.master,
            "seconds": round(result.seconds, 3),
            "snapshotlib": __version__,
            **extra,
        },
    )

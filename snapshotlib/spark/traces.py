"""Recorded executions (JSON Lines) checked in bulk, on Spark or in this process.

Every line is checked by :func:`snapshotlib.sweeps.traces.check_lines`, which turns a
corrupt line into a row with an ``error`` instead of failing: one bad record is
reported (file and line) and skipped, and the rest are still checked. With ``out``,
every row, corrupt ones included, is written to ``out/rows`` as Parquet.

On Spark the files are read by the tasks (``binaryFiles``: on a cluster they must be
on a file system every worker sees), their lines spread over the tasks, and only the
counts and the rows worth reporting (corrupt records, failing snapshots) come back to
the driver.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..sweeps.traces import (
    TRACE_COLUMN_NAMES,
    TRACE_COLUMNS,
    check_lines,
    failing,
    read_lines,
    tally,
)
from .output import hadoop_path, spark_ddl, write_rows


@dataclass(frozen=True)
class TraceReport:
    """Counts (``records``, ``snapshots``, ``failed``, ``corrupt``) and the rows to report:
    corrupt records and failing snapshots, in file and line order."""

    counts: dict[str, int]
    problems: list[dict[str, Any]]

    @property
    def ok(self) -> bool:
        return not self.counts["failed"] and not self.counts["corrupt"]


def check_traces_local(paths: Sequence[str | Path], out: str | Path | None = None) -> TraceReport:
    """Check every line of ``paths`` in this process."""
    rows = list(check_lines(itertools.chain.from_iterable(read_lines(p) for p in paths)))
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        write_rows(rows, Path(out) / "rows", TRACE_COLUMNS, None)
    problems = [r for r in rows if r["error"] is not None or failing(r)]
    return TraceReport(tally(rows), problems)


def check_traces(
    paths: Sequence[str | Path],
    out: str | Path | None = None,
    *,
    spark: Any = None,
    master: str | None = None,
    partitions: int | None = None,
) -> TraceReport:
    """Check every line of ``paths`` on Spark (module docstring)."""
    from pyspark.sql import functions as F

    from .session import spark_session

    spark = spark if spark is not None else spark_session(master)
    sc = spark.sparkContext
    names = {str(Path(p).resolve()): str(p) for p in paths}
    files = sc.binaryFiles(",".join(hadoop_path(p) for p in names))

    def lines(item: tuple[str, bytes]) -> Iterator[tuple[str, int, bytes]]:
        uri, data = item
        name = names.get(unquote(urlparse(uri).path), uri)
        for number, raw in enumerate(data.splitlines(), start=1):
            yield name, number, raw

    def check(part: Iterator[tuple[str, int, bytes]]) -> Iterator[tuple[Any, ...]]:
        for row in check_lines(part):
            yield tuple(row[c] for c in TRACE_COLUMN_NAMES)

    slices = partitions or 4 * sc.defaultParallelism
    rows = files.flatMap(lines).repartition(slices).mapPartitions(check)
    frame = spark.createDataFrame(rows, spark_ddl(TRACE_COLUMNS)).cache()
    try:
        if out is not None:
            Path(out).mkdir(parents=True, exist_ok=True)
            frame.write.mode("overwrite").parquet(str(Path(out) / "rows"))
        corrupt = F.col("error").isNotNull()
        snapshot = F.col("error").isNull() & F.col("snapshot").isNotNull()
        bad = snapshot & ~(F.col("consistent") & F.col("dijkstra_holds"))
        totals = frame.agg(
            F.count_distinct("file", "line").alias("records"),
            F.sum(snapshot.cast("bigint")).alias("snapshots"),
            F.sum(bad.cast("bigint")).alias("failed"),
            F.sum(corrupt.cast("bigint")).alias("corrupt"),
        ).first()
        problems = frame.filter(corrupt | bad).orderBy("file", "line", "snapshot").collect()
    finally:
        frame.unpersist()
    counts = {k: int(v or 0) for k, v in totals.asDict().items()}
    return TraceReport(counts, [r.asDict() for r in problems])

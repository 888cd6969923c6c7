"""The summary table of a sweep: one row per grid cell, rates and medians over its seeds.

Columns: the cell's parameters (:data:`~snapshotlib.sweeps.params.CELL_COLUMNS`);
``executions`` and ``errors`` (executions whose engine failed); for each check the
fraction of executions where it held (``consistent_rate``, ...); the fraction with
duplicates and with lost messages after a restore; the median of each metric
(``median_latency``, ...); and the largest ``peak_buffered``. Rates and medians are
over the executions without an error, ``None`` when there are none. The Spark
pipeline computes the same table with Spark SQL; this is the reference.

>>> from snapshotlib.sweeps.execute import run_point
>>> rows = [run_point({"seed": s, "fifo": fifo}) for s in range(4) for fifo in (True, False)]
>>> table = summarize(rows)
>>> [(r["fifo"], r["executions"], r["consistent_rate"]) for r in table]
[(False, 4, 0.25), (True, 4, 1.0)]
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from .params import CELL_COLUMNS, COLUMN_TYPES

#: ``(column, check)``: the fraction of executions where ``check`` is true
RATES = (
    ("complete_rate", "complete"),
    ("consistent_rate", "consistent"),
    ("consistent_cut_rate", "consistent_cut"),
    ("dijkstra_rate", "dijkstra_holds"),
    ("conserved_rate", "conserved"),
)
#: ``(column, count)``: the fraction of executions where ``count`` is above 0
POSITIVE_RATES = (
    ("duplicates_rate", "duplicates_after_restore"),
    ("lost_rate", "lost_after_restore"),
)
#: metrics summarised by their median, as ``median_<metric>``
MEDIANS = ("latency", "recorded_messages", "recorded_bytes", "peak_buffered", "blocked_time")
#: metrics summarised by their maximum, as ``max_<metric>``
MAXIMA = ("peak_buffered",)

SUMMARY_COLUMNS: tuple[tuple[str, str], ...] = (
    *((c, COLUMN_TYPES[c]) for c in CELL_COLUMNS),
    ("executions", "int"),
    ("errors", "int"),
    *((name, "float") for name, _ in RATES + POSITIVE_RATES),
    *((f"median_{m}", "float") for m in MEDIANS),
    *((f"max_{m}", "int") for m in MAXIMA),
)


def summarize(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The summary table of result rows, sorted by cell (module docstring)."""
    cells: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in rows:
        cells.setdefault(tuple(row[c] for c in CELL_COLUMNS), []).append(row)
    table = []
    for key in sorted(cells):
        group = cells[key]
        ok = [r for r in group if r["error"] is None]
        out: dict[str, Any] = dict(zip(CELL_COLUMNS, key, strict=True))
        out["executions"] = len(group)
        out["errors"] = len(group) - len(ok)
        for name, check in RATES:
            out[name] = _mean([r[check] for r in ok])
        for name, count in POSITIVE_RATES:
            out[name] = _mean([None if r[count] is None else r[count] > 0 for r in ok])
        for m in MEDIANS:
            values = [r[m] for r in ok if r[m] is not None]
            out[f"median_{m}"] = float(statistics.median(values)) if values else None
        for m in MAXIMA:
            values = [r[m] for r in ok if r[m] is not None]
            out[f"max_{m}"] = max(values) if values else None
        table.append(out)
    return table


def _mean(flags: list[Any]) -> float | None:
    known = [f for f in flags if f is not None]
    return sum(known) / len(known) if known else None

"""A sweep run wherever it can: on Spark when a session starts here, else in this
process (the same rows for the same seeds), for lessons and learners on machines
without Java. Importing this module needs no pyspark: Spark is imported when tried.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sweeps.config import Sweep


def start_spark(master: str = "local[2]") -> tuple[Any, str]:
    """A running Spark session for ``master`` and ``""``, or ``None`` and why Spark
    cannot start here (pyspark missing, no Java runtime, a session that fails)."""
    try:
        from .session import spark_session
    except ImportError as e:  # pragma: no cover - pyspark is part of the spark extra
        return None, f"pyspark cannot be imported ({e})"
    try:
        return spark_session(master), ""
    except ImportError as e:
        return None, f"pyspark cannot be imported ({e})"
    except Exception as e:
        return None, str(e).splitlines()[0] if str(e) else type(e).__name__


@dataclass(frozen=True)
class SweepRun:
    """How a sweep ran: its result (files, executions, seconds), whether on Spark, and
    one line that says so."""

    result: Any
    on_spark: bool
    line: str


def run_sweep_anywhere(sweep: Sweep, out: str | Path, master: str = "local[2]") -> SweepRun:
    """Run ``sweep`` on Spark if a session starts here, else in this process; the rows
    and the summary are written to ``out`` either way, the same for the same seeds.

    The Spark session is stopped when the sweep is written, so nothing later in the
    caller depends on it.
    """
    from .sweep import run_sweep, run_sweep_local

    spark, why = start_spark(master)
    if spark is None:
        result = run_sweep_local(sweep, out, progress=False)
        line = (
            f"Spark is not available here ({why}), so the sweep ran in this process "
            f"instead: {result.executions:,} executions, the same rows as on Spark."
        )
        return SweepRun(result, False, line)
    try:
        result = run_sweep(sweep, out, spark=spark, progress=False)
    finally:
        spark.stop()
    line = f"{result.executions:,} executions on Spark ({result.master}), {result.errors} errors."
    return SweepRun(result, True, line)

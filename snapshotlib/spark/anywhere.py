"""A sweep run wherever it can: on Spark when a session starts here, else in this
process (the same rows for the same seeds), for lessons and learners on machines
without Java. Importing this module needs no pyspark: Spark is imported when tried.
"""

from __future__ import annotations

import contextlib
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

    A session can start and still fail during the sweep (on a loaded machine its Python
    workers may not get their local socket in time): the sweep is tried once more in a
    new session, then in this process, and the line says so. The Spark session is
    stopped when the sweep is written, so nothing later in the caller depends on it.
    """
    from .sweep import run_sweep, run_sweep_local

    spark, why = start_spark(master)
    failed = ""
    for attempt in range(2):
        if spark is None:
            break
        try:
            result = run_sweep(sweep, out, spark=spark, progress=False)
        except Exception as e:  # Spark failed during the sweep: a new session, or none
            failed = _gist(e)
            _stop(spark)
            spark, why = start_spark(master) if attempt == 0 else (None, failed)
            continue
        _stop(spark)
        line = (
            f"{result.executions:,} executions on Spark ({result.master}), {result.errors} errors."
        )
        return SweepRun(result, True, line)
    result = run_sweep_local(sweep, out, progress=False)
    if failed:
        line = (
            f"Spark started but failed during the sweep twice ({failed}), so the sweep ran "
            f"in this process instead: {result.executions:,} executions, the same rows as on "
            "Spark."
        )
    else:
        line = (
            f"Spark is not available here ({why}), so the sweep ran in this process "
            f"instead: {result.executions:,} executions, the same rows as on Spark."
        )
    return SweepRun(result, False, line)


def _gist(error: BaseException) -> str:
    """The first line of what an error says (PySpark's run to many)."""
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__


def _stop(spark: Any) -> None:
    """Stop a session, even one that failed."""
    with contextlib.suppress(Exception):
        spark.stop()

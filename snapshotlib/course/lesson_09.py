"""Lesson 09, cost at scale: a sweep of many executions, read back from Parquet, and
the sizing arithmetic of a system-design lesson checked against it.

:data:`SWEEP_TOML` is the lesson's sweep (four grids: marker delay for Chandy–Lamport
and the barrier variants, clock drift for the naive clock snapshot, reordering on
non-FIFO channels). :func:`run_lesson_sweep` runs it on Spark when Spark can start here
(a Java runtime and a session), and otherwise in this process, with the same seeds and
so the same rows. The helpers take result rows (mappings with the columns of
:mod:`snapshotlib.sweeps.params`, e.g. ``pandas.read_parquet(...).to_dict("records")``)
and compute what the lesson shows: mean recorded bytes per marker delay
(:func:`mean_by`), a least-squares line through them (:func:`fit_line`), the model's
slope (:func:`model_slope`) and the table comparing both (:func:`model_table`).

>>> fit_line([1, 2, 3], [5, 7, 9])
(3.0, 2.0)
>>> model_slope(rate=2, message_bytes=200)
400.0
>>> print(check_failure_kinds([], None))  # doctest: +ELLIPSIS
✗ The failures this grid can show: no answer yet. Hint: ...
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..spark.anywhere import SweepRun, run_sweep_anywhere, start_spark
from ..sweeps.config import Sweep
from .feedback import Feedback, answer_set, is_blank, no_answer_yet
from .lesson_05 import MISSED, RED_IN_WHITE, RED_RECORDED
from .sizing import Sizing
from .tables import Table

__all__ = [
    "DESIGN_CLUSTER",
    "SWEEP_TOML",
    "SweepRun",
    "check_failure_kinds",
    "failure_kinds",
    "fit_line",
    "inconsistency_rates",
    "mean_by",
    "model_slope",
    "model_table",
    "run_lesson_sweep",
    "start_spark",
]

#: the lesson's sweep: 43 cells, 40 seeds each (1,720 executions)
SWEEP_TOML = """\
[sweep]
name = "lesson-09"
seeds = 40
size = 5
duration = 40
rate = 2              # messages per process per tick
tokens = 1000         # enough that no process runs dry
message_delay = 1

# 1. recorded in-flight bytes against the marker delay
[[grid]]
topology = "complete"
algorithm = "chandy-lamport"
marker_delay = [1, 2, 4, 8, 16]

[[grid]]
topology = "dataflow"
algorithm = ["aligned", "unaligned", "at-least-once"]
rate = 1              # records each source reads per tick
marker_delay = [1, 2, 4, 8, 16]

# 2. the naive clock snapshot against clock drift
[[grid]]
topology = "complete"
algorithm = "clock"
drift = [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5]

# 3. Chandy-Lamport with reordering: message delays 1..message_delay ticks (the
# spread), markers 1 tick (as fast as the fastest message), FIFO or not
[[grid]]
topology = "complete"
algorithm = "chandy-lamport"
fifo = [true, false]
rate = 0.1            # few messages, so one overtaking does not decide every run
message_delay = [1, 2, 3, 4, 6, 8, 12, 16]
marker_delay = 1
"""

#: the system-design lesson's cluster: 100 nodes, 50,000 messages/s of 200 B, 2 s delay
DESIGN_CLUSTER = Sizing(nodes=100, rate=50_000, record_bytes=200, delay=2)


def mean_by(
    rows: Iterable[Mapping[str, Any]], key: str, value: str, **where: Any
) -> dict[Any, float]:
    """Mean of ``value`` per ``key``, over the rows matching ``where`` (sorted by key).

    >>> rows = [{"d": 1, "b": 2, "a": "x"}, {"d": 1, "b": 4, "a": "x"}, {"d": 2, "b": 9, "a": "y"}]
    >>> mean_by(rows, "d", "b", a="x")
    {1: 3.0}
    """
    groups: dict[Any, list[float]] = {}
    for row in rows:
        if all(row[k] == v for k, v in where.items()) and row[value] is not None:
            groups.setdefault(row[key], []).append(float(row[value]))
    return {k: statistics.fmean(groups[k]) for k in sorted(groups)}


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares ``(intercept, slope)`` of ``ys`` against ``xs``."""
    slope, intercept = statistics.linear_regression([float(x) for x in xs], [float(y) for y in ys])
    return (round(intercept, 9), round(slope, 9))


def model_slope(rate: float, message_bytes: float) -> float:
    """Bytes one more tick of marker delay adds to a snapshot, by the model.

    With one initiator on a complete graph of ``n`` processes, the initiator records at
    once and its ``n - 1`` input channels are recorded until their markers come back,
    a marker delay later than the others: each carries ``rate / (n - 1)`` messages per
    tick, so the snapshot grows by ``(n - 1) * rate / (n - 1) * message_bytes``, that is
    ``rate * message_bytes``, per tick of delay. The other channels hold only what is in
    transit when both their ends record, which does not depend on the delay.
    """
    return float(rate) * float(message_bytes)


def model_table(means: Mapping[int, float], intercept: float, slope: float) -> Table:
    """Simulated mean bytes per marker delay next to the model line ``intercept + slope * d``.

    >>> print(model_table({1: 110.0, 2: 190.0}, 0.0, 100.0))
    marker delay (ticks)  simulated  model  difference
    1                         110 B  100 B      +10.0%
    2                         190 B  200 B       -5.0%
    """
    rows = []
    for d, b in means.items():
        m = intercept + slope * d
        rows.append((str(d), f"{b:,.0f} B", f"{m:,.0f} B", f"{(b - m) / m:+.1%}"))
    return Table(("marker delay (ticks)", "simulated", "model", "difference"), rows)


def inconsistency_rates(
    summary: Iterable[Mapping[str, Any]], key: str, **where: Any
) -> dict[Any, float]:
    """``1 - consistent_rate`` per ``key`` over the summary rows matching ``where``.

    >>> inconsistency_rates([{"drift": 0.1, "consistent_rate": 0.75, "algorithm": "clock"}],
    ...                     "drift", algorithm="clock")
    {0.1: 0.25}
    """
    out = {}
    for row in summary:
        if all(row[k] == v for k, v in where.items()):
            out[row[key]] = round(1.0 - float(row["consistent_rate"]), 9)
    return dict(sorted(out.items()))


def failure_kinds(rows: Iterable[Mapping[str, Any]] | Any) -> set[str]:
    """Lesson 05a's kinds of failure among the broken Chandy–Lamport snapshots of the
    reordering grid (``rate`` 0.1, non-FIFO), read off the result rows (a pandas frame
    or mappings): an inconsistent cut is a red message accepted in a white action, a
    message "missing from the recorded state" a white message missed, and a message
    recorded that "was not in transit" a red message recorded in transit."""
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    kinds = set()
    for r in records:
        if r["algorithm"] != "chandy-lamport" or r["rate"] != 0.1 or r["fifo"]:
            continue
        if r["consistent"]:
            continue
        if not r["consistent_cut"]:
            kinds.add(RED_IN_WHITE)
        elif "missing from the recorded state" in str(r["reason"]):
            kinds.add(MISSED)
        else:
            kinds.add(RED_RECORDED)
    return kinds


_KINDS = (RED_IN_WHITE, RED_RECORDED, MISSED)
_KIND_NAMES = {RED_IN_WHITE: "RED_IN_WHITE", RED_RECORDED: "RED_RECORDED", MISSED: "MISSED"}


def check_failure_kinds(rows: Iterable[Mapping[str, Any]] | Any, answer: Any) -> Feedback:
    """The try-it: which of lesson 05a's failures can the reordering grid's broken
    snapshots show, where every marker is as fast as the fastest message? Checked
    against the kinds the sweep's ``rows`` show (:func:`failure_kinds`)."""
    what = "The failures this grid can show"
    if is_blank(answer):
        return no_answer_yet(what, "Write a set of lesson 05a's names, e.g. {RED_RECORDED}.")
    names = answer_set(
        answer,
        _KINDS,
        (
            f"{what}: {{answer}} is not a set of failures.",
            "Write a set such as {RED_IN_WHITE, MISSED}.",
        ),
        (
            f"{what}: unknown failure {{names}}.",
            "Use RED_IN_WHITE, RED_RECORDED or MISSED (from snapshotlib.course.lesson_05).",
        ),
    )
    if isinstance(names, Feedback):
        return names
    seen = failure_kinds(rows)
    reveal = (
        f"{', '.join(_KIND_NAMES[k] for k in _KINDS if k in seen) or 'none'}. A red message "
        "leaves at the earliest in the tick its sender's marker leaves and takes at least "
        "as long, so it never overtakes that marker: no receiver accepts or records it "
        "before the marker has made it red and closed the channel. A white message sent "
        "before the marker can take longer than the marker, and then arrives after the "
        "receiver has closed the channel: missed."
    )
    if names == seen:
        return Feedback(True, f"{what}: right. {reveal}")
    if names & {RED_IN_WHITE, RED_RECORDED} - seen:
        hint = (
            "Can a red message overtake a marker here? It is sent no earlier than its "
            "sender's marker, and no message is faster than a marker."
        )
    else:
        hint = (
            "Think of a message sent *before* the marker whose delay is longer than the "
            "marker's: when does its receiver stop recording the channel?"
        )
    return Feedback(False, f"{what}: not quite.", hint, reveal)


# ------------------------------------------------------- Spark, or not


def run_lesson_sweep(sweep: Sweep, out: str | Path, master: str = "local[2]") -> SweepRun:
    """The lesson's sweep, on Spark if a session starts here, else in this process
    (:func:`~snapshotlib.spark.anywhere.run_sweep_anywhere`)."""
    return run_sweep_anywhere(sweep, out, master)

"""Experiment sweeps over many simulated executions, and bulk checking of recorded ones.

Standard library only: this package says *what* to run and how one execution becomes a
row; :mod:`snapshotlib.spark` runs many of them on Spark and writes the results.

* :mod:`~snapshotlib.sweeps.config`: the TOML configuration and its grid;
* :mod:`~snapshotlib.sweeps.execute`: one point -> one row (:func:`run_point`), and
  the registry of algorithms;
* :mod:`~snapshotlib.sweeps.runner`: the tick-based model of rates and delays;
* :mod:`~snapshotlib.sweeps.measure`: checks and metrics of a finished execution;
* :mod:`~snapshotlib.sweeps.summary`: the per-cell summary table;
* :mod:`~snapshotlib.sweeps.traces`: recorded executions in JSON Lines, checked in bulk;
* :mod:`~snapshotlib.sweeps.stability`: stable predicates decided on snapshots of many
  random runs, against the true states.

>>> grid = {"algorithm": ["chandy-lamport", "clock"]}
>>> sweep = parse_config({"sweep": {"seeds": 3}, "grid": grid})
>>> rows = [run_point(p) for p in sweep.points()]
>>> [(r["algorithm"], r["seed"], r["consistent"]) for r in rows][:3]
[('chandy-lamport', 0, True), ('clock', 0, True), ('chandy-lamport', 1, True)]
"""

from .config import Sweep, load_config, parse_config, parse_config_text
from .execute import EXECUTORS, register, run_point
from .params import COLUMN_NAMES, COLUMNS, PARAMETERS, SweepConfigError
from .summary import SUMMARY_COLUMNS, summarize
from .traces import TRACE_COLUMNS, check_lines, read_lines, tally

__all__ = [
    "COLUMNS",
    "COLUMN_NAMES",
    "EXECUTORS",
    "PARAMETERS",
    "SUMMARY_COLUMNS",
    "TRACE_COLUMNS",
    "Sweep",
    "SweepConfigError",
    "check_lines",
    "load_config",
    "parse_config",
    "parse_config_text",
    "read_lines",
    "register",
    "run_point",
    "summarize",
    "tally",
]

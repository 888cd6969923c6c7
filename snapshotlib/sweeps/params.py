"""The parameters of one simulated execution, and the columns of its result row.

Time is the engine's logical time in *ticks* (see :mod:`snapshotlib.sweeps.runner`):
every rate, delay and duration below is counted in ticks, never in seconds.

A result row (:data:`COLUMNS`, in this order) has:

* identity: ``point`` (its number in the sweep), ``sweep`` (the sweep's name), ``seed``;
* the parameters (:data:`PARAMETERS`): ``topology``, ``size``, ``algorithm``, ``fifo``,
  ``rate``, ``message_delay``, ``marker_delay``, ``drift``, ``duration``, ``start``,
  ``initiators``, ``tokens``, ``message_bytes``;
* checks of the snapshot: ``complete`` (every process recorded, every channel closed);
  ``consistent`` (a consistent cut whose channels hold exactly the messages in transit
  across it: :func:`~snapshotlib.checks.check_snapshot`); ``consistent_cut`` (the
  process states alone form a consistent cut); ``dijkstra_holds`` (EWD 864a's
  commutation argument, replayed: :func:`~snapshotlib.checks.check_commutation`);
  ``conserved`` (the recorded tokens add up to the initial total);
  ``duplicates_after_restore`` and ``lost_after_restore`` (application messages
  delivered twice or never when the system restarts from the snapshot, see
  :mod:`~snapshotlib.sweeps.measure`);
* metrics: ``channels``; ``latency`` (ticks from the first recording to the last action
  the snapshot waited for); ``recorded_messages`` and ``recorded_bytes`` (channel
  state, ``recorded_messages * message_bytes``); ``peak_buffered`` (most messages held at
  once for the snapshot: recorded and not yet closed, or waiting in blocked channels);
  ``blocked_time`` (channel-ticks spent blocked, barrier alignment); ``messages`` and
  ``markers`` sent; ``ticks`` (length of the run) and ``actions`` (of the trace);
* ``reason``: the first failed check's one-line reason (``None`` when all hold), and
  ``error``: why the execution could not run (``None`` normally; then the checks and
  metrics are ``None``).

>>> [p.name for p in PARAMETERS][:4]
['topology', 'size', 'algorithm', 'fifo']
>>> PARAMETER["marker_delay"].default
1
>>> COLUMN_TYPES["recorded_bytes"], COLUMN_TYPES["fifo"]
('int', 'bool')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: network shapes; ``dataflow`` graphs belong to the dataflow algorithms
TOPOLOGIES = ("ring", "complete", "random", "dataflow")
#: every algorithm a sweep may name; whether one can run here is up to the registry
#: (:data:`snapshotlib.sweeps.execute.EXECUTORS`)
ALGORITHMS = ("chandy-lamport", "lai-yang", "clock", "aligned", "unaligned", "at-least-once")


class SweepConfigError(ValueError):
    """A sweep configuration that cannot run; the message names the file, the key and
    what was expected."""


@dataclass(frozen=True)
class Parameter:
    """One knob of an execution: its type, default, allowed range and meaning."""

    name: str
    kind: str  # "str", "int", "float" or "bool"
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    #: ``low`` itself is not allowed (a rate must be > 0)
    exclusive_low: bool = False


PARAMETERS: tuple[Parameter, ...] = (
    Parameter("topology", "str", "ring", "network shape", choices=TOPOLOGIES),
    Parameter("size", "int", 4, "number of processes", low=2, high=1000),
    Parameter("algorithm", "str", "chandy-lamport", "snapshot algorithm", choices=ALGORITHMS),
    Parameter("fifo", "bool", True, "whether channels deliver in the order messages were sent"),
    Parameter(
        "rate",
        "float",
        0.5,
        "application messages each process sends per tick (expected value)",
        low=0,
        high=10,
        exclusive_low=True,
    ),
    Parameter(
        "message_delay",
        "int",
        3,
        "an application message spends 1..message_delay ticks on its channel (uniform)",
        low=1,
        high=1000,
    ),
    Parameter(
        "marker_delay",
        "int",
        1,
        "ticks a marker (or barrier) spends on its channel",
        low=1,
        high=10_000,
    ),
    Parameter(
        "drift",
        "float",
        0.0,
        "clock rate error bound of the clock algorithm: process p's clock reads "
        "(1 + drift * u_p) * t with u_p uniform in [-1, 1]",
        low=0,
        high=1,
    ),
    Parameter(
        "duration", "int", 30, "ticks of application activity before the drain", low=1, high=10**5
    ),
    Parameter(
        "start",
        "float",
        0.5,
        "when the snapshot begins, as a fraction of duration (the clock algorithm records "
        "when the local clocks read start * duration)",
        low=0,
        high=1,
    ),
    Parameter("initiators", "int", 1, "processes that start the snapshot", low=1, high=1000),
    Parameter("tokens", "int", 10, "tokens each process starts with", low=0, high=10**9),
    Parameter("message_bytes", "int", 200, "bytes of one recorded message", low=1, high=10**9),
)
PARAMETER = {p.name: p for p in PARAMETERS}

#: what identifies one execution besides its parameters
IDENTITY = (("point", "int"), ("sweep", "str"), ("seed", "int"))

#: outcome columns: what :func:`snapshotlib.sweeps.measure.checks` and the executors fill in
CHECKS = (
    ("complete", "bool"),
    ("consistent", "bool"),
    ("consistent_cut", "bool"),
    ("dijkstra_holds", "bool"),
    ("conserved", "bool"),
    ("duplicates_after_restore", "int"),
    ("lost_after_restore", "int"),
)
METRICS = (
    ("channels", "int"),
    ("latency", "int"),
    ("recorded_messages", "int"),
    ("recorded_bytes", "int"),
    ("peak_buffered", "int"),
    ("blocked_time", "int"),
    ("messages", "int"),
    ("markers", "int"),
    ("ticks", "int"),
    ("actions", "int"),
)
NOTES = (("reason", "str"), ("error", "str"))

#: every column of a result row, in order, with its type
COLUMNS: tuple[tuple[str, str], ...] = (
    *IDENTITY,
    *((p.name, p.kind) for p in PARAMETERS),
    *CHECKS,
    *METRICS,
    *NOTES,
)
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)
COLUMN_TYPES = dict(COLUMNS)
#: the columns that say which grid cell a row belongs to (every seed of a cell shares them)
CELL_COLUMNS = ("sweep", *(p.name for p in PARAMETERS))

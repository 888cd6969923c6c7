"""The barrier variants in sweeps: one checkpoint of a word-count job, run in ticks.

Registers ``aligned``, ``unaligned`` and ``at-least-once`` on the ``dataflow`` topology
with :mod:`snapshotlib.sweeps.execute`, so a sweep can set them side by side with the
marker algorithms. A point's parameters mean here:

``size``
    operators of the job: ``(size - 1) // 2`` sources (at least one), keyed counts for
    the rest, and one sink (``size`` at least 3);
``rate``
    records each source reads per tick, while ``t < duration``;
``message_delay``, ``marker_delay``
    ticks a record (uniform in 1..message_delay) and a barrier spend on a channel, as
    in :class:`~snapshotlib.sweeps.runner.TickRun`;
``start``
    when the coordinator injects the barriers at every source, as a fraction of
    ``duration``;
``message_bytes``
    the size of one record.

The checks and metrics are the sweep's own (:mod:`snapshotlib.sweeps.measure`): an
at-least-once checkpoint in which records crossed a barrier is not a consistent cut,
and those records are its ``duplicates_after_restore``. ``fifo = false`` is refused:
barriers, like markers, assume FIFO channels.

>>> from snapshotlib.sweeps.execute import run_point
>>> row = run_point({"topology": "dataflow", "algorithm": "aligned", "size": 5, "seed": 2})
>>> row["consistent"], row["recorded_messages"], row["blocked_time"] > 0
(True, 0, True)
"""

from __future__ import annotations

import math
import random
from typing import Any

from ..algorithms.barriers import BARRIER_VARIANTS
from ..algorithms.base import SnapshotAlgorithm
from ..simulator import Simulator
from ..sweeps.execute import Point, Row, register
from ..sweeps.measure import checks, metrics
from ..sweeps.runner import TickRun
from .app import DataflowApp
from .graph import Dataflow, word_count


class DataflowTickRun(TickRun):
    """:class:`TickRun` whose traffic is the sources reading their input logs."""

    def _send(self, t: int) -> None:
        sim, random_ = self.sim, self.rng.random
        app: DataflowApp = sim.app  # type: ignore[assignment]
        for source in app.flow.sources:
            for _ in range(self.whole_rate + (random_() < self.extra_rate)):
                if app.remaining(source, sim.states[source]) <= 0:
                    break
                sim.internal(source, "read")
        self._schedule(t)


def job_graph(point: Point) -> Dataflow:
    """The word-count job a point describes (module docstring)."""
    size = point["size"]
    if size < 3:
        raise ValueError(f"a dataflow job needs size >= 3 (a source, a count, a sink), got {size}")
    sources = max(1, (size - 1) // 2)
    counters = size - 1 - sources
    records = math.ceil(point["rate"] * point["duration"]) + 1
    return word_count(sources, counters, records, keys=2 * counters, seed=point["seed"])


def run_dataflow(point: Point) -> Row:
    """One checkpoint of the job under ``point["algorithm"]``; the row's outcome columns."""
    if not point["fifo"]:
        raise ValueError("barrier snapshots assume FIFO channels (set fifo = true)")
    flow = job_graph(point)
    name = point["algorithm"]
    algorithm: SnapshotAlgorithm = BARRIER_VARIANTS[name]()
    app = DataflowApp(flow, point["message_bytes"])
    sim = Simulator(flow.network(), app, algorithm=algorithm)
    rng = random.Random(point["seed"])
    run = DataflowTickRun(
        sim,
        seed=rng,
        rate=point["rate"],
        message_delay=point["message_delay"],
        marker_delay=point["marker_delay"],
        duration=point["duration"],
    )
    run.run({round(point["start"] * point["duration"]): flow.sources})
    row: dict[str, Any] = checks(sim, "s1")
    row.update(metrics(sim, "s1", run.tick_of, point["message_bytes"]))
    row["peak_buffered"] = max(row["peak_buffered"], run.peak_blocked)
    row.update(channels=len(sim.network.channels), ticks=run.ticks, blocked_time=run.blocked_time)
    return row


for _name in BARRIER_VARIANTS:
    register(_name, run_dataflow, ("dataflow",))

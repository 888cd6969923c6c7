"""Progress lines on standard error for long runs, at most one every few seconds.

Short runs print nothing: the first line comes after ``every`` seconds.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from typing import Any, TextIO


class Ticker:
    """Prints ``label: done of total unit (pct), elapsed`` when :meth:`update` is called
    and ``every`` seconds have passed since the last line."""

    def __init__(
        self, label: str, total: int, unit: str, every: float = 5.0, stream: TextIO | None = None
    ) -> None:
        self.label, self.total, self.unit, self.every = label, total, unit, every
        self.stream = stream if stream is not None else sys.stderr
        self.started = self.last = time.monotonic()

    def update(self, done: int, note: str = "") -> None:
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        pct = 100 * done / self.total if self.total else 100.0
        print(
            f"{self.label}: {done} of {self.total} {self.unit} ({pct:.0f}%){note}, "
            f"{now - self.started:.0f} s",
            file=self.stream,
            flush=True,
        )


class SparkProgress:
    """A thread that follows the Spark jobs of one job group and reports their tasks.

    Use as a context manager around the action that runs the jobs; ``executions`` is
    what the tasks add up to, to show an estimate of it::

        with SparkProgress(spark.sparkContext, "sweep demo", 10**5):
            frame.write.parquet(path)

    The jobs started in the block, and later ones from the same thread, belong to a
    job group of their own (PySpark cannot clear a job group).
    """

    _groups = itertools.count(1)

    def __init__(self, sc: Any, label: str, executions: int, every: float = 5.0) -> None:
        self.sc, self.executions = sc, executions
        self.group = f"snapshotlib-{os.getpid()}-{next(self._groups)}"
        self.ticker = Ticker(label, 0, "tasks", every)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, name="snapshotlib-progress", daemon=True
        )

    def __enter__(self) -> SparkProgress:
        self.sc.setJobGroup(self.group, self.ticker.label)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        tracker = self.sc.statusTracker()
        poll = max(0.1, min(1.0, self.ticker.every))
        while not self._stop.wait(poll):
            done = total = 0
            for job in tracker.getJobIdsForGroup(self.group):
                info = tracker.getJobInfo(job)
                for stage in info.stageIds if info else ():
                    s = tracker.getStageInfo(stage)
                    if s is not None:
                        done += s.numCompletedTasks
                        total += s.numTasks
            if total:
                self.ticker.total = total
                share = self.executions * done // total
                self.ticker.update(done, f", about {share} executions")

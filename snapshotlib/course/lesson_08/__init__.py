"""Lesson 08, failures and recovery: the checkpoint registry, crashes, restores, and
exactly-once output (or not).

The views show the coordinator's registry (:func:`registry_table`), what a restore put
back (:func:`restore_text`), each source's recorded read position against the end of
its log (:func:`read_positions`), the records that crossed a barrier under
at-least-once (:func:`crossings_text`), and how a run's output differs from the
failure-free one (:func:`outcome_diff`), and what a sink that writes as records arrive
sent out twice though the state came back exactly once (:func:`sink_output`).
:func:`recovery_sweep` crashes every variant at many moments and compares each output
with the failure-free run's.

The try-it checks replay the learner's job on a copy, crash it, restore it and run it
to the end: the answer is what the engine does.

>>> from snapshotlib.dataflow import StreamJob, word_count
>>> job = StreamJob(word_count(records=8, keys=8), "aligned", seed=0).run(max_steps=50)
>>> print(registry_table(job))
checkpoint  status     triggered at  ended at  duration  stored                   operators done
c1          COMPLETED            15        39        24  1,496 B (0 B in flight)             5/5
c2          INITIATED            39         -         -  -                                   3/5
>>> job.crash("C1")
['c2']
>>> print(check_restore_point("c1", job))
✓ Right: c1 is the last COMPLETED checkpoint; a restore never uses a FAILED one.
"""

from __future__ import annotations

from ...dataflow.recovery import Diff, Recovery, outcome_diff, recovery_sweep
from .output import SinkOutput, sink_output
from .text import (
    crossings,
    crossings_text,
    events_text,
    read_positions,
    recovery_table,
    registry_table,
    registry_text,
    restore_table,
    restore_text,
)
from .tryit import check_duplicates, check_restore_point

__all__ = [
    "Diff",
    "Recovery",
    "SinkOutput",
    "check_duplicates",
    "check_restore_point",
    "crossings",
    "crossings_text",
    "events_text",
    "outcome_diff",
    "read_positions",
    "recovery_sweep",
    "recovery_table",
    "registry_table",
    "registry_text",
    "restore_table",
    "restore_text",
    "sink_output",
]

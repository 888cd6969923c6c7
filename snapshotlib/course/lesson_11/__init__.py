"""Lesson 11, rollback recovery: after a crash, from which checkpoints can the processes
restart together?

The engine's part is :mod:`snapshotlib.checks.recovery` (the recovery line, the domino
effect, communication-induced checkpoints); this package prints and draws the lesson's
run with its checkpoints (:mod:`.text`), shows output commit on a streaming job's
sinks (:mod:`.output`) and checks the learner's recovery line (:mod:`.tryit`).
"""

from __future__ import annotations

from .output import sinks_table
from .text import (
    CHECKPOINTS,
    DOMINO,
    RUN,
    checkpoints_figure,
    checkpoints_text,
    events_text,
    rollbacks_text,
)
from .tryit import TRYIT, check_recovery_line

__all__ = [
    "CHECKPOINTS",
    "DOMINO",
    "RUN",
    "TRYIT",
    "check_recovery_line",
    "checkpoints_figure",
    "checkpoints_text",
    "events_text",
    "rollbacks_text",
    "sinks_table",
]

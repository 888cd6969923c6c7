"""Lesson 01, global state without a global clock: the runs it uses and its checks.

The lesson shows a snapshot taken by the clock ("everyone record at 12:00") that records
a message as received although it was never sent, then happens-before on a small
execution of three processes, consistent and inconsistent cuts of it, and vector
clocks. The functions here build that execution, print what the notebook shows as
text, and check the learner's answers (each returns a
:class:`~snapshotlib.course.Feedback`: a hint when wrong, the answer only folded).
:func:`expected_answers` gives one right answer per try-it, for the lesson's tests.

>>> sim = small_execution()
>>> relation(sim, "a1", "c3"), relation(sim, "a3", "b3")
('before', 'concurrent')
>>> print(check_inconsistent_frontier({"P1": 1, "P2": 2, "P3": 0}))  # doctest: +ELLIPSIS
✓ Inconsistent, as asked: message a2 (sent by P1 at a2, received by P2 at b2) is ...
"""

from __future__ import annotations

from .text import (
    CONSISTENT,
    LAMPORT_EVENTS,
    RELATION_PAIRS,
    RELATIONS,
    SCENARIOS,
    SMALL_EXECUTION,
    causal_chain,
    clock_timeline,
    describe_execution,
    event_index,
    lamport_table,
    lamport_time,
    offending_messages,
    relation,
    rerun_with_clocks,
    slowest_rate,
    small_execution,
)
from .tryit_cuts import check_inconsistent_frontier, check_smallest_cut, expected_answers
from .tryit_order import (
    check_lamport_times,
    check_orphan_message,
    check_relations,
    check_slowest_rate,
)

__all__ = [
    "CONSISTENT",
    "LAMPORT_EVENTS",
    "RELATIONS",
    "RELATION_PAIRS",
    "SCENARIOS",
    "SMALL_EXECUTION",
    "causal_chain",
    "check_inconsistent_frontier",
    "check_lamport_times",
    "check_orphan_message",
    "check_relations",
    "check_slowest_rate",
    "check_smallest_cut",
    "clock_timeline",
    "describe_execution",
    "event_index",
    "expected_answers",
    "lamport_table",
    "lamport_time",
    "offending_messages",
    "relation",
    "rerun_with_clocks",
    "slowest_rate",
    "small_execution",
]

"""Lesson 07, barrier snapshots: Chandy–Lamport, aligned, unaligned and at-least-once
checkpoints of one streaming job (07a, the four variants), and what each costs (07b,
measuring the trade-offs).

07a tells one checkpoint at one operator (:func:`story`, re-exported from
:mod:`~snapshotlib.course.dataflow_text` with :func:`recorded_text` and
:func:`flow_text`) and asks which variants store records in flight
(:func:`check_in_flight`, answered by running them: :func:`recorders`).

07b measures. :func:`measure` runs a job under every variant over many seeds, with and
without a crash, and sums the costs up as medians (:class:`Costs`; tables:
:func:`costs_table`, :func:`recovery_table`). :func:`claims` sets the Chandy–Lamport
and ABS rows of a system-design lesson's trade-off table next to those measurements,
claim by claim (:func:`claims_table`). :func:`recording_outgrows_its_channel` shows
that channel capacity does not bound what Chandy–Lamport records.
:func:`tradeoff_table` is the corrected table,
built from the same measurements in this one place; more methods join it as
:class:`TradeoffRow` rows. The sizing arithmetic is :class:`~snapshotlib.course.sizing.Sizing`.

>>> from snapshotlib.dataflow import word_count
>>> sorted(recorders(word_count(records=8), seeds=[0]))
['chandy-lamport', 'unaligned']
>>> print(check_node_buffer(54_000_000).message.split(":")[0])
Right, for a node that records on its first marker
"""

from __future__ import annotations

from ...dataflow.costs import Costs, backpressure, held, measure, run_tracking_held
from ..dataflow_text import flow_text, recorded_table, recorded_text, story, story_table
from ..sizing import Sizing
from .text import (
    BACKPRESSURE_METRICS,
    CHAIN,
    CYCLIC,
    DAG,
    DESIGN_TABLE,
    FIGURE_METRICS,
    TRADEOFF_COLUMNS,
    TRY_IT,
    Claim,
    TradeoffRow,
    as_rows,
    backpressure_table,
    claims,
    claims_table,
    costs_table,
    recorders,
    recovery_table,
    tradeoff_rows,
    tradeoff_table,
    unreachable_snapshot,
)
from .tryit import check_in_flight, check_node_buffer
from .unbounded import Outgrown, recording_outgrows_its_channel

__all__ = [
    "BACKPRESSURE_METRICS",
    "CHAIN",
    "CYCLIC",
    "DAG",
    "DESIGN_TABLE",
    "FIGURE_METRICS",
    "TRADEOFF_COLUMNS",
    "TRY_IT",
    "Claim",
    "Costs",
    "Outgrown",
    "Sizing",
    "TradeoffRow",
    "as_rows",
    "backpressure",
    "backpressure_table",
    "check_in_flight",
    "check_node_buffer",
    "claims",
    "claims_table",
    "costs_table",
    "flow_text",
    "held",
    "measure",
    "recorded_table",
    "recorded_text",
    "recorders",
    "recording_outgrows_its_channel",
    "recovery_table",
    "run_tracking_held",
    "story",
    "story_table",
    "tradeoff_rows",
    "tradeoff_table",
    "unreachable_snapshot",
]

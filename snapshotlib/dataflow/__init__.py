"""Streaming dataflow jobs: graphs of sources, operators and sinks, checkpointed by
Chandy–Lamport or by Flink-style barriers (aligned, unaligned, at-least-once), with a
checkpoint coordinator, crashes and restores, and sinks whose output the outside world
sees (plain, idempotent, transactional: :mod:`.sinks`); and the job run as one node, snapshotted
by fork and copy-on-write (:mod:`.fork`). Experiments over many seeded jobs: what each
variant costs (:mod:`.costs`), the stop-the-world and fork baselines (:mod:`.baselines`),
outputs after crashes and restores (:mod:`.recovery`); a new experiment over jobs goes in
a module of its own here.

Core only: the standard library and the engine.
"""

from .app import DataflowApp, Record
from .coordinator import COMPLETED, FAILED, INITIATED, CheckpointCoordinator, CheckpointEntry
from .fork import CowCost, CowModel, ForkSnapshot, StateLayout, fork_costs
from .graph import (
    Dataflow,
    DataflowError,
    Operator,
    dataflow,
    input_log,
    iteration,
    random_dag,
    word_count,
)
from .job import EXACTLY_ONCE, VARIANTS, JobError, Outcome, StreamJob
from .sinks import (
    SINKS,
    ExternalOutput,
    IdempotentSink,
    PlainSink,
    Sink,
    SinkError,
    TransactionalSink,
)
from .sweep import run_dataflow  # registers the barrier variants with the sweeps

__all__ = [
    "COMPLETED",
    "EXACTLY_ONCE",
    "FAILED",
    "INITIATED",
    "SINKS",
    "VARIANTS",
    "CheckpointCoordinator",
    "CheckpointEntry",
    "CowCost",
    "CowModel",
    "Dataflow",
    "DataflowApp",
    "DataflowError",
    "ExternalOutput",
    "ForkSnapshot",
    "IdempotentSink",
    "JobError",
    "Operator",
    "Outcome",
    "PlainSink",
    "Record",
    "Sink",
    "SinkError",
    "StateLayout",
    "StreamJob",
    "TransactionalSink",
    "dataflow",
    "fork_costs",
    "input_log",
    "iteration",
    "random_dag",
    "run_dataflow",
    "word_count",
]

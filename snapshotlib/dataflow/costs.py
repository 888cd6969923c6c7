"""What each snapshot variant costs a streaming job, measured over many seeded runs.

:func:`measure` runs a job under every variant once per seed without failure and once
with a crash and a restore, and sums the costs up as medians (:class:`Costs`): checkpoint
duration, blocked inputs, buffered and held records, stored bytes, control messages,
duplicates after a restore. :func:`backpressure` does the same with bounded channels.
Lesson 07b shows these (``snapshotlib.course.lesson_07``); the baselines' runs are in
:mod:`~snapshotlib.dataflow.baselines`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..trace import APP
from .coordinator import COMPLETED
from .graph import Dataflow
from .job import VARIANTS, StreamJob


@dataclass(frozen=True)
class Costs:
    """What one variant cost on one job, as medians over runs (one run per seed).

    Attributes
    ----------
    latency
        The checkpoint duration: steps from a checkpoint's trigger to its completion.
        (Not the processing latency of a record, which a pause adds to.)
    blocked
        The pause: channel-steps inputs spent blocked by alignment over a run.
    peak_buffered
        The most records and barriers waiting on blocked channels at one moment.
    peak_held
        The most records held for unfinished checkpoints at one moment: recorded as
        channel state (held until the checkpoint completes and is stored), or waiting on
        an input blocked by alignment.
    peak_in_flight
        The most records and barriers in all channels at one moment.
    state_bytes, inflight_bytes, inflight_records
        Stored per completed checkpoint: operator state, and records in flight.
    control
        Barriers (or markers) sent per checkpoint.
    replayed
        Records put back on channels by the restore after a crash.
    duplicates, max_duplicates, runs_with_duplicates
        Records delivered more than once after the crash and restore.
    duplicates_without_crash
        Duplicates over all the failure-free runs.
    same_output
        Runs whose output after a crash equals that of the failure-free run.
    lost, runs_with_losses
        Records never delivered after the crash and restore (median), and the runs
        with any.
    as_predicted
        Runs whose duplicates and losses are exactly the ones the restore predicted
        (records that crossed a barrier, records on a back edge that was not logged).
    """

    variant: str
    runs: int
    latency: float
    blocked: float
    peak_buffered: float
    peak_in_flight: float
    state_bytes: float
    inflight_bytes: float
    inflight_records: float
    control: float
    completed: float
    replayed: float
    duplicates: float
    max_duplicates: int
    runs_with_duplicates: int
    duplicates_without_crash: int
    same_output: int
    as_predicted: int
    lost: float
    runs_with_losses: int
    peak_held: float = 0.0
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def held(job: StreamJob) -> int:
    """Records held right now for the job's unfinished checkpoints: recorded as channel
    state and not yet stored, or waiting on an input that alignment blocks.

    >>> from snapshotlib.dataflow import word_count
    >>> DAG = word_count(sources=2, counters=2, records=20, keys=8)  # lesson 07's job
    >>> job = StreamJob(DAG, "aligned", seed=23)
    >>> _ = job.run(max_steps=20)
    >>> held(job)  # S1#3 and S1#4 wait on the blocked S1->C1
    2
    """
    sim = job.sim
    messages = sim.trace.messages
    waiting = sum(1 for c in sim.blocked for m in sim.queues[c] if messages[m].kind == APP)
    taken = sim.snapshot_ids()
    recorded = 0
    for entry in job.coordinator.pending():
        if entry.id in taken:
            recorded += sim.recorded_count(entry.id)
    return waiting + recorded


def run_tracking_held(job: StreamJob) -> int:
    """Run ``job`` to the end; the peak of :func:`held` over the run."""
    peak = held(job)
    while job.step() is not None:
        peak = max(peak, held(job))
    return peak


def measure(
    flow: Dataflow,
    seeds: Iterable[int] = range(40),
    crash_at: tuple[int, str] = (100, "C1"),
    variants: Sequence[str] = VARIANTS,
    **options: Any,
) -> list[Costs]:
    """Run ``flow`` under each variant once per seed without failure, and once with
    ``crash_at`` (a crash, then a restore from the last completed checkpoint); options
    go to :class:`~snapshotlib.dataflow.StreamJob` (``interval``, ``capacity``...).

    >>> from snapshotlib.dataflow import word_count
    >>> [c.variant for c in measure(word_count(records=5), seeds=[0], crash_at=(10, "C1"))]
    ['chandy-lamport', 'aligned', 'unaligned', 'at-least-once']
    """
    seeds = list(seeds)
    out = []
    for variant in variants:
        latency, blocked, buffered, peak, completed, kept = [], [], [], [], [], []
        state, inflight, records, control = [], [], [], []
        replayed, dups, lost = [], [], []
        clean_dups = same = predicted = 0
        for seed in seeds:
            clean = StreamJob(flow, variant, seed=seed, **options)
            kept.append(run_tracking_held(clean))
            m = clean.metrics()
            if m["latency_median"] is not None:
                latency.append(m["latency_median"])
            blocked.append(m["blocked_steps"])
            buffered.append(m["peak_buffered"])
            peak.append(m["peak_in_flight"])
            completed.append(m["completed"])
            clean_dups += m["duplicates"]
            messages = clean.sim.trace.messages
            for e in clean.coordinator.entries.values():
                if e.status == COMPLETED:
                    state.append(e.state_bytes)
                    inflight.append(e.inflight_bytes)
                    records.append(e.inflight_messages)
                    control.append(
                        sum(1 for msg in messages if msg.kind != APP and msg.tag == e.id)
                    )
            crashed = StreamJob(flow, variant, seed=seed, **options).run(crash_at=crash_at)
            want, got = clean.outcome(), crashed.outcome()
            dups.append(sum(n - 1 for n in got.duplicates.values()))
            lost.append((want.delivered - got.delivered).total())
            same += got == want
            if crashed.restores:
                info = crashed.restores[0]
                replayed.append(info["replayed"])
                predicted += got.as_predicted(want, info)
        out.append(
            Costs(
                variant=variant,
                runs=len(seeds),
                latency=_median(latency),
                blocked=_median(blocked),
                peak_buffered=_median(buffered),
                peak_in_flight=_median(peak),
                state_bytes=_median(state),
                inflight_bytes=_median(inflight),
                inflight_records=_median(records),
                control=_median(control),
                completed=_median(completed),
                replayed=_median(replayed),
                duplicates=_median(dups),
                max_duplicates=max(dups, default=0),
                runs_with_duplicates=sum(1 for d in dups if d),
                duplicates_without_crash=clean_dups,
                same_output=same,
                as_predicted=predicted,
                lost=_median(lost),
                runs_with_losses=sum(1 for n in lost if n),
                peak_held=_median(kept),
                options=dict(options, crash_at=crash_at),
            )
        )
    return out


def backpressure(
    flow: Dataflow,
    capacities: Sequence[int | None] = (None, 8, 4, 2, 1),
    seeds: Iterable[int] = range(20),
    variants: Sequence[str] = VARIANTS,
) -> list[dict[str, Any]]:
    """Medians over ``seeds`` of each variant's buffers when every channel holds at most
    ``capacity`` records (``None``: unbounded): peak records in flight, peak records
    waiting on blocked inputs, peak records held for a checkpoint, stored in-flight bytes
    per checkpoint, and the checkpoint duration (``latency``)."""
    seeds = list(seeds)
    rows = []
    for capacity in capacities:
        for variant in variants:
            runs, kept = [], []
            for s in seeds:
                job = StreamJob(flow, variant, seed=s, capacity=capacity)
                kept.append(run_tracking_held(job))
                runs.append(job)
            ms = [r.metrics() for r in runs]
            inflight = [
                e.inflight_bytes
                for r in runs
                for e in r.coordinator.entries.values()
                if e.status == COMPLETED
            ]
            rows.append(
                {
                    "capacity": capacity,
                    "variant": variant,
                    "peak_in_flight": _median([m["peak_in_flight"] for m in ms]),
                    "peak_buffered": _median([m["peak_buffered"] for m in ms]),
                    "peak_held": _median(kept),
                    "inflight_bytes": _median(inflight),
                    "latency": _median(
                        [m["latency_median"] for m in ms if m["latency_median"] is not None]
                    ),
                    "finished": sum(r.outcome().delivered.total() == _total(flow) for r in runs),
                    "runs": len(runs),
                }
            )
    return rows


def _total(flow: Dataflow) -> int:
    return sum(len(op.records) for op in flow.operators)

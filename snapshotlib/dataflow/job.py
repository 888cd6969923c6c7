"""A streaming job: a dataflow graph run under one snapshot variant, with periodic
checkpoints, a coordinator, crashes and restores, and the costs of each variant.

Time is counted in steps (one record read, or one record or barrier delivered). Every
``interval`` steps the coordinator triggers a checkpoint by injecting a barrier (or a
Chandy–Lamport marker) at every source. A crash halts the whole job and fails every
unfinished checkpoint; :meth:`StreamJob.restore` rolls every operator back to the last
COMPLETED checkpoint, puts the recorded in-flight records back on their channels and
lets the sources re-read from their recorded offsets.

>>> from snapshotlib.dataflow import StreamJob, word_count
>>> clean = StreamJob(word_count(records=15), "aligned", seed=1).run()
>>> crashed = StreamJob(word_count(records=15), "aligned", seed=1).run(crash_at=(70, "C1"))
>>> crashed.restores[0]["from"] is not None, crashed.outcome() == clean.outcome()
(True, True)
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..actions import Action, Deliver, Internal
from ..algorithms.barriers import BARRIER_VARIANTS, BarrierSnapshot, back_edges
from ..algorithms.base import SnapshotAlgorithm
from ..algorithms.chandy_lamport import ChandyLamport
from ..simulator import Simulator
from ..trace import APP, RECEIVE, PartDone, StateRecorded
from .app import DataflowApp, Record
from .coordinator import COMPLETED, FAILED, CheckpointCoordinator, CheckpointEntry
from .graph import Dataflow
from .sinks import SINK_CLASSES, SINKS, ExternalOutput, Sink

VARIANTS = ("chandy-lamport", "aligned", "unaligned", "at-least-once")
EXACTLY_ONCE = ("chandy-lamport", "aligned", "unaligned")


class JobError(ValueError):
    """A job request that cannot be honoured (unknown variant, stepping a crashed job)."""


@dataclass(frozen=True)
class Outcome:
    """What a job computed: each count operator's final counts, and how many times each
    source record reached a sink (exactly once, unless duplicated)."""

    counts: dict[str, dict[str, int]]
    delivered: Counter[tuple[str, int]]

    @property
    def duplicates(self) -> dict[tuple[str, int], int]:
        """Records that reached a sink more than once, with how many times."""
        return {origin: n for origin, n in sorted(self.delivered.items()) if n > 1}

    def as_predicted(self, reference: Outcome, restore: Mapping[str, Any]) -> bool:
        """Whether this outcome of a restored run differs from ``reference`` (the
        failure-free run's) by exactly what ``restore`` (a :meth:`StreamJob.restore`
        report) predicted: its duplicates and its lost records."""
        missing = reference.delivered - self.delivered
        return (sorted(self.duplicates), sorted(missing)) == (
            restore["predicted_duplicates"],
            restore["predicted_lost"],
        )


class StreamJob:
    """Run ``flow`` under ``variant`` (one of :data:`VARIANTS`).

    Parameters
    ----------
    seed
        Seeds the scheduler, which picks each next step among those enabled.
    interval
        Steps between checkpoint triggers.
    ttl
        Steps after which an unfinished checkpoint is FAILED (``None``: never).
    capacity
        Records a channel can buffer: a step that would send on a full channel waits
        (credit-based backpressure). ``None``: unbounded. Feedback edges of a cycle
        stay unbounded (bounded, the cycle could deadlock).
    max_concurrent
        Checkpoints that may be in progress at once; a trigger that is due waits while
        this many are unfinished (Flink's default is 1). Without it, a short interval
        floods the channels with barriers and starves the records.
    min_pause
        Steps that must pass after a checkpoint ends (completed or failed) before the
        next may be triggered (Flink's minimum pause between checkpoints; 0: none).
        A stop-the-world snapshot needs one when a drain can outlast ``interval``: the
        next checkpoint, due at once, would pause the sources again before they read,
        and the job would never finish (it stops with a :class:`JobError` saying so).
    record_bytes
        Size of a record, for the recorded-bytes metrics.
    algorithm
        A :class:`~snapshotlib.algorithms.base.SnapshotAlgorithm` subclass to run
        instead of the variant's own class (an implementation of ``variant``, such as a
        learner's :class:`~snapshotlib.algorithms.barriers.BarrierSnapshot` subclass);
        it is instantiated afresh at the start and at every restore. ``variant`` then
        only names the run in :meth:`metrics`.
    sink
        How the sinks write to the outside world, one of
        :data:`~snapshotlib.dataflow.sinks.SINKS`: ``"plain"`` (each record at once),
        ``"idempotent"`` (keyed by the record's origin) or ``"transactional"`` (committed
        when the next checkpoint completes; at the end of the input one more checkpoint
        commits the last records); or a :class:`~snapshotlib.dataflow.sinks.Sink`
        subclass of one's own (the class itself), instantiated once for the job.
        :attr:`output` keeps what became visible and when.

    Examples
    --------
    >>> from snapshotlib.algorithms.barriers import AlignedBarriers
    >>> from snapshotlib.dataflow import word_count
    >>> class Mine(AlignedBarriers):
    ...     name = "mine"
    >>> job = StreamJob(word_count(records=10), algorithm=Mine, seed=2).run()
    >>> type(job.sim.algorithm).__name__, job.metrics()["completed"] > 0
    ('Mine', True)
    """

    def __init__(
        self,
        flow: Dataflow,
        variant: str = "aligned",
        *,
        seed: int = 0,
        interval: int = 15,
        ttl: int | None = None,
        capacity: int | None = None,
        max_concurrent: int = 1,
        min_pause: int = 0,
        record_bytes: int = 200,
        algorithm: type[SnapshotAlgorithm] | None = None,
        sink: str | type[Sink] = "plain",
    ) -> None:
        if variant not in VARIANTS:
            raise JobError(f"unknown variant {variant!r}: expected one of {', '.join(VARIANTS)}")
        if interval < 1:
            raise JobError(f"interval must be at least 1 step, got {interval}")
        if isinstance(sink, str):
            if sink not in SINKS:
                raise JobError(f"unknown sink {sink!r}: expected one of {', '.join(SINKS)}")
            sink = SINK_CLASSES[sink]
        elif not (isinstance(sink, type) and issubclass(sink, Sink)):
            raise JobError(
                f"sink must be one of {', '.join(SINKS)} or a Sink subclass (the class "
                f"itself, not an instance), got {sink!r}"
            )
        if min_pause < 0:
            raise JobError(f"min_pause must not be negative, got {min_pause}")
        if algorithm is not None and not (
            isinstance(algorithm, type) and issubclass(algorithm, SnapshotAlgorithm)
        ):
            raise JobError(
                f"algorithm must be a SnapshotAlgorithm subclass (the class itself, "
                f"not an instance), got {algorithm!r}"
            )
        self.flow, self.variant = flow, variant
        self._sources = frozenset(flow.sources)
        self.algorithm_class = algorithm
        self.network = flow.network()
        self.app = DataflowApp(flow, record_bytes)
        self.rng = random.Random(seed)
        self.interval, self.capacity, self.max_concurrent = interval, capacity, max_concurrent
        self.min_pause = min_pause
        self.coordinator = CheckpointCoordinator(self.network.processes, ttl)
        self.steps = 0
        self.crashed: str | None = None
        #: one dict per restore: step, checkpoint used, records replayed, predicted duplicates
        self.restores: list[dict[str, Any]] = []
        #: (step, what happened) for crashes, restores and checkpoint outcomes
        self.events: list[tuple[int, str]] = []
        self.blocked_steps = 0  # channel-steps spent blocked by alignment
        self.peak_buffered = 0  # most records waiting on blocked channels at once
        self.peak_in_flight = 0
        self._checkpoints = 0
        self._next_trigger = interval
        #: at the last trigger, if the channels were empty and the trigger paused every
        #: source, and they have stayed paused since: the records the sources had left
        #: (see :meth:`_refuse_a_stall`)
        self._idle_trigger: int | None = None
        #: whether the final checkpoint was taken since the start or the last restore
        self._final_taken = False
        self._crossed: dict[str, list[tuple[str, int]]] = {}
        self._dropped: dict[str, list[tuple[str, int]]] = {}
        self._feedback = back_edges(self.network)
        self._sinks = frozenset(flow.sinks)
        #: what the outside world sees of the sinks' output (see :mod:`.sinks`)
        self.output = ExternalOutput(sink())
        self.sim = self._new_simulator(None, {})

    # ------------------------------------------------------------- set-up
    def _algorithm(self) -> SnapshotAlgorithm:
        if self.algorithm_class is not None:
            return self.algorithm_class()
        if self.variant == "chandy-lamport":
            return ChandyLamport()
        return BARRIER_VARIANTS[self.variant]()

    def _new_simulator(
        self, states: dict[str, Any] | None, in_flight: dict[int, list[Any]]
    ) -> Simulator:
        sim = Simulator(self.network, app=self.app, initial=states, algorithm=self._algorithm())
        # what this run's trace has told so far (see _read_events)
        self._events_read = 0
        self._actions_read = 0
        self._sink_events_read = 0
        self._parts_done: set[tuple[str, str]] = set()
        for channel, payloads in sorted(in_flight.items()):
            src = self.network.channels[channel].src
            for payload in payloads:
                sim.send(src, channel, payload, label="replay")
        return sim

    # ------------------------------------------------------------- stepping
    def actions(self) -> list[Action]:
        """The steps possible now: deliveries, and reads by sources with records left
        (and not paused by the snapshot algorithm: a stop-the-world snapshot)."""
        if self.crashed:
            return []
        sim = self.sim
        acts: list[Action] = [d for d in sim.enabled() if self._room_for(d)]
        for s in self.flow.sources:
            if s not in sim.paused and self.app.remaining(s, sim.states[s]) > 0:
                key = self.app.log[s][sim.states[s]][0]
                if self._has_room(s, self.app.route(s, key)):
                    acts.append(Internal(s, "read"))
        return acts

    def _has_room(self, process: str, dst: str | None) -> bool:
        if self.capacity is None or dst is None:
            return True
        channel = self.network.channel_index(self.network.channel(process, dst))
        if channel in self._feedback:
            return True  # bounded feedback buffers could deadlock the cycle: not bounded
        # barriers and markers take no credit: only records fill a channel's buffer
        queue = self.sim.queues[channel]
        messages = self.sim.trace.messages
        return sum(messages[m].kind == APP for m in queue) < self.capacity

    def _room_for(self, d: Deliver) -> bool:
        if self.capacity is None:
            return True
        sim = self.sim
        queue = sim.queues[self.network.channel_index(d.channel)]
        msg = sim.trace.messages[queue[0]]
        if msg.kind != APP:
            return True
        return self._has_room(d.channel.dst, self.app.next_hop(d.channel.dst, msg.payload))

    def step(self, action: Action | None = None) -> Action | None:
        """Take ``action`` (or one chosen by the seeded scheduler); ``None`` when the job
        has nothing left to do."""
        if self.crashed:
            raise JobError(f"the job is halted: {self.crashed} crashed; restore() first")
        acts = self.actions()
        waiting = self.output.waiting() and not self.coordinator.pending()
        if not acts and waiting and not self._final_taken:
            # the input is done and a transactional sink's last records wait for a
            # checkpoint: take one more (Flink's final checkpoint), or they never show;
            # one only: a sink that still holds records after it never writes them (a
            # sink of one's own may be wrong)
            self._final_taken = True
            self.trigger(final=True)
            acts = self.actions()
        if action is None:
            if not acts:
                return None
            action = self.rng.choice(acts)
        elif action not in acts:
            raise JobError(f"cannot {action} now; possible: {', '.join(map(str, acts)) or 'none'}")
        self.sim.step(action)
        self.steps += 1
        self._after_step()
        return action

    def run(
        self, max_steps: int | None = None, crash_at: tuple[int, str] | None = None
    ) -> StreamJob:
        """Step until nothing is left (or ``max_steps``); ``crash_at=(step, process)``
        crashes that process at that step and restores at once."""
        taken = 0
        while max_steps is None or taken < max_steps:
            if crash_at is not None and self.steps == crash_at[0] and not self.restores:
                self.crash(crash_at[1])
                self.restore()
            if self.step() is None:
                break
            taken += 1
        return self

    def _after_step(self) -> None:
        sim = self.sim
        buffered = sum(len(sim.queues[c]) for c in sim.blocked)
        self.blocked_steps += len(sim.blocked)
        self.peak_buffered = max(self.peak_buffered, buffered)
        self.peak_in_flight = max(self.peak_in_flight, sum(map(len, sim.queues)))
        self._watch_sinks()
        self._progress()
        for cid in self.coordinator.expire(self.steps):
            self._discard(cid)
            self.events.append((self.steps, f"{cid} FAILED: past its time-to-live"))
            self._ended()
        due = self.steps >= self._next_trigger and self._input_left()
        if due and len(self.coordinator.pending()) < self.max_concurrent:
            self.trigger()
        if not self._sources <= self.sim.paused:
            self._idle_trigger = None  # the sources may read now: no stall (yet)

    def _input_left(self) -> bool:
        return self._records_left() > 0

    # ------------------------------------------------------------- checkpoints
    def trigger(self, final: bool = False) -> str:
        """Start a checkpoint now: a barrier (or marker) at every source. A ``final``
        one (the input is done) has no time-to-live."""
        idle = not any(self.sim.queues)
        left = self._records_left()
        self._refuse_a_stall(idle, left)
        self._checkpoints += 1
        cid = f"c{self._checkpoints}"
        self.coordinator.trigger(cid, self.steps, final)
        for s in self.flow.sources:
            self.sim.start_snapshot(s, cid)
        paused_all = self._sources <= self.sim.paused
        self._idle_trigger = left if idle and paused_all else None
        self._next_trigger = self.steps + self.interval
        self._progress()
        return cid

    def _records_left(self) -> int:
        return sum(self.app.remaining(s, self.sim.states[s]) for s in self.flow.sources)

    def _refuse_a_stall(self, idle: bool, left: int) -> None:
        """A checkpoint that would pause the sources in the very state the last one
        paused them in (channels empty, the sources paused ever since, so nothing read)
        would do so forever: its drain lasts as long, so the next is due the moment it
        ends, and the job never finishes. Say so rather than run forever (a
        stop-the-world snapshot whose drain outlasts ``interval``)."""
        if idle and self._idle_trigger is not None and self._idle_trigger == left > 0:
            raise JobError(
                f"checkpoint c{self._checkpoints + 1} would pause the sources again before "
                f"they read anything since c{self._checkpoints} paused them: the drain "
                f"takes at least the interval ({self.interval} steps), so the job would "
                "never finish; give a pause between checkpoints (min_pause, e.g. "
                f"min_pause={self.interval}) or a longer interval"
            )

    def _read_events(self) -> None:
        """Take in the parts done the trace told since the last call."""
        events = self.sim.trace.events
        for e in events[self._events_read :]:
            if isinstance(e, PartDone):
                self._parts_done.add((e.snapshot_id, e.process))
        self._events_read = len(events)

    def _watch_sinks(self) -> None:
        """Tell :attr:`output` what happened at the sinks since the last call, in the
        order of the run: records that reached a sink, and sinks that recorded their
        state (a record received before the state was recorded belongs to that
        checkpoint)."""
        trace = self.sim.trace
        actions, events = trace.actions, trace.events
        happened: list[tuple[int, int, str, Any]] = []
        for i in range(self._actions_read, len(actions)):
            a = actions[i]
            if a.kind == RECEIVE and a.process in self._sinks:
                record = trace.messages[a.message].payload
                if isinstance(record, Record):
                    happened.append((i, 1, a.process, record.origin))
        for e in events[self._sink_events_read :]:
            if isinstance(e, StateRecorded) and e.process in self._sinks:
                happened.append((e.action, 0, e.process, e.snapshot_id))
        self._actions_read, self._sink_events_read = len(actions), len(events)
        for _, is_record, sink, what in sorted(happened, key=lambda h: h[:2]):
            if is_record:
                self.output.arrived(sink, what, self.steps)
            else:
                self.output.state_recorded(sink, what, self.steps)

    def _progress(self) -> None:
        """Tell the coordinator which operators have done their part of each pending
        checkpoint (in operator order, so its registry reads the same every run)."""
        self._read_events()
        done = self._parts_done
        for entry in self.coordinator.pending():
            for p in self.network.processes:
                if p not in entry.nodes_completed and (entry.id, p) in done:
                    self.coordinator.node_done(entry.id, p, self.steps)
            if entry.status == COMPLETED:
                self._completed(entry)

    def _completed(self, entry: CheckpointEntry) -> None:
        snap = self.sim.snapshot(entry.id)
        entry.snapshot = snap
        entry.state_bytes = sum(
            self.app.state_bytes(p, rp.state) for p, rp in snap.processes.items()
        )
        entry.inflight_messages = sum(len(m) for m in snap.channels.values())
        entry.inflight_bytes = entry.inflight_messages * self.app.record_bytes
        algo = self.sim.algorithm
        if isinstance(algo, BarrierSnapshot):
            # the algorithm's own list, not its RecordCrossed events: exercise 7's
            # learners write the list (BarrierSnapshot.crossed is their contract)
            messages = self.sim.trace.messages
            self._crossed[entry.id] = [
                messages[m].payload.origin for m in algo.crossed.get(entry.id, [])
            ]
            self._dropped[entry.id] = [
                messages[m].payload.origin for m in algo.dropped.get(entry.id, [])
            ]
        self.events.append((self.steps, f"{entry.id} COMPLETED"))
        self.output.checkpoint_completed(entry.id, self.steps)
        self._ended()

    def _ended(self) -> None:
        """A checkpoint ended: the next waits at least ``min_pause`` steps."""
        self._next_trigger = max(self._next_trigger, self.steps + self.min_pause)

    def _discard(self, cid: str) -> None:
        self.sim.algorithm.discard(cid)

    # ------------------------------------------------------------- failures
    def crash(self, process: str) -> list[str]:
        """``process`` fails: the job halts and every unfinished checkpoint is FAILED
        (returned). Nothing runs again until :meth:`restore`."""
        if process not in self.network.processes:
            known = ", ".join(self.network.processes)
            raise JobError(f"cannot crash {process!r}: no such operator (known: {known})")
        if self.crashed:
            raise JobError(f"the job is already halted ({self.crashed} crashed)")
        self.crashed = process
        failed = self.coordinator.on_crash(process, self.steps)
        for cid in failed:
            self._discard(cid)
            self.events.append((self.steps, f"{cid} FAILED: {process} crashed"))
        self.events.append((self.steps, f"{process} crashed"))
        return failed

    def restore(self) -> dict[str, Any]:
        """Roll every operator back to the last COMPLETED checkpoint (or the start, if
        there is none), replay its recorded in-flight records, and resume.

        The returned dict (also appended to :attr:`restores`) gives the step, the
        checkpoint restored (``from``), the records ``replayed``, and what the algorithm
        predicts about the output, as record origins: ``predicted_duplicates`` (records
        that crossed a barrier: delivered once more) and ``predicted_lost`` (records on
        an unlogged back edge: never delivered)."""
        entry = self.coordinator.latest_completed()
        assert entry is None or entry.status != FAILED
        states: dict[str, Any] | None = None
        in_flight: dict[int, list[Any]] = {}
        if entry is not None:
            snap = entry.snapshot
            states = {p: rp.state for p, rp in snap.processes.items()}
            for name, msgs in snap.channels.items():
                channel = self.network.channel_index(self.network.channel(*name.split("->")))
                in_flight[channel] = [m.payload for m in msgs]
        self.sim = self._new_simulator(states, in_flight)
        self.output.restored(self.steps)
        self._final_taken = False
        self.crashed = None
        crossed = set(self._crossed.get(entry.id, [])) if entry else set()
        dropped = set(self._dropped.get(entry.id, [])) if entry else set()
        info = {
            "step": self.steps,
            "from": entry.id if entry else None,
            "replayed": sum(map(len, in_flight.values())),
            # a record that crossed a barrier is counted twice, one dropped from a back
            # edge not at all, one that did both (round a loop) once
            "predicted_duplicates": sorted(crossed - dropped),
            "predicted_lost": sorted(dropped - crossed),
        }
        self.restores.append(info)
        self.events.append((self.steps, f"restored from {info['from'] or 'the start'}"))
        self._next_trigger = self.steps + self.interval
        return info

    # ------------------------------------------------------------- results
    def outcome(self) -> Outcome:
        counts = {
            op.name: dict(self.sim.states[op.name])
            for op in self.flow.operators
            if op.kind == "count"
        }
        delivered: Counter[tuple[str, int]] = Counter()
        for sink in self.flow.sinks:
            delivered.update(r.origin for r in self.sim.states[sink] if isinstance(r, Record))
        return Outcome(counts, delivered)

    def metrics(self) -> dict[str, Any]:
        """The costs of this run, the same keys for every variant."""
        entries = list(self.coordinator.entries.values())
        done = [e for e in entries if e.status == COMPLETED]
        latencies = [e.duration for e in done if e.duration is not None]
        return {
            "variant": self.variant,
            "steps": self.steps,
            "checkpoints": len(entries),
            "completed": len(done),
            "failed": sum(e.status == FAILED for e in entries),
            "latency_median": statistics.median(latencies) if latencies else None,
            "blocked_steps": self.blocked_steps,
            "peak_buffered": self.peak_buffered,
            "peak_in_flight": self.peak_in_flight,
            "state_bytes": max((e.state_bytes for e in done), default=0),
            "inflight_messages": max((e.inflight_messages for e in done), default=0),
            "inflight_bytes": max((e.inflight_bytes for e in done), default=0),
            "duplicates": sum(n - 1 for n in self.outcome().duplicates.values()),
        }

"""Streaming jobs told in words: what happens at one operator during one checkpoint
(:func:`story`), what a completed checkpoint recorded (:func:`recorded_text`), and a
job's graph (:func:`flow_text`). Lessons 07a, 07b and 08 print these.

>>> from snapshotlib.dataflow import StreamJob, word_count
>>> job = StreamJob(word_count(records=6), "aligned", seed=1, interval=5)
>>> print(story(job, "C1", "c1").splitlines()[0])
step 13: the barrier of c1 arrives on S1->C1: C1 blocks S1->C1 and waits for the barrier on S2->C1
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..algorithms.barriers import back_edges
from ..dataflow import Dataflow, Record, StreamJob
from ..dataflow.coordinator import COMPLETED
from ..snapshot import GlobalSnapshot
from ..snapshot_text import CHANNEL, PROCESS, SnapshotRow, SnapshotStyle, snapshot_rows
from ..trace import (
    APP,
    CONTROL,
    RECEIVE,
    BarrierOvertook,
    InputBlocked,
    InputUnblocked,
    PartDone,
    RecordCrossed,
    RecordingClosed,
    RecordingStarted,
    SnapshotDiscarded,
    StateRecorded,
    TraceEvent,
)
from .tables import Table

__all__ = [
    "flow_text",
    "record_name",
    "recorded_table",
    "recorded_text",
    "state_text",
    "story",
    "story_table",
]


def _name(job: StreamJob, channel: int) -> str:
    return str(job.network.channels[channel])


def _names(job: StreamJob, channels: Iterable[int]) -> str:
    return ", ".join(_name(job, c) for c in sorted(channels))


def record_name(payload: Any) -> str:
    """A record's name: its source and offset, ``S1#4``."""
    if isinstance(payload, Record):
        return f"{payload.origin[0]}#{payload.origin[1]}"
    return str(payload)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def state_text(job: StreamJob, process: str, state: Any) -> str:
    """An operator's state in words: a source's offset, a count's counts, a sink's size."""
    kind = job.app.kind[process]
    if kind == "source":
        return f"offset {state}"
    if kind == "count":
        return str(dict(state))
    if kind == "sink":
        return _plural(len(state), "record")
    return "no state"


def flow_text(flow: Dataflow) -> str:
    """The operators of ``flow``, its channels and its back edges, in words.

    >>> from snapshotlib.dataflow import word_count
    >>> print(flow_text(word_count(records=3)))
    S1 (source, 3 records), S2 (source, 3 records), C1 (count), C2 (count), K (sink)
    6 channels: S1->C1, S1->C2, S2->C1, S2->C2, C1->K, C2->K
    no cycle
    """
    ops = []
    for op in flow.operators:
        extra = f", {_plural(len(op.records), 'record')}" if op.kind == "source" else ""
        ops.append(f"{op.name} ({op.kind}{extra})")
    net = flow.network()
    back = back_edges(net)
    return "\n".join(
        [
            ", ".join(ops),
            f"{len(net.channels)} channels: {', '.join(str(c) for c in net.channels)}",
            f"back edges: {', '.join(str(net.channels[c]) for c in sorted(back))}"
            if back
            else "no cycle",
        ]
    )


def story(job: StreamJob, process: str, checkpoint: str, *, max_steps: int = 5000) -> str:
    """Step ``job`` until ``process`` has finished its part of ``checkpoint``, telling
    what happens at ``process`` from the moment the first barrier (or marker) of that
    checkpoint reaches it: blocked and unblocked inputs, records read (and whether they
    are recorded in flight, or cross the barrier), records that wait behind a barrier,
    the moment the state is recorded. The job is left where the story ends.

    What happened is read from the trace's events (:mod:`snapshotlib.trace`), never
    worked out again from the state before and after a step.
    """
    sim = job.sim
    trace = sim.trace
    inputs = set(sim.input_channels(process))
    outputs = sim.output_channels(process)
    told = _Told(job, process, checkpoint, outputs)
    lines: list[str] = []
    after = 0  # records read after the snapshot on inputs already closed

    def done_after(events: Sequence[TraceEvent], done: bool) -> bool:
        """Whether ``process``'s part of the checkpoint is done (and the checkpoint not
        discarded since), as ``events`` tell it."""
        for e in events:
            if e.snapshot_id != checkpoint:
                continue
            if isinstance(e, PartDone) and e.process == process:
                done = True
            elif isinstance(e, SnapshotDiscarded):
                done = False
        return done

    done = done_after(trace.events, False)  # the job may have run before the story
    for _ in range(max_steps):
        if told.started and done:
            break
        actions, messages, events = len(trace.actions), len(trace.messages), len(trace.events)
        if job.step() is None:
            lines.append(f"the job has finished; {process} never completed {checkpoint}")
            break
        new = [e for e in trace.events[events:] if e.snapshot_id == checkpoint]
        done = done_after(new, done)
        for i in range(actions, len(trace.actions)):
            a = trace.actions[i]
            now = [e for e in new if e.action == i]
            msg = trace.messages[a.message] if a.message >= 0 else None
            if a.process != process:
                told.follow(now)
            elif a.kind == CONTROL and msg is not None and msg.tag == checkpoint:
                lines.append(
                    f"step {job.steps}: the {told.word} of {checkpoint} arrives on "
                    f"{_name(job, a.channel)}: " + told.on_barrier(a.channel, now)
                )
            elif a.kind == RECEIVE and told.started and msg is not None:
                meaning = told.on_read(a.channel, a.message, now)
                if meaning is None:
                    after += 1
                    continue
                lines.append(
                    f"step {job.steps}: {process} reads {record_name(msg.payload)} from "
                    f"{_name(job, a.channel)}{meaning}"
                )
            else:
                told.follow(now)
        if any(isinstance(e, SnapshotDiscarded) for e in new):
            reason = job.coordinator.entry(checkpoint).reason
            lines.append(
                f"step {job.steps}: {checkpoint} failed ({reason}) and is discarded: "
                f"{process} has no part of it to finish"
            )
            break
        if told.started:
            for m in range(messages, len(trace.messages)):
                msg = trace.messages[m]
                if msg.kind == APP and msg.channel in sim.blocked & inputs:
                    waiting = _waiting(job, msg.channel)
                    lines.append(
                        f"step {job.steps}: {record_name(msg.payload)} is sent on "
                        f"{_name(job, msg.channel)}, which is blocked: it waits there "
                        f"({waiting} waiting)"
                    )
    if done:
        snap = sim.snapshot(checkpoint)
        in_flight = {c: snap.message_ids(_name(job, c)) for c in sorted(inputs)}
        held = [f"{_name(job, c)}: {_records(job, ms)}" for c, ms in in_flight.items() if ms]
        lines.append(
            f"{process}'s part of {checkpoint} is complete: state "
            f"{state_text(job, process, snap.states[process])}; in flight on its inputs: "
            + ("; ".join(held) if held else "nothing")
        )
        if after:
            lines.append(
                f"(meanwhile {process} went on working: {_plural(after, 'record')} read after "
                "its snapshot on inputs already closed, for the next checkpoint)"
            )
    return "\n".join(lines)


def _waiting(job: StreamJob, channel: int) -> int:
    messages = job.sim.trace.messages
    return sum(1 for m in job.sim.queues[channel] if messages[m].kind == APP)


def _records(job: StreamJob, ids: Iterable[int]) -> str:
    messages = job.sim.trace.messages
    return ", ".join(record_name(messages[m].payload) for m in ids) or "nothing"


class _Told:
    """What one operator's story knows so far of one checkpoint, kept from the events
    of its actions, and those actions told in words."""

    def __init__(self, job: StreamJob, process: str, checkpoint: str, outputs: Sequence[int]):
        self.job, self.process, self.checkpoint = job, process, checkpoint
        self.outputs = outputs
        self.inputs = job.sim.input_channels(process)
        self.word = "marker" if job.variant == "chandy-lamport" else "barrier"
        self.back = back_edges(job.network)  # inputs no barrier is waited for on
        self.started = False
        self.recorded = False  # the operator has recorded its state
        self.arrived: set[int] = set()  # inputs whose barrier has come
        self.recording: set[int] = set()  # inputs whose recording is open
        #: input -> the messages its closed recording holds (an unaligned barrier's
        #: channel closes at once, holding what it overtook, which is read afterwards)
        self.held: dict[int, tuple[int, ...]] = {}

    def follow(self, events: Sequence[TraceEvent]) -> None:
        """Take in what ``events`` (of one action) change for the operator."""
        for e in events:
            if isinstance(e, StateRecorded) and e.process == self.process:
                self.recorded = True
            elif isinstance(e, RecordingStarted) and e.channel in self.inputs:
                self.recording.add(e.channel)
            elif isinstance(e, RecordingClosed) and e.channel in self.inputs:
                self.recording.discard(e.channel)
                self.held[e.channel] = e.messages
            elif isinstance(e, SnapshotDiscarded):
                self.recorded = False
                self.recording.clear()
                self.held.clear()

    def on_barrier(self, channel: int, events: Sequence[TraceEvent]) -> str:
        """The barrier on ``channel`` reached the operator, with ``events``: in words."""
        job, process = self.job, self.process
        self.started = True
        self.arrived.add(channel)
        was_recorded = self.recorded
        self.follow(events)
        blocked = {e.channel for e in events if isinstance(e, InputBlocked)}
        unblocked = {e.channel for e in events if isinstance(e, InputUnblocked)}
        parts: list[str] = []
        newly_blocked = blocked - unblocked  # the last barrier blocks and frees at once
        if newly_blocked:
            missing = self._waited_for()
            parts.append(
                f"{process} blocks {_names(job, newly_blocked)}"
                + (f" and waits for the {self.word} on {_names(job, missing)}" if missing else "")
            )
        if self.recorded and not was_recorded:
            state = job.sim.snapshot(self.checkpoint).states[process]
            text = (
                f"{process} records its state ({state_text(job, process, state)})"
                + (f" and sends the {self.word} on {_names(job, self.outputs)}"
                   if self.outputs else "")
            )  # fmt: skip
            taken = [
                f"{_name(job, e.channel)}: {_records(job, e.messages)}"
                for e in events
                if isinstance(e, BarrierOvertook)
            ]
            if taken:
                text += f"; the barrier overtakes what waits on {'; '.join(taken)} (recorded)"
            if self.recording:
                text += (
                    f"; it records what arrives on {_names(job, self.recording)} until its "
                    f"{self.word} comes"
                )
            parts.append(text)
        elif was_recorded:
            closed = [e for e in events if isinstance(e, RecordingClosed) and e.channel == channel]
            msgs = list(closed[0].messages) if closed else []
            parts.append(
                f"{process} stops recording it: {_plural(len(msgs), 'record')} in flight"
                + (f" ({_records(job, msgs)})" if msgs else "")
            )
        released = unblocked - blocked
        if released:
            waited = sum(_waiting(job, c) for c in released)
            parts.append(f"unblocks {_names(job, released)} ({_plural(waited, 'record')} waited)")
        if not parts:
            if job.variant == "at-least-once" and not self.recorded:
                missing = self._waited_for()
                parts.append(
                    f"{process} keeps reading it (no alignment) and waits for the barrier on "
                    f"{_names(job, missing)}"
                )
            else:
                parts.append("nothing to do")
        return "; ".join(parts)

    def _waited_for(self) -> list[int]:
        """Inputs whose barrier has not come yet, back edges left out."""
        return [c for c in self.inputs if c not in self.arrived and c not in self.back]

    def on_read(self, channel: int, message: int, events: Sequence[TraceEvent]) -> str | None:
        """What reading ``message`` on ``channel`` means for the checkpoint; ``None``:
        nothing (a read after the snapshot on an input already closed)."""
        self.follow(events)
        if self.recorded and (channel in self.recording or message in self.held.get(channel, ())):
            return f": recorded in flight (sent before the {self.word}, read after the snapshot)"
        if any(isinstance(e, RecordCrossed) and e.message == message for e in events):
            return (
                f": after the barrier on {_name(self.job, channel)}, before {self.process}'s "
                "snapshot: it crosses the barrier (counted in the snapshot, and read again on "
                "a restore)"
            )
        if self.recorded:
            return None
        return ""


def _checkpoint_rows(
    job: StreamJob, snap: GlobalSnapshot
) -> tuple[list[SnapshotRow], list[SnapshotRow]]:
    """A completed checkpoint in the shared snapshot layout: the operators' rows, and
    the rows of the channels with records in flight (the empty ones are folded away)."""
    style = SnapshotStyle(
        process=lambda p, part: state_text(job, p, part.state),
        message=lambda m: record_name(m.payload),
        quiet_over=0,
    )
    rows = snapshot_rows(job.sim, snap, style)
    return [r for r in rows if r.kind == PROCESS], [r for r in rows if r.kind == CHANNEL]


def recorded_text(job: StreamJob, checkpoint: str) -> str:
    """What a checkpoint recorded: each operator's state, the records in flight on each
    channel that has any, and the sizes the registry reports."""
    entry = job.coordinator.entry(checkpoint)
    if entry.status != COMPLETED:
        return f"{checkpoint} is {entry.status}: nothing to restore from"
    snap = entry.snapshot
    lines = [
        f"{checkpoint} ({job.variant}): triggered at step {entry.triggered_at}, "
        f"completed at step {entry.ended_at}"
    ]
    states, in_flight = _checkpoint_rows(job, snap)
    lines.append("  states: " + "; ".join(f"{r.name}: {r.text}" for r in states))
    flight = "; ".join(f"{r.name}: {r.text}" for r in in_flight)
    lines.append("  in flight: " + (flight or "nothing"))
    lines.append(
        f"  size: {entry.state_bytes:,} B of operator state + {entry.inflight_bytes:,} B "
        f"in flight = {entry.size_bytes:,} B"
    )
    return "\n".join(lines)


def story_table(text: str) -> Table:
    """A :func:`story` as a table: one row per step, what happened at the operator; the
    lines that close the story go under it.

    >>> print(story_table("step 3: C1 reads S1#0\\nC1's part of c1 is complete"))
    step  at the operator
    3     C1 reads S1#0
    <BLANKLINE>
    C1's part of c1 is complete
    """
    rows, notes = [], []
    for line in text.splitlines():
        found = re.match(r"step (\d+): (.*)$", line)
        if found:
            rows.append((found.group(1), found.group(2)))
        elif line:
            notes.append(line)
    return Table(("step", "at the operator"), rows, notes=notes)


def recorded_table(job: StreamJob, checkpoint: str) -> Table:
    """:func:`recorded_text` as a table: a row per operator state, a row per channel
    with records in flight, and the sizes."""
    entry = job.coordinator.entry(checkpoint)
    if entry.status != COMPLETED:
        return Table(("part", "recorded"), [], notes=(recorded_text(job, checkpoint),))
    states, in_flight = _checkpoint_rows(job, entry.snapshot)
    rows = [(r.name, r.text) for r in states]
    rows += [(f"{r.name} (in flight)", r.text) for r in in_flight] or [
        ("channels", "nothing in flight")
    ]
    return Table(
        ("part", "recorded"),
        rows,
        notes=(
            f"{checkpoint} ({job.variant}): triggered at step {entry.triggered_at}, completed "
            f"at step {entry.ended_at}; {entry.state_bytes:,} B of operator state + "
            f"{entry.inflight_bytes:,} B in flight = {entry.size_bytes:,} B",
        ),
    )

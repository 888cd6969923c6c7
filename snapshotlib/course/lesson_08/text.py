"""Lesson 08 in words: the registry, restores, read positions, crossings and output
differences. Built from runs of the engine and deterministic, so the notebook can
compare what it prints with its stored output.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...dataflow import FAILED, StreamJob
from ...dataflow.recovery import Recovery
from ...trace import APP, RecordCrossed
from ..dataflow_text import record_name, state_text
from ..tables import Table


def registry_table(job: StreamJob) -> Table:
    """The coordinator's registry, one row per checkpoint: status, when it was
    triggered and ended (steps), its duration, what it stored (operator state and
    records in flight, counted once it is complete), how many operators finished their
    part, and why it failed."""
    n = len(job.network.processes)
    rows = []
    failed = False
    for r in job.coordinator.rows():
        done = r["status"] == "COMPLETED"
        failed |= bool(r["reason"])
        rows.append(
            [
                r["snapshot_id"],
                r["status"],
                str(r["triggered_at"]),
                "-" if r["ended_at"] is None else str(r["ended_at"]),
                "-" if r["duration"] is None else str(r["duration"]),
                f"{r['total_size_bytes']:,} B ({r['inflight_bytes']:,} B in flight)"
                if done
                else "-",
                f"{r['nodes_completed']}/{n}",
                r["reason"],
            ]
        )
    columns = ["checkpoint", "status", "triggered at", "ended at", "duration", "stored",
               "operators done", "reason"]  # fmt: skip
    if not failed:
        columns.pop()
        rows = [row[:-1] for row in rows]
    return Table(columns, rows)


def registry_text(job: StreamJob) -> str:
    """:func:`registry_table` as plain text."""
    return str(registry_table(job))


def read_positions(job: StreamJob, checkpoint: str) -> Table:
    """Each source's read position as ``checkpoint`` recorded it, against the end of its
    log (the offset up to which records are written: a Kafka partition's high-water
    mark), and what a restore from the end of the log would never read."""
    snap = job.coordinator.entry(checkpoint).snapshot
    rows = []
    for s in job.flow.sources:
        position = int(snap.processes[s].state)
        end = len(job.app.log[s])
        rows.append((s, str(position), str(end), str(end - position)))
    return Table(
        ("source", "read position recorded", "end of its log", "records skipped from the end"),
        rows,
        notes=(f"{checkpoint}; a position is the offset of the next record to read.",),
    )


def events_text(job: StreamJob, since: int = 0) -> str:
    """The job's events (crashes, restores, checkpoint outcomes) from ``since`` on."""
    return "\n".join(f"step {step:>3}: {what}" for step, what in job.events[since:])


def restore_text(job: StreamJob) -> str:
    """What the last restore did: the checkpoint it used, where each source reads from
    again, each operator's restored state, and the records put back on the channels
    (recorded in flight) to be read again."""
    if not job.restores:
        return "no restore yet"
    info = job.restores[-1]
    lines = [
        f"restored at step {info['step']} from "
        + (f"checkpoint {info['from']}" if info["from"] else "the start (no checkpoint COMPLETED)")
    ]
    sim = job.sim
    states = []
    for p in job.network.processes:
        states.append(f"{p}: {state_text(job, p, sim.states[p])}")
    lines.append("  states: " + "; ".join(states))
    messages = sim.trace.messages
    put_back = []
    for c, queue in enumerate(sim.queues):
        replayed = [m for m in queue if messages[m].kind == APP and messages[m].label == "replay"]
        if replayed:
            names = ", ".join(record_name(messages[m].payload) for m in replayed)
            put_back.append(f"{job.network.channels[c]}: {names}")
    lines.append("  put back on the channels: " + ("; ".join(put_back) or "nothing"))
    offsets = [
        f"{s} from record {sim.states[s]}" for s in job.flow.sources
    ]  # a source's state is the offset of the next record it reads
    lines.append("  sources read again: " + ", ".join(offsets))
    if info["predicted_duplicates"]:
        names = ", ".join(f"{s}#{i}" for s, i in info["predicted_duplicates"])
        lines.append(f"  records that crossed a barrier of {info['from']}: {names}")
    return "\n".join(lines)


def restore_table(job: StreamJob) -> Table:
    """:func:`restore_text` as a table: where the restore came from, each operator's
    restored state, what was put back on each channel, where the sources read again."""
    if not job.restores:
        return Table(("part", "after the restore"), [], notes=("no restore yet",))
    info = job.restores[-1]
    sim = job.sim
    rows = [(p, state_text(job, p, sim.states[p])) for p in job.network.processes]
    messages = sim.trace.messages
    for c, queue in enumerate(sim.queues):
        replayed = [m for m in queue if messages[m].kind == APP and messages[m].label == "replay"]
        if replayed:
            names = ", ".join(record_name(messages[m].payload) for m in replayed)
            rows.append((f"{job.network.channels[c]} (put back)", names))
    if not any(part.endswith("(put back)") for part, _ in rows):
        rows.append(("channels", "nothing put back"))
    notes = [
        f"restored at step {info['step']} from "
        + (f"checkpoint {info['from']}" if info["from"] else "the start (no checkpoint COMPLETED)")
        + "; sources read again from "
        + ", ".join(f"{s} record {sim.states[s]}" for s in job.flow.sources)
    ]
    if info["predicted_duplicates"]:
        names = ", ".join(f"{s}#{i}" for s, i in info["predicted_duplicates"])
        notes.append(f"records that crossed a barrier of {info['from']}: {names}")
    return Table(("part", "after the restore"), rows, notes=notes)


def crossings(job: StreamJob) -> dict[str, list[tuple[str, str, str]]]:
    """Under at-least-once: per checkpoint not FAILED, the records read after their
    input's barrier and before the reader recorded its state, as ``(record, reader,
    channel)`` (none under the other variants)."""
    crossed: dict[str, list[int]] = {}
    for event in job.sim.trace.events:
        if isinstance(event, RecordCrossed):
            crossed.setdefault(event.snapshot_id, []).append(event.message)
    messages = job.sim.trace.messages
    out: dict[str, list[tuple[str, str, str]]] = {}
    for cid, entry in job.coordinator.entries.items():
        if entry.status != FAILED:  # a FAILED checkpoint's records were discarded
            out[cid] = [
                (
                    record_name(messages[m].payload),
                    job.network.channels[messages[m].channel].dst,
                    str(job.network.channels[messages[m].channel]),
                )
                for m in crossed.get(cid, [])
            ]
    return out


def crossings_text(job: StreamJob) -> str:
    """:func:`crossings` in words, with each checkpoint's status."""
    lines = []
    for cid, found in crossings(job).items():
        status = job.coordinator.entry(cid).status
        lines.append(f"{cid} ({status}):")
        for record, reader, channel in found:
            lines.append(
                f"  {record}: read by {reader} on {channel} after the barrier of {cid}, "
                f"before {reader} recorded its state"
            )
        if not found:
            lines.append("  no record crossed a barrier")
    return "\n".join(lines) or "no record crossed a barrier"


def recovery_table(rows: Sequence[Recovery]) -> Table:
    """:func:`recovery_sweep` as a table, one row per variant."""
    return Table(
        ("variant", "restored from a checkpoint", "same output", "runs with duplicates",
         "duplicates = crossings", "only extra deliveries"),
        [
            (r.variant, f"{r.from_checkpoint}/{r.runs}", f"{r.same_output}/{r.runs}",
             f"{r.with_duplicates}/{r.runs} ({r.duplicates} records)",
             f"{r.as_predicted}/{r.runs}", f"{r.only_duplicates}/{r.runs}")
            for r in rows
        ],
    )  # fmt: skip

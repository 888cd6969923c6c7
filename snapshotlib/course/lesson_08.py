"""Lesson 08, failures and recovery: the checkpoint registry, crashes, restores, and
exactly-once output (or not).

The views show the coordinator's registry (:func:`registry_table`), what a restore put
back (:func:`restore_text`), each source's recorded read position against the end of
its log (:func:`read_positions`), the records that crossed a barrier under
at-least-once (:func:`crossings_text`), and how a run's output differs from the
failure-free one (:func:`outcome_diff`). :func:`recovery_sweep` crashes every variant
at many moments and compares each output with the failure-free run's.

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

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..dataflow import COMPLETED, FAILED, INITIATED, VARIANTS, Dataflow, Outcome, StreamJob
from ..trace import APP, RecordCrossed
from .dataflow_text import record_name, state_text
from .feedback import Feedback, no_answer_yet
from .lesson_07 import DAG
from .tables import Table

__all__ = [
    "Diff",
    "Recovery",
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
]


# --------------------------------------------------------------- the registry


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


# -------------------------------------------------------------- the outcome


@dataclass(frozen=True)
class Diff:
    """How one outcome differs from another: records delivered more (or fewer) times,
    and counts that came out higher (or lower), per count operator and key."""

    extra: dict[str, int]
    missing: dict[str, int]
    counts: dict[str, dict[str, int]]

    @property
    def same(self) -> bool:
        return not self.extra and not self.missing and not self.counts

    def __str__(self) -> str:
        if self.same:
            return "the same output and the same counts as the failure-free run"
        lines = []
        if self.extra:
            items = ", ".join(f"{r} ×{n + 1}" for r, n in self.extra.items())
            lines.append(f"delivered more than once: {items} ({sum(self.extra.values())} extra)")
        if self.missing:
            items = ", ".join(f"{r} (-{n})" for r, n in self.missing.items())
            lines.append(f"missing from the output: {items}")
        for op, keys in self.counts.items():
            items = ", ".join(f"{k} {d:+d}" for k, d in keys.items())
            lines.append(f"{op}'s counts: {items}")
        if not self.counts:
            lines.append("every count as in the failure-free run")
        return "\n".join(lines)


def outcome_diff(reference: Outcome, other: Outcome) -> Diff:
    """``other`` against ``reference`` (the failure-free run)."""
    extra = {f"{s}#{i}": n for (s, i), n in sorted((other.delivered - reference.delivered).items())}
    missing = {
        f"{s}#{i}": n for (s, i), n in sorted((reference.delivered - other.delivered).items())
    }
    counts: dict[str, dict[str, int]] = {}
    for op in sorted(set(reference.counts) | set(other.counts)):
        mine, theirs = other.counts.get(op, {}), reference.counts.get(op, {})
        keys = {k: mine.get(k, 0) - theirs.get(k, 0) for k in sorted(set(mine) | set(theirs))}
        keys = {k: d for k, d in keys.items() if d}
        if keys:
            counts[op] = keys
    return Diff(extra, missing, counts)


# ------------------------------------------------------- crossing the barrier


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


# ------------------------------------------------------------- many crashes


@dataclass(frozen=True)
class Recovery:
    """One variant crashed at many moments: how many runs restored from a checkpoint
    (the others from the start), how many came out as the failure-free run, and how the
    at-least-once duplicates compare with the records that crossed a barrier."""

    variant: str
    runs: int
    from_checkpoint: int
    same_output: int
    with_duplicates: int
    duplicates: int
    as_predicted: int
    only_duplicates: int


def recovery_sweep(
    flow: Dataflow = DAG,
    seeds: Iterable[int] = range(15),
    crash_steps: Iterable[int] = (40, 80, 120),
    variants: Sequence[str] = VARIANTS,
) -> list[Recovery]:
    """For each seed and each of ``crash_steps``, crash an operator (the seeds take the
    operators that are not sources in turn), restore, run to the end, and compare with
    the failure-free run of the same seed.

    ``only_duplicates`` counts the runs whose output differs from the failure-free one
    by duplicated deliveries alone (nothing missing); ``as_predicted`` those whose
    duplicates are exactly the records the restore reported as having crossed a barrier.
    """
    seeds, steps = list(seeds), list(crash_steps)
    ops = [op.name for op in flow.operators if op.kind != "source"]
    out = []
    for variant in variants:
        runs = restored = same = with_dups = dups = predicted = only = 0
        for seed in seeds:
            clean = StreamJob(flow, variant, seed=seed).run().outcome()
            op = ops[seed % len(ops)]
            for step in steps:
                job = StreamJob(flow, variant, seed=seed).run(crash_at=(step, op))
                if not job.restores:
                    continue  # the job ended before the crash step
                runs += 1
                info = job.restores[0]
                restored += info["from"] is not None
                got = job.outcome()
                diff = outcome_diff(clean, got)
                same += diff.same
                found = got.duplicates
                with_dups += bool(found)
                dups += sum(n - 1 for n in found.values())
                predicted += sorted(found) == info["predicted_duplicates"]
                only += not diff.missing and diff.extra == {
                    f"{s}#{i}": n - 1 for (s, i), n in found.items()
                }
        out.append(Recovery(variant, runs, restored, same, with_dups, dups, predicted, only))
    return out


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


# -------------------------------------------------------------- the try-its


def check_restore_point(answer: Any, job: StreamJob) -> Feedback:
    """Which checkpoint will :meth:`StreamJob.restore` use now? ``answer`` is a
    checkpoint id such as ``"c3"``, or ``None`` for "the start"."""
    entry = job.coordinator.latest_completed()
    expected = entry.id if entry is not None else None
    known = job.coordinator.entries
    if answer is Ellipsis:
        return no_answer_yet(
            hint="Answer with a checkpoint id such as 'c2', "
            "or None if the job must start again from the beginning."
        )
    reveal = (
        f"{expected}: the last COMPLETED checkpoint. A FAILED or unfinished one has no state "
        "to restore, and an earlier COMPLETED one would replay more."
        if expected is not None
        else "None: no checkpoint is COMPLETED, so the job starts again from the beginning."
    )
    if answer == expected:
        if expected is None:
            return Feedback(
                True, "Right: no checkpoint is COMPLETED, so the job restarts from the beginning."
            )
        return Feedback(
            True,
            f"Right: {expected} is the last COMPLETED checkpoint; a restore "
            "never uses a FAILED one.",
        )
    if answer is None:
        return Feedback(
            False,
            "None is not it: there is a COMPLETED checkpoint.",
            "Look for the last row whose status is COMPLETED.",
            answer=reveal,
        )
    if not isinstance(answer, str) or answer not in known:
        return Feedback(
            False,
            f"{answer!r} is not a checkpoint of this job.",
            f"The registry lists {', '.join(known)}.",
            answer=reveal,
        )
    status = known[answer].status
    if status == FAILED:
        return Feedback(
            False,
            f"{answer} is FAILED ({known[answer].reason}).",
            "A FAILED checkpoint's partial state was discarded: it cannot be restored.",
            answer=reveal,
        )
    if status == INITIATED:
        return Feedback(
            False,
            f"{answer} is still INITIATED.",
            "Only a checkpoint that every operator finished can be restored; and a "
            "crash fails every unfinished one.",
            answer=reveal,
        )
    assert status == COMPLETED and expected is not None
    return Feedback(
        False,
        f"{answer} is COMPLETED, but not the last one.",
        "A later checkpoint completed too; restoring it replays less.",
        answer=reveal,
    )


def _origins(answer: Any) -> set[str] | None:
    if isinstance(answer, str):
        answer = [answer]
    try:
        items = list(answer)
    except TypeError:
        return None
    out = set()
    for item in items:
        if isinstance(item, tuple) and len(item) == 2:
            out.add(f"{item[0]}#{item[1]}")
        elif isinstance(item, str):
            out.add(item.strip())
        else:
            return None
    return out


def check_duplicates(answer: Any, job: StreamJob, crash: str = "C1") -> Feedback:
    """If ``crash`` crashes now and the job is restored and run to the end, which
    records reach the sink twice? ``answer``: record names such as ``{"S1#4"}`` (or
    ``set()`` for none). The job itself is left as it is: a copy is crashed."""
    if answer is None or answer is Ellipsis:
        return no_answer_yet(hint="Name the records, e.g. {'S1#0', 'S2#1'}, or set() for none.")
    names = _origins(answer)
    if names is None:
        return Feedback(
            False,
            f"{answer!r} is not a set of record names.",
            "Write a set of names such as {'S1#0', 'S2#1'}.",
        )
    trial = copy.deepcopy(job)
    trial.crash(crash)
    info = trial.restore()
    trial.run()
    expected = {f"{s}#{i}" for s, i in trial.outcome().duplicates}
    restored = info["from"]
    if names == expected:
        if not expected:
            return Feedback(
                True,
                f"Right: no record crossed a barrier of {restored}, so nothing is delivered twice.",
            )
        return Feedback(
            True,
            f"Right: the restore uses {restored}, and "
            f"{', '.join(sorted(expected))} crossed its barriers: each is in "
            f"{restored}'s state and is read again.",
        )
    reveal = (
        f"The restore uses {restored}, the last COMPLETED checkpoint. The records that "
        f"crossed its barriers are in its operators' state and are read again: "
        f"{', '.join(sorted(expected)) or 'none'}. Crossings of other checkpoints do not "
        "come back."
    )
    crossed = crossings(job)
    others = {r for cid, found in crossed.items() if cid != restored for r, _, _ in found}
    wrong = names - expected
    if wrong and wrong <= others:
        return Feedback(
            False,
            f"{', '.join(sorted(wrong))} crossed a barrier, but not one of "
            "the checkpoint the restore uses.",
            "Which checkpoint does a restore use? Only its crossings come back.",
            answer=reveal,
        )
    if wrong:
        return Feedback(
            False,
            f"{', '.join(sorted(wrong))} will not be delivered twice.",
            "A record is duplicated when it crossed a barrier of the checkpoint the restore uses.",
            answer=reveal,
        )
    missing = expected - names
    return Feedback(
        False,
        f"Not all of them: {len(missing)} more will be delivered twice.",
        "Look again at every record that crossed a barrier of the checkpoint the restore uses.",
        answer=reveal,
    )

"""Exactly-once output: what the outside world sees of a job's sinks after a crash.

- A plain sink writes every record as it arrives: after a restore it writes again what
  is replayed, so the output shows duplicates, even under the variants whose *state* is
  exactly once; it never loses a record.
- An idempotent sink keys each write by the record's origin: each record shows once.
- A transactional sink commits per checkpoint: under every exactly-once variant each
  record shows exactly once, after a crash at any step; under at-least-once the records
  that crossed a barrier are committed twice. Its output waits for a checkpoint to
  complete: a latency the others do not have.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dataflow_properties import crashed_run, flows, runs

from snapshotlib.algorithms.barriers import back_edges
from snapshotlib.dataflow import (
    EXACTLY_ONCE,
    VARIANTS,
    Dataflow,
    JobError,
    StreamJob,
    word_count,
)
from snapshotlib.dataflow.sinks import SINKS, ExternalOutput, Sink, SinkError, TransactionalSink

#: the exhaustive tests' job: lesson 11's word count, smaller (every step is a crash point)
JOB_RECORDS = 12


def every_crash_point(variant: str, sink: str | type[Sink]) -> list[tuple[int, StreamJob]]:
    """The lesson-sized job crashed at each of its steps in turn (the operator that
    crashes goes round the job's operators), restored, and run to its end."""
    flow = word_count(records=JOB_RECORDS)
    processes = flow.network().processes
    clean = StreamJob(flow, variant, seed=1, sink=sink).run()
    jobs = []
    for step in range(1, clean.steps):
        job = StreamJob(flow, variant, seed=1, sink=sink)
        jobs.append((step, job.run(crash_at=(step, processes[step % len(processes)]))))
    return jobs


def every_record() -> set[tuple[str, int]]:
    return set(StreamJob(word_count(records=JOB_RECORDS), seed=1).run().outcome().delivered)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_plain_sink_shows_duplicates_after_a_restore_and_never_loses_a_record(
    variant: str,
) -> None:
    records = every_record()
    jobs = every_crash_point(variant, "plain")
    for step, job in jobs:
        assert records <= set(job.output.visible_output()), step
    assert sum(1 for _, job in jobs if job.output.duplicates()) > len(jobs) // 2


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_idempotent_sink_shows_every_record_once_after_a_crash_anywhere(variant: str) -> None:
    records = Counter(dict.fromkeys(every_record(), 1))
    for step, job in every_crash_point(variant, "idempotent"):
        assert job.output.visible_output() == records, step
        assert set(job.output.latencies()) == {0}


@pytest.mark.parametrize("variant", EXACTLY_ONCE)
def test_a_transactional_sink_shows_every_record_exactly_once_after_a_crash_anywhere(
    variant: str,
) -> None:
    records = Counter(dict.fromkeys(every_record(), 1))
    jobs = every_crash_point(variant, "transactional")
    for step, job in jobs:
        assert job.output.visible_output() == records, step
        assert not job.output.waiting(), step  # the final checkpoint committed the rest
    # the restores had something to abort: records that came again
    assert sum(1 for _, job in jobs if job.output.aborted) > len(jobs) // 2


def test_a_transactional_sink_cannot_mend_at_least_once_state() -> None:
    """Records that crossed a barrier are in the checkpoint's committed transaction and
    come again after the restore: the transaction commits them twice."""
    jobs = every_crash_point("at-least-once", "transactional")
    doubled = [job for _, job in jobs if job.output.duplicates()]
    assert doubled
    for job in doubled:
        restore = job.restores[0]
        assert set(job.output.duplicates()) <= set(restore["predicted_duplicates"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_transactional_sink_pays_in_latency_the_others_do_not(variant: str) -> None:
    flow = word_count(records=JOB_RECORDS)
    seen = {sink: StreamJob(flow, variant, seed=1, sink=sink).run().output for sink in SINKS}
    assert set(seen["plain"].visible_output()) == set(seen["transactional"].visible_output())
    assert seen["plain"].summary() == {"mean_latency": 0.0, "max_latency": 0.0}
    waited = seen["transactional"].summary()
    assert waited["mean_latency"] > 1.0
    # nothing waits past the checkpoint that commits it: at most from one checkpoint's
    # trigger to the end of the next, with the records the run had
    assert waited["max_latency"] < StreamJob(flow, variant, seed=1).run().steps


@settings(max_examples=60, deadline=None)
@given(flows, st.sampled_from(EXACTLY_ONCE), runs, st.floats(0, 1), st.integers(0, 50))
def test_on_random_jobs_and_crashes_a_transactional_sink_shows_each_record_exactly_once(
    flow: Dataflow, variant: str, run: dict[str, Any], fraction: float, victim: int
) -> None:
    clean, job = crashed_run(
        flow, variant, {**run, "sink": "transactional"}, fraction, victim, capped=True
    )
    assert job.output.visible_output() == clean.outcome().delivered
    assert not job.output.duplicates()


@settings(max_examples=60, deadline=None)
@given(flows, st.sampled_from(VARIANTS), runs, st.floats(0, 1), st.integers(0, 50))
def test_on_random_jobs_and_crashes_an_idempotent_sink_shows_each_record_once(
    flow: Dataflow, variant: str, run: dict[str, Any], fraction: float, victim: int
) -> None:
    clean, job = crashed_run(
        flow, variant, {**run, "sink": "idempotent"}, fraction, victim, capped=True
    )
    shown = set(job.output.visible_output())
    if variant == "at-least-once" and back_edges(flow.network()):
        # at-least-once loses what was on a back edge; no sink brings it back
        assert shown <= set(clean.outcome().delivered)
    else:
        assert shown == set(clean.outcome().delivered)
    assert not job.output.duplicates()


def test_an_unknown_sink_is_refused_with_the_choices() -> None:
    with pytest.raises(JobError, match="unknown sink 'exactly-once': expected one of plain, "):
        StreamJob(word_count(), sink="exactly-once")
    with pytest.raises(ValueError, match="expected one of plain, idempotent, transactional"):
        ExternalOutput("kafka")


def test_a_failed_checkpoint_leaves_its_records_to_the_next_commit() -> None:
    out = ExternalOutput("transactional")
    out.arrived("K", ("S1", 0), step=1)
    out.state_recorded("K", "c1", step=2)  # c1 will fail: never completed
    out.arrived("K", ("S1", 1), step=4)
    out.state_recorded("K", "c2", step=5)
    out.checkpoint_completed("c2", step=10)
    assert [(w.origin, w.visible) for w in out.writes] == [(("S1", 0), 10), (("S1", 1), 10)]
    assert not out.waiting()


class OneList(Sink):
    """A transactional sink written another way: one list of (checkpoint or None,
    sink, record), committed up to the checkpoint that completes."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[list[Any]] = []
        self.order: list[str] = []

    def invoke(self, sink: str, origin: tuple[str, int]) -> None:
        self.held.append([None, sink, origin])

    def pre_commit(self, sink: str, checkpoint: str) -> None:
        if checkpoint not in self.order:
            self.order.append(checkpoint)
        for entry in self.held:
            if entry[0] is None and entry[1] == sink:
                entry[0] = checkpoint

    def commit(self, checkpoint: str) -> None:
        if checkpoint not in self.order:
            return
        done = set(self.order[: self.order.index(checkpoint) + 1])
        for entry in [e for e in self.held if e[0] in done]:
            self.write(entry[2])
        self.held = [e for e in self.held if e[0] not in done]
        self.order = [c for c in self.order if c not in done]

    def abort(self) -> None:
        self.held, self.order = [], []


@pytest.mark.parametrize("variant", ["aligned", "unaligned"])
def test_a_sink_class_of_ones_own_is_run_as_the_engines_own(variant: str) -> None:
    """The job calls a Sink subclass in the order of the run: a transactional sink
    written another way makes the same writes as the engine's, after every crash."""
    mine = every_crash_point(variant, OneList)
    engine = every_crash_point(variant, TransactionalSink)
    for (step, got), (_, want) in zip(mine, engine, strict=True):
        assert got.output.writes == want.output.writes, step
        assert got.output.aborted == want.output.aborted, step
    assert isinstance(mine[0][1].output.sink, OneList)


class NeverAborts(TransactionalSink):
    def abort(self) -> None:
        pass  # the bug: commits, after a restore, transactions the restore aborted


def test_a_sink_that_writes_a_record_not_waiting_is_told_which() -> None:
    flow = word_count(records=JOB_RECORDS)
    aborted_something = 0
    for step in range(30, 80, 5):
        job = StreamJob(flow, seed=1, sink=NeverAborts)
        try:
            job.run(crash_at=(step, "C1"))
        except SinkError as e:
            assert "which is not waiting to be written" in str(e)
            assert str(e).startswith("the sink wrote record S")
            aborted_something += 1
    assert aborted_something > 0


def test_a_sink_must_be_a_name_or_a_sink_class() -> None:
    with pytest.raises(JobError, match="or a Sink subclass \\(the class itself, not an instance"):
        StreamJob(word_count(), sink=TransactionalSink())  # type: ignore[arg-type]
    with pytest.raises(JobError, match="got <class 'dict'>"):
        StreamJob(word_count(), sink=dict)  # type: ignore[arg-type]


def test_a_sink_that_forgets_invoke_says_so() -> None:
    with pytest.raises(NotImplementedError, match="Forgetful must say what invoke does"):
        StreamJob(word_count(records=3), seed=1, sink=type("Forgetful", (Sink,), {})).run()


class NeverCommits(TransactionalSink):
    def commit(self, checkpoint: str) -> None:
        pass  # the bug: nothing is ever written


def test_one_final_checkpoint_only_when_a_sink_never_writes() -> None:
    """The final checkpoint is taken once: a sink that still holds records after it
    will never write them, and the job ends rather than checkpointing for ever."""
    job = StreamJob(word_count(records=JOB_RECORDS), seed=1, sink=NeverCommits)
    job.run(max_steps=5000)
    clean = StreamJob(word_count(records=JOB_RECORDS), seed=1, sink="transactional").run()
    assert job.steps == clean.steps < 5000
    assert job.output.waiting() and not job.output.writes


class WritesAtPreCommit(TransactionalSink):
    def pre_commit(self, sink: str, checkpoint: str) -> None:
        for origin in self.open.pop(sink, []):
            self.write(origin)  # too early, but the step it happens at is told right


def test_a_write_is_stamped_with_the_step_it_happens_at() -> None:
    """In the word count the sink records its state last: its pre-commit comes at the
    step its checkpoint completes, and a write made there is stamped with that step
    (not the step the sink's last record arrived)."""
    job = StreamJob(word_count(records=JOB_RECORDS), seed=1, sink=WritesAtPreCommit).run()
    completed = {e.ended_at for e in job.coordinator.entries.values() if e.status == "COMPLETED"}
    assert job.output.writes and {w.visible for w in job.output.writes} <= completed


class ResetsItself(TransactionalSink):
    """Honest ways of writing a sink: resetting by calling __init__, origins as lists."""

    def invoke(self, sink: str, origin: tuple[str, int]) -> None:
        self.open.setdefault(sink, []).append(list(origin))  # type: ignore[arg-type]

    def abort(self) -> None:
        self.__init__()  # type: ignore[misc]


def test_a_sink_that_resets_itself_or_keeps_lists_writes_as_the_engines() -> None:
    for step, got in every_crash_point("aligned", ResetsItself):
        want = StreamJob(word_count(records=JOB_RECORDS), seed=1, sink="transactional")
        want.run(crash_at=(step, word_count(records=JOB_RECORDS).network().processes[step % 5]))
        assert got.output.writes == want.output.writes, step


def test_writing_what_is_no_origin_is_an_error_saying_what_to_write() -> None:
    out = ExternalOutput("plain")
    with pytest.raises(SinkError, match="which is no record's origin: write the origin invoke"):
        out.write(7)  # type: ignore[arg-type]

"""Fork and copy-on-write: the job run as one node, its image taken in one instant and
written out while the parent goes on; the pages the parent writes meanwhile are copied
once each.

The restore-to-the-failure-free-output property over random graphs, schedules and
crashes is in ``test_dataflow_properties.py``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import assert_events_agree_with_records

from snapshotlib.checks import check_snapshot
from snapshotlib.dataflow import (
    COMPLETED,
    FAILED,
    CowModel,
    ForkSnapshot,
    StateLayout,
    StreamJob,
    fork_costs,
    word_count,
)
from snapshotlib.dataflow.fork import state_writes
from snapshotlib.trace import APP, SNAPSHOT, SnapshotComplete

LESSON_DAG = word_count(sources=2, counters=2, records=20, keys=8)

writes = st.lists(st.tuples(st.integers(-50, 5000), st.integers(1, 300)), max_size=60)


# ------------------------------------------------------------------ the model


def test_zero_writes_copy_nothing() -> None:
    model = CowModel()
    assert model.copied([], state_bytes=10_000) == 0
    assert model.pages_touched(0, state_pages=3) == 0
    assert model.estimate(state_bytes=10_000, write_rate=0, duration=50) == 0
    assert model.copy_steps(0) == 0


def test_an_entry_across_a_page_boundary_copies_both_pages() -> None:
    model = CowModel(page_bytes=100)
    assert model.copied([(90, 16)], state_bytes=1000) == 2
    assert model.copied([(90, 10)], state_bytes=1000) == 1
    assert model.copied([(0, 8), (50, 8), (99, 1)], state_bytes=1000) == 1  # once per page
    assert model.copied([(1000, 200), (-20, 10)], state_bytes=1000) == 0  # not in the image


def test_the_write_out_takes_the_image_over_the_write_rate() -> None:
    model = CowModel(write_bytes_per_step=200)
    assert [model.write_out_steps(b) for b in (0, 1, 200, 201, 4000)] == [1, 1, 1, 2, 20]


def test_the_layout_packs_each_operators_entries_in_operator_order() -> None:
    flow = word_count(sources=2, counters=1, records=3, keys=2)
    layout = StateLayout.of(flow, record_bytes=100)
    assert layout.address("S1") == (0, 8) and layout.address("S2") == (8, 8)
    assert layout.address("C1", key="k0") == (16, 16)
    assert layout.address("C1", key="k1") == (32, 16)
    assert layout.address("K", n=0) == (48, 100)
    assert layout.size == 48 + 6 * 100  # room for every record of the input


@settings(max_examples=300, deadline=None)
@given(writes, st.integers(1, 5000), st.integers(1, 4096))
def test_copies_never_exceed_the_pages_of_the_state(
    made: list[tuple[int, int]], state_bytes: int, page_bytes: int
) -> None:
    model = CowModel(page_bytes=page_bytes)
    copied = model.copied(made, state_bytes)
    assert 0 <= copied <= model.pages(state_bytes) == math.ceil(state_bytes / page_bytes)


@settings(max_examples=300, deadline=None)
@given(writes, st.integers(0, 60), st.integers(1, 5000), st.integers(1, 4096))
def test_more_writes_during_a_write_out_never_copy_fewer_pages(
    made: list[tuple[int, int]], keep: int, state_bytes: int, page_bytes: int
) -> None:
    model = CowModel(page_bytes=page_bytes)
    assert model.copied(made[:keep], state_bytes) <= model.copied(made, state_bytes)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 100_000),
    st.floats(0, 50),
    st.floats(0, 50),
    st.integers(1, 200),
    st.integers(1, 8192),
)
def test_the_estimate_grows_with_the_write_rate_and_stays_under_the_state(
    state_bytes: int, rate: float, more: float, duration: int, page_bytes: int
) -> None:
    model = CowModel(page_bytes=page_bytes)
    low = model.estimate(state_bytes, rate, duration)
    high = model.estimate(state_bytes, rate + more, duration)
    assert 0 <= low <= high <= model.pages(state_bytes)


# ------------------------------------------------------------------ on the job


def test_the_image_is_taken_in_one_instant_with_the_queued_records() -> None:
    job = StreamJob(LESSON_DAG, algorithm=ForkSnapshot, seed=23).run()
    trace = job.sim.trace
    done = [cid for cid, e in job.coordinator.entries.items() if e.status == COMPLETED]
    assert len(done) >= 3
    for cid in done:
        rec = job.sim.algorithm.records[cid]
        (at,) = set(rec.red_from.values())
        assert trace.actions[at].kind == SNAPSHOT and trace.actions[at].label == cid
        queued = sorted(
            m
            for m, msg in enumerate(trace.messages)
            if msg.kind == APP and msg.sent_by < at and not 0 <= trace.received_by[m] < at
        )
        assert sorted(m for ms in rec.channels.values() for m in ms) == queued
        assert check_snapshot(job.sim, cid).ok
    assert any(job.coordinator.entry(cid).inflight_messages for cid in done)


def test_a_checkpoint_completes_when_the_child_has_written_its_image() -> None:
    model = CowModel(write_bytes_per_step=100)
    job = StreamJob(LESSON_DAG, algorithm=ForkSnapshot.with_model(model), seed=23).run()
    for cid, entry in job.coordinator.entries.items():
        if entry.status == COMPLETED:
            image = job.sim.algorithm.image_bytes[cid]
            assert image == entry.state_bytes + entry.inflight_bytes
            assert entry.duration == model.write_out_steps(image)


@pytest.mark.parametrize("seed", [5, 23])
def test_the_forks_events_say_what_it_recorded_and_when_the_image_was_written(seed: int) -> None:
    job = StreamJob(LESSON_DAG, algorithm=ForkSnapshot, seed=seed).run()
    assert_events_agree_with_records(job.sim)
    for cid, written in job.sim.algorithm.written_at.items():
        complete = [
            e.action
            for e in job.sim.trace.events
            if isinstance(e, SnapshotComplete) and e.snapshot_id == cid
        ]
        assert complete == [written]  # the coordinator hears of it then, from the trace


def test_a_crash_during_the_write_out_fails_it_and_the_checkpoint_before_is_restored() -> None:
    probe = StreamJob(LESSON_DAG, algorithm=ForkSnapshot, seed=23).run()
    c2 = probe.coordinator.entry("c2")
    during = c2.triggered_at  # the crash comes before the next step
    job = StreamJob(LESSON_DAG, algorithm=ForkSnapshot, seed=23).run(crash_at=(during, "C1"))
    assert job.coordinator.entry("c2").status == FAILED
    assert job.restores[0]["from"] == "c1"
    assert job.outcome() == StreamJob(LESSON_DAG, "aligned", seed=23).run().outcome()


def test_fork_sends_nothing_and_leaves_the_schedule_as_it_was() -> None:
    forked = StreamJob(LESSON_DAG, algorithm=ForkSnapshot, seed=5).run()
    assert all(m.kind == APP for m in forked.sim.trace.messages)
    plain = StreamJob(LESSON_DAG, "aligned", seed=5, interval=10_000).run()  # no checkpoint
    steps = [(a.kind, a.process, a.channel) for a in forked.sim.trace.actions if a.kind != SNAPSHOT]
    assert steps == [(a.kind, a.process, a.channel) for a in plain.sim.trace.actions]


# ------------------------------------------------------------------ measured costs


def test_the_copies_are_counted_from_the_parents_writes_during_the_write_out() -> None:
    job = StreamJob(LESSON_DAG, algorithm=ForkSnapshot, seed=23).run()
    costs = fork_costs(job)
    assert [c.checkpoint for c in costs] == [
        cid for cid, e in job.coordinator.entries.items() if e.status == COMPLETED
    ]
    for c in costs:
        assert c.writes == c.duration  # in word count, every step updates some state
        assert 1 <= c.pages_copied <= c.state_pages == 3
        assert c.copy_bytes == 4096 * c.pages_copied


def test_one_page_holding_the_whole_state_is_copied_once_per_checkpoint() -> None:
    job = StreamJob(LESSON_DAG, algorithm=ForkSnapshot, seed=23).run()
    big = fork_costs(job, CowModel(page_bytes=1 << 20))
    assert {(c.state_pages, c.pages_copied) for c in big} == {(1, 1)}


def test_small_pages_copy_exactly_the_entries_written() -> None:
    job = StreamJob(LESSON_DAG, algorithm=ForkSnapshot, seed=23).run()
    layout = StateLayout.of(LESSON_DAG)
    byte = CowModel(page_bytes=1)
    algo = job.sim.algorithm
    for c in fork_costs(job, byte):
        start = min(algo.records[c.checkpoint].red_from.values())
        end = algo.written_at[c.checkpoint]
        entries = {(a, n) for i, a, n in state_writes(job.sim, layout) if start < i <= end}
        assert c.pages_copied == sum(n for _, n in entries)  # distinct entries never overlap


def test_fork_costs_need_a_forked_job() -> None:
    with pytest.raises(TypeError, match="needs a job run with ForkSnapshot"):
        fork_costs(StreamJob(LESSON_DAG, "aligned").run())

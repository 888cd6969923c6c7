"""Stop-the-world snapshots of a streaming job: the sources pause, the channels drain,
every state is recorded at once with nothing in flight, and the sources resume.

The restore-to-the-failure-free-output property over random graphs, schedules and
crashes is in ``test_dataflow_properties.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snapshotlib import ActionError, Internal, Network, Send, Simulator
from snapshotlib.algorithms import StopTheWorld
from snapshotlib.checks import check_snapshot
from snapshotlib.dataflow import (
    COMPLETED,
    FAILED,
    JobError,
    StreamJob,
    iteration,
    random_dag,
    word_count,
)
from snapshotlib.trace import APP, INTERNAL, NOT_RECEIVED, SNAPSHOT

LESSON_DAG = word_count(sources=2, counters=2, records=20, keys=8)


def recorded_at(job: StreamJob, checkpoint: str) -> int:
    """The trace index at which every process recorded its state (one and the same)."""
    red_from = job.sim.algorithm.records[checkpoint].red_from
    assert set(red_from) == set(job.network.processes)
    (index,) = set(red_from.values())
    return index


def in_flight_at(job: StreamJob, index: int) -> list[int]:
    """Records sent before trace index ``index`` and not yet received there."""
    trace = job.sim.trace
    return [
        m
        for m, msg in enumerate(trace.messages)
        if msg.kind == APP
        and msg.sent_by < index
        and (trace.received_by[m] == NOT_RECEIVED or trace.received_by[m] > index)
    ]


def triggered_at(job: StreamJob, checkpoint: str) -> int:
    trace = job.sim.trace
    return min(
        i for i, a in enumerate(trace.actions) if a.kind == SNAPSHOT and a.label == checkpoint
    )


# ------------------------------------------------------------------ the cut


def test_no_record_is_in_flight_when_the_states_are_recorded() -> None:
    job = StreamJob(LESSON_DAG, algorithm=StopTheWorld, seed=23).run()
    done = [cid for cid, e in job.coordinator.entries.items() if e.status == COMPLETED]
    assert len(done) > 3
    for cid in done:
        at = recorded_at(job, cid)
        assert at > triggered_at(job, cid)  # the drain took steps: records were in flight
        assert in_flight_at(job, at) == []
        assert all(not ms for ms in job.sim.snapshot(cid).channels.values())
        assert check_snapshot(job.sim, cid).ok


def test_records_in_flight_at_the_trigger_are_delivered_before_the_recording() -> None:
    job = StreamJob(LESSON_DAG, algorithm=StopTheWorld, seed=23).run()
    trace = job.sim.trace
    at_trigger = in_flight_at(job, triggered_at(job, "c1"))
    assert at_trigger  # this checkpoint had something to drain
    assert all(trace.received_by[m] < recorded_at(job, "c1") for m in at_trigger)


# ------------------------------------------------------------------ the pause


def test_the_sources_read_nothing_while_paused_and_read_again_after() -> None:
    job = StreamJob(LESSON_DAG, algorithm=StopTheWorld, seed=23).run()
    trace = job.sim.trace
    sources = set(LESSON_DAG.sources)
    reads = [i for i, a in enumerate(trace.actions) if a.kind == INTERNAL and a.process in sources]
    for cid, entry in job.coordinator.entries.items():
        start, end = triggered_at(job, cid), recorded_at(job, cid)
        assert not [i for i in reads if start < i < end], f"a source read during {cid}'s pause"
        if entry.triggered_at < job.steps - 40:  # not near the end: input was left
            assert any(i > end for i in reads)
    assert len(reads) == 40 and not job.sim.paused  # all read; nobody left paused


def test_the_job_offers_no_read_while_the_sources_are_paused() -> None:
    job = StreamJob(LESSON_DAG, algorithm=StopTheWorld, seed=4)
    while not job.sim.paused:
        job.step()
    paused = set(job.sim.paused)
    assert paused == set(LESSON_DAG.sources)
    assert not [a for a in job.actions() if isinstance(a, Internal)]
    with pytest.raises(JobError, match="cannot internal read at S1 now"):
        job.step(Internal("S1", "read"))
    while job.sim.paused:
        job.step()
    assert [a for a in job.actions() if isinstance(a, Internal)]  # resumed: reads offered


def test_a_paused_process_may_not_act_but_still_receives() -> None:
    sim = Simulator(Network(["P", "Q"]), app="tokens", initial={"P": 3, "Q": 0})
    sim.step(Send("P", "Q", 1))
    sim.pause("P")
    sim.pause("Q")
    for action in (Send("P", "Q", 1), Internal("P")):
        with pytest.raises(ActionError, match="P is paused"):
            sim.step(action)
    sim.run()  # the delivery to the paused Q still happens
    assert sim.states == {"P": 2, "Q": 1}
    sim.resume("P")
    sim.step(Send("P", "Q", 1))


def test_a_failed_checkpoint_lets_the_sources_go() -> None:
    job = StreamJob(LESSON_DAG, algorithm=StopTheWorld, seed=23, ttl=2).run()
    statuses = {e.status for e in job.coordinator.entries.values()}
    assert FAILED in statuses
    assert not job.sim.paused
    assert job.outcome() == StreamJob(LESSON_DAG, "aligned", seed=23).run().outcome()


def test_an_empty_drain_longer_than_the_interval_would_starve_the_job_so_it_is_refused() -> None:
    flow = word_count(records=10)  # 6 channels: even an empty drain takes 6 steps
    starved = StreamJob(flow, algorithm=StopTheWorld, seed=1, interval=6)
    # every checkpoint would fall due as the one before ends and pause the sources
    # before they read: the job would never finish, so it stops and says what to change
    with pytest.raises(JobError, match=r"never finish; give a pause .*min_pause=6"):
        starved.run(max_steps=3000)
    assert starved.steps < 3000 and starved.actions()  # stopped early, not finished
    assert starved.metrics()["completed"] >= 1
    fed = StreamJob(flow, algorithm=StopTheWorld, seed=1, interval=6, min_pause=1).run()
    assert fed.outcome().delivered.total() == 20
    fast = StreamJob(flow, algorithm=StopTheWorld, seed=1, interval=7).run()
    assert fast.outcome().delivered.total() == 20  # a longer interval needs no pause


# ------------------------------------------------------------------ the waves


def test_on_a_dag_one_wave_drains_every_channel() -> None:
    for seed in range(30):
        flow = random_dag(seed, sources=2, layers=3, width=3, records=8)
        job = StreamJob(flow, algorithm=StopTheWorld, seed=seed, interval=5, min_pause=1).run()
        waves = job.sim.algorithm.waves
        assert waves and set(waves.values()) == {1}


def test_on_a_cycle_records_still_going_round_take_more_waves() -> None:
    waves = []
    for seed in range(20):
        job = StreamJob(iteration(hops=3), algorithm=StopTheWorld, seed=seed).run()
        waves += job.sim.algorithm.waves.values()
        for cid, entry in job.coordinator.entries.items():
            if entry.status == COMPLETED:
                assert in_flight_at(job, recorded_at(job, cid)) == []
    assert max(waves) > 1
    assert min(waves) == 1


def test_it_sends_one_drain_message_per_channel_and_wave() -> None:
    job = StreamJob(iteration(hops=3), algorithm=StopTheWorld, seed=3).run()
    messages = job.sim.trace.messages
    channels = len(job.network.channels)
    for cid, waves in job.sim.algorithm.waves.items():
        drains = [m for m in messages if m.kind == "drain" and m.tag == cid]
        assert len(drains) == waves * channels


# ------------------------------------------------------------------ restores


def test_a_restore_from_a_stop_the_world_checkpoint_replays_nothing_and_loses_nothing() -> None:
    clean = StreamJob(LESSON_DAG, "aligned", seed=23).run()
    job = StreamJob(LESSON_DAG, algorithm=StopTheWorld, seed=23).run(crash_at=(100, "C1"))
    (restore,) = job.restores
    assert restore["from"] is not None and restore["replayed"] == 0
    assert job.outcome() == clean.outcome()


def test_it_is_started_at_sources_only() -> None:
    job = StreamJob(LESSON_DAG, algorithm=StopTheWorld)
    with pytest.raises(ActionError, match="started at sources; C1 has inputs"):
        job.sim.start_snapshot("C1", "x")
    job.sim.start_snapshot("S1", "x")
    with pytest.raises(ActionError, match="S1 has already started x"):
        job.sim.start_snapshot("S1", "x")


# ------------------------------------------------------------------ properties


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(1, 3),
    st.integers(1, 10),
    st.integers(1, 25),
    st.one_of(st.none(), st.integers(1, 3)),
    st.integers(1, 3),
)
def test_whatever_the_schedule_nothing_is_in_flight_at_a_recording_and_nothing_read_in_a_pause(
    seed: int, sources: int, records: int, interval: int, capacity: int | None, concurrent: int
) -> None:
    flow = word_count(sources=sources, counters=2, records=records, seed=seed)
    job = StreamJob(
        flow,
        algorithm=StopTheWorld,
        seed=seed,
        interval=interval,
        capacity=capacity,
        max_concurrent=concurrent,
        min_pause=1,
    )
    while True:
        held = set(job.sim.paused) & set(flow.sources)
        action = job.step()
        if action is None:
            break
        assert not (isinstance(action, Internal) and action.process in held)
    assert not job.sim.paused
    for cid, entry in job.coordinator.entries.items():
        if entry.status == COMPLETED:
            assert in_flight_at(job, recorded_at(job, cid)) == []
    assert job.outcome().delivered.total() == sources * records

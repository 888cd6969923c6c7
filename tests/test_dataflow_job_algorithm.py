"""StreamJob(flow, algorithm=Class): a job run by an algorithm class of one's own (the
barrier-alignment exercise passes the learner's BarrierSnapshot subclass this way)."""

from __future__ import annotations

import pytest

from snapshotlib.algorithms.barriers import AlignedBarriers, AtLeastOnceBarriers
from snapshotlib.checks import check_snapshot
from snapshotlib.dataflow import JobError, StreamJob, iteration, word_count


class CountedAligned(AlignedBarriers):
    """The engine's aligned barriers, counting how many times the job made one."""

    made = 0

    def __init__(self) -> None:
        super().__init__()
        type(self).made += 1


def test_a_subclass_given_as_algorithm_checkpoints_the_job() -> None:
    job = StreamJob(word_count(records=12), algorithm=CountedAligned, seed=1, interval=10).run()
    assert type(job.sim.algorithm) is CountedAligned
    assert job.metrics()["completed"] == job.metrics()["checkpoints"] > 0
    for cid in job.coordinator.entries:
        assert check_snapshot(job.sim, cid).ok


def test_the_class_is_made_afresh_at_the_start_and_at_every_restore() -> None:
    CountedAligned.made = 0
    clean = StreamJob(iteration(), "aligned", seed=2, interval=8).run()
    job = StreamJob(iteration(), algorithm=CountedAligned, seed=2, interval=8)
    job.run(crash_at=(40, "H"))
    assert CountedAligned.made == 2
    assert job.restores[0]["from"] is not None
    assert job.outcome() == clean.outcome()


def test_the_class_decides_the_behaviour_and_the_variant_only_names_the_run() -> None:
    job = StreamJob(word_count(records=12), algorithm=AtLeastOnceBarriers, seed=1, interval=10)
    job.run(crash_at=(70, "C1"))
    assert job.metrics()["variant"] == "aligned"
    assert job.metrics()["blocked_steps"] == 0  # at-least-once never blocks
    assert job.outcome().duplicates  # and duplicates after this crash


def test_an_instance_instead_of_a_class_is_refused() -> None:
    with pytest.raises(JobError, match="the class itself"):
        StreamJob(word_count(), algorithm=AlignedBarriers())  # type: ignore[arg-type]

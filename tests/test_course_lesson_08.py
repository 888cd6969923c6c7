"""Lesson 08, failures and recovery: the registry it shows, what a restore puts back,
the claims it makes about exactly-once output and at-least-once duplicates, and the
feedback of its try-its.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from tryit_support import find_try_it, given_away, goal_and_minutes, load, try_it_variables

from snapshotlib.checks import check_snapshot
from snapshotlib.course.lesson_07 import DAG
from snapshotlib.course.lesson_08 import (
    check_duplicates,
    check_restore_point,
    crossings,
    crossings_text,
    events_text,
    outcome_diff,
    read_positions,
    recovery_sweep,
    recovery_table,
    registry_table,
    registry_text,
    restore_text,
)
from snapshotlib.dataflow import COMPLETED, EXACTLY_ONCE, FAILED, INITIATED, JobError, StreamJob


def ttl_job(steps: int | None = None, seed: int = 0) -> StreamJob:
    return StreamJob(DAG, "aligned", seed=seed, ttl=35).run(max_steps=steps)


def statuses(job: StreamJob) -> dict[str, str]:
    return {e.id: e.status for e in job.coordinator.entries.values()}


# ------------------------------------------------------------------ the registry


def test_a_checkpoint_is_completed_only_when_every_operator_has_finished() -> None:
    job = ttl_job(70)
    n = len(job.network.processes)
    for e in job.coordinator.entries.values():
        assert (e.status == COMPLETED) == (len(e.nodes_completed) == n)
    assert statuses(job) == {"c1": COMPLETED, "c2": INITIATED}
    assert set(job.coordinator.entry("c2").nodes_completed) == {"S1", "S2", "C1", "C2"}
    assert "4/5" in registry_text(job).splitlines()[2]
    table = registry_table(job)
    assert table.row("c2")["operators done"] == "4/5"
    assert table.row("c2")["stored"] == "-"  # counted only once complete
    assert table.row("c1")["stored"] == "1,496 B (0 B in flight)"
    assert "reason" not in table.columns  # nothing failed yet


def test_a_time_to_live_fails_the_slow_checkpoints_and_discards_their_state() -> None:
    job = ttl_job()
    failed = [e for e in job.coordinator.entries.values() if e.status == FAILED]
    assert [e.id for e in failed] == ["c2", "c3"]
    assert statuses(job)["c4"] == COMPLETED
    for e in failed:
        assert e.reason == "past its time-to-live (35 steps)"
        assert e.duration == 36
        assert e.snapshot is None and e.size_bytes == 0
        assert e.id not in job.sim.algorithm.records
        assert "K" not in e.nodes_completed and len(e.nodes_completed) == 4
    assert not job.sim.blocked
    assert "step  75: c2 FAILED: past its time-to-live" in events_text(job)
    assert job.coordinator.entry("c3").triggered_at == 75  # the next one starts at once


def test_a_shorter_time_to_live_fails_more_checkpoints() -> None:
    completed = [
        StreamJob(DAG, "aligned", seed=0, ttl=ttl).run().metrics()["completed"]
        for ttl in (25, 35, 50, None)
    ]
    assert completed == [1, 2, 2, 3]


def test_a_crash_fails_every_unfinished_checkpoint_and_halts_the_job() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=100)
    assert len(job.coordinator.entry("c3").nodes_completed) == 3
    assert job.crash("C1") == ["c3"]
    assert statuses(job) == {"c1": COMPLETED, "c2": COMPLETED, "c3": FAILED}
    assert job.coordinator.entry("c3").reason == "C1 crashed"
    with pytest.raises(JobError, match="restore"):
        job.step()


# ---------------------------------------------------------------------- restore


def test_an_aligned_restore_rewinds_every_operator_and_replays_nothing_in_flight() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=100)
    c2 = job.coordinator.entry("c2").snapshot
    job.crash("C1")
    info = job.restore()
    assert info["from"] == "c2" and info["replayed"] == 0
    assert job.sim.states == {p: r.state for p, r in c2.processes.items()}
    text = restore_text(job)
    assert "put back on the channels: nothing" in text
    assert "sources read again: S1 from record 7, S2 from record 8" in text
    job.run()
    assert outcome_diff(StreamJob(DAG, "aligned", seed=0).run().outcome(), job.outcome()).same


def test_an_unaligned_restore_puts_the_recorded_records_back_first() -> None:
    job = StreamJob(DAG, "unaligned", seed=0).run(max_steps=100)
    job.crash("C1")
    info = job.restore()
    assert info["from"] == "c4" and info["replayed"] == 13
    assert "C1->K: S2#6, S1#7, S1#8" in restore_text(job)
    labels = [job.sim.trace.messages[m].label for m in job.sim.in_flight()]
    assert labels.count("replay") == 13
    job.run()
    assert outcome_diff(StreamJob(DAG, "unaligned", seed=0).run().outcome(), job.outcome()).same


def test_restoring_before_any_checkpoint_completes_starts_again() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=20)
    job.crash("K")
    job.restore()
    assert "from the start (no checkpoint COMPLETED)" in restore_text(job)
    assert restore_text(StreamJob(DAG)) == "no restore yet"


# ------------------------------------------------------------ at-least-once


@pytest.fixture
def alo() -> StreamJob:
    return StreamJob(DAG, "at-least-once", seed=16).run(max_steps=60)


def test_the_crossings_are_listed_per_checkpoint_and_make_the_cut_inconsistent(
    alo: StreamJob,
) -> None:
    found = crossings(alo)
    assert found["c1"] == [("S1#3", "C1", "S1->C1"), ("S1#5", "K", "C2->K")]
    assert found["c2"] == [("S2#8", "C1", "S2->C1"), ("S2#9", "C2", "S2->C2")]
    assert "c2 (INITIATED):\n  S2#8: read by C1 on S2->C1" in crossings_text(alo)
    result = check_snapshot(alo.sim, "c1")
    assert not result.ok
    assert alo.sim.trace.message_name(result.witness) == "S1#3"


def test_at_least_once_duplicates_exactly_the_crossings_of_the_checkpoint_restored(
    alo: StreamJob,
) -> None:
    alo.crash("C1")
    info = alo.restore()
    assert info["from"] == "c1"
    assert info["predicted_duplicates"] == [("S1", 3), ("S1", 5)]
    alo.run()
    diff = outcome_diff(StreamJob(DAG, "at-least-once", seed=16).run().outcome(), alo.outcome())
    assert diff.extra == {"S1#3": 1, "S1#5": 1}
    assert not diff.missing
    assert diff.counts == {"C1": {"k4": 1}}  # S1#3 crossed at C1; S1#5 at the sink only
    assert str(diff).splitlines() == [
        "delivered more than once: S1#3 ×2, S1#5 ×2 (2 extra)",
        "C1's counts: k4 +1",
    ]


def test_many_crashes_exactly_once_always_and_at_least_once_only_by_duplicates() -> None:
    rows = {r.variant: r for r in recovery_sweep(DAG, seeds=range(15), crash_steps=(40, 80, 120))}
    for variant in EXACTLY_ONCE:
        r = rows[variant]
        assert r.runs == r.same_output == r.as_predicted == r.only_duplicates == 45
        assert r.duplicates == 0
        assert r.from_checkpoint > 30
    alo = rows["at-least-once"]
    assert alo.runs == alo.as_predicted == alo.only_duplicates == 45
    assert (alo.with_duplicates, alo.duplicates) == (31, 129)
    assert alo.same_output == alo.runs - alo.with_duplicates
    table = recovery_table(list(rows.values()))
    assert table.column("variant") == list(rows)
    assert table.row("at-least-once")["runs with duplicates"] == "31/45 (129 records)"
    assert table.row("aligned")["same output"] == "45/45"


def test_a_source_records_its_read_position_not_the_end_of_its_log() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=100)
    job.crash("C1")
    table = read_positions(job, "c2")
    assert table.row("S1") == {
        "source": "S1",
        "read position recorded": "7",
        "end of its log": "20",
        "records skipped from the end": "13",
    }
    job.restore()
    assert "S1 from record 7" in restore_text(job)  # the restore reads from the position


# ------------------------------------------------------- try it: restore point


@pytest.fixture
def tried() -> StreamJob:
    job = ttl_job(140, seed=5)
    job.crash("C2")
    return job


def test_the_last_completed_checkpoint_is_the_restore_point(tried: StreamJob) -> None:
    feedback = check_restore_point("c3", tried)
    assert feedback.ok
    assert tried.restore()["from"] == "c3"


@pytest.mark.parametrize(
    ("answer", "says", "hint"),
    [
        ("c5", "c5 is FAILED (C2 crashed)", "discarded"),
        ("c4", "past its time-to-live", "cannot be restored"),
        ("c2", "not the last one", "later checkpoint"),
        (None, "there is a COMPLETED checkpoint", "last row"),
        ("c42", "not a checkpoint of this job", "c1, c2"),
        (3, "not a checkpoint", "registry"),
        (..., "No answer", "None"),
    ],
)
def test_a_wrong_restore_point_is_explained(
    tried: StreamJob, answer: object, says: str, hint: str
) -> None:
    feedback = check_restore_point(answer, tried)
    assert not feedback.ok
    assert says in feedback.message
    assert hint in feedback.hint
    assert "c3" not in feedback.message  # the hint may list the registry's ids, no more
    assert feedback.answer.startswith("c3") or answer is ...


def test_an_unfinished_checkpoint_is_not_a_restore_point() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=60)
    feedback = check_restore_point("c2", job)
    assert not feedback.ok and "still INITIATED" in feedback.message


def test_with_nothing_completed_the_answer_is_none() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=20)
    job.crash("C1")
    assert check_restore_point(None, job).ok
    assert "from the beginning" in check_restore_point(None, job).message


# ------------------------------------------------------- try it: duplicates


@pytest.fixture
def guess() -> StreamJob:
    return StreamJob(DAG, "at-least-once", seed=22).run(max_steps=100)


ANSWER = {"S2#7", "S1#15", "S1#18"}


@pytest.mark.parametrize("answer", [ANSWER, sorted(ANSWER), {("S2", 7), ("S1", 15), ("S1", 18)}])
def test_naming_the_crossings_of_the_restored_checkpoint_is_right(
    guess: StreamJob, answer: object
) -> None:
    before = guess.metrics()
    feedback = check_duplicates(answer, guess)
    assert feedback.ok
    assert "the restore uses c2" in feedback.message
    assert guess.metrics() == before and not guess.crashed  # a copy was crashed


@pytest.mark.parametrize(
    ("answer", "says", "hint"),
    [
        (ANSWER | {"S2#10"}, "S2#10 crossed a barrier, but not one of", "Which checkpoint"),
        ({"S1#4", "S1#7", "S1#5"}, "crossed a barrier, but not one of", "Only its crossings"),
        ({"S2#7", "S1#1"}, "S1#1 will not be delivered twice", "crossed a barrier"),
        ({"S2#7", "S1#15"}, "1 more will be delivered twice", "every record"),
        (set(), "3 more", "every record"),
        (None, "No answer", "set()"),
        (42, "not a set of record names", "S1#0"),
    ],
)
def test_a_wrong_set_of_duplicates_is_explained(
    guess: StreamJob, answer: object, says: str, hint: str
) -> None:
    feedback = check_duplicates(answer, guess)
    assert not feedback.ok
    assert says in feedback.message
    assert hint in feedback.hint
    given = set() if not isinstance(answer, (set, list)) else set(answer)
    for name in ANSWER - given:
        assert name not in str(feedback)  # only in the folded answer
    if answer is not None and answer != 42:
        assert all(name in feedback.answer for name in ANSWER)


def test_no_duplicates_when_the_restored_checkpoint_had_no_crossing() -> None:
    job = StreamJob(DAG, "at-least-once", seed=19).run(max_steps=60)
    assert crossings(job)["c1"] == [] and job.coordinator.latest_completed().id == "c1"
    feedback = check_duplicates(set(), job)
    assert feedback.ok and "nothing is delivered twice" in feedback.message


def test_the_duplicates_check_agrees_with_a_real_crash(guess: StreamJob) -> None:
    real = copy.deepcopy(guess)
    real.crash("C1")
    real.restore()
    real.run()
    assert {f"{s}#{i}" for s, i in real.outcome().duplicates} == ANSWER


# ------------------------------------------------- the stored lesson, as read

#: per try-it: texts that would give its answer away (c3; S2#7, S1#15, S1#18)
TELLTALES = {
    "restore_point": [r"restore uses c3", r"from checkpoint c3", r"c3 is the last COMPLETED"],
    "twice": [r"S2#7 ×2", r"S1#15 ×2", r"S1#18 ×2", r"S2#7, S1#15", r"S1#15, S1#18, S2#7"],
}


@pytest.fixture(scope="module")
def lesson() -> dict[str, Any]:
    return load("08_failures_and_recovery")


def test_the_lessons_try_its_are_the_two_checked_here(lesson: dict[str, Any]) -> None:
    # restore_point starts as ``...``, because None is one of its possible answers
    assert try_it_variables(lesson) == ["twice"]
    assert (
        find_try_it(lesson, "restore_point").answer_cell < find_try_it(lesson, "twice").answer_cell
    )


@pytest.mark.parametrize("variable", list(TELLTALES))
def test_no_try_it_is_given_away_before_it_or_right_after_it(
    lesson: dict[str, Any], variable: str
) -> None:
    found = find_try_it(lesson, variable)
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, TELLTALES[variable]) == []


def test_the_telltales_would_catch_the_right_answers_feedback(guess: StreamJob) -> None:
    job = ttl_job(140, seed=5)
    job.crash("C2")
    right = {"restore_point": check_restore_point("c3", job),
             "twice": check_duplicates(ANSWER, guess)}  # fmt: skip
    for variable, feedback in right.items():
        assert feedback.ok
        assert any(re.search(p, feedback.message) for p in TELLTALES[variable]), variable


def test_the_lesson_states_its_goal_and_time_at_the_top(lesson: dict[str, Any]) -> None:
    goal, _ = goal_and_minutes(lesson)
    assert "restore" in goal

"""The concept checks of lessons 08 to 11 (and the course's two cross-lesson self-test
questions), as specifications: each right choice that a run can show is shown by a run
of the engine, next to the letter of the choice that states it. No live cluster, no
Spark: the live lab's membership and chunking are run on their own, and the sweeps of
lesson 09 a few points at a time.
"""

from __future__ import annotations

import random
import re
import statistics
from typing import Any

import pytest

from snapshotlib.checks import (
    check_commutation,
    check_frontier,
    cut_lattice,
    domino_effect,
    rollback_propagation,
    run_path,
    snapshot_window,
)
from snapshotlib.course import lesson_02, lesson_09, lesson_11
from snapshotlib.course.concepts import QUESTIONS, Question, self_test_questions
from snapshotlib.course.concepts.lessons_08_to_11 import QUESTIONS as OURS
from snapshotlib.course.lesson_07 import DAG
from snapshotlib.course.lesson_08 import outcome_diff, read_positions
from snapshotlib.dataflow import COMPLETED, EXACTLY_ONCE, FAILED, StreamJob
from snapshotlib.formats.scenario import load_scenario, parse_scenario, run_scenario
from snapshotlib.live.keyed_state import KeyedState, changed, chunks, table_to_json
from snapshotlib.live.membership import DOWN, UP, Membership
from snapshotlib.sweeps import parse_config_text, run_point

LESSONS = ("08", "09", "10", "11")

# ------------------------------------------------------------------ the questions


def test_the_cross_lesson_questions_name_the_lesson_to_revisit() -> None:
    assert {q.id for q in self_test_questions()} >= {"self.x1", "self.x2"}
    assert QUESTIONS["self.x1"].lesson == "02" and QUESTIONS["self.x2"].lesson == "11"


def sentences(text: str) -> int:
    return len(re.findall(r"[.?](?:\s|$)", text))


@pytest.mark.parametrize("question", OURS, ids=lambda q: q.id)
def test_each_question_keeps_to_the_format_of_a_slide(question: Question) -> None:
    """Stricter than every question's rules (test_concepts): one or two sentences for a
    prompt and a feedback, one for a hint."""
    q = question
    assert sentences(q.prompt) <= 2 and sentences(q.hint) == 1
    assert all(1 <= sentences(c.feedback) <= 2 for c in q.choices)


def test_the_right_choices_are_spread_over_the_letters_and_not_always_the_longest() -> None:
    letters = [q.right_letter for q in OURS]
    assert all(letters.count(x) >= 3 for x in "abcd")
    longest = [
        q.choices[q.letters.index(q.right_letter)].text == max((c.text for c in q.choices), key=len)
        for q in OURS
    ]
    assert sum(longest) <= len(OURS) // 3


# ------------------------------------------------------------------ lesson 08


def test_a_crash_fails_the_unfinished_checkpoint_and_corrupts_no_completed_one() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=100)
    assert job.coordinator.entry("c3").status != COMPLETED
    assert len(job.coordinator.entry("c3").nodes_completed) == 3
    # the crash fails c3 only; c1 and c2 keep their status and their recorded state
    assert job.crash("C1") == ["c3"]
    c3 = job.coordinator.entry("c3")
    assert c3.status == FAILED and c3.snapshot is None
    for cid in ("c1", "c2"):
        entry = job.coordinator.entry(cid)
        assert entry.status == COMPLETED and entry.snapshot is not None
    assert job.restore()["from"] == "c2"
    assert QUESTIONS["08.1"].right_letter == "c"


def test_a_source_records_its_read_position_not_the_end_of_its_log() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=100)
    job.crash("C1")
    job.restore()
    table = str(read_positions(job, "c2"))
    # c2 recorded S1 at record 7 and S2 at 8, in logs of 20: the ends would skip 13 and 12
    assert re.search(r"S1\s+7\s+20\s+13", table) and re.search(r"S2\s+8\s+20\s+12", table)
    assert (job.sim.states["S1"], job.sim.states["S2"]) == (7, 8)  # where they read again
    job.run()
    clean = StreamJob(DAG, "aligned", seed=0).run()
    assert outcome_diff(clean.outcome(), job.outcome()).same
    assert QUESTIONS["08.2"].right_letter == "a"


def test_at_least_once_delivers_the_records_that_crossed_a_barrier_twice_and_loses_none() -> None:
    job = StreamJob(DAG, "at-least-once", seed=16).run(max_steps=60)
    job.crash("C1")
    info = job.restore()
    assert info["from"] == "c1"
    job.run()
    diff = outcome_diff(StreamJob(DAG, "at-least-once", seed=16).run().outcome(), job.outcome())
    # the records that crossed a barrier of c1, and only they, reach the sink twice
    assert diff.extra == {"S1#3": 1, "S1#5": 1}
    assert [f"{s}#{i}" for s, i in info["predicted_duplicates"]] == ["S1#3", "S1#5"]
    assert diff.missing == {}
    assert QUESTIONS["08.3"].right_letter == "d"


def test_checkpoints_longer_than_their_time_to_live_never_complete_and_a_restore_starts_over() -> (
    None
):
    # without a time-to-live each checkpoint of this job takes more than 20 steps
    durations = [
        e.duration for e in StreamJob(DAG, "aligned", seed=0).run().coordinator.entries.values()
    ]
    assert min(durations) > 20
    job = StreamJob(DAG, "aligned", seed=0, ttl=20).run(max_steps=150)
    assert job.metrics()["completed"] == 0
    job.crash("C1")
    assert job.restore()["from"] is None  # the start: no checkpoint ever COMPLETED
    assert QUESTIONS["self.08"].right_letter == "b"


# ------------------------------------------------------------------ lesson 09


#: the lesson's own sweep, whose points a few tests run (a few seeds of a few cells)
SWEEP = parse_config_text(lesson_09.SWEEP_TOML)


def rows(seeds: int, where: dict[str, Any], **changes: Any) -> list[dict[str, Any]]:
    """The rows of the lesson's points matching ``where``, for its first ``seeds`` seeds,
    with ``changes`` made to each point (a cell the lesson does not have)."""
    chosen = [
        p for p in SWEEP.points() if p["seed"] < seeds and all(p[k] == v for k, v in where.items())
    ]
    assert chosen, where
    return [run_point({**p, **changes}) for p in chosen]


def mean_bytes(found: list[dict[str, Any]]) -> float:
    return statistics.fmean(r["recorded_bytes"] for r in found)


#: the Chandy–Lamport cells of the lesson's first grid
MARKER_GRID = {"algorithm": "chandy-lamport", "rate": 2, "fifo": True, "message_delay": 1}


def test_only_chandy_lamport_records_more_in_flight_as_the_marker_slows() -> None:
    slow = mean_bytes(rows(10, {**MARKER_GRID, "marker_delay": 16}))
    fast = mean_bytes(rows(10, {**MARKER_GRID, "marker_delay": 1}))
    assert slow > fast + 4_000  # about 400 B more per tick of delay
    for variant in ("aligned", "at-least-once", "unaligned"):
        at = {d: mean_bytes(rows(10, {"algorithm": variant, "marker_delay": d})) for d in (1, 16)}
        # nothing in flight for aligned and at-least-once, a constant for unaligned
        assert at[1] == at[16]
        assert (at[1] == 0) == (variant != "unaligned")
    assert QUESTIONS["09.1"].right_letter == "b"


def test_on_fifo_channels_a_wide_spread_of_delays_breaks_no_snapshot() -> None:
    grid = {"algorithm": "chandy-lamport", "rate": 0.1, "message_delay": 16}
    fifo = rows(20, {**grid, "fifo": True})
    reordered = rows(20, {**grid, "fifo": False})
    assert all(r["consistent"] for r in fifo)
    assert sum(not r["consistent"] for r in reordered) >= 15  # nearly all without FIFO
    assert QUESTIONS["09.2"].right_letter == "a"


def test_a_clock_snapshot_is_consistent_when_messages_take_longer_than_the_clock_error() -> None:
    def broken(drift: float, message_delay: int) -> int:
        found = rows(20, {"algorithm": "clock", "drift": drift}, message_delay=message_delay)
        return sum(not r["consistent"] for r in found)

    # the same drift breaks most snapshots when messages take a tick, none when they take
    # up to 16 ticks; with no drift none breaks even with the fastest messages
    assert broken(0.1, 1) >= 10
    assert broken(0.1, 16) == 0
    assert broken(0.0, 1) == 0
    assert QUESTIONS["09.3"].right_letter == "c"


def test_one_more_tick_of_marker_delay_adds_rate_times_message_size_for_any_size() -> None:
    delays = (4, 8, 16)
    means = [mean_bytes(rows(20, {**MARKER_GRID, "marker_delay": d}, size=10)) for d in delays]
    _, slope = lesson_09.fit_line(list(delays), means)
    model = lesson_09.model_slope(rate=2, message_bytes=200)
    # 10 processes, as with 5: about 400 B a tick (not 800, 3,600 or 36,000)
    assert model == 400
    assert abs(slope - model) / model < 0.1
    assert QUESTIONS["self.09"].right_letter == "d"


# ------------------------------------------------------------------ lesson 10


def test_one_changed_account_rewrites_its_whole_chunk_and_every_chunk_is_listed() -> None:
    # a node of the lesson's lab: 1,000 in 400 accounts of about 400 bytes, 2 to a chunk
    state = KeyedState(400, 1000, random.Random(1))
    base = {c.index: (c.sha256, "file:///base/") for c in chunks(state.entries(), 2, 400)}
    for _ in range(20):
        state.credit(1)
    touched = sum(v > 0 for v in state.versions.values())
    now = chunks(state.entries(), 2, 400)
    written = changed(now, base)
    share = sum(len(c.data) for c in written) / sum(len(c.data) for c in now)
    assert touched / 400 == 0.05
    assert share > 1.8 * touched / 400  # each change writes its neighbour in the chunk too
    table = {**base, **{c.index: (c.sha256, "file:///next/") for c in written}}
    assert len(table_to_json(table)["chunks"]) == 200  # the part lists every chunk
    assert QUESTIONS["10.2"].right_letter == "c"


def test_a_node_that_only_stalled_past_the_timeout_is_declared_gone() -> None:
    view = Membership(("P1", "P2", "P3", "P4"), timeout_s=2.0)
    left: list[str] = []
    for tick in range(31):  # the monitor looks every 0.2 s, for 6 s
        now = round(0.2 * tick, 1)
        for node in ("P1", "P2", "P3", "P4"):
            if node != "P2" or not 1.0 < now < 4.0:  # P2 pauses 3 s, then goes on
                left += view.beat({"node_id": node, "incarnation": "a"}, now)
        left += view.expire(now)
        if now == 3.6:
            assert view.health()["P2"] == DOWN  # a membership change, which fails snapshots
    assert [c.split(" (")[0] for c in left] == ["P2 left", "P2 joined"]
    assert left[1] == "P2 joined (is back)"  # the same process: nothing had crashed
    assert set(view.health().values()) == {UP}
    assert QUESTIONS["self.10"].right_letter == "b"


# ------------------------------------------------------------------ lesson 11


def test_uncoordinated_checkpoints_can_roll_every_process_back_to_its_start() -> None:
    trace = run_scenario(load_scenario(lesson_11.RUN)).trace
    line, rollbacks = rollback_propagation(trace, lesson_11.DOMINO)
    assert line == {"P1": 0, "P2": 0, "P3": 0} and domino_effect(trace, lesson_11.DOMINO)
    # P2 rolls back twice: from 3 to 1, then to its start
    assert [(r.process, r.to) for r in rollbacks if r.process == "P2"] == [("P2", 1), ("P2", 0)]
    assert QUESTIONS["11.1"].right_letter == "d"


def test_only_a_message_received_inside_and_sent_outside_stops_a_restart() -> None:
    trace = run_scenario(load_scenario(lesson_11.RUN)).trace
    # a sent by P1's first event, received by P2's first: in transit across 1 0 0, harmless
    assert check_frontier(trace, {"P1": 1, "P2": 0, "P3": 0}).ok
    # P1's 2 holds the receipt of c, which P3's 1 has not sent: an orphan
    orphan = check_frontier(trace, {"P1": 2, "P2": 2, "P3": 1})
    assert not orphan.ok and trace.message_name(orphan.witness) == "c"
    assert QUESTIONS["11.2"].right_letter == "a"


def test_a_transactional_sink_lets_records_out_only_when_a_checkpoint_completes() -> None:
    job = StreamJob(DAG, "aligned", seed=0, sink="transactional").run(crash_at=(100, "C1"))
    completed = {e.ended_at for e in job.coordinator.entries.values() if e.status == COMPLETED}
    assert {w.visible for w in job.output.writes} <= completed
    assert job.output.duplicates() == {}
    # written as they arrive, the same records come out twice after the restore
    plain = StreamJob(DAG, "aligned", seed=0, sink="plain").run(crash_at=(100, "C1"))
    assert plain.outcome() == StreamJob(DAG, "aligned", seed=0).run().outcome()
    assert plain.output.duplicates() == {("S2", 8): 2, ("S2", 9): 2}
    assert QUESTIONS["11.3"].right_letter == "c"


def test_a_rollback_propagates_past_the_receiver_of_the_first_orphan() -> None:
    chain = parse_scenario(
        {
            "name": "chain",
            "processes": ["P1", "P2", "P3"],
            "app": "tokens",
            "initial": {"P1": 1},
            "steps": [
                {"do": "send", "from": "P1", "to": "P2", "label": "m", "payload": 1},
                {"do": "deliver", "from": "P1", "to": "P2", "label": "get-m"},
                {"do": "send", "from": "P2", "to": "P3", "label": "n", "payload": 1},
                {"do": "deliver", "from": "P2", "to": "P3", "label": "get-n"},
            ],
        }
    )
    trace = run_scenario(chain).trace
    line, rollbacks = rollback_propagation(trace, {"P2": [1], "P3": [1]})
    assert [(r.process, r.message) for r in rollbacks] == [("P2", "m"), ("P3", "n")]
    assert line == {"P1": 0, "P2": 0, "P3": 0}
    assert QUESTIONS["self.11"].right_letter == "b"


# ------------------------------------------------------------------ across the course


def test_a_restore_may_restart_from_a_state_the_run_never_passed_through() -> None:
    sim = run_scenario(load_scenario("02-never-occurred"))
    window = snapshot_window(sim, "s1")
    assert lesson_02.occurrences(sim) == []  # the recorded state occurred at no moment
    assert window.recorded not in run_path(sim)
    assert window.recorded in cut_lattice(sim)  # but it is a consistent cut of the run
    assert check_commutation(sim, "s1").holds  # on a run from S0 to S1 (Dijkstra)
    # and restoring marker checkpoints gives the failure-free output (lesson 08)
    for variant in EXACTLY_ONCE:
        clean = StreamJob(DAG, variant, seed=0).run().outcome()
        assert StreamJob(DAG, variant, seed=0).run(crash_at=(100, "C1")).outcome() == clean
    assert QUESTIONS["self.x1"].right_letter == "c"


def test_a_message_across_a_recovery_line_is_in_transit_and_must_come_again() -> None:
    from snapshotlib.checks import recovery_line

    # P1 sends m to P2 and then works on; P2 receives m. P1 saved a checkpoint after
    # the send, P2 one before the receive: the line keeps both, with m in transit
    run = run_scenario(
        parse_scenario(
            {
                "processes": ["P1", "P2"],
                "steps": [
                    {"do": "send", "from": "P1", "to": "P2", "label": "m"},
                    {"do": "internal", "at": "P1"},
                    {"do": "internal", "at": "P2"},
                    {"do": "deliver", "from": "P1", "to": "P2"},
                ],
            }
        )
    )
    line = recovery_line(run.trace, {"P1": [1], "P2": [1]})
    assert line == {"P1": 1, "P2": 1}  # no one rolled back: m orphans no one
    trace = run.trace
    send = next(i for i, a in enumerate(trace.actions) if a.kind == "send")
    receive = next(i for i, a in enumerate(trace.actions) if a.kind == "receive")
    assert trace.process_actions("P1").index(send) < line["P1"]  # sent inside the cut
    assert trace.process_actions("P2").index(receive) >= line["P2"]  # received outside
    # the restarted P1 has sent m already: unless m comes again, P2 never gets it
    assert QUESTIONS["self.x2"].right_letter == "c"

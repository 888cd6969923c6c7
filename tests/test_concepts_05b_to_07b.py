"""The concept checks of lessons 05b to 07b, held to the engine: where a run can show that
a question's right choice is true, the run is made here, the fact computed and asserted,
and the question's right letter asserted next to it. A changed engine, or a reshuffled
question, then fails here rather than on a slide.

Every run is small: hand-written scenarios, the lessons' own runs and a few seeds of the
streaming jobs, so each test takes well under a second.
"""

from __future__ import annotations

from typing import Any

import pytest

from snapshotlib.algorithms.lai_yang import LaiYang
from snapshotlib.checks import check_commutation, check_snapshot
from snapshotlib.checks.lattice import GlobalState, cut_lattice, run_path, snapshot_window
from snapshotlib.checks.predicates import PredicateResult, conservation, termination
from snapshotlib.course import lesson_06
from snapshotlib.course.concepts import QUESTIONS
from snapshotlib.course.concepts.lessons_05b_to_07b import QUESTIONS as OURS
from snapshotlib.course.lesson_05 import MISSED, RED_IN_WHITE, diagnose, run_with
from snapshotlib.course.lesson_07 import (
    CYCLIC,
    DAG,
    Sizing,
    held,
    measure,
    recorded_text,
    recording_outgrows_its_channel,
    story,
    unreachable_snapshot,
)
from snapshotlib.dataflow import StreamJob
from snapshotlib.formats.scenario import load_scenario, parse_scenario, run_scenario
from snapshotlib.simulator import Simulator
from snapshotlib.trace import SNAPSHOT

LESSONS = ("05b", "06a", "06b", "07a", "07b")


def test_the_right_choice_moves_around() -> None:
    places = [q.right_letter for q in OURS]
    assert {places.count(x) for x in "abcd"} == {len(OURS) // 4}


# --------------------------------------------------------------- 05b without FIFO


def test_data_that_overtakes_a_marker_is_counted_twice() -> None:
    # a marker out of band is on no ordered stream with the data: non-fifo-breaks sends
    # a token after the marker, and it arrives first
    sim = run_scenario(load_scenario("non-fifo-breaks"))
    assert not sim.network.fifo
    assert diagnose(sim, "s1").kind == RED_IN_WHITE
    counted = conservation(sim, "s1")
    assert counted.details["processes"] > counted.details["initial"]  # 3 tokens of 2
    assert QUESTIONS["05b.1"].right_letter == "c"


def test_under_lai_yang_a_white_process_records_before_accepting_a_red_message() -> None:
    # the same run under Lai-Yang: P2 records 0 tokens, then accepts late (red), which is
    # in no channel's state, and the snapshot is consistent
    sim = run_with(load_scenario("non-fifo-breaks"), LaiYang())
    snap = sim.snapshot("s1")
    assert snap.processes["P2"].state == 0 and sim.states["P2"] == 1
    assert all(not msgs for msgs in snap.channels.values())
    assert check_snapshot(sim, "s1").ok and conservation(sim, "s1").holds
    assert QUESTIONS["05b.2"].right_letter == "a"


def test_the_count_in_the_marker_keeps_the_channel_recorded_until_its_white_message() -> None:
    # 05-marker-overtakes-message: the marker (count 1) overtakes early; under
    # Chandy-Lamport early is missed, under Lai-Yang P2 goes on recording until it comes
    scenario = load_scenario("05-marker-overtakes-message")
    assert diagnose(run_scenario(scenario), "s1").kind == MISSED
    sim = run_scenario(scenario, until=3, algorithm=LaiYang())  # the marker is in, early not
    assert "P1->P2" in sim.snapshot("s1").pending_channels
    sim = run_with(scenario, LaiYang())
    assert [m.label for m in sim.snapshot("s1").channels["P1->P2"]] == ["early"]
    assert conservation(sim, "s1").holds
    assert QUESTIONS["05b.3"].right_letter == "d"


def counted_two() -> dict[str, Any]:
    """P1 sends x and y, records; its marker (count 2) arrives first, then y, then x."""
    return {
        "processes": ["P1", "P2"], "fifo": False, "app": "tokens",
        "initial": {"P1": 3, "P2": 0},
        "steps": [
            {"do": "send", "from": "P1", "to": "P2", "label": "x", "payload": 1},
            {"do": "send", "from": "P1", "to": "P2", "label": "y", "payload": 1},
            {"do": "snapshot", "at": "P1", "id": "s1"},
            {"do": "deliver", "from": "P1", "to": "P2", "marker": "s1"},
            {"do": "deliver", "from": "P1", "to": "P2", "msg": "y"},
            {"do": "deliver", "from": "P1", "to": "P2", "msg": "x"},
            {"do": "run"},
        ],
    }  # fmt: skip


def test_a_channel_stays_recorded_until_every_counted_white_message_has_come() -> None:
    scenario = parse_scenario(counted_two())
    after_y = run_scenario(scenario, until=5, algorithm=LaiYang())
    assert "P1->P2" in after_y.snapshot("s1").pending_channels  # marker and y in: still open
    after_x = run_scenario(scenario, until=6, algorithm=LaiYang())
    assert "P1->P2" not in after_x.snapshot("s1").pending_channels  # x in: closed
    done = run_scenario(scenario, algorithm=LaiYang())
    assert [m.label for m in done.snapshot("s1").channels["P1->P2"]] == ["y", "x"]
    assert check_snapshot(done, "s1").ok and conservation(done, "s1").holds
    # Chandy-Lamport on the same run closes the channel on the marker and misses x
    assert diagnose(run_scenario(scenario), "s1").kind == MISSED
    assert QUESTIONS["self.05b"].right_letter == "b"


# ----------------------------------------------------------- 06a stable predicates


def start_and_end(name: str, snapshot_id: str) -> tuple[int, int]:
    """How many actions of scenario ``name`` came before snapshot ``snapshot_id`` began,
    and how many it takes until the snapshot is complete."""
    scenario = load_scenario(name)
    actions = run_scenario(scenario).trace.actions
    begin = next(i for i, a in enumerate(actions) if a.kind == SNAPSHOT and a.label == snapshot_id)
    end = next(
        t
        for t in range(begin + 1, len(actions) + 1)
        if run_scenario(scenario, until=t).snapshot(snapshot_id).complete
    )
    return begin, end


def test_a_snapshot_that_reports_termination_may_have_begun_before_it() -> None:
    term = run_scenario(load_scenario("06-requests-terminate"))
    begin, end = start_and_end("06-requests-terminate", "s2")
    assert termination(term, "s2").holds
    # when s2 began, P3's reply was on its way and P1, P2 waited: not terminated
    assert not termination(term, lesson_06.state_at(term, begin)).holds
    # by the time s2 was complete it had terminated, and it stays so to the end
    for t in range(end, len(term.trace.actions) + 1):
        assert termination(term, lesson_06.state_at(term, t)).holds
    assert QUESTIONS["06a.1"].right_letter == "b"


def test_a_no_from_a_snapshot_rules_out_only_the_state_when_it_began() -> None:
    sweep = lesson_06.stability_sweep(runs=200, processes=4, seed=6)
    for predicate in ("termination", "deadlock"):
        # never a no when it held at the start; but late noes when it set in meanwhile
        assert sweep.no_but_true_at_start[predicate] == 0
        assert sweep.no_but_true_at_end[predicate] > 0
        assert sweep.yes_but_false_at_end[predicate] == 0
    assert QUESTIONS["06a.2"].right_letter == "d"


def test_the_channel_states_hold_the_tokens_the_process_states_miss() -> None:
    tokens = run_scenario(load_scenario("06-tokens-in-transit"))
    counted = conservation(tokens, "s1")
    assert counted.holds
    assert (counted.details["processes"], counted.details["channels"]) == (1, 4)
    assert not conservation(tokens, lesson_06.without_channels(tokens.snapshot("s1"))).holds
    assert check_snapshot(tokens, "s1").ok and check_commutation(tokens, "s1").holds
    assert QUESTIONS["06a.3"].right_letter == "a"


def test_a_loss_a_snapshot_sees_stays_and_later_snapshots_may_see_more() -> None:
    # the lesson's buggy application can only lose tokens: what s1 finds missing is
    # still missing at the end, and s2, taken later, finds more
    buggy = lesson_06.run_with_app("06-tokens-in-transit", lesson_06.OverwritingTokens())
    first, later = conservation(buggy, "s1"), conservation(buggy, "s2")
    initial = first.details["initial"]

    def recorded(result: PredicateResult) -> int:
        return int(result.details["processes"] + result.details["channels"])

    assert recorded(first) < initial and recorded(later) < recorded(first)
    assert sum(buggy.states.values()) <= recorded(first)
    assert QUESTIONS["self.06a"].right_letter == "c"


# -------------------------------------------------------- 06b lattice of cuts


@pytest.fixture(scope="module")
def small() -> Simulator:
    return run_scenario(load_scenario("06-tokens-lattice"))


def test_a_cut_with_every_token_in_transit_is_consistent_though_the_run_never_was_in_it(
    small: Simulator,
) -> None:
    lattice = cut_lattice(small)
    window = snapshot_window(small, "s1")
    recorded = window.recorded
    assert recorded == (1, 1, 1) and recorded in lattice  # a consistent cut
    assert recorded not in run_path(small)  # the run went around it
    state = lattice.state(recorded)
    assert all(tokens == 0 for tokens in state.processes.values())
    assert sum(1 for msgs in state.channels.values() if msgs) == 3  # all in transit
    assert all(b <= r <= e for b, r, e in zip(window.begin, recorded, window.end, strict=True))
    assert QUESTIONS["06b.1"].right_letter == "d"


def test_a_snapshot_that_sees_a_predicate_shows_only_that_it_possibly_held(
    small: Simulator,
) -> None:
    lattice = cut_lattice(small)
    window = snapshot_window(small, "s1")
    held_at = lattice.holding(lesson_06.no_token_held)
    assert held_at == (window.recorded,)  # seen by the snapshot, at SSS only
    assert lattice.possibly(lesson_06.no_token_held).holds
    assert not lattice.definitely(lesson_06.no_token_held).holds
    assert not set(held_at) & set(run_path(small))  # the run never passed through it
    assert not lesson_06.no_token_held(lattice.state(window.end))  # nor does it hold at S1
    assert QUESTIONS["06b.2"].right_letter == "c"


def test_possibly_and_definitely_agree_for_a_stable_predicate(small: Simulator) -> None:
    lattice = cut_lattice(small)

    def p3_has_taken_two_events(state: GlobalState) -> bool:
        return bool(state.cut[2] >= 2)  # once true at a cut, true at every cut above

    holding = set(lattice.holding(p3_has_taken_two_events))
    assert all(set(lattice.successors(c)) <= holding for c in holding)
    assert lattice.top in holding
    stable = p3_has_taken_two_events
    assert lattice.possibly(stable).holds and lattice.definitely(stable).holds
    # a predicate that is not stable: the two answers part
    assert lattice.possibly(lesson_06.no_token_held).holds
    assert not lattice.definitely(lesson_06.no_token_held).holds
    assert QUESTIONS["06b.3"].right_letter == "a"


def test_two_crossing_messages_are_definitely_in_transit_together() -> None:
    crossing = run_scenario(
        parse_scenario({
            "processes": ["P1", "P2"], "app": "tokens", "initial": {"P1": 1, "P2": 1},
            "steps": [
                {"do": "send", "from": "P1", "to": "P2", "label": "a", "payload": 1},
                {"do": "send", "from": "P2", "to": "P1", "label": "b", "payload": 1},
                {"do": "deliver", "from": "P1", "to": "P2", "msg": "a"},
                {"do": "deliver", "from": "P2", "to": "P1", "msg": "b"},
            ],
        })
    )  # fmt: skip
    lattice = cut_lattice(crossing)

    def both_in_transit(state: GlobalState) -> bool:
        return all(state.channels.values())

    assert lattice.definitely(both_in_transit).holds
    assert lattice.count_paths() > 1  # in every one of several orders
    assert QUESTIONS["self.06b"].right_letter == "b"


# ---------------------------------------------------------- 07a barrier snapshots


def test_chandy_lamport_keeps_reading_a_recorded_input_and_records_what_arrives() -> None:
    job = StreamJob(DAG, "chandy-lamport", seed=23)
    told = story(job, "C1", "c1")
    assert "blocks" not in told
    assert "C1 reads S2#3 from S2->C1: recorded in flight" in told
    job.run()
    assert job.metrics()["blocked_steps"] == 0  # no input was ever frozen
    assert "S2->C1: S2#3" in recorded_text(job, "c1")
    assert QUESTIONS["07a.1"].right_letter == "a"


def test_alignment_holds_records_on_the_blocked_input_and_stores_none() -> None:
    job = StreamJob(DAG, "aligned", seed=23).run(max_steps=20)
    net = job.network
    s1_c1 = net.channel_index(net.channel("S1", "C1"))
    assert s1_c1 in job.sim.blocked
    waiting = [job.sim.trace.messages[m].label for m in job.sim.queues[s1_c1]]
    assert waiting == ["S1#3", "S1#4"] and held(job) == 2
    job.run()
    assert job.metrics()["inflight_bytes"] == 0  # held, never stored
    assert QUESTIONS["07a.2"].right_letter == "c"


def test_a_record_that_crossed_an_at_least_once_barrier_comes_twice_after_a_restore() -> None:
    clean = StreamJob(DAG, "at-least-once", seed=23).run()
    c1 = clean.coordinator.entry("c1").snapshot
    assert c1.processes["S1"].state == 3  # S1 reads S1#3 again after a restore
    assert check_snapshot(clean.sim, "c1").reason.startswith("message S1#3 (sent by S1")
    assert clean.metrics()["duplicates"] == 0  # no crash, no duplicate
    # c1 completes at step 69; crash C1 just after, and restore from c1
    crashed = StreamJob(DAG, "at-least-once", seed=23).run(crash_at=(70, "C1"))
    assert crashed.restores[0]["from"] == "c1"
    duplicates = crashed.outcome().duplicates
    assert duplicates[("S1", 3)] == 2
    # over a few seeds: duplicates after a crash, and no record lost on this job
    [alo] = measure(DAG, seeds=range(5), crash_at=(100, "C1"), variants=["at-least-once"])
    assert alo.runs_with_duplicates > 0 and alo.runs_with_losses == 0
    assert QUESTIONS["07a.3"].right_letter == "b"


def test_aligned_checkpoints_store_the_back_edge_on_a_cycle() -> None:
    loop = StreamJob(CYCLIC, "aligned", seed=0)
    told = story(loop, "H", "c1")
    assert "it records what arrives on L->H until its barrier comes" in told
    loop.run()
    assert "in flight: L->H: S#4" in recorded_text(loop, "c1")
    assert loop.metrics()["inflight_bytes"] > 0
    assert StreamJob(DAG, "aligned", seed=0).run().metrics()["inflight_bytes"] == 0  # no cycle
    assert QUESTIONS["self.07a"].right_letter == "d"


# -------------------------------------------------------- 07b measuring trade-offs


def test_only_the_initiator_records_every_input_channel() -> None:
    # the sizing arithmetic (not a run): the initiator records all 99 inputs, any other
    # node the 98 besides the channel its first marker came on
    cluster = Sizing(nodes=100, rate=50_000, record_bytes=200, delay=2)
    assert cluster.initiator_bytes == 99 * 20_000_000 == 1_980_000_000
    assert cluster.other_node_bytes == 98 * 20_000_000
    assert QUESTIONS["07b.1"].right_letter == "b"


def test_channel_capacity_does_not_bound_a_chandy_lamport_recording() -> None:
    for messages in (10, 20):
        found = recording_outgrows_its_channel(messages=messages)
        assert found.peak_in_channel == 1  # the channel never held more than one
        assert found.recorded == messages  # the recording grows with what is sent
        assert found.money_recorded == found.money_in_system
    assert QUESTIONS["07b.2"].right_letter == "d"


def test_chandy_lamport_needs_markers_to_reach_every_process_not_a_complete_graph() -> None:
    channels, operators = len(DAG.network().channels), len(DAG.operators)
    assert channels < operators * (operators - 1)  # 6 of 20
    job = StreamJob(DAG, "chandy-lamport", seed=0).run()
    metrics = job.metrics()
    assert metrics["completed"] == metrics["checkpoints"] > 0
    cyclic = StreamJob(CYCLIC, "chandy-lamport", seed=0).run().metrics()
    assert cyclic["completed"] == cyclic["checkpoints"] > 0  # a cycle is no obstacle
    lost = unreachable_snapshot()  # P3 reached by no marker
    assert not lost.complete and "P3" not in lost.processes
    assert QUESTIONS["07b.3"].right_letter == "c"


def test_at_least_once_on_a_cycle_loses_records_after_a_restore() -> None:
    [alo] = measure(CYCLIC, seeds=range(10), crash_at=(50, "H"), variants=["at-least-once"])
    assert alo.inflight_bytes == 0  # the back edge recorded empty
    assert alo.runs_with_losses > 0 and alo.runs_with_duplicates == 0
    assert alo.as_predicted == alo.runs  # lost: exactly the records on the back edge
    assert QUESTIONS["self.07b"].right_letter == "a"

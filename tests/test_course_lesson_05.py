"""Lesson 05's diagnosis of broken snapshots and its try-it check on the learner's run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from snapshotlib import Deliver, Network, Send, Simulator, StartSnapshot
from snapshotlib.course.lesson_05 import (
    MISSED,
    RED_IN_WHITE,
    RED_RECORDED,
    check_breaking_run,
    diagnose,
    narrate,
    tally,
)
from snapshotlib.formats.scenario import load_scenario, parse_scenario, run_scenario
from snapshotlib.workloads import complete

SCENARIOS = Path(__file__).resolve().parent.parent / "examples" / "scenarios"

OVERTAKING_MESSAGE = [
    {"do": "snapshot", "at": "P1"},
    {"do": "send", "from": "P1", "to": "P2", "label": "m"},
    {"do": "deliver", "from": "P1", "to": "P2", "msg": "m", "label": "r"},
]
OVERTAKING_MARKER = [
    {"do": "send", "from": "P1", "to": "P2", "label": "m"},
    {"do": "snapshot", "at": "P1"},
    {"do": "deliver", "from": "P1", "to": "P2", "marker": "s1"},
]
RECORDED_AS_IN_TRANSIT = [  # P2 records first; P1's red message overtakes P1's marker
    {"do": "snapshot", "at": "P2"},
    {"do": "deliver", "from": "P2", "to": "P1", "marker": "s1"},
    {"do": "send", "from": "P1", "to": "P2", "label": "m"},
    {"do": "deliver", "from": "P1", "to": "P2", "msg": "m", "label": "r"},
]
THREE_PROCESSES = [  # the message that breaks it goes from P2 to P3
    {"do": "snapshot", "at": "P1"},
    {"do": "deliver", "from": "P1", "to": "P2", "marker": "s1"},
    {"do": "send", "from": "P2", "to": "P3", "label": "x"},
    {"do": "deliver", "from": "P2", "to": "P3", "msg": "x", "label": "y"},
    {"do": "run"},
]


# ------------------------------------------------------------------ diagnosis


def test_the_hand_written_break_is_a_red_message_accepted_in_a_white_action():
    found = diagnose(run_scenario(load_scenario(SCENARIOS / "non-fifo-breaks.json")))
    assert found is not None
    assert (found.kind, found.message, found.channel) == (RED_IN_WHITE, "late", "P1->P2")
    assert "overtook the marker on P1->P2" in found.explanation


def test_a_marker_that_overtakes_a_white_message_loses_it():
    sim = run_scenario(load_scenario(SCENARIOS / "05-marker-overtakes-message.json"))
    found = diagnose(sim)
    assert found is not None
    assert (found.kind, found.message) == (MISSED, "early")
    assert "no recorded state holds it" in found.explanation


def test_a_right_snapshot_has_nothing_to_diagnose():
    assert diagnose(run_scenario(load_scenario(SCENARIOS / "worked-example.json"))) is None


def test_a_red_message_that_reaches_a_recording_process_before_the_marker_is_counted_twice():
    found = diagnose(run_scenario(_scenario(RECORDED_AS_IN_TRANSIT)))
    assert found is not None
    assert (found.kind, found.message, found.channel) == (RED_RECORDED, "m", "P1->P2")


def test_fifo_runs_never_break_and_non_fifo_runs_break_in_all_three_ways():
    assert tally(complete(3, fifo=True), range(60), n_actions=5) == {"right": 60}
    counts = tally(complete(3, fifo=False), range(60), n_actions=5)
    assert counts["right"] > 0
    assert all(counts[kind] > 0 for kind in (RED_IN_WHITE, RED_RECORDED, MISSED)), counts


def test_the_commentary_replays_a_run_without_changing_it():
    sim = run_scenario(load_scenario(SCENARIOS / "non-fifo-breaks.json"))
    before = sim.time
    lines = narrate(sim)
    assert sim.time == before == len(lines)
    assert lines[0].startswith(
        "[1] P1 starts snapshot s1: it records its state (no events yet; state 2)"
    )
    assert "delivers message late to P2 as event early-receive. P2 has not recorded yet" in lines[2]


# ------------------------------------------------------------------ the try-it


def _scenario(steps):
    doc = {"processes": ["P1", "P2"], "fifo": False, "steps": [*steps, {"do": "run"}]}
    return parse_scenario(doc)


@pytest.mark.parametrize("steps", [OVERTAKING_MESSAGE, THREE_PROCESSES])
def test_a_run_where_a_message_overtakes_the_marker_breaks_and_the_message_is_named(steps):
    fb = check_breaking_run(steps)
    assert fb.ok
    assert RED_IN_WHITE in fb.message
    name = steps[-2 if steps[-1]["do"] == "run" else -1]["msg"]
    assert f"Message {name} " in fb.message


def test_the_try_it_can_ask_for_the_message_to_go_from_p2_to_p3():
    assert check_breaking_run(THREE_PROCESSES, channel="P2->P3").ok
    fb = check_breaking_run(OVERTAKING_MESSAGE, channel="P2->P3")
    assert not fb.ok
    assert "travels on P1->P2, not on P2->P3" in fb.message
    assert "must travel from P2 to P3" in fb.hint and "record first" in fb.hint


def test_a_run_where_the_marker_overtakes_a_message_breaks_too():
    fb = check_breaking_run(OVERTAKING_MARKER)
    assert fb.ok and MISSED in fb.message and "Message m " in fb.message


def test_a_run_where_a_red_message_is_recorded_in_transit_breaks_too():
    fb = check_breaking_run(RECORDED_AS_IN_TRANSIT, kind=RED_RECORDED)
    assert fb.ok and RED_RECORDED in fb.message and "Message m " in fb.message


def test_asking_for_one_kind_of_break_rejects_the_other_with_a_hint():
    fb = check_breaking_run(OVERTAKING_MARKER, kind=RED_IN_WHITE)
    assert not fb.ok
    assert "breaks, but as a white message missed" in fb.message
    assert "overtake a marker" in fb.hint and "'msg'" not in fb.hint  # no recipe


def test_a_run_that_does_not_break_says_so_and_hints_at_overtaking():
    fb = check_breaking_run(
        [{"do": "snapshot", "at": "P1"}, {"do": "send", "from": "P1", "to": "P2"}]
    )
    assert not fb.ok
    assert "is right" in fb.message
    assert "overtake a marker" in fb.hint and "'msg'" not in fb.hint  # no recipe


def test_no_answer_no_snapshot_and_fifo_channels_each_get_their_hint():
    assert check_breaking_run(None).message == "Your run: no answer yet."
    assert "no snapshot" in check_breaking_run([{"do": "internal", "at": "P1"}]).message
    fifo = {"processes": ["P1", "P2"], "fifo": True, "steps": OVERTAKING_MESSAGE[:2]}
    fb = check_breaking_run(fifo)
    assert not fb.ok and "FIFO" in fb.message and "'fifo': False" in fb.hint


def test_a_step_that_cannot_be_played_is_named():
    fb = check_breaking_run([{"do": "deliver", "from": "P1", "to": "P2", "msg": "nope"}])
    assert not fb.ok
    assert "step 1" in fb.message and "'nope' is not in flight" in fb.message


def test_a_run_built_in_the_explorer_is_checked_without_changing_it():
    net = Network(["P1", "P2"], fifo=False)
    sim = Simulator(net, "tokens", {"P1": 2})
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P1", "P2", 1, label="late"))
    sim.step(Deliver(net.channel("P1", "P2"), sim.in_flight("P1->P2")[-1]))
    before = sim.time
    fb = check_breaking_run(sim)
    assert fb.ok and "Message late " in fb.message
    assert sim.time == before  # the learner's run is replayed, not finished in place


def test_each_part_of_the_lesson_states_its_goal_at_the_top():
    from tryit_support import goal_and_minutes, load

    assert "reorder" in goal_and_minutes(load("05a_fifo_matters"))[0]
    assert "reorder" in goal_and_minutes(load("05b_without_fifo"))[0]


#: per try-it of lesson 05b, texts that would give its answer away (regular expressions)
TELLTALES_05B = {
    "lai_yang_record": [r"`early` went into the channel's state", r"\['early'\]",
                        r"Both snapshots hold\s+exactly 2 tokens"],
}  # fmt: skip


def test_lesson_05b_s_try_it_is_not_given_away_before_it_or_right_after_it():
    from tryit_support import find_try_it, given_away, load, try_it_variables

    lesson = load("05b_without_fifo")
    assert try_it_variables(lesson) == list(TELLTALES_05B)
    found = find_try_it(lesson, "lai_yang_record")
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, TELLTALES_05B["lai_yang_record"]) == []


def test_the_05b_telltales_would_catch_the_answer_where_the_lesson_or_its_check_gives_it():
    from tryit_support import load, shown

    from snapshotlib.course.lesson_05 import check_lai_yang_record

    right = check_lai_yang_record({"P2": 0, "P1->P2": ["early"]})
    assert right.ok
    text = "\n".join(shown(c) for c in load("05b_without_fifo")["cells"]) + right.message
    assert all(re.search(p, text) for p in TELLTALES_05B["lai_yang_record"])


@pytest.mark.parametrize(
    "answer",
    [{"P2": 0, "P1->P2": []}, {"P2": 1, "P1->P2": ["early"]}, {"P2": 0, "P1->P2": "early"}],
)
def test_a_wrong_lai_yang_prediction_gets_a_hint_and_the_answer_only_folded(answer):
    from snapshotlib.course.lesson_05 import check_lai_yang_record

    fb = check_lai_yang_record(answer)
    assert not fb.ok and fb.hint and "['early']" in fb.answer
    assert "early" not in fb.message and "early" not in fb.hint


def test_a_lai_yang_prediction_in_the_wrong_shape_says_what_shape_is_wanted():
    from snapshotlib.course.lesson_05 import check_lai_yang_record

    fb = check_lai_yang_record([0, ["early"]])
    assert not fb.ok and 'keys "P2" and "P1->P2"' in fb.message and not fb.answer


def test_the_checks_table_gives_each_verdict_and_the_diagnosis_of_a_break():
    from snapshotlib.course.lesson_05 import checks_table

    sim = run_scenario(load_scenario(SCENARIOS / "05-marker-overtakes-message.json"))
    table = checks_table(sim, "s1")
    assert table.column("check") == ["cut", "Dijkstra", "tokens", "diagnosis"]
    assert table.row("diagnosis")["verdict"].startswith("a white message missed:")
    assert table.row("Dijkstra")["verdict"].startswith("0 inversion(s)")  # the colours hold
    right = checks_table(run_scenario(load_scenario(SCENARIOS / "worked-example.json")))
    assert right.column("check") == ["cut", "Dijkstra"]  # events app: no tokens, no break


def test_the_commentary_becomes_one_row_per_step():
    from snapshotlib.course.lesson_05 import steps_table

    sim = run_scenario(load_scenario(SCENARIOS / "non-fifo-breaks.json"))
    lines = narrate(sim)
    table = steps_table(lines)
    assert table.column("step") == [str(k) for k in range(1, len(lines) + 1)]
    assert table.rows[0][1].startswith("P1 starts snapshot s1")

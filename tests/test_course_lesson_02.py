"""Lesson 02 (Chandy–Lamport step by step): its text views and its try-it checks.

The lesson's runs are the scenarios ``examples/scenarios/02-*.json``; the checks must
accept the right answer, refuse the typical wrong ones with a hint that names the rule,
and never change the run they are asked about.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from tryit_support import find_try_it, given_away, goal_and_minutes, load, shown, try_it_variables

from snapshotlib import Network, Send, Simulator, StartSnapshot
from snapshotlib.course import lesson_02
from snapshotlib.formats.scenario import load_scenario, run_scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "examples" / "scenarios"


def run(name: str, until: int | None = None) -> Simulator:
    return run_scenario(load_scenario(SCENARIOS / f"02-{name}.json"), until=until)


# ------------------------------------------------------------- the walk-through


def test_the_initiator_records_sends_markers_first_and_records_every_input():
    text = lesson_02.status(run("step-by-step", until=4))  # P1 initiated, then sent b
    assert "P1       red     7    8         recording P2->P1, P3->P1" in text
    assert "P1->P2   x(2), marker s1, b(1)" in text  # sent before: ahead; after: behind


def test_a_first_marker_closes_its_channel_empty_and_opens_the_other_inputs():
    text = lesson_02.status(run("step-by-step", until=5))  # P3's first marker, from P1
    assert "P3       red     27   27        recording P2->P3" in text
    assert "P1->P3   -                       closed: empty" in text
    assert "P3->P1   y(3), marker s1" in text  # P3's marker goes behind what it sent


def test_a_later_marker_closes_its_channel_with_what_arrived_since_recording():
    text = lesson_02.status(run("step-by-step", until=7))
    assert "P3->P1   -                       closed: y(3)" in text


def test_each_process_finishes_when_a_marker_came_on_every_input():
    text = lesson_02.parts_done(run("step-by-step"))
    assert text.splitlines() == [
        "P2 finished its part at action 11: P2 accepts the marker s1 from P1",
        "P3 finished its part at action 13: P3 accepts the marker s1 from P2",
        "P1 finished its part at action 15: P1 accepts the marker s1 from P2",
    ]
    assert "still waiting for markers: P1, P2, P3" in lesson_02.parts_done(
        run("step-by-step", until=4)
    )


def test_the_assembled_snapshot_holds_every_token():
    text = lesson_02.snapshot_text(run("step-by-step"))
    assert text.startswith("snapshot s1, initiated by P1: complete")
    assert "P1->P2: x(2)" in text and "P2->P1: z(4)" in text and "P3->P1: y(3)" in text
    assert text.endswith("60 tokens recorded (51 in processes, 9 in transit) = 60 at the start")


def test_two_initiators_make_one_snapshot():
    sim = run("two-initiators")
    assert lesson_02.snapshot_text(sim).startswith("snapshot s1, initiated by P1, P3: complete")


def test_concurrent_snapshots_are_kept_apart_by_id():
    sim = run("two-snapshots")
    assert "P1->P2: empty" in lesson_02.snapshot_text(sim, "s1")
    assert "P1->P2: m(1)" in lesson_02.snapshot_text(sim, "s2")


# ------------------------------------------------- the state that never occurred


def test_the_recorded_state_occurs_at_no_moment_of_the_run():
    sim = run("never-occurred")
    assert lesson_02.occurrences(sim) == []
    assert lesson_02.states_table(sim).endswith(
        "the recorded state occurred at no moment of the run"
    )


def test_it_is_the_state_after_the_white_actions_of_the_reordered_run():
    text = lesson_02.reordering_text(run("never-occurred"))
    assert "inversions (a red action before a white one): 1" in text
    lines = text.splitlines()
    recorded = next(line for line in lines if "<- s1's recorded state" in line)
    assert recorded.split()[:6] == ["1", "P1", "sends", "b(1)", "to", "P2"]
    assert lines[-2].endswith("<- the run's final state")
    assert "Dijkstra's argument holds" in lines[-1]


def test_a_state_that_did_occur_is_found():
    sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 1})
    sim.step(StartSnapshot("P1", "s1"))
    sim.run()
    assert lesson_02.occurrences(sim) == [0, 1, 2, 3]


def test_replay_copies_a_run_without_touching_it():
    sim = run("step-by-step", until=9)
    copy = lesson_02.replay(sim)
    copy.run()
    assert sim.time == 9 and copy.time == 15
    assert copy.trace.actions[:9] == sim.trace.actions


# ----------------------------------------------------------------- try it 1


@pytest.fixture
def before_p2s_first_marker() -> Simulator:
    return run("step-by-step", until=8)


@pytest.mark.parametrize("answer", [["P1->P2"], "P1->P2", ("P1→P2",), {"P1 -> P2"}])
def test_the_right_channels_pass_in_any_reasonable_spelling(before_p2s_first_marker, answer):
    feedback = lesson_02.check_recording_after_marker(answer, before_p2s_first_marker, "P3->P2")
    assert feedback.ok
    assert "P3->P2 is closed at once, recorded empty" in feedback.message


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (["P1->P2", "P3->P2"], "P3->P2 brought the marker"),
        (["P2->P1", "P2->P3"], "records the channels that lead into it"),
        (["P1->P3"], "Only the channels that lead into P2"),
        ([], "every input channel except the one the marker came on"),
        (None, "List the channels by name"),
        (["P1P2"], "Write channels as 'SRC->DST'"),
    ],
)
def test_typical_wrong_channels_get_a_hint(before_p2s_first_marker, answer, hint):
    feedback = lesson_02.check_recording_after_marker(answer, before_p2s_first_marker, "P3->P2")
    assert not feedback.ok
    assert hint in feedback.hint
    if answer is not None:
        assert "recording P1->P2" not in str(feedback)
        assert feedback.answer.startswith("['P1->P2']: Right after its first s1 marker P2")
    else:
        assert not feedback.answer


def test_the_question_is_refused_when_the_head_is_no_first_marker(before_p2s_first_marker):
    with pytest.raises(ValueError, match="not a marker"):
        lesson_02.check_recording_after_marker([], before_p2s_first_marker, "P1->P2")
    with pytest.raises(ValueError, match="not a first marker"):
        lesson_02.check_recording_after_marker([], run("step-by-step", until=10), "P1->P2")


def test_checking_leaves_the_run_as_it_was(before_p2s_first_marker):
    before = list(before_p2s_first_marker.trace.actions)
    lesson_02.check_recording_after_marker(["P1->P2"], before_p2s_first_marker, "P3->P2")
    lesson_02.check_channel_state(["x"], run("step-by-step", until=9), "P1->P2")
    assert before_p2s_first_marker.trace.actions == before


# ----------------------------------------------------------------- try it 2


@pytest.fixture
def after_p2s_first_marker() -> Simulator:
    return run("step-by-step", until=9)


def test_the_message_ahead_of_the_marker_is_the_channel_state(after_p2s_first_marker):
    feedback = lesson_02.check_channel_state(["x"], after_p2s_first_marker, "P1->P2")
    assert feedback.ok and feedback.message == "Right: P2 will record x on P1->P2."


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (["x", "b"], "b was sent after P1 recorded for s1, so it travels behind"),
        ([], "Something is missing. Which messages on P1->P2 were sent before P1 recorded"),
        (["b"], "b was sent after P1 recorded"),
        (["marker"], "markers are never recorded"),
        (None, "Give the labels of the messages"),
    ],
)
def test_typical_wrong_channel_states_get_a_hint(after_p2s_first_marker, answer, hint):
    feedback = lesson_02.check_channel_state(answer, after_p2s_first_marker, "P1->P2")
    assert not feedback.ok
    assert hint in feedback.hint
    assert "will record x" not in str(feedback) and "x was sent before" not in str(feedback)
    if answer is not None:
        assert feedback.answer.startswith("['x']: P2 will record x on P1->P2. x was sent before")


def test_a_message_received_before_recording_is_part_of_the_receivers_state():
    sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 1})
    sim.step(Send("P1", "P2", 1, label="early"))
    sim.run()
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(StartSnapshot("P2", "s1"))
    feedback = lesson_02.check_channel_state(["early"], sim, "P1->P2")
    assert not feedback.ok
    assert "arrived before P2 recorded for s1" in feedback.hint


def test_the_order_of_a_channel_state_matters():
    sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 2})
    sim.step(Send("P1", "P2", 1, label="u"))
    sim.step(Send("P1", "P2", 1, label="v"))
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(StartSnapshot("P2", "s1"))
    assert lesson_02.check_channel_state(["u", "v"], sim, "P1->P2").ok
    feedback = lesson_02.check_channel_state(["v", "u"], sim, "P1->P2")
    assert not feedback.ok and "in the order the messages were sent" in feedback.hint


def test_an_unsettled_channel_state_is_not_asked(before_p2s_first_marker):
    feedback = lesson_02.check_channel_state(["x"], before_p2s_first_marker, "P1->P2")
    assert not feedback.ok and "not settled yet: P2 has not recorded" in feedback.message


# ----------------------------------------------------------------- try it 3


@pytest.fixture
def two_snapshots_under_way() -> Simulator:
    return run("two-snapshots", until=3)


@pytest.mark.parametrize("answer", [["s2"], "s2", {"s2"}])
def test_m_is_in_transit_for_s2_only(two_snapshots_under_way, answer):
    assert lesson_02.check_in_transit(answer, two_snapshots_under_way, "m").ok


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (["s1", "s2"], "m was sent after P1 recorded for s1"),
        (["s1"], "m was sent after P1 recorded for s1"),
        ([], "Something is missing. For each snapshot, ask"),
        (["s3"], "The snapshots are s1, s2"),
        (None, "Give snapshot ids"),
    ],
)
def test_typical_wrong_snapshot_ids_get_a_hint(two_snapshots_under_way, answer, hint):
    feedback = lesson_02.check_in_transit(answer, two_snapshots_under_way, "m")
    assert not feedback.ok
    assert hint in feedback.hint
    assert "by s2" not in str(feedback) and "for s2 and arrives" not in str(feedback)
    if answer is not None:
        assert feedback.answer.startswith("['s2']: m is recorded in transit by s2.")


def test_an_unknown_message_is_a_mistake_in_the_question(two_snapshots_under_way):
    with pytest.raises(ValueError, match="no message labelled 'q'"):
        lesson_02.check_in_transit(["s1"], two_snapshots_under_way, "q")


# ----------------------------------------------------------------- try it 4


def test_the_recorded_state_of_the_first_run_never_occurred():
    full = run("step-by-step")
    right = lesson_02.check_occurred(False, full)
    assert right.ok and "occurred at no moment of the run" in right.message
    wrong = lesson_02.check_occurred(True, full, hint="Where were y and b?")
    assert not wrong.ok and str(wrong) == "✗ Not quite. Hint: Where were y and b?"
    assert wrong.answer.startswith("False: the recorded state occurred at no moment")
    blank = lesson_02.check_occurred(None, full)
    assert not blank.ok and "no answer yet" in blank.message.lower() and not blank.answer
    assert not lesson_02.check_occurred("no", full).ok


# ------------------------------------------------------------- the stored lesson

NOTEBOOK = "02_chandy_lamport"


@pytest.fixture(scope="module")
def lesson() -> dict[str, Any]:
    return load(NOTEBOOK)


def telltales() -> dict[str, list[str]]:
    """Per try-it, texts that would give its answer away (regular expressions)."""
    answers = lesson_02.expected_answers()
    (recorded,) = answers["p2_recording"]
    (state,) = answers["p1_p2_state"]
    (transit,) = answers["m_in_transit_for"]
    assert answers["s1_occurred"] is False
    return {
        "p2_recording": [
            rf"P2 +red .*recording {recorded}",
            rf"P2 is recording {recorded}",
            rf"\[['\"]{recorded}['\"]\]",
        ],
        "p1_p2_state": [
            rf"P1->P2 .*closed: {state}\(",
            rf"(?m)P1->P2:? +{state}\(\d+\)$",
            rf"P2 will record {state}\b",
            rf"\[['\"]{state}['\"]\]",
        ],
        "m_in_transit_for": [
            r"P1->P2:? +m\(1\)",
            rf"in transit by {transit}",
            rf"\[['\"]{transit}['\"]\]",
        ],
        "s1_occurred": [r"\bnever occurred", r"occurred at no moment", r"It never did"],
    }


def test_every_try_it_has_an_expected_answer_that_its_check_accepts(lesson):
    answers = lesson_02.expected_answers()
    assert try_it_variables(lesson) == list(answers) == list(telltales())
    assert lesson_02.check_recording_after_marker(
        answers["p2_recording"], run("step-by-step", until=8), "P3->P2"
    ).ok
    assert lesson_02.check_channel_state(
        answers["p1_p2_state"], run("step-by-step", until=9), "P1->P2"
    ).ok
    assert lesson_02.check_in_transit(
        answers["m_in_transit_for"], run("two-snapshots", until=3), "m"
    ).ok
    assert lesson_02.check_occurred(answers["s1_occurred"], run("step-by-step")).ok


@pytest.mark.parametrize("variable", list(telltales()))
def test_no_try_it_is_given_away_before_it_or_right_after_it(lesson, variable):
    found = find_try_it(lesson, variable)
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, telltales()[variable]) == []


def test_the_telltales_would_catch_each_answer_where_the_lesson_reveals_it(lesson):
    whole = "\n".join(shown(c) for c in lesson["cells"])
    for variable, patterns in telltales().items():
        if variable == "p2_recording":  # told only by the check, when right
            whole_or_check = lesson_02.check_recording_after_marker(
                ["P1->P2"], run("step-by-step", until=8), "P3->P2"
            ).message
        else:
            whole_or_check = whole
        assert any(re.search(p, whole_or_check) for p in patterns), variable
    assert re.search(telltales()["p2_recording"][0], lesson_02.status(run("step-by-step", 9)))


def test_the_lesson_never_drives_a_widget_it_asks_the_learner_to_use(lesson):
    code = "\n".join("".join(c["source"]) for c in lesson["cells"] if c["cell_type"] == "code")
    for call in ("step_once(", ".button(", ".undo(", ".reset(", ".take("):
        assert call not in code


def test_the_lesson_states_one_goal_at_the_top(lesson):
    goal, _ = goal_and_minutes(lesson)
    assert "rules" in goal
    # a short lesson: its prose is held to 2,500 words (test_lesson_times), its code here
    # (cells of prose split for the slides and presenter's notes do not make it longer,
    # nor does the concept check at its end, which is questions, not code to read)
    code = [c for c in lesson["cells"] if c["cell_type"] == "code"]
    assert sum("concept_check(" not in "".join(c["source"]) for c in code) <= 20

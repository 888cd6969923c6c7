"""Lesson 03's helpers and try-it checks, on the worked example with events A..J."""

from __future__ import annotations

import re

import pytest
from tryit_support import find_try_it, given_away, goal_and_minutes, load, shown, try_it_variables

from snapshotlib.course.lesson_03 import (
    SCENARIOS,
    causal_history,
    channel_name,
    check_c21_state,
    check_p2_events,
    describe_step,
    expected_answers,
    in_flight,
    narrate,
    snapshot_text,
    token_account,
    worked_example,
)
from snapshotlib.formats.scenario import load_scenario


@pytest.fixture(scope="module")
def sim():
    return worked_example()


@pytest.fixture(scope="module")
def snap(sim):
    return sim.snapshot("s1")


# ------------------------------------------------------------ the walk-through


def test_each_scenario_step_is_one_action_so_the_narration_numbers_match_the_clicks():
    scenario = load_scenario(SCENARIOS / "worked-example.json")
    sim = scenario.simulator()
    lines = []
    for step in scenario.steps:
        sim.step(step.resolve(sim) if hasattr(step, "resolve") else step)
        lines.append(describe_step(sim))
    assert [line.split("]")[0] for line in lines] == [f"[{k}" for k in range(1, 18)]


def test_the_narration_follows_the_worked_example(sim):
    lines = []
    while sim.time:
        lines.append(describe_step(sim))
        sim.undo()
    while sim.redo():
        pass
    lines.reverse()
    assert lines[3].startswith("[4] P1 starts snapshot s1: it records its state (A, B)")
    assert "sends a marker on C12 and C13 and starts recording C21 and C31" in lines[3]
    assert "at P3 on C13, its first: P3 records its state (I), records C13 as empty" in lines[4]
    assert "P1 stops recording C31, whose state is empty" in lines[5]
    assert "P2 records its state (F, G, H), records C32 as empty" in lines[10]
    assert "P2 stops recording C12, whose state is empty" in lines[11]
    assert "as event D. P1 is recording C21, so H goes into C21's state" in lines[12]
    assert "P1 stops recording C21, whose state is H" in lines[13]
    assert "P3 stops recording C23, whose state is empty" in lines[15]
    assert lines[15].endswith("and so is the whole snapshot.")
    assert "already recorded, so this event is not in the snapshot" in lines[16]


def test_before_any_action_the_narration_says_so():
    scenario = load_scenario(SCENARIOS / "worked-example.json")
    assert describe_step(scenario.simulator()) == "[0] nothing has happened yet"


def test_channels_are_named_as_in_lecture_notes():
    assert channel_name("P2->P1") == "C21"
    assert channel_name("alice->bob") == "alice->bob"


# ------------------------------------------------------------- the recorded snapshot


def test_the_recorded_snapshot_as_text_lists_every_process_and_channel(sim):
    text = snapshot_text(sim)
    assert "  P1: A, B\n  P2: F, G, H\n  P3: I\n" in text
    assert "  C21 (P2->P1): H (sent at H, received at D)" in text
    assert text.count(": empty") == 5


def test_d_is_not_recorded_because_c_happens_before_it_and_c_is_after_p1_recorded(sim, snap):
    history = causal_history(sim, "D")
    assert "C" in history and "H" in history
    assert "C" not in snap.processes["P1"].events
    assert "D" not in snap.processes["P1"].events


def test_causal_history_rejects_an_unknown_label(sim):
    with pytest.raises(ValueError, match="no event labelled 'Z'"):
        causal_history(sim, "Z")


def test_with_a_token_the_channel_state_keeps_the_total_at_one():
    text = token_account(worked_example("03-worked-example-token.json"))
    assert "without the channel states: 0 tokens: the token has vanished" in text
    assert "with the channel states: 1 token, as many as the system holds (1)" in text
    assert "C21 (P2->P1) 1 (message H)" in text


# ------------------------------------------------------------------ try it: P2


@pytest.mark.parametrize("answer", [["F", "G", "H"], ("F", "G", "H"), "F, G, H", "FGH", "f g h"])
def test_p2s_recorded_events_are_f_g_h_however_written(answer, snap):
    assert check_p2_events(answer, snap).ok


def test_the_p2_check_runs_the_worked_example_itself_by_default():
    assert check_p2_events(["F", "G", "H"]).ok


def test_no_answer_yet_is_not_right_and_says_how_to_answer(snap):
    fb = check_p2_events(None, snap)
    assert not fb.ok and "no answer yet" in fb.message


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        ([], "which marker reaches P2 first"),
        (["F", "G"], "on each channel into p2, what is ahead of the marker?"),
        (["F"], "on each channel into p2, what is ahead of the marker?"),
        (["G", "F", "H"], "wrong order"),
        (["A", "B", "F", "G", "H"], "A, B are not P2's"),
        (["I", "F", "G", "H"], "I is not P2's"),
    ],
)
def test_typical_wrong_predictions_for_p2_get_a_hint_that_points_at_the_mistake(answer, hint, snap):
    fb = check_p2_events(answer, snap)
    assert not fb.ok
    assert hint.lower() in fb.hint.lower()
    assert "F, G, H" not in fb.hint and "P3's marker" not in str(fb)
    assert fb.answer.startswith("F, G, H: P2 records on its first marker.")


# ----------------------------------------------------------------- try it: C21


@pytest.mark.parametrize("answer", [["H"], "H", ("h",)])
def test_c21_holds_the_message_sent_at_h(answer, snap):
    assert check_c21_state(answer, snap).ok


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        ([], "does anything arrive on c21 before p2's marker closes it?"),
        (["D"], "name a message after the event that sent it"),
        (["H", "D"], "lists messages"),
        (["B"], "only a message that p2 sent to p1"),
    ],
)
def test_typical_wrong_predictions_for_c21_get_a_hint(answer, hint, snap):
    fb = check_c21_state(answer, snap)
    assert not fb.ok
    assert hint in fb.hint.lower()
    assert not re.search(r"\bH\b", fb.message.replace(", ".join(answer), "") + fb.hint)
    assert fb.answer.startswith("H: P2 sent H to P1 at click 10, before it recorded")


def test_feedback_shows_as_text_with_the_hint_only_when_wrong(snap):
    assert str(check_c21_state(["H"], snap)).startswith("✓ C21's recorded state: right, H.")
    assert "Hint:" in str(check_c21_state([], snap))


# --------------------------------------------------------- the lesson's commentary


def test_the_commentary_comes_from_a_run_of_its_own_one_line_per_click():
    text = str(narrate(1, 17))
    starts = [line.split("]")[0] for line in text.splitlines() if line.startswith("[")]
    assert starts == [f"[{k}" for k in range(1, 18)]
    assert all(len(line) <= 88 for line in text.splitlines())
    page = narrate(7, 10)._repr_html_()
    assert page.count("<tr>") == 5 and "P2 has not recorded yet" in page


def test_what_travels_on_each_channel_is_listed_head_first():
    assert in_flight(worked_example(until=6)).splitlines()[0] == "C12 (P1->P2): B, marker"
    assert "C21 (P2->P1): H, marker" in in_flight(worked_example(until=11))


# ------------------------------------------------------------- the stored lesson

NOTEBOOK = "03_worked_example"


@pytest.fixture(scope="module")
def lesson():
    return load(NOTEBOOK)


def telltales() -> dict[str, list[str]]:
    """Per try-it, texts that would give its answer away (regular expressions)."""
    p2 = expected_answers()["p2_prediction"]
    (c21,) = expected_answers()["c21_prediction"]
    listed = ", ".join(p2)
    quoted = r",\s*".join(rf"['\"]{x}['\"]" for x in p2)
    return {
        "p2_prediction": [
            rf"P2: {listed}",
            rf"records its state \({listed}\)",
            rf"P2 records {', '.join(p2[:-1])} and {p2[-1]}",
            r"all three events will be in its recorded state",
            r"(delivers|brings) \**P3's\** marker",  # which marker comes first
            rf"after {p2[-1]}\b.*P2|P2.*\bafter {p2[-1]}\b",
            rf"\[{quoted}\]",
        ],
        "c21_prediction": [
            rf"C21 \(P2->P1\): {c21}\b",
            rf"whose state is {c21}\b",
            rf"recorded state is \*\*{c21}\*\*",
            rf"{c21} goes into C21's state",
            rf"on C21, message {c21}",
            rf"\[['\"]{c21}['\"]\]",
        ],
    }


def test_every_try_it_has_an_expected_answer_that_its_check_accepts(lesson):
    answers = expected_answers()
    assert try_it_variables(lesson) == list(answers) == list(telltales())
    assert check_p2_events(answers["p2_prediction"]).ok
    assert check_c21_state(answers["c21_prediction"]).ok


@pytest.mark.parametrize("variable", list(telltales()))
def test_no_try_it_is_given_away_before_it_or_right_after_it(lesson, variable):
    found = find_try_it(lesson, variable)
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, telltales()[variable]) == []


def test_the_telltales_would_catch_each_answer_where_the_lesson_reveals_it(lesson):
    whole = "\n".join(shown(c) for c in lesson["cells"])
    for variable, patterns in telltales().items():
        assert any(re.search(p, whole) for p in patterns), variable


def test_the_lesson_never_clicks_the_explorer_it_asks_the_learner_to_click(lesson):
    code = "\n".join("".join(c["source"]) for c in lesson["cells"] if c["cell_type"] == "code")
    for call in ("step_once(", ".button(", ".click(", ".undo(", ".reset(", ".take("):
        assert call not in code
    assert "ex.sim" not in code and "ex.network_view" not in code


def test_the_lesson_states_its_goal_and_time_at_the_top(lesson):
    goal, _ = goal_and_minutes(lesson)
    assert "predict" in goal

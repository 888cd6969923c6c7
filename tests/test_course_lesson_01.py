"""Lesson 01, global state without a global clock: its runs and the checks of its try-its."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from tryit_support import (
    find_try_it,
    given_away,
    goal_and_minutes,
    load,
    shown,
    try_it_variables,
)

from snapshotlib.checks import (
    check_snapshot,
    happens_before,
    lamport_clocks,
    vector_clocks,
)
from snapshotlib.course import Feedback
from snapshotlib.course.lesson_01 import (
    LAMPORT_EVENTS,
    RELATION_PAIRS,
    causal_chain,
    check_inconsistent_frontier,
    check_lamport_times,
    check_orphan_message,
    check_relations,
    check_slowest_rate,
    check_smallest_cut,
    clock_timeline,
    describe_execution,
    event_index,
    expected_answers,
    lamport_table,
    lamport_time,
    offending_messages,
    relation,
    rerun_with_clocks,
    slowest_rate,
    small_execution,
)
from snapshotlib.formats.scenario import Scenario, load_scenario, run_scenario

DRIFT = Path(__file__).resolve().parent.parent / "examples" / "scenarios" / "clock-drift.json"


@pytest.fixture(scope="module")
def drift_scenario() -> Scenario:
    return load_scenario(DRIFT)


# ------------------------------------------------------------ the clock snapshot


def test_the_timeline_shows_p1_recording_before_the_send_and_p2_after_the_receipt(
    drift_scenario: Scenario,
) -> None:
    lines = clock_timeline(run_scenario(drift_scenario)).splitlines()
    where = {line.split()[0]: k for k, line in enumerate(lines) if "records its state" in line}
    send = next(k for k, line in enumerate(lines) if "token (send to P2)" in line)
    receipt = next(k for k, line in enumerate(lines) if "got-token (receive token)" in line)
    assert where["P1"] == send - 1
    assert where["P2"] > receipt
    assert "P2 records its state: its clock reads 3" in lines[where["P2"]]


def test_the_timeline_needs_a_run_under_the_clock_snapshot() -> None:
    with pytest.raises(TypeError, match="clock snapshot"):
        clock_timeline(small_execution())


def test_the_token_is_the_message_received_but_never_sent(drift_scenario: Scenario) -> None:
    feedback = check_orphan_message(run_scenario(drift_scenario), "token")
    assert isinstance(feedback, Feedback) and feedback.ok
    assert "got-token" in feedback.message and "after P1 recorded" in feedback.message


def test_naming_the_receive_event_instead_of_the_message_gets_a_hint(
    drift_scenario: Scenario,
) -> None:
    feedback = check_orphan_message(run_scenario(drift_scenario), "got-token")
    assert not feedback.ok
    assert "named after the event that sends it" in feedback.hint
    assert "token" not in str(feedback).replace("got-token", "")  # the answer stays folded
    assert feedback.answer.startswith("token: message token is received")


@pytest.mark.parametrize("answer", ["a2", "b3", "tokens"])
def test_an_event_or_a_made_up_name_is_not_a_message(drift_scenario: Scenario, answer: str) -> None:
    feedback = check_orphan_message(run_scenario(drift_scenario), answer)
    assert not feedback.ok
    assert "not a message of this run; its messages are token" in feedback.message


def test_no_answer_yet_gets_a_hint_not_a_verdict(drift_scenario: Scenario) -> None:
    for placeholder in (None, ...):
        feedback = check_orphan_message(run_scenario(drift_scenario), placeholder)
        assert not feedback.ok and feedback.message == "No answer yet." and feedback.hint


@pytest.mark.parametrize(
    ("rate", "consistent"), [(0.5, False), (0.7, False), (0.75, True), (1.0, True), (2.0, True)]
)
def test_p2s_clock_may_lag_only_until_the_token_arrives(
    drift_scenario: Scenario, rate: float, consistent: bool
) -> None:
    # the token lands at step 4: P2 must read 3 by then, so its rate must be >= 3/4
    sim = rerun_with_clocks(drift_scenario, rate={"P2": rate})
    assert check_snapshot(sim, "clock").ok is consistent
    assert sim.algorithm.rate == {"P1": 1.0, "P2": rate}  # P1 keeps its clock


def test_the_slowest_clock_that_works_is_found_by_rerunning(drift_scenario: Scenario) -> None:
    assert slowest_rate(drift_scenario) == 0.75
    assert check_slowest_rate(drift_scenario, 0.75).ok
    assert check_slowest_rate(drift_scenario, 3 / 4).ok


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (0.5, "still inconsistent"),
        (0.74, "still inconsistent"),
        (1, "a slower clock works too"),
        (0.8, "a slower clock works too"),
        ("fast", "is not a rate"),
        (-1, "is not a rate"),
    ],
)
def test_a_wrong_rate_gets_a_hint_and_the_answer_folded(
    drift_scenario: Scenario, answer: Any, says: str
) -> None:
    feedback = check_slowest_rate(drift_scenario, answer)
    assert not feedback.ok and says in feedback.message
    assert "0.75" not in str(feedback)
    if says != "is not a rate":
        assert feedback.answer.startswith("0.75: P2's clock must read the agreed time by step 4")


def test_the_slowest_rate_has_no_answer_until_one_is_written(drift_scenario: Scenario) -> None:
    feedback = check_slowest_rate(drift_scenario, None)
    assert not feedback.ok and "no answer yet" in feedback.message and feedback.hint
    assert not feedback.answer


def test_on_a_consistent_clock_snapshot_there_is_no_orphan_to_name(
    drift_scenario: Scenario,
) -> None:
    feedback = check_orphan_message(rerun_with_clocks(drift_scenario, rate={"P2": 1}), "token")
    assert not feedback.ok and "consistent" in feedback.message


def test_rerun_with_clocks_refuses_a_chandy_lamport_scenario() -> None:
    worked = load_scenario(DRIFT.parent / "worked-example.json")
    with pytest.raises(ValueError, match="clock snapshot"):
        rerun_with_clocks(worked, rate={"P1": 1})


# ------------------------------------------------------------- happens-before


def test_the_small_execution_is_three_processes_with_named_events() -> None:
    assert describe_execution(small_execution()).splitlines() == [
        "P1: a1 · a2 (send to P2) · a3 (receive c2 from P3) · a4",
        "P2: b1 · b2 (receive a2 from P1) · b3 (send to P3) · b4",
        "P3: c1 · c2 (send to P1) · c3 (receive b3 from P2)",
    ]


def test_a_chain_of_messages_across_processes_orders_events() -> None:
    sim = small_execution()
    assert relation(sim, "a1", "c3") == "before"
    assert relation(sim, "c3", "a1") == "after"
    assert causal_chain(sim, "a1", "c3") == ["a1", "a2", "b2", "b3", "c3"]


def test_events_in_time_order_with_no_chain_between_them_are_concurrent() -> None:
    sim = small_execution()
    assert event_index(sim, "b3") < event_index(sim, "a3")  # b3 came first in the run
    assert relation(sim, "b3", "a3") == "concurrent"
    assert causal_chain(sim, "b3", "a3") is None and causal_chain(sim, "a3", "b3") is None


def test_an_unknown_event_name_lists_the_events() -> None:
    with pytest.raises(ValueError, match="no event called 'z9'; the events are a1, c1, a2"):
        event_index(small_execution(), "z9")


RIGHT = {
    ("a1", "c3"): "before",
    ("b1", "c2"): "concurrent",
    ("a3", "b3"): "concurrent",
    ("c3", "b2"): "after",
    ("b4", "c3"): "concurrent",
}


def test_the_right_relations_pass_and_each_is_explained() -> None:
    feedback = check_relations(RIGHT)
    assert feedback.ok
    assert "All 5 right." in feedback.message
    assert "a1 happens before c3: a1 → a2 → b2 → b3 → c3." in feedback.message
    assert "a3 and b3 are concurrent" in feedback.message


def test_calling_a_chain_concurrent_fails_with_a_hint_to_look_for_the_walk() -> None:
    feedback = check_relations({**RIGHT, ("a1", "c3"): "concurrent"})
    assert not feedback.ok
    assert feedback.message == "4 of 5 right; (a1, c3) is not 'concurrent'."
    assert "Look for a walk that changes process" in feedback.hint
    assert "before" not in str(feedback) and "a1 → a2" not in str(feedback)
    assert "(a1, c3): before. a1 happens before c3: a1 → a2 → b2 → b3 → c3." in feedback.answer


def test_taking_time_order_for_causality_fails_with_a_hint() -> None:
    feedback = check_relations({**RIGHT, ("b1", "c2"): "after"})
    assert not feedback.ok
    assert "Coming first in time is not enough" in feedback.hint


def test_getting_the_direction_wrong_fails_without_saying_which_direction_is_right() -> None:
    feedback = check_relations({**RIGHT, ("c3", "b2"): "before"})
    assert not feedback.ok and "Check the direction of your walk" in feedback.hint
    assert "after" not in str(feedback) and "b2 happens before c3" in feedback.answer


def test_the_first_wrong_answer_is_reported_before_a_missing_one() -> None:
    feedback = check_relations({**RIGHT, ("a1", "c3"): None, ("b4", "c3"): "before"})
    assert feedback.message == "3 of 5 right; (b4, c3) is not 'before'."


def test_unanswered_pairs_and_unknown_words_are_named() -> None:
    blank = check_relations(dict.fromkeys(RIGHT))
    assert not blank.ok and blank.message == "No answer yet." and not blank.answer
    assert "'before', 'after', 'concurrent'" in blank.hint
    partly = check_relations({**RIGHT, ("a1", "c3"): None})
    assert not partly.ok and "(a1, c3) has no answer yet" in partly.message
    assert not partly.answer
    odd = check_relations({("a1", "c3"): "earlier"})
    assert not odd.ok and "'earlier' is not one of" in odd.message
    unknown = check_relations({("a1", "d1"): "before"})
    assert not unknown.ok and "no event called 'd1'" in unknown.message
    assert not check_relations({}).ok


# ---------------------------------------------------------------------- cuts


def test_a_receive_inside_with_its_send_outside_is_an_inconsistent_cut() -> None:
    feedback = check_inconsistent_frontier({"P1": 1, "P2": 2, "P3": 0})
    assert feedback.ok
    assert "message a2 (sent by P1 at a2, received by P2 at b2)" in feedback.message


def test_a_consistent_cut_is_not_accepted_as_inconsistent() -> None:
    for frontier in ({"P1": 4, "P2": 4, "P3": 3}, {"P1": 0, "P2": 0, "P3": 0}):
        feedback = check_inconsistent_frontier(frontier)
        assert not feedback.ok and "consistent" in feedback.message
        assert "leave its send outside" in feedback.hint


def test_the_cut_must_be_broken_by_the_message_asked_for() -> None:
    right = check_inconsistent_frontier({"P1": 3, "P2": 0, "P3": 1}, "c2")
    assert right.ok
    assert "message c2 (sent by P3 at c2, received by P1 at a3)" in right.message
    other = check_inconsistent_frontier({"P1": 1, "P2": 2, "P3": 0}, "c2")
    assert not other.ok
    assert other.message == "Inconsistent, but because of a2, not c2."
    assert "Find c2's arrow" in other.hint and "a3" not in str(other)
    assert other.answer.startswith("Any frontier with P1 at least 3 (its receive a3 inside)")
    whole = check_inconsistent_frontier({"P1": 4, "P2": 4, "P3": 3}, "c2")
    assert not whole.ok and "consistent" in whole.message and "a3" not in str(whole)
    assert "e.g. {'P1': 3, 'P2': 0, 'P3': 1}" in whole.answer
    assert check_inconsistent_frontier({"P1": 3, "P2": 0, "P3": 1}, "c2").ok


def test_asking_for_a_message_the_run_does_not_have_is_an_error() -> None:
    with pytest.raises(ValueError, match="no message called 'a1'"):
        check_inconsistent_frontier({"P1": 1, "P2": 2, "P3": 0}, "a1")


def test_every_message_that_breaks_a_cut_is_listed() -> None:
    sim = small_execution()
    assert offending_messages(sim, {"P1": 1, "P2": 2, "P3": 3}) == ["a2", "b3"]
    assert offending_messages(sim, {"P1": 4, "P2": 4, "P3": 3}) == []


@pytest.mark.parametrize(
    ("frontier", "says"),
    [
        (None, "No answer yet."),
        ([1, 2, 0], "A frontier is a dict like"),
        ({"P1": 1, "P2": 2}, "Say how many events of P3"),
        ({"P1": 1, "P2": 2, "P3": 0, "P4": 0}, "P4: not a process"),
        ({"P1": 5, "P2": 2, "P3": 0}, "P1's frontier must be a whole number from 0 to 4"),
        ({"P1": True, "P2": 2, "P3": 0}, "P1's frontier must be a whole number"),
        ({"P1": 1.0, "P2": 2, "P3": 0}, "P1's frontier must be a whole number"),
    ],
)
def test_a_malformed_frontier_is_explained(frontier: object, says: str) -> None:
    for feedback in (
        check_inconsistent_frontier(frontier),
        check_smallest_cut("c3", frontier),
    ):
        assert not feedback.ok and says in feedback.message


def test_the_smallest_consistent_cut_around_an_event_is_its_vector_clock() -> None:
    feedback = check_smallest_cut("c3", {"P1": 2, "P2": 3, "P3": 3})
    assert feedback.ok and "(2, 3, 3)" in feedback.message


def test_every_events_vector_clock_is_the_smallest_cut_that_contains_it() -> None:
    sim = small_execution()
    clocks = vector_clocks(sim.trace, sim.network.processes)
    for i, action in sim.trace.app_actions():
        vc = clocks[i]
        assert vc is not None
        frontier = dict(zip(sim.network.processes, vc, strict=True))
        assert check_smallest_cut(action.label or "", frontier, sim).ok, action.label


def test_a_bigger_consistent_cut_is_told_where_it_can_shrink_but_not_how_far() -> None:
    feedback = check_smallest_cut("c3", {"P1": 4, "P2": 4, "P3": 3})
    assert not feedback.ok
    assert "not the smallest: it can shrink and stay consistent" in feedback.message
    assert "which events of P1 and P2 does c3 not depend on?" in feedback.hint
    assert "by 2" not in str(feedback) and "'P1': 2" not in str(feedback)
    assert feedback.answer.startswith("{'P1': 2, 'P2': 3, 'P3': 3}: c3 and exactly the events")


def test_an_inconsistent_answer_names_the_message_and_the_frontier_its_send_needs() -> None:
    feedback = check_smallest_cut("c3", {"P1": 1, "P2": 3, "P3": 3})
    assert not feedback.ok and "message a2" in feedback.message
    assert "P1's frontier must be at least 2" in feedback.hint


def test_a_cut_without_the_event_is_told_so() -> None:
    feedback = check_smallest_cut("c3", {"P1": 2, "P2": 3, "P3": 2})
    assert not feedback.ok
    assert feedback.message == "c3 is not inside this cut: P3's frontier must be at least 3."


# ------------------------------------------------------------------ Lamport clocks


def test_lamport_times_by_hand_are_checked_against_the_engine() -> None:
    feedback = check_lamport_times({"b2": 3, "c3": 5})
    assert feedback.ok
    assert "max(L(b1), L(a2)) + 1 = max(1, 2) + 1 = 3" in feedback.message
    assert "max(L(c2), L(b3)) + 1 = max(2, 4) + 1 = 5" in feedback.message


def test_an_honest_answer_written_as_arithmetic_or_a_float_is_right() -> None:
    assert check_lamport_times({"b2": max(1, 2) + 1, "c3": 5.0}).ok
    assert check_lamport_times({"c3": 5, "b2": 3, "a1": 1}).ok  # any order, more events


@pytest.mark.parametrize(
    ("answer", "says", "hint"),
    [
        ({"b2": 2, "c3": 5}, "b2: 2 is its place on P2 (its 2nd event)", "what the sender knew"),
        ({"b2": 3, "c3": 4}, "c3: 4 is one short", "then add one"),
        ({"b2": 3, "c3": 9}, "c3: 9 is not its Lamport time", "one more than the larger"),
        ({"b2": (2, 2, 0), "c3": 5}, "looks like a vector clock", "one more than"),
        ({"b2": 3, "c3": "5"}, "'5' is not a whole number", "one more than"),
        ({"b2": 3, "c3": 5.5}, "5.5 is not a whole number", "one more than"),
        ({"b2": True, "c3": 5}, "True is not a whole number", "one more than"),
    ],
)
def test_a_wrong_lamport_time_gets_a_hint_and_the_working_folded(
    answer: dict[str, Any], says: str, hint: str
) -> None:
    feedback = check_lamport_times(answer)
    assert not feedback.ok and says in feedback.message and hint in feedback.hint
    assert feedback.answer is not None and "= 3 (b2 receives a2)" in feedback.answer
    assert "= 3" not in feedback.message and "= 5" not in feedback.message


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (None, "No answer yet"),
        ({"b2": None, "c3": None}, "No answer yet"),
        ({"c3": 5}, "b2 has no answer yet"),
        ({"b2": 3, "x9": 1}, "no event called 'x9'"),
        ("b2=3", "not a dict of event names to times"),
    ],
)
def test_a_missing_or_malformed_lamport_answer_is_explained(answer: Any, says: str) -> None:
    feedback = check_lamport_times(answer)
    assert not feedback.ok and says in feedback.message
    assert not feedback.answer  # nothing tried yet: nothing revealed


def test_the_lessons_lamport_claims_hold_on_its_run(lesson: dict[str, Any]) -> None:
    """What the lesson's text says of Lamport times, checked on the small run."""
    sim = small_execution()
    text = "\n".join(shown(c) for c in lesson["cells"]).replace("\n", " ")
    times = {
        sim.trace.action_name(i): t
        for i, t in enumerate(lamport_clocks(sim.trace, sim.network.processes))
        if t is not None
    }
    assert "a1 and a2 are 1 and 2 on P1, c1 and c2 are 1 and 2 on P3" in text
    assert (times["a1"], times["a2"], times["c1"], times["c2"]) == (1, 2, 1, 2)
    assert "max(L(a2), L(c2)) + 1 = max(2, 2) + 1 = 3" in text
    assert lamport_time(sim, "a3")[1].startswith(
        "L(a3) = max(L(a2), L(c2)) + 1 = max(2, 2) + 1 = 3"
    )
    assert "L(b1) = 1 is smaller than L(a2) = 2, yet b1 and a2 are concurrent" in text
    assert times["b1"] == 1 and times["a2"] == 2 and relation(sim, "b1", "a2") == "concurrent"
    # the clock condition and the total order, on every pair of the run
    clocks = vector_clocks(sim.trace, sim.network.processes)
    order = lamport_table(sim).splitlines()[-1].removeprefix("total order: ").split()
    for x in times:
        for y in times:
            if happens_before(clocks, event_index(sim, x), event_index(sim, y)):
                assert times[x] < times[y] and order.index(x) < order.index(y)
    assert set(LAMPORT_EVENTS) <= set(times)


# ------------------------------------------------------------- the stored lesson

NOTEBOOK = "01_global_state"


@pytest.fixture(scope="module")
def lesson() -> dict[str, Any]:
    return load(NOTEBOOK)


def telltales() -> dict[str, list[str]]:
    """Per try-it, texts that would give its answer away (regular expressions)."""
    answers = expected_answers()
    pairs = [
        rf"{x} (->|→) {y}\b|{y} (->|→) {x}\b|{x} \|\| {y}|{y} \|\| {x}"
        for x, y in answers["relations"]
    ]
    smallest = answers["smallest"]
    return {
        "orphan": [r"message token \(sent by P1 at token, received by P2 at got-token\)"],
        "slowest_rate": [re.escape(f"{answers['slowest_rate']:g}"), r"\b3/4\b"],
        "relations": pairs,
        "broken": [r"message c2 \(sent by P3 at c2, received by P1 at a3\)"],
        "smallest": [
            re.escape(str(tuple(smallest.values()))),
            re.escape(str(smallest)),
        ],
        "lamport": [rf"\b{name}\b \D{{0,3}}{time}\b" for name, time in answers["lamport"].items()]
        + [rf"L\({name}\) = [^.;]*= {time}\b" for name, time in answers["lamport"].items()],
    }


def test_every_try_it_of_the_lesson_has_an_expected_answer_that_its_check_accepts(
    lesson: dict[str, Any],
) -> None:
    answers = expected_answers()
    assert try_it_variables(lesson) == list(answers) == list(telltales())
    drift = load_scenario(DRIFT)
    sim = run_scenario(drift)
    assert check_orphan_message(sim, answers["orphan"]).ok
    assert check_slowest_rate(drift, answers["slowest_rate"]).ok
    assert tuple(answers["relations"]) == RELATION_PAIRS
    assert check_relations(answers["relations"]).ok
    assert check_inconsistent_frontier(answers["broken"], "c2").ok
    assert check_smallest_cut("c3", answers["smallest"]).ok
    assert check_lamport_times(answers["lamport"]).ok


@pytest.mark.parametrize("variable", list(telltales()))
def test_no_try_it_is_given_away_before_it_or_right_after_it(
    lesson: dict[str, Any], variable: str
) -> None:
    found = find_try_it(lesson, variable)
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, telltales()[variable]) == []


def test_the_telltales_would_catch_the_answer_where_it_is_revealed(
    lesson: dict[str, Any],
) -> None:
    """The patterns are not vacuous: each matches the lesson after its try-it, or the
    feedback on the right answer."""
    answers = expected_answers()
    drift = load_scenario(DRIFT)
    right = {
        "orphan": check_orphan_message(run_scenario(drift), answers["orphan"]),
        "slowest_rate": check_slowest_rate(drift, answers["slowest_rate"]),
        "relations": Feedback(True, "a1 → c3 and a3 || b3"),  # as the lesson once printed
        "broken": check_inconsistent_frontier(answers["broken"], "c2"),
        "smallest": check_smallest_cut("c3", answers["smallest"]),
        "lamport": check_lamport_times(answers["lamport"]),
    }
    whole = "\n".join(shown(c) for c in lesson["cells"])
    for variable, patterns in telltales().items():
        text = whole + "\n" + right[variable].message
        assert any(re.search(p, text) for p in patterns), variable


def test_the_lesson_states_its_goal_and_time_at_the_top(lesson: dict[str, Any]) -> None:
    goal, _ = goal_and_minutes(lesson)
    assert "consistent cut" in goal

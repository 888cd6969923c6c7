"""Lesson 04's try-its: inversions, the first legal swap and the illegal swap.

The checkers take any execution and the learner's answer: the right answer passes, and
the typical wrong ones fail with a hint that points at the slip.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from tryit_support import (
    find_try_it,
    given_away,
    goal_and_minutes,
    load,
    shown,
    source,
    try_it_variables,
)

from snapshotlib import Internal, Network, Send, Simulator, StartSnapshot
from snapshotlib.checks import check_commutation
from snapshotlib.course.lesson_04 import (
    MY_RUN,
    PROPOSAL,
    channel_story,
    check_first_swap,
    check_illegal_swap,
    check_inversions,
    coloured_order,
    expected_answers,
    first_illegal_swap,
    first_legal_swap,
    inversions,
    swap_problem,
)
from snapshotlib.formats.scenario import load_scenario, parse_scenario, run_scenario
from snapshotlib.workloads import random_execution, random_strongly_connected

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


def scenario(name: str) -> Simulator:
    return run_scenario(load_scenario(SCENARIOS / f"{name}.json"))


@pytest.fixture
def worked() -> Simulator:
    return scenario("worked-example")


@pytest.fixture
def mine() -> Simulator:
    return run_scenario(parse_scenario(MY_RUN))


# ------------------------------------------------------------------ the facts


def test_the_worked_example_has_three_inversions_all_of_c(worked):
    assert inversions(worked) == 3
    assert first_legal_swap(worked) == ("C", "F")


def test_the_prefilled_execution_has_seven_inversions_and_starts_with_c_and_d(mine):
    assert coloured_order(mine) == (
        "a white · b red · c red · d white · e white · f red · g white · h red"
    )
    assert inversions(mine) == 7
    assert first_legal_swap(mine) == ("c", "d")


def test_the_inversion_count_is_the_number_of_swaps_the_engine_makes():
    for seed in range(20):
        net = random_strongly_connected(4, extra_edges=2, seed=seed)
        sim = random_execution(net, seed=seed, n_actions=30, initiators_per_snapshot=2)
        sid = next(iter(sim.algorithm.records))
        result = check_commutation(sim, sid)
        assert inversions(sim, sid) == result.inversions
        expected = None
        if result.swaps:
            first = result.swaps[0]
            expected = (sim.trace.action_name(first.red), sim.trace.action_name(first.white))
        assert first_legal_swap(sim, sid) == expected
        assert check_inversions(sim, result.inversions, sid).ok


def test_an_execution_already_in_order_has_no_first_swap():
    sim = Simulator(Network(["P", "Q"]))
    sim.step(Internal("Q", "q"))
    sim.step(StartSnapshot("P"))
    sim.step(Internal("P", "p"))
    assert inversions(sim) == 0
    assert first_legal_swap(sim) is None
    assert check_first_swap(sim, ()).ok
    assert not check_first_swap(sim, ("q", "p")).ok


def test_neighbours_of_different_machines_commute_unless_the_first_sends_what_the_second_accepts():
    sim = Simulator(Network(["P", "Q"]))
    sim.step(Send("P", "Q", label="s"))
    sim.step(Internal("P", "p"))
    sim.run()  # receive#2 at Q accepts s
    assert swap_problem(sim.trace, 1, 2) is None
    assert "accepts the message that s sends" in swap_problem(sim.trace, 0, 2)
    assert "both actions of P" in swap_problem(sim.trace, 0, 1)


def test_the_first_illegal_swap_of_the_lessons_proposal_is_i_and_f(worked):
    number, why = first_illegal_swap(worked, PROPOSAL)
    assert number == 4
    assert "F accepts the message that I sends" in why
    assert first_illegal_swap(worked, PROPOSAL[:3]) is None


def test_a_proposal_that_swaps_actions_that_are_not_neighbours_is_illegal(worked):
    number, why = first_illegal_swap(worked, [("C", "G")])
    assert number == 1 and "not neighbours" in why and "F" in why


def test_markers_separate_white_messages_from_red_ones_on_every_fifo_channel(worked):
    story = channel_story(worked)
    assert "P1->P3  sent: marker(s1) · E red" in story
    assert "P2->P1  sent: H white · marker(s1)" in story
    assert not any("accepted" in line for line in story)


def test_a_red_message_overtaking_its_marker_shows_the_order_it_was_accepted_in():
    story = channel_story(scenario("non-fifo-breaks"))
    assert story[0].endswith("sent: marker(s1) · late red")
    assert story[1].strip() == "accepted: late red (by white early-receive) · marker(s1)"


# --------------------------------------------------------- how many inversions?


def test_the_right_inversion_count_passes(mine):
    feedback = check_inversions(mine, 7)
    assert feedback.ok and "7 swap(s)" in feedback.message


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (2, "only neighbouring"),  # the adjacent red-white pairs (c,d) and (f,g)
        (3, "count pairs instead: a red action"),  # b, c and f have whites after them
        (9, "pairs already in order"),  # white before red
    ],
)
def test_typical_miscounts_get_a_hint_naming_the_slip(mine, answer, hint):
    feedback = check_inversions(mine, answer)
    assert not feedback.ok
    assert hint in feedback.hint


def test_counting_white_actions_instead_of_pairs_is_named():
    sim = Simulator(Network(["P", "Q"]))
    sim.step(StartSnapshot("P"))
    for action in [Internal("P", "p1"), Internal("Q", "q1"), Internal("P", "p2")]:
        sim.step(action)
    sim.step(Internal("Q", "q2"))
    sim.step(Internal("Q", "q3"))  # R W R W W: 5 inversions, 3 white actions to move
    assert inversions(sim) == 5
    feedback = check_inversions(sim, 3)
    assert not feedback.ok and "white actions that have a red one before them" in feedback.hint


def test_counting_the_snapshot_algorithms_actions_too_is_named():
    sim = Simulator(Network(["P", "Q"]))
    sim.step(StartSnapshot("P"))
    sim.step(Internal("Q", "q"))  # the red start of the snapshot precedes q: not counted
    feedback = check_inversions(sim, 1)
    assert inversions(sim) == 0
    assert not feedback.ok and "snapshot algorithm" in feedback.hint


def test_an_unrelated_wrong_count_gets_the_general_method(mine):
    feedback = check_inversions(mine, 100)
    assert not feedback.ok and "For each red action" in feedback.hint


@pytest.mark.parametrize("answer", [None, ..., "7", 7.0, True])
def test_a_missing_or_malformed_count_is_not_accepted(mine, answer):
    assert not check_inversions(mine, answer).ok


def test_an_execution_without_a_snapshot_cannot_be_asked_about():
    sim = Simulator(Network(["P", "Q"]))
    sim.step(Internal("P", "p"))
    feedback = check_inversions(sim, 0)
    assert not feedback.ok and "no snapshot" in feedback.hint
    assert "no snapshot" in check_first_swap(sim, ()).hint


# ------------------------------------------------------ which is the first swap?


def test_the_first_legal_swap_passes_named_in_either_order(mine):
    assert check_first_swap(mine, ("c", "d")).ok
    assert check_first_swap(mine, ["d", "c"]).ok
    assert "6 inversion(s) are left" in check_first_swap(mine, ("c", "d")).message


def test_trace_indices_name_actions_too(mine):
    c, d = 3, 4  # a(0) s1(1) b(2) c(3) d(4)
    assert mine.trace.action_name(c) == "c" and check_first_swap(mine, (c, d)).ok


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (("f", "g"), "not the first"),
        (("b", "d"), "not neighbours"),
        (("b", "c"), "same colour"),
        (("a", "b"), "already in the final order"),
        (("s1", "b"), "snapshot algorithm"),
        (("x", "b"), "no action named 'x'"),
        ("cd", "not a pair"),
        ((), "there is one"),
    ],
)
def test_wrong_first_swaps_say_what_is_wrong(mine, answer, says):
    feedback = check_first_swap(mine, answer)
    assert not feedback.ok
    assert says in feedback.message + feedback.hint


def test_a_swap_that_does_not_commute_is_refused_with_the_rule():
    sim = scenario("non-fifo-breaks")  # red 'late' directly before white 'early-receive'
    feedback = check_first_swap(sim, ("late", "early-receive"))
    assert not feedback.ok
    assert "cannot be swapped" in feedback.message and "commute unless" in feedback.hint
    assert first_legal_swap(sim) is None and check_first_swap(sim, ()).ok


def test_ambiguous_labels_ask_for_trace_indices():
    sim = Simulator(Network(["P", "Q"]))
    sim.step(StartSnapshot("P"))
    sim.step(Internal("P", "x"))
    sim.step(Internal("Q", "x"))
    feedback = check_first_swap(sim, ("x", "x"))
    assert not feedback.ok and "trace indices" in feedback.message
    assert check_first_swap(sim, (1, 2)).ok


# ------------------------------------------------------ which swap is illegal?


def test_the_illegal_swap_passes_by_number_or_by_names(worked):
    assert check_illegal_swap(worked, PROPOSAL, 4).ok
    assert check_illegal_swap(worked, PROPOSAL, ("F", "I")).ok


def test_a_send_and_a_receive_at_the_same_machine_are_not_enough_to_forbid_a_swap(worked):
    feedback = check_illegal_swap(worked, PROPOSAL, 3)  # B sends to P2, F is P2's, but of I
    assert not feedback.ok
    assert "the message F accepts was sent at I, not at B" in feedback.message


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (1, "can be made"),
        (5, "comes after a swap that already cannot be made"),
        (0, "one of them cannot be made"),
        (6, "there is no swap 6"),
        (("A", "B"), "not one of the proposed swaps"),
        ("4", "not a swap's number"),
        (None, "no answer yet"),
    ],
)
def test_wrong_illegal_swaps_say_what_is_wrong(worked, answer, says):
    feedback = check_illegal_swap(worked, PROPOSAL, answer)
    assert not feedback.ok
    assert says in feedback.message


def test_a_proposal_with_no_illegal_swap_is_answered_with_zero(worked):
    assert check_illegal_swap(worked.trace, PROPOSAL[:3], 0).ok
    assert not check_illegal_swap(worked.trace, PROPOSAL[:3], 2).ok


def test_a_same_machine_swap_is_illegal(worked):
    moving_c_right = [("C", "F"), ("C", "G"), ("C", "H"), ("C", "D")]
    number, why = first_illegal_swap(worked, moving_c_right)
    assert number == 4 and "both actions of P1" in why
    assert check_illegal_swap(worked, moving_c_right, 4).ok


# ------------------------------------------------------- the answers stay folded


def test_a_miscount_gets_the_count_explained_only_in_the_folded_answer(mine):
    feedback = check_inversions(mine, 3)
    assert "7" not in str(feedback)
    assert feedback.answer == (
        "7. The white actions after each red one: b: 3 (d, e, g); c: 3 (d, e, g); "
        "f: 1 (g); h: 0. Together 7."
    )
    assert not check_inversions(mine, None).answer


def test_a_wrong_first_swap_gets_the_first_legal_one_only_in_the_folded_answer(mine):
    feedback = check_first_swap(mine, ("b", "d"))
    assert "('c', 'd')" not in str(feedback)
    assert feedback.answer.startswith("('c', 'd'): reading from the left, c is the first red")


def test_a_wrong_illegal_swap_gets_the_right_one_only_in_the_folded_answer(worked):
    feedback = check_illegal_swap(worked, PROPOSAL, 2)
    assert "swap 4" not in str(feedback)
    assert feedback.answer.startswith("4: swap 4 (I, F) cannot be made: F accepts the message")


# ------------------------------------------------------------- the stored lesson

NOTEBOOK = "04_dijkstra_proof"


@pytest.fixture(scope="module")
def lesson():
    return load(NOTEBOOK)


def telltales() -> dict[str, list[str]]:
    """Per try-it, texts that would give its answer away (regular expressions)."""
    answers = expected_answers()
    n = answers["my_inversions"]
    red, white = answers["my_first_swap"]
    k = answers["illegal"]
    x, y = PROPOSAL[k - 1]
    return {
        "my_inversions": [rf"\b{n} inversion", rf"\b{n} swaps", rf"inversions: {n}\b"],
        "my_first_swap": [
            rf"\b{red}<->{white}\b",
            rf"\({red}, {white}\)",
            rf"\(['\"]{red}['\"], ?['\"]{white}['\"]\)",
        ],
        "illegal": [
            rf"\bswap {k}\b",
            rf"\({x}, {y}\) cannot",
            rf"{y} accepts the message that {x} sends",
        ],
    }


def _literal(lesson, name: str):
    cell = next(c for c in lesson["cells"] if re.search(rf"^{name} = ", source(c), re.M))
    text = source(cell)
    assignment = re.search(rf"^{name} = (.*?)(?=^\w+ = |\Z)", text, re.M | re.S)
    assert assignment is not None
    return ast.literal_eval(assignment.group(1).split("  #")[0])


def test_the_lesson_prefills_the_modules_execution_and_proposal(lesson):
    assert _literal(lesson, "my_run") == MY_RUN
    assert [tuple(p) for p in _literal(lesson, "proposal")] == list(PROPOSAL)


def test_every_try_it_has_an_expected_answer_that_its_check_accepts(lesson, mine, worked):
    answers = expected_answers()
    assert try_it_variables(lesson) == list(answers) == list(telltales())
    assert check_inversions(mine, answers["my_inversions"]).ok
    assert check_first_swap(mine, answers["my_first_swap"]).ok
    assert check_illegal_swap(worked, PROPOSAL, answers["illegal"]).ok


@pytest.mark.parametrize("variable", list(telltales()))
def test_no_try_it_is_given_away_before_it_or_right_after_it(lesson, variable):
    found = find_try_it(lesson, variable)
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, telltales()[variable]) == []


def test_the_telltales_would_catch_each_answer_where_it_is_revealed(lesson, mine, worked):
    answers = expected_answers()
    whole = "\n".join(shown(c) for c in lesson["cells"])
    right = {
        "my_inversions": whole,
        "my_first_swap": check_first_swap(mine, ("b", "d")).answer,
        "illegal": check_illegal_swap(worked, PROPOSAL, 2).answer,
    }
    assert answers["my_inversions"] == 7
    for variable, patterns in telltales().items():
        assert any(re.search(p, right[variable]) for p in patterns), variable


def test_no_cell_moves_a_stepper_the_learner_is_asked_to_step(lesson):
    code = "\n".join(source(c) for c in lesson["cells"] if c["cell_type"] == "code")
    assert "stepper.go(" not in code and "my_stepper.go(" not in code


def test_the_lesson_states_its_goal_and_time_at_the_top(lesson):
    goal, _ = goal_and_minutes(lesson)
    assert "Dijkstra" in goal

"""Lesson 06, stable predicates: its runs, its helpers and the checks of its try-its."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from snapshotlib import Network, Send, Simulator, StartSnapshot
from snapshotlib.checks import check_commutation, check_snapshot
from snapshotlib.checks.lattice import (
    CutLattice,
    GlobalState,
    cut_lattice,
    run_path,
    snapshot_window,
)
from snapshotlib.checks.predicates import conservation, deadlock, termination
from snapshotlib.course import Feedback
from snapshotlib.course.lesson_06 import (
    MODALITIES,
    OverwritingTokens,
    check_deadlock,
    check_in_transit,
    check_modality,
    check_termination,
    collection_log,
    cut_text,
    modality,
    no_token_held,
    p1_and_p3_hold_none,
    run_with_app,
    snapshot_text,
    stability_sweep,
    state_at,
    timeline,
    true_state,
    without_channels,
)
from snapshotlib.formats.scenario import load_scenario, run_scenario
from snapshotlib.trace import APP

SCENARIOS = Path(__file__).resolve().parent.parent / "examples" / "scenarios"
TOKENS = SCENARIOS / "06-tokens-in-transit.json"
BANK = SCENARIOS / "06-bank-transfers.json"
TERMINATE = SCENARIOS / "06-requests-terminate.json"
DEADLOCK = SCENARIOS / "06-requests-deadlock.json"
REPLY = SCENARIOS / "06-requests-reply-in-transit.json"
LATTICE = SCENARIOS / "06-tokens-lattice.json"


def run(path: Path) -> Simulator:
    return run_scenario(load_scenario(path))


@pytest.fixture(scope="module")
def tokens() -> Simulator:
    return run(TOKENS)


@pytest.fixture(scope="module")
def bank() -> Simulator:
    return run(BANK)


@pytest.fixture(scope="module")
def term() -> Simulator:
    return run(TERMINATE)


@pytest.fixture(scope="module")
def stuck() -> Simulator:
    return run(DEADLOCK)


@pytest.fixture(scope="module")
def reply() -> Simulator:
    return run(REPLY)


# ------------------------------------------------------------------ the runs


def test_every_lesson_snapshot_is_a_consistent_cut_on_which_dijkstras_argument_holds() -> None:
    for path in (TOKENS, BANK, TERMINATE, DEADLOCK, REPLY, LATTICE):
        sim = run(path)
        for sid in sim.snapshots():
            assert check_snapshot(sim, sid).ok, (path.name, sid)
            assert check_commutation(sim, sid).holds, (path.name, sid)


def test_the_tokens_snapshot_never_existed_yet_counts_all_five_tokens(tokens: Simulator) -> None:
    assert check_commutation(tokens, "s1").inversions == 1  # SSS never existed at an instant
    result = conservation(tokens, "s1")
    assert result.holds
    assert result.details == {"initial": 5, "processes": 1, "channels": 4}


def test_ignoring_channel_states_makes_the_tokens_in_transit_look_lost(tokens: Simulator) -> None:
    result = conservation(tokens, without_channels(tokens.snapshot("s1")))
    assert not result.holds
    assert "some lost" in result.reason
    assert result.details["channels"] == 0


def test_without_channels_keeps_the_processes_and_empties_every_channel(
    tokens: Simulator,
) -> None:
    snap = tokens.snapshot("s1")
    bare = without_channels(snap)
    assert bare.processes == snap.processes
    assert set(bare.channels) == set(snap.channels)
    assert all(msgs == () for msgs in bare.channels.values())


def test_the_overwriting_application_really_loses_tokens_and_later_snapshots_see_it() -> None:
    buggy = run_with_app(TOKENS, OverwritingTokens())
    first, later = conservation(buggy, "s1"), conservation(buggy, "s2")
    assert not first.holds and not later.holds
    assert first.details["processes"] + first.details["channels"] == 4
    assert later.details["processes"] + later.details["channels"] == 3  # only ever less
    assert sum(buggy.states.values()) == 3


def test_run_with_app_takes_the_same_steps_as_the_scenario(tokens: Simulator) -> None:
    again = run_with_app(load_scenario(TOKENS), OverwritingTokens())
    assert [(a.kind, a.process, a.label) for a in again.trace.actions] == [
        (a.kind, a.process, a.label) for a in tokens.trace.actions
    ]


# ------------------------------------------------------- collected at the initiator


def test_each_part_is_sent_to_the_initiator_once_its_input_channels_are_recorded(
    tokens: Simulator,
) -> None:
    log = collection_log(tokens, "s1").splitlines()
    assert log[0] == "action 3: P3 starts s1 and records its state: 0 tokens"
    assert "action 13: P1's part is complete; it sends it to P3: state 0 tokens" in log[4]
    assert "P2->P1 c (2 tokens)" in log[4]  # a part carries the process's input channels
    assert "P3 is the initiator and keeps it" in log[5]
    assert log[-1] == "P3 has all 3 parts: snapshot s1 is complete"
    sent = [line for line in log if "part is complete" in line]
    assert len(sent) == 3
    assert all(tokens.snapshot("s1").processes[p].done for p in ("P1", "P2", "P3"))


def test_before_every_part_is_in_the_initiator_cannot_decide() -> None:
    early = run_scenario(load_scenario(TOKENS), until=6)
    snap = early.snapshot("s1")
    assert not snap.complete
    assert set(snap.processes) == {"P3"}
    assert not conservation(early, "s1").holds
    assert "not complete" in conservation(early, "s1").reason
    assert collection_log(early, "s1").endswith("P3 has 0 of 3 parts: snapshot s1 is not complete")
    assert "P2->P3: b (1 token) (still recording)" in snapshot_text(early, "s1")


# ------------------------------------------------------------ the true state


def test_the_true_state_at_the_end_is_the_simulators_state(term: Simulator) -> None:
    now = true_state(term)
    assert {p: r.state for p, r in now.processes.items()} == term.states
    in_flight = [m for m in term.in_flight() if term.trace.messages[m].kind == APP]
    assert sum(len(msgs) for msgs in now.channels.values()) == len(in_flight)


def test_tokens_are_conserved_in_the_true_state_at_every_moment(tokens: Simulator) -> None:
    for t in range(tokens.time + 1):
        assert conservation(tokens, state_at(tokens, t)).holds, t


def test_the_timeline_says_who_answers_whom(term: Simulator) -> None:
    lines = timeline(term, 11, 15).splitlines()
    assert lines[0].startswith(" 11  P3 starts snapshot s2 and records its state")
    assert "P2 receives reply from P3, sends reply" in lines[1]
    assert lines[1].endswith("P2: passive")
    assert lines[2].endswith("P2 receives marker s2 from P3, records its state")


# ----------------------------------------------------------- the predicates


def test_termination_is_reported_only_once_it_has_happened(term: Simulator) -> None:
    assert not termination(term, "s1").holds
    assert not termination(term, state_at(term, 11)).holds  # nor had it when s1 ended
    assert termination(term, "s3").holds


def test_a_snapshot_begun_before_termination_may_already_report_it(term: Simulator) -> None:
    begun = next(i for i, a in enumerate(term.trace.actions) if a.label == "s2")
    assert not termination(term, state_at(term, begun)).holds
    assert termination(term, "s2").holds


def test_mutual_requests_are_a_deadlock_seen_by_every_later_snapshot(stuck: Simulator) -> None:
    for sid in ("s1", "s2"):
        result = deadlock(stuck, sid)
        assert result.holds
        assert result.details["cycle"] == ["P1", "P2"]
        assert not termination(stuck, sid).holds


def test_a_reply_in_transit_is_no_deadlock_but_looks_like_one_without_channels(
    reply: Simulator,
) -> None:
    snap = reply.snapshot("s1")
    assert snap.processes["P1"].state == ("P2", ())
    assert snap.processes["P2"].state == ("P1", ())
    assert [m.payload for m in snap.channels["P2->P1"]] == ["reply", "request"]
    assert not deadlock(reply, "s1").holds
    assert deadlock(reply, without_channels(snap)).holds
    assert termination(reply, "s2").holds


def test_the_sweep_finds_no_wrong_yes_and_no_yes_followed_by_a_no() -> None:
    result = stability_sweep(runs=60, seed=3)
    for name in ("termination", "deadlock"):
        assert result.said_yes[name] > 0
        assert result.yes_but_false_at_end[name] == 0
        assert result.no_but_true_at_start[name] == 0
        assert result.pairs[name] > 0
        assert result.flips[name] == 0
    assert result.no_but_true_at_end["termination"] > 0  # late answers do happen


def test_the_sweep_is_deterministic() -> None:
    assert str(stability_sweep(runs=10, seed=5)) == str(stability_sweep(runs=10, seed=5))


# ---------------------------------------------------------------- try it: money


def test_the_money_in_transit_is_accepted(bank: Simulator) -> None:
    feedback = check_in_transit(bank, 70, "s1")
    assert isinstance(feedback, Feedback) and feedback.ok
    assert "t4 (20 units) on P1->P3" in feedback.message
    assert "t5 (50 units) on P3->P2" in feedback.message


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (230, "what the processes hold"),
        (300, "the total at the start"),
        (-70, "mind the sign"),
        (50, "is not it"),
        ("70", "whole number"),
        (True, "whole number"),
    ],
)
def test_typical_wrong_amounts_are_refused_with_a_hint(
    bank: Simulator, answer: object, says: str
) -> None:
    feedback = check_in_transit(bank, answer, "s1")
    assert not feedback.ok
    assert says in feedback.message
    assert feedback.hint


def test_no_answer_yet_says_how_to_answer_and_keeps_the_method_for_a_wrong_one(
    bank: Simulator,
) -> None:
    feedback = check_in_transit(bank, None, "s1")
    assert not feedback.ok and "No answer" in feedback.message
    assert feedback.hint == "Replace None with a whole number of units."
    wrong = check_in_transit(bank, 1, "s1")
    assert "conserved" in (wrong.hint or "") and "300" in (wrong.hint or "")


# ---------------------------------------------------------- try it: termination


def test_predicting_that_s2_reports_termination_is_right(term: Simulator) -> None:
    feedback = check_termination(term, True, "s2")
    assert feedback.ok
    assert "did not hold yet" in feedback.message  # although it began before the end


def test_predicting_no_termination_for_s2_gets_the_first_marker_hint(term: Simulator) -> None:
    feedback = check_termination(term, False, "s2")
    assert not feedback.ok
    assert "termination" not in feedback.message  # the verdict only in the folded answer
    assert "first marker" in feedback.hint
    assert (feedback.answer or "").startswith("Snapshot s2 reports termination: ")


def test_predicting_termination_for_the_early_snapshot_is_wrong(term: Simulator) -> None:
    assert check_termination(term, False, "s1").ok
    feedback = check_termination(term, True, "s1")
    assert not feedback.ok
    assert "still waiting" in feedback.hint


@pytest.mark.parametrize("answer", [None, ..., "yes", 1])
def test_a_termination_answer_must_be_true_or_false(term: Simulator, answer: object) -> None:
    feedback = check_termination(term, answer, "s2")
    assert not feedback.ok
    assert "True or False" in str(feedback)


# ------------------------------------------------------------- try it: deadlock


def test_no_deadlock_with_a_reply_in_transit_is_right(reply: Simulator) -> None:
    assert check_deadlock(reply, False, "s1").ok


def test_calling_a_reply_in_transit_a_deadlock_points_at_the_channels(reply: Simulator) -> None:
    feedback = check_deadlock(reply, True, "s1")
    assert not feedback.ok
    assert "deadlock" not in feedback.message  # the verdict only in the folded answer
    assert "recorded channels" in feedback.hint
    assert (feedback.answer or "").startswith("Snapshot s1 does not report deadlock: ")


def test_a_real_deadlock_must_be_called_one(stuck: Simulator) -> None:
    assert check_deadlock(stuck, True, "s1").ok
    feedback = check_deadlock(stuck, False, "s1")
    assert not feedback.ok
    assert "waiting for" in feedback.hint


# -------------------------------------------------------------- the buggy app


def test_overwriting_tokens_forgets_what_a_process_held() -> None:
    sim = Simulator(Network(["P1", "P2"]), app=OverwritingTokens(), initial={"P1": 2, "P2": 1})
    sim.step(Send("P1", "P2", 2))
    sim.step(StartSnapshot("P1"))
    sim.run()
    assert sim.states == {"P1": 0, "P2": 2}
    assert not conservation(sim, "s1").holds  # the snapshot saw it too


# ------------------------------------------------ the lattice: possibly, definitely


@pytest.fixture(scope="module")
def small() -> Simulator:
    return run(LATTICE)


@pytest.fixture(scope="module")
def lattice(small: Simulator) -> CutLattice:
    return cut_lattice(small)


def test_the_small_run_records_every_token_in_transit_a_state_it_never_passed_through(
    small: Simulator, lattice: CutLattice
) -> None:
    window = snapshot_window(small, "s1")
    assert window.recorded == (1, 1, 1)
    assert lattice.holding(no_token_held) == (window.recorded,)
    assert window.recorded not in run_path(small)
    assert cut_text(small.app, lattice.state(window.recorded)) == (
        "cut 1 1 1: P1 0 tokens, P2 0 tokens, P3 0 tokens; in transit: "
        "a (1 token) on P1->P3; b (1 token) on P2->P3; c (1 token) on P3->P1"
    )
    assert cut_text(small.app, lattice.state(lattice.top)).endswith("in transit: nothing")


def test_no_token_held_is_possible_not_definite_and_the_try_it_predicate_definite(
    lattice: CutLattice,
) -> None:
    assert modality(lattice, no_token_held) == "possibly"
    assert modality(lattice, p1_and_p3_hold_none) == "definitely"
    assert modality(lattice, lambda s: s.processes["P2"] == 3) == "never"
    assert MODALITIES == ("never", "possibly", "definitely")


@pytest.mark.parametrize("answer", ["definitely", " Definitely "])
def test_definitely_is_accepted_and_the_cuts_every_order_meets_are_named(
    lattice: CutLattice, answer: str
) -> None:
    feedback = check_modality(lattice, answer)
    assert isinstance(feedback, Feedback) and feedback.ok
    assert "(1, 0, 1) and (1, 1, 1)" in feedback.message
    assert "every order of the events" in feedback.message


@pytest.mark.parametrize(
    ("answer", "says"),
    [("possibly", "avoids all those nodes"), ("never", "every node")],
)
def test_a_weaker_answer_gets_a_hint_at_the_reasoning_not_the_answer(
    lattice: CutLattice, answer: str, says: str
) -> None:
    feedback = check_modality(lattice, answer)
    assert not feedback.ok
    assert feedback.message == f"'{answer}' is not it."
    assert says in feedback.hint
    assert "definitely" not in str(feedback).lower()  # the right answer is not given away


def test_definitely_for_a_state_the_run_went_around_points_at_the_runs_own_path(
    lattice: CutLattice,
) -> None:
    feedback = check_modality(lattice, "definitely", no_token_held, "no process holds a token")
    assert not feedback.ok
    assert "run's own order" in feedback.hint
    assert "'possibly'" not in str(feedback)
    right = check_modality(lattice, "possibly", no_token_held, "no process holds a token")
    assert right.ok and "never passes through it" in right.message


def test_claiming_a_predicate_that_never_holds_asks_whether_the_cut_is_consistent(
    lattice: CutLattice,
) -> None:
    def p2_holds_three(s: GlobalState) -> bool:
        return bool(s.processes["P2"] == 3)

    for answer in ("possibly", "definitely"):
        feedback = check_modality(lattice, answer, p2_holds_three, "P2 holds 3 tokens")
        assert not feedback.ok and "consistent" in feedback.hint
        assert "never" not in feedback.message
    assert check_modality(lattice, "never", p2_holds_three, "P2 holds 3 tokens").ok


@pytest.mark.parametrize("answer", [None, ...])
def test_no_modality_answer_yet_lists_the_three_answers(
    lattice: CutLattice, answer: object
) -> None:
    feedback = check_modality(lattice, answer)
    assert not feedback.ok and "No answer" in feedback.message
    assert "'never', 'possibly' or 'definitely'" in feedback.hint


@pytest.mark.parametrize("answer", [True, 2, "maybe"])
def test_a_modality_answer_must_be_one_of_the_three_words(
    lattice: CutLattice, answer: object
) -> None:
    feedback = check_modality(lattice, answer)
    assert not feedback.ok
    assert feedback.message.startswith("Answer 'never', 'possibly' or 'definitely', not ")


# ------------------------------------------------------------- the try-its, unspoiled

#: per try-it, texts that would give its answer away (regular expressions)
TELLTALES = {
    "in_transit": [r"\b70 units", r"t4 \(20 units\)", r"in transit: 70"],
    "s2_terminated": [r"s2: every process is passive", r"`s2` says \*terminated\*",
                      r"Once a snapshot has said \*terminated\*"],
    "s1_deadlock": [r"s1: no cycle of blocked processes", r"the run ends, as `s2` shows",
                    r"you raise a false alarm"],
    "p1_p3_empty": [r"in every order of the events", r"both tokens in flight\s+at once"],
}  # fmt: skip


def test_the_lessons_try_its_are_the_ones_checked_here() -> None:
    from tryit_support import load, try_it_variables

    found = try_it_variables(load("06a_stable_predicates")) + try_it_variables(
        load("06b_lattice_of_cuts")
    )
    assert found == list(TELLTALES)


@pytest.mark.parametrize("variable", list(TELLTALES))
def test_no_try_it_is_given_away_before_it_or_right_after_it(variable: str) -> None:
    from tryit_support import find_try_it, given_away, load

    lesson = "06b_lattice_of_cuts" if variable == "p1_p3_empty" else "06a_stable_predicates"
    found = find_try_it(load(lesson), variable)
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, TELLTALES[variable]) == []


def test_the_telltales_would_catch_each_answer_where_the_lesson_or_its_check_gives_it() -> None:
    from tryit_support import load, shown

    from snapshotlib.checks.lattice import cut_lattice
    from snapshotlib.course import lesson_06

    bank = run_scenario(load_scenario("06-bank-transfers"))
    term = run_scenario(load_scenario("06-requests-terminate"))
    reply = run_scenario(load_scenario("06-requests-reply-in-transit"))
    right = {
        "in_transit": lesson_06.check_in_transit(bank, 70, "s1"),
        "s2_terminated": lesson_06.check_termination(term, True, "s2"),
        "s1_deadlock": lesson_06.check_deadlock(reply, False, "s1"),
        "p1_p3_empty": lesson_06.check_modality(
            cut_lattice(run_scenario(load_scenario("06-tokens-lattice"))), "definitely"
        ),
    }
    cells = load("06a_stable_predicates")["cells"] + load("06b_lattice_of_cuts")["cells"]
    text = "\n".join(shown(c) for c in cells)
    for variable, patterns in TELLTALES.items():
        assert right[variable].ok, variable
        seen = text + "\n" + right[variable].message + "\n" + (right[variable].answer or "")
        assert any(re.search(p, seen) for p in patterns), variable

"""Lesson 11, rollback recovery: what the lesson says about its run holds on the run, the
figure shows every checkpoint, and the try-it's check answers every kind of answer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from snapshotlib.checks import (
    check_frontier,
    domino_effect,
    forced_checkpoints,
    recovery_line,
    rollback_propagation,
)
from snapshotlib.course import lesson_11
from snapshotlib.formats.scenario import load_scenario, run_scenario
from snapshotlib.simulator import Simulator

LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "11_rollback_recovery.ipynb"


@pytest.fixture(scope="module")
def run() -> Simulator:
    return run_scenario(load_scenario(lesson_11.RUN))


@pytest.fixture(scope="module")
def prose() -> str:
    """The lesson's markdown, with line breaks as spaces."""
    nb = json.loads(LESSON.read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return re.sub(r"\s+", " ", text)


# ------------------------------------------------------------- the lesson's claims


def test_the_run_passes_a_token_around_three_processes_twice(run: Simulator) -> None:
    trace = run.trace
    labels = {
        p: [trace.action_name(i) for i in trace.process_actions(p)] for p in ["P1", "P2", "P3"]
    }
    assert labels == {
        "P1": ["a", "get-c", "d"],
        "P2": ["get-a", "b", "get-d", "e"],
        "P3": ["get-b", "c", "get-e"],
    }


def test_rollback_propagation_undoes_c_then_d_as_the_lesson_tells(
    run: Simulator, prose: str
) -> None:
    line, steps = rollback_propagation(run.trace, lesson_11.CHECKPOINTS)
    assert [(s.process, s.message, s.to) for s in steps] == [("P1", "c", 1), ("P2", "d", 2)]
    assert line == {"P1": 1, "P2": 2, "P3": 1}
    assert "`c` is an orphan" in prose
    assert "before `get-c`, which is 1" in prose
    assert "which P2's 4 received: P2 rolls back to 2" in prose


def test_the_moved_checkpoints_fall_to_the_start_and_forced_ones_stop_them(
    run: Simulator, prose: str
) -> None:
    assert recovery_line(run.trace, lesson_11.DOMINO) == {"P1": 0, "P2": 0, "P3": 0}
    assert domino_effect(run.trace, lesson_11.DOMINO)
    forced = forced_checkpoints(run.trace, lesson_11.DOMINO)
    assert sum(map(len, forced.values())) == 2
    both = {p: [*lesson_11.DOMINO[p], *forced[p]] for p in forced}
    assert recovery_line(run.trace, both) == {"P1": 2, "P2": 2, "P3": 2}
    assert "Two forced checkpoints, and the recovery line moves from the start to `2 2 2`" in prose


def test_the_folded_why_gives_the_recovery_line_the_engine_finds(
    run: Simulator, prose: str
) -> None:
    line, steps = rollback_propagation(run.trace, lesson_11.TRYIT)
    assert line == {"P1": 1, "P2": 0, "P3": 0}
    assert [s.message for s in steps] == ["c", "d", "b"]
    assert "the recovery line is `1 0 0`" in prose
    # the lesson's checkpoints are the ones it describes in words
    assert "P1 saved after 1 and after 3 events, P2 after 3, P3 after 1" in prose


def test_each_process_first_checkpoint_numbered_n_or_more_is_consistent(run: Simulator) -> None:
    """The claim of the index-based protocol, on the lesson's run (the property test in
    test_recovery_line.py checks it on random runs)."""
    forced = forced_checkpoints(run.trace, lesson_11.DOMINO)
    # the numbers, worked out by hand from the rule: P2 numbers 1 at 1; P3's start takes
    # b's number 1, its own at 2 is 2; P1 is forced at 1 by c (1), its own at 2 is 2;
    # P2 is forced at 2 by d (2), its own at 3 is 3
    numbered = {"P1": [(0, 0), (1, 1), (2, 2)], "P2": [(0, 0), (1, 1), (2, 2), (3, 3)],
                "P3": [(0, 1), (2, 2)]}  # fmt: skip
    assert {p: [k for k, _ in ks if k] for p, ks in numbered.items()} == {
        p: sorted({*lesson_11.DOMINO[p], *forced[p]}) for p in forced
    }
    for n in range(3):
        cut = {p: min(k for k, m in ks if m >= n) for p, ks in numbered.items()}
        assert check_frontier(run.trace, cut).ok, n


def test_the_figure_draws_every_checkpoint_where_a_cut_through_it_crosses(run: Simulator) -> None:
    fig = lesson_11.checkpoints_figure(run, lesson_11.CHECKPOINTS, {"P1": 1, "P2": 2, "P3": 1})
    (bars,) = [t for t in fig.data if t.name == "checkpoint"]
    # checkpoint 0 of every process, and P1 1, 2; P2 2, 4; P3 1
    assert len(bars.x) == 3 + 5
    row = {"P1": 0, "P2": 1, "P3": 2}
    points = set(zip(bars.x, bars.y, strict=True))
    assert (4.5, row["P1"]) in points  # P1 after a: just before get-c (action 5)
    assert (9.5, row["P2"]) in points  # P2 after all four events: the end of the run
    assert (-0.5, row["P1"]) in points  # P1's start: before its first action (0)
    assert any("P2's checkpoint after 2 events: get-a, b" in h for h in bars.hovertext)


# ------------------------------------------------------------- the try-it's check


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (None, "The recovery line: no answer yet"),
        ({"P1": None, "P2": None, "P3": None}, "no answer yet"),
        ([1, 0, 0], "Give one number per process"),
        ({"P1": 1, "P2": 0}, "Give one number per process"),
        ({"P1": "1", "P2": 0, "P3": 0}, "P1: give a whole number of events, not '1'"),
        ({"P1": 3, "P2": 3, "P3": 1}, "Not consistent: P1's part holds the receipt of c"),
        ({"P1": 1, "P2": 3, "P3": 1}, "Not consistent: P2's part holds the receipt of d"),
        ({"P1": 1, "P2": 0, "P3": 1}, "Not consistent: P3's part holds the receipt of b"),
        ({"P1": 1, "P2": 2, "P3": 1}, "P2 saved no checkpoint after 2 events: it can restart "
                                      "only from 3 or 0 (its start)"),
        ({"P1": 1, "P2": 1, "P3": 0}, "P2 saved no checkpoint after 1 event: it can restart "
                                      "only from 3 or 0"),
        ({"P1": 0, "P2": 0, "P3": 0}, "Consistent, but not the latest: some process could"),
    ],
)  # fmt: skip
def test_a_wrong_recovery_line_is_told_what_is_wrong_and_never_the_line(
    run: Simulator, answer: Any, says: str
) -> None:
    feedback = lesson_11.check_recovery_line(run, answer)
    assert not feedback.ok
    assert says in feedback.message + " " + feedback.hint
    assert "1 0 0" not in str(feedback) and "P1 1 P2 0 P3 0" not in str(feedback)
    if "no answer yet" not in feedback.message:
        assert feedback.hint or "number" in feedback.message


def test_the_wrong_answers_fold_the_rollbacks_that_lead_to_the_line(run: Simulator) -> None:
    feedback = lesson_11.check_recovery_line(run, {"P1": 3, "P2": 3, "P3": 1})
    assert feedback.answer.endswith("recovery line: P1 1 P2 0 P3 0")
    assert "Show answer" in feedback._repr_html_()


@pytest.mark.parametrize("answer", [{"P1": 1, "P2": 0, "P3": 0}, {"P3": 0, "P2": 0, "P1": 1.0}])
def test_the_recovery_line_is_right_in_any_order_and_as_floats(run: Simulator, answer: Any) -> None:
    feedback = lesson_11.check_recovery_line(run, answer)
    assert feedback.ok
    assert "c (P1 to 1), d (P2 to 0), b (P3 to 0)" in feedback.message


def test_when_the_latest_checkpoints_fit_the_check_says_so(run: Simulator) -> None:
    feedback = lesson_11.check_recovery_line(run, {"P1": 3, "P2": 4, "P3": 3}, {"P1": [3],
                                             "P2": [4], "P3": [3]})  # fmt: skip
    assert feedback.ok and "consistent already" in feedback.message


# ------------------------------------------------------------- the try-it, unspoiled

#: texts that would give the try-it's answer away (regular expressions)
TELLTALES = {"my_line": [r"recovery line is `1 0 0`", r"Right: P1 1 P2 0 P3 0",
                         r"recovery line: P1 1 P2 0 P3 0"]}  # fmt: skip


def test_the_lessons_try_it_is_the_one_checked_here() -> None:
    from tryit_support import load, try_it_variables

    assert try_it_variables(load("11_rollback_recovery")) == list(TELLTALES)


def test_the_try_it_is_not_given_away_before_it_or_right_after_it() -> None:
    from tryit_support import find_try_it, given_away, load

    found = find_try_it(load("11_rollback_recovery"), "my_line")
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, TELLTALES["my_line"]) == []


def test_the_telltales_would_catch_the_answer_where_the_lesson_or_its_check_gives_it(
    run: Simulator,
) -> None:
    from tryit_support import load, shown

    text = "\n".join(shown(c) for c in load("11_rollback_recovery")["cells"])
    right = lesson_11.check_recovery_line(run, {"P1": 1, "P2": 0, "P3": 0})
    wrong = lesson_11.check_recovery_line(run, {"P1": 3, "P2": 3, "P3": 1})
    for where in (text, right.message, wrong.answer):
        assert any(re.search(p, where) for p in TELLTALES["my_line"]), where[:80]


# ------------------------------------------------------------- output commit


def test_the_sinks_table_shows_what_the_lesson_says(prose: str) -> None:
    aligned = lesson_11.sinks_table("aligned")
    assert aligned.column("sink") == ["plain", "idempotent", "transactional"]
    assert aligned.row("plain")["shown twice"] == "2"
    assert "the plain sink wrote `S2#8` and `S2#9` twice, as in lesson 08" in prose
    from snapshotlib.course import lesson_08
    from snapshotlib.course.lesson_07 import DAG

    assert lesson_08.sink_output(DAG, crash_after=100).written_twice == ("S2#8", "S2#9")
    # the idempotent sink wrote as often, but shows each record once
    assert aligned.row("idempotent")["writes"] == aligned.row("plain")["writes"]
    assert aligned.row("idempotent")["shown twice"] == "0"
    transactional = aligned.row("transactional")
    assert transactional["shown twice"] == "0"
    assert transactional["writes"] == transactional["records shown"] == "40"
    assert float(transactional["mean wait"]) > 0 and float(aligned.row("plain")["mean wait"]) == 0
    assert "C1 crashed at step 100" in "\n".join(aligned.notes)
    assert "Lesson 08's job, crashed at step 100 and restored as there" in prose
    # under at-least-once the transactional sink shows a record twice
    assert lesson_11.sinks_table("at-least-once").row("transactional")["shown twice"] != "0"
    assert "Not under at-least-once" in prose

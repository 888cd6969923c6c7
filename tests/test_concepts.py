"""Concept checks: every lesson ends with a few multiple-choice questions aimed at known
misconceptions, and the course with a self-test. Each choice has feedback of its own; a
wrong choice's feedback says why it is wrong without giving the right one away, which
stays folded under *Show answer*, as in every try-it. The widget shows one question at a
time, so a question fits a slide.

Whether a right choice is true of the engine is checked, question by question, where a
run can show it: ``test_concepts_*.py``.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from snapshotlib.course.concepts import (
    QUESTIONS,
    Choice,
    Question,
    concept_check,
    for_lesson,
    self_test,
    self_test_questions,
)
from snapshotlib.widgets.concept_check import plain_label

ROOT = Path(__file__).resolve().parents[1]
#: every lesson but the start page teaches concepts
LESSONS = sorted(
    p.stem.split("_", 1)[0] for p in (ROOT / "notebooks").glob("[0-9]*.ipynb")
    if not p.stem.startswith("00_")
)  # fmt: skip
CELL = re.compile(r'concept_check\("(\w+)"\)')


def notebook_cells(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads(path.read_text(encoding="utf-8"))["cells"]  # type: ignore[no-any-return]


def test_every_lesson_has_three_questions_and_one_in_the_self_test() -> None:
    from snapshotlib.course.concepts import lessons_01_to_05a, lessons_05b_to_07b, lessons_08_to_11

    written = [q.id for m in (lessons_01_to_05a, lessons_05b_to_07b, lessons_08_to_11)
               for q in m.QUESTIONS]  # fmt: skip
    assert len(written) == len(set(written)) == len(QUESTIONS), "an id written twice"
    assert LESSONS, "no lessons found"
    for lesson in LESSONS:
        assert [q.id for q in for_lesson(lesson)] == [f"{lesson}.{k}" for k in (1, 2, 3)]
        assert all(q.lesson == "" for q in for_lesson(lesson)), "a lesson's own need none"
        assert f"self.{lesson}" in QUESTIONS, lesson
        assert QUESTIONS[f"self.{lesson}"].lesson == lesson
    revisited = {q.lesson for q in self_test_questions()}
    assert revisited == set(LESSONS)


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_lesson_ends_with_its_concept_check_before_its_summary(lesson: str) -> None:
    [path] = (ROOT / "notebooks").glob(f"{lesson}_*.ipynb")
    cells = notebook_cells(path)
    sources = ["".join(c["source"]) for c in cells]
    checks = [i for i, s in enumerate(sources) if CELL.search(s)]
    assert len(checks) == 1, f"{path.name}: one concept_check cell, found {len(checks)}"
    assert CELL.search(sources[checks[0]]).group(1) == lesson  # type: ignore[union-attr]
    summary = next(i for i, s in enumerate(sources) if s.startswith("## Summary"))
    heading = max(i for i, s in enumerate(sources[: checks[0]]) if s.startswith("## "))
    assert sources[heading].startswith("## Check your understanding"), path.name
    assert checks[0] < summary, f"{path.name}: the concept check comes before the summary"


def test_the_self_test_page_shows_the_self_test() -> None:
    sources = ["".join(c["source"]) for c in notebook_cells(ROOT / "notebooks/self_test.ipynb")]
    assert any("self_test()" in s for s in sources)


@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_a_question_fits_a_slide_and_keeps_its_answer_folded(qid: str) -> None:
    q = QUESTIONS[qid]
    assert q.id == qid and 3 <= len(q.choices) <= 4
    assert len(q.prompt) <= 220, q.prompt
    assert q.hint and len(q.hint) <= 160, q.hint
    assert q.misconception, "the misconception it aims at, for the instructor's guide"
    right = q.choices["abcd".index(q.right_letter)]
    for letter, choice in zip(q.letters, q.choices, strict=True):
        assert len(choice.text) <= 110, choice.text
        assert choice.feedback and len(choice.feedback) <= 240, choice.feedback
        fb = q.feedback(letter)
        assert fb.ok is choice.right
        if not choice.right:
            # the plain text (a test log, a static page) never holds the right choice
            assert right.text not in str(fb)
            assert f"answer is {q.right_letter}" not in str(fb).lower()
            assert right.text in fb.answer and "Show answer" in fb._repr_html_()
            assert not re.search(r"\banswer is\b|\bchoice [a-d]\b", choice.feedback)
    assert right.feedback.startswith("Right")
    for text in (q.prompt, q.hint, *(c.text for c in q.choices), *(c.feedback for c in q.choices)):
        assert "!" not in text.replace("!=", ""), text
        assert not re.search(r"\bcolor|behavior|\bcenter\b", text.lower()), "British spelling"


def test_the_right_choice_is_not_always_in_the_same_place() -> None:
    places = [q.right_letter for q in QUESTIONS.values()]
    most = max(places.count(x) for x in set(places))
    assert len(set(places)) >= 3 and most <= len(places) // 2


def test_an_answer_that_is_not_a_choice_says_so() -> None:
    q = next(iter(QUESTIONS.values()))
    assert not q.feedback(None).ok and "no answer yet" in str(q.feedback(None)).lower()
    assert "not one of the choices" in str(q.feedback("z"))
    assert q.feedback(q.right_letter.upper() + ")").ok


def test_a_question_needs_exactly_one_right_choice() -> None:
    two = (Choice("x", True, "."), Choice("y", True, "."))
    with pytest.raises(ValueError, match="exactly one choice must be right"):
        Question("t.1", "?", two)
    with pytest.raises(ValueError, match="1 choices, want 2 to 6"):
        Question("t.1", "?", two[:1])


# ----------------------------------------------------------------------- the widget


def test_the_widget_shows_one_question_at_a_time_and_the_chosen_feedback() -> None:
    check = concept_check("02")
    questions = for_lesson("02")
    assert check.position.value == f"Question 1 of {len(questions)}"
    assert check.previous_button.disabled and not check.next_button.disabled
    wrong = next(x for x in questions[0].letters if x != questions[0].right_letter)
    check.choose(wrong)
    said = plain_label(questions[0].choices["abcd".index(wrong)].feedback)
    shown = html.unescape(re.sub(r"<[^>]+>", "", check.feedback.value))
    assert said in shown
    assert "Show answer" in check.feedback.value
    check.next()
    assert check.feedback.value == "" and check.choices.value is None
    check.previous()  # the choice made is still there
    assert check.choices.value == wrong and "Show answer" in check.feedback.value
    bundle = check._repr_mimebundle_()
    assert questions[0].prompt in bundle["text/plain"]  # where widgets cannot run


def test_the_self_test_counts_first_choices_and_names_the_lessons_to_revisit() -> None:
    test = self_test()
    questions = self_test_questions()
    first, second = questions[0], questions[1]
    test.choose(first.right_letter)
    test.next()
    wrong = next(x for x in second.letters if x != second.right_letter)
    test.choose(wrong)
    test.choose(second.right_letter)  # right at the second choice: still missed
    assert test.first_choices_right() == [first.id]
    assert test.to_revisit() == [second.lesson]
    assert f"1 of 2 answered ({len(questions)} questions)" in test.score.value
    assert f"Lessons to revisit: {second.lesson}." in test.score.value


def test_a_lesson_without_questions_is_an_error() -> None:
    with pytest.raises(ValueError, match="lesson '99' has no concept checks"):
        concept_check("99")


def test_the_instructor_guide_lists_what_each_question_aims_at() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import concept_checks
    finally:
        sys.path.pop(0)
    guide = (ROOT / "docs" / "instructor-guide.md").read_text(encoding="utf-8")
    assert concept_checks.guide_table() in guide, "run tools/concept_checks.py --write"

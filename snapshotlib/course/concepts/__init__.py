"""Concept checks: multiple-choice questions aimed at known misconceptions, a few at the
end of every lesson and a self-test at the end of the course (:mod:`.model`).

The questions are data, one module per group of lessons; :data:`QUESTIONS` holds them
all by id. A lesson's are ``"NN.k"``; the self-test's are ``"self.NN"`` (``lesson``:
the lesson to revisit when one is missed).
"""

from __future__ import annotations

from typing import Any

from . import lessons_01_to_05a, lessons_05b_to_07b, lessons_08_to_11
from .model import LETTERS, Choice, Question

__all__ = [
    "LETTERS",
    "QUESTIONS",
    "Choice",
    "Question",
    "concept_check",
    "for_lesson",
    "self_test",
    "self_test_questions",
]

QUESTIONS: dict[str, Question] = {
    q.id: q
    for group in (lessons_01_to_05a, lessons_05b_to_07b, lessons_08_to_11)
    for q in group.QUESTIONS
}


def for_lesson(lesson: str) -> list[Question]:
    """The questions of ``lesson`` (``"02"``, ``"05a"``...), in order."""
    return [q for q in QUESTIONS.values() if q.id.split(".")[0] == lesson]


def self_test_questions() -> list[Question]:
    """The self-test's questions, in the order of the lessons they revisit."""
    return [q for q in QUESTIONS.values() if q.id.startswith("self.")]


def concept_check(lesson: str) -> Any:
    """The widget of ``lesson``'s concept checks (a lesson's *Check your understanding*)."""
    from ...widgets.concept_check import ConceptCheck

    questions = for_lesson(lesson)
    if not questions:
        raise ValueError(f"lesson {lesson!r} has no concept checks")
    return ConceptCheck(questions, title="Choose an answer: why it is right or not shows below.")


def self_test() -> Any:
    """The widget of the course's self-test: every ``self.*`` question, scored."""
    from ...widgets.concept_check import ConceptCheck

    return ConceptCheck(self_test_questions(), title="Self-test", scored=True)

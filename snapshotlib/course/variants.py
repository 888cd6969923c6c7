"""Each learner's own variant of an exercise, derived from the id they enter.

The variant is a number that seeds the exercise's executions. The grader derives it again
from the id in the submission (or, if there is none, from the submission's file name),
so two learners get different runs and cannot share answers.

>>> variant_of("01_cuts", "ada") == variant_of("01_cuts", " Ada ")
True
>>> variant_of("01_cuts", "ada") != variant_of("01_cuts", "bob")
True
"""

from __future__ import annotations

import hashlib

#: how many different variants an exercise has
VARIANTS = 1_000_000

#: in a grader's sandbox: exercise -> the variant the grader gives the submission
_GRADED: dict[str, int] = {}


class MissingLearnerId(ValueError):
    """The notebook was run without the learner's id."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows these lines instead of a traceback: the learner made no
        # programming error, so the message alone says what to do
        return [f"Your id is missing: {self}"]


def normalised_id(learner_id: str) -> str:
    """The id as the variant is derived from it: trimmed, lower case."""
    return " ".join(str(learner_id).split()).lower()


def variant_of(exercise: str, learner_id: str) -> int:
    """The variant (0 to ``VARIANTS - 1``) of ``exercise`` for ``learner_id``."""
    key = f"{exercise}\0{normalised_id(learner_id)}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % VARIANTS


def grade_as(exercise: str, variant: int) -> None:
    """Make :func:`learner_variant` give ``variant`` for ``exercise`` whatever id the
    notebook holds: the grader does so in a submission's sandbox, since who a submission
    is comes from course staff, never from its own cells."""
    _GRADED[exercise] = variant


def learner_variant(exercise: str, learner_id: object) -> int:
    """The variant for the id a learner typed into the notebook; a clear error if blank.
    (When graded, the variant of the learner as course staff name them.)"""
    if exercise in _GRADED:
        return _GRADED[exercise]
    if not isinstance(learner_id, str) or not normalised_id(learner_id):
        raise MissingLearnerId(
            'enter your id in the cell above (learner_id = "...", the id your course gave '
            "you, e.g. your login), then run this cell again: your runs are made from it, "
            "and the grader makes the same runs from the id in your submission"
        )
    return variant_of(exercise, learner_id)

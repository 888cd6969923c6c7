"""Support for the lessons: instant feedback for their "try it" tasks.

Stdlib only, like the engine: a lesson's checks are plain functions that return a
:class:`Feedback`, which notebooks display (green or red, with a hint, and the answer
folded under *Show answer* after a wrong try) and tests read; see :mod:`.feedback` for
the rules every checker follows.
Each lesson's helpers live in ``lesson_NN``: a new lesson's try-it checkers go in a
module of that name; the graded exercises' run makers and rules are in
:mod:`.exercises` (``exNN``), the learner variants in :mod:`.variants`. The two lessons
on stream processing (07 barrier snapshots, 08 failures and recovery) are also
importable from here.
"""

from . import lesson_07, lesson_08, lesson_09
from .feedback import Feedback, check_equal, is_blank, no_answer_yet

__all__ = [
    "Feedback",
    "check_equal",
    "is_blank",
    "lesson_07",
    "lesson_08",
    "lesson_09",
    "no_answer_yet",
]

"""Support for the lessons: instant feedback for their "try it" tasks.

Stdlib only, like the engine: a lesson's checks are plain functions that return a
:class:`Feedback`, which notebooks display (green or red, with a hint, and the answer
folded under *Show answer* after a wrong try) and tests read; see :mod:`.feedback` for
the rules every checker follows.
Each lesson is a package ``lesson_NN`` that re-exports what its notebook uses: its
text (``lesson_NN.text``: what the notebook prints, from runs of the engine) and its
try-it checkers (``lesson_NN.tryit``). A new lesson gets a package of that shape; text
shared by lessons is in :mod:`.dataflow_text` (a checkpoint told at one operator),
:mod:`.sizing` (the sizing arithmetic) and :mod:`.tables`. Experiments over many runs
are not here but in :mod:`snapshotlib.dataflow` and :mod:`snapshotlib.sweeps`. The
graded exercises' run makers and rules are in :mod:`.exercises` (``exNN``), the
learner variants in :mod:`.variants`. The two lessons on stream processing (07 barrier
snapshots, 08 failures and recovery) are also importable from here.
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

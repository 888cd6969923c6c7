"""Support for the lessons: instant feedback for their "try it" tasks.

Stdlib only, like the engine: a lesson's checks are plain functions that return a
:class:`Feedback`, which notebooks display (green or red, with a hint) and tests read.
"""

from .feedback import Feedback, check_equal

__all__ = ["Feedback", "check_equal"]

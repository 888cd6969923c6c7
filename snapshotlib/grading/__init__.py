"""Grade a folder of submitted notebooks: each submission runs in a sandbox of its own,
and the tests judge its answers from outside, as data (see :mod:`.runner`).

Only the standard library is imported here; otter-grader's test classes are imported
when grading starts, plotly by :func:`write_html_report` if it is installed.
"""

from __future__ import annotations

from .gradebook import Gradebook, SubmissionResult, TestScore
from .report import text_report, write_html_report
from .runner import (
    CONTAINMENT,
    GradingError,
    autograder_tests,
    containment_warning,
    course_folder,
    grade,
    grade_one,
)

__all__ = [
    "CONTAINMENT",
    "Gradebook",
    "GradingError",
    "SubmissionResult",
    "TestScore",
    "autograder_tests",
    "containment_warning",
    "course_folder",
    "grade",
    "grade_one",
    "text_report",
    "write_html_report",
]

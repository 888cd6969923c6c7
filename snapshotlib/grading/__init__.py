"""Grade a folder of submitted notebooks with ``otter run`` (no Docker), each in its own
scratch directory, child process, time limit and memory limit.

Only the standard library is imported here; otter runs in the child processes and plotly
is imported by :func:`write_html_report` only.
"""

from __future__ import annotations

from .gradebook import Gradebook, SubmissionResult, TestScore
from .report import text_report, write_html_report
from .runner import CONTAINMENT, GradingError, autograder_tests, grade, grade_one

__all__ = [
    "CONTAINMENT",
    "Gradebook",
    "GradingError",
    "SubmissionResult",
    "TestScore",
    "autograder_tests",
    "grade",
    "grade_one",
    "text_report",
    "write_html_report",
]

"""The results of grading: one row per submission and test, with totals."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

#: statuses a submission can end with
STATUSES = ("ok", "timeout", "memory", "cpu-limit", "crashed", "invalid")


@dataclass(frozen=True)
class TestScore:
    """The score of one test (question) of one submission."""

    test: str
    score: float
    possible: float


@dataclass(frozen=True)
class SubmissionResult:
    """How one submission was graded.

    ``status`` is ``"ok"`` when the submission's cells ran and its answers were judged;
    otherwise ``"timeout"`` (the wall-clock backstop was hit), ``"memory"``,
    ``"cpu-limit"`` (its CPU seconds were used up), ``"crashed"`` (its process ended
    before its answers could be read) or ``"invalid"`` (not a notebook), and every test
    scores 0. ``cell_timeouts`` counts cells interrupted by the per-cell CPU limit (the
    run went on, so the other questions are graded). ``detail`` says what went wrong,
    and which answers were refused and why.
    """

    submission: str
    status: str
    scores: tuple[TestScore, ...]
    seconds: float
    cell_timeouts: int = 0
    detail: str = ""

    @property
    def total(self) -> float:
        return sum(s.score for s in self.scores)

    @property
    def possible(self) -> float:
        return sum(s.possible for s in self.scores)

    def score(self, test: str) -> float:
        return next(s.score for s in self.scores if s.test == test)


@dataclass
class Gradebook:
    """Every submission's result, in the order graded (sorted by file name)."""

    exercise: str
    tests: list[str]
    results: list[SubmissionResult] = field(default_factory=list)

    def rows(self) -> list[dict[str, object]]:
        """One row per submission and test, then a ``TOTAL`` row per submission."""
        out: list[dict[str, object]] = []
        for r in self.results:
            for s in r.scores:
                out.append(
                    {"submission": r.submission, "test": s.test, "score": s.score,
                     "possible": s.possible, "status": r.status}
                )  # fmt: skip
            out.append(
                {"submission": r.submission, "test": "TOTAL", "score": r.total,
                 "possible": r.possible, "status": r.status}
            )  # fmt: skip
        return out

    def to_csv(self, path: str | Path) -> Path:
        path = Path(path)
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, ["submission", "test", "score", "possible", "status"])
            writer.writeheader()
            writer.writerows(self.rows())
        return path

    def by_submission(self) -> dict[str, SubmissionResult]:
        return {r.submission: r for r in self.results}

    def scores(self, submission: str) -> dict[str, float]:
        """``{test: score}`` of one submission."""
        return {s.test: s.score for s in self.by_submission()[submission].scores}

    def question_stats(self) -> dict[str, dict[str, float]]:
        """Per test: mean, min, max and the points possible, over all submissions."""
        stats = {}
        for test in self.tests:
            values = [r.score(test) for r in self.results]
            possible = max((s.possible for r in self.results for s in r.scores
                            if s.test == test), default=0.0)  # fmt: skip
            if values:
                stats[test] = {"mean": sum(values) / len(values), "min": min(values),
                               "max": max(values), "possible": possible}  # fmt: skip
        return stats

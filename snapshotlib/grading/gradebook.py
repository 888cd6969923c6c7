"""The results of grading: per submission and question, with every reason in full.

A gradebook is written as it grows (:class:`GradebookFiles`): each submission's result
is appended to a JSON Lines file the moment it is graded, and the two CSV files are
written again beside it, so a batch stopped part way (Ctrl-C, a lost machine) keeps
what it graded, and ``--resume`` grades only the rest. The long CSV has a row per
submission and question (its score, its points, and the message of every test it
failed or the reason it was refused), then a ``TOTAL`` row; the wide CSV has a row per
submission, a column per question. A text cell that a spreadsheet would read as a
formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is
written with a leading ``'``.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: statuses a submission can end with
STATUSES = ("ok", "timeout", "memory", "cpu-limit", "crashed", "invalid")

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class TestScore:
    """The score of one question of one submission. ``message`` says why points were
    lost (each failed test's message, or the refusal); a ``formative`` question carries
    no points, and ``passed`` says whether every one of its tests passed."""

    test: str
    score: float
    possible: float
    message: str = ""
    formative: bool = False
    passed: bool = False


@dataclass(frozen=True)
class SubmissionResult:
    """How one submission was graded.

    ``status`` is ``"ok"`` when the submission's cells ran and its answers were judged;
    otherwise ``"timeout"`` (the wall-clock backstop was hit), ``"memory"``,
    ``"cpu-limit"`` (its CPU seconds were used up), ``"crashed"`` (its process ended
    before its answers could be read) or ``"invalid"`` (not a notebook, not a file, not
    in the roster), and every question scores 0. ``detail`` starts with the one-line
    reason for any status but ``"ok"``, then what went wrong in cells. ``notes`` are
    what staff should know (a typed id that is not the learner's, say).
    ``cell_timeouts`` counts cells interrupted by the per-cell CPU limit (the run went
    on, so the other questions are graded).
    """

    submission: str
    status: str
    scores: tuple[TestScore, ...]
    seconds: float
    cell_timeouts: int = 0
    detail: str = ""
    learner_id: str = ""
    identity: str = ""
    notes: tuple[str, ...] = ()
    digest: str = ""
    cpu_seconds: float | None = None
    peak_mb: float | None = None

    @property
    def total(self) -> float:
        return sum(s.score for s in self.scores)

    @property
    def possible(self) -> float:
        return sum(s.possible for s in self.scores)

    @property
    def reason(self) -> str:
        """The one-line reason a submission was not graded (empty if it was)."""
        return "" if self.status == "ok" else (self.detail.splitlines() or [""])[0]

    def score(self, test: str) -> float:
        return next(s.score for s in self.scores if s.test == test)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubmissionResult:
        fields = dict(data)
        fields["scores"] = tuple(TestScore(**s) for s in fields.get("scores", ()))
        fields["notes"] = tuple(fields.get("notes", ()))
        return cls(**fields)


def safe_cell(value: Any) -> Any:
    """A value as a spreadsheet may show it: text that would start a formula gets a ``'``.

    >>> safe_cell("=HYPERLINK(1)"), safe_cell("-1"), safe_cell(-1.0), safe_cell("ada")
    ("'=HYPERLINK(1)", "'-1", -1.0, 'ada')
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


@dataclass
class Gradebook:
    """Every submission's result, in the order of their file names."""

    exercise: str
    tests: list[str]
    results: list[SubmissionResult] = field(default_factory=list)

    def formative(self) -> list[str]:
        """The questions that carry no points (practice with feedback)."""
        seen = {s.test: s.formative for r in self.results for s in r.scores}
        return [t for t in self.tests if seen.get(t)]

    def rows(self) -> list[dict[str, object]]:
        """One row per submission and question, then a ``TOTAL`` row per submission."""
        out: list[dict[str, object]] = []
        for r in self.results:
            common = {"submission": r.submission, "learner_id": r.learner_id, "status": r.status}
            for s in r.scores:
                out.append({**common, "test": s.test, "score": s.score, "possible": s.possible,
                            "formative": s.formative, "passed": s.passed,
                            "message": s.message})  # fmt: skip
            out.append({**common, "test": "TOTAL", "score": r.total, "possible": r.possible,
                        "formative": False, "passed": r.status == "ok",
                        "message": "\n".join(x for x in (r.reason, *r.notes) if x)})  # fmt: skip
        return out

    def wide_rows(self) -> list[dict[str, object]]:
        """One row per submission: a column per question, the total and what to know."""
        out = []
        for r in self.results:
            row: dict[str, object] = {"submission": r.submission, "learner_id": r.learner_id,
                                      "status": r.status}  # fmt: skip
            got = {s.test: s for s in r.scores}
            for test in self.tests:
                s = got.get(test)
                if s is None:
                    row[test] = ""
                elif s.formative:
                    row[test] = "passed" if s.passed else "not passed"
                else:
                    row[test] = s.score
            row["total"] = r.total
            row["possible"] = r.possible
            row["notes"] = "\n".join(x for x in (r.reason, *r.notes) if x)
            out.append(row)
        return out

    def to_csv(self, path: str | Path) -> Path:
        """Write the long CSV to ``path`` and the wide one to :func:`wide_path` of it."""
        path = Path(path)
        _write_csv(path, ["submission", "learner_id", "test", "score", "possible", "status",
                          "formative", "passed", "message"], self.rows())  # fmt: skip
        columns = ["submission", "learner_id", "status", *self.tests, "total", "possible", "notes"]
        _write_csv(wide_path(path), columns, self.wide_rows())
        return path

    def by_submission(self) -> dict[str, SubmissionResult]:
        return {r.submission: r for r in self.results}

    def scores(self, submission: str) -> dict[str, float]:
        """``{test: score}`` of one submission."""
        return {s.test: s.score for s in self.by_submission()[submission].scores}

    def question_stats(self) -> dict[str, dict[str, float]]:
        """Per question with points: mean, min, max and the points possible."""
        stats = {}
        for test in self.tests:
            scored = [s for r in self.results for s in r.scores if s.test == test]
            if scored and not any(s.formative for s in scored):
                values = [s.score for s in scored]
                stats[test] = {"mean": sum(values) / len(values), "min": min(values),
                               "max": max(values),
                               "possible": max(s.possible for s in scored)}  # fmt: skip
        return stats


def wide_path(out_csv: str | Path) -> Path:
    """Where the wide CSV goes, beside the long one.

    >>> wide_path("out/grades.csv")
    PosixPath('out/grades-wide.csv')
    """
    path = Path(out_csv)
    return path.with_name(f"{path.stem}-wide{path.suffix or '.csv'}")


def state_path(out_csv: str | Path) -> Path:
    """Where each result is appended as it is graded (JSON Lines), beside the CSV."""
    path = Path(out_csv)
    return path.with_name(f"{path.stem}.jsonl")


def _write_csv(path: Path, columns: list[str], rows: Iterable[dict[str, object]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, columns)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: safe_cell(v) for k, v in row.items()})
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    os.replace(partial, path)


class GradebookFiles:
    """The files of a gradebook being graded: results appended as they come
    (``grades.jsonl``), the CSV files written again after each."""

    def __init__(self, book: Gradebook, out_csv: str | Path, *, resume: bool = False) -> None:
        self.book = book
        self.csv = Path(out_csv)
        self.state = state_path(out_csv)
        self.done: dict[str, SubmissionResult] = {}
        if resume:
            self.done = {r.submission: r for r in read_state(self.state)}
        elif self.state.exists():
            self.state.unlink()

    def already(self, submission: str, digest: str) -> SubmissionResult | None:
        """The result kept from an earlier run, if this same file was graded."""
        r = self.done.get(submission)
        return r if r is not None and digest and r.digest == digest else None

    def add(self, result: SubmissionResult) -> None:
        with self.state.open("a", encoding="utf-8") as f:
            f.write(json.dumps(result.to_dict(), separators=(",", ":")) + "\n")
        self.book.results.append(result)
        self.write()

    def write(self) -> None:
        self.book.results.sort(key=lambda r: r.submission)
        self.book.to_csv(self.csv)


def read_state(path: Path) -> list[SubmissionResult]:
    """The results a gradebook's JSON Lines file holds (the last of each submission;
    a line cut short by a stop is skipped)."""
    found: dict[str, SubmissionResult] = {}
    if not path.exists():
        return []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError, TypeError, KeyError):
            r = SubmissionResult.from_dict(json.loads(line))
            found[r.submission] = r
    return list(found.values())

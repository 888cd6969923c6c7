"""``grader.check`` in the course's exercises: otter's check, telling the learner what
staff grading will make of the answer.

An exercise's first cell makes ``grader = Notebook(...)`` from here rather than from
otter. ``grader.check("q1")`` runs the question's public tests as otter does, then:

* applies the rule staff grading applies (:mod:`snapshotlib.grading.refusals`) to the
  code this kernel has run: an answer that uses the engine's own implementation of what
  the question asks for is shown as refused, with the line quoted, whatever its tests say;
* says what a pass means. "passed" only where the public tests check the answer itself;
  where they check only its form, "format accepted: correctness is graded later"; for a
  practice question (no points), "right" or what is wrong, and that it earns no points.

What each question is (its points, public points, hidden tests) comes from the
exercise notebook's ``snapshotlib`` metadata, written when the exercise is built.
"""

from __future__ import annotations

import ast
import html
import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import otter

from ..grading.refusals import refusals
from .exercises import rules_for


@dataclass(frozen=True)
class Checked:
    """The outcome of ``grader.check``: shown as a line of text in the notebook."""

    question: str
    verdict: str  # "passed", "form", "formative", "failed", "refused"
    text: str
    otter_result: Any = None

    @property
    def passed(self) -> bool:
        return self.verdict in ("passed", "form", "formative")

    def _repr_html_(self) -> str:
        if self.verdict == "failed" and self.otter_result is not None:
            return str(self.otter_result._repr_html_())
        colour = {"refused": "#b00020", "failed": "#b00020"}.get(self.verdict, "inherit")
        return (f"<p style='color: {colour}'><strong><code>{html.escape(self.question)}</code>"
                f"</strong> {html.escape(self.text)}</p>")  # fmt: skip

    def __repr__(self) -> str:
        if self.verdict == "failed" and self.otter_result is not None:
            return repr(self.otter_result)
        return f"{self.question}: {self.text}"


def _parameters(source: str) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            names += [a.arg for a in node.args.args if a.arg not in names]
    return [n for n in names if n not in ("variant", "env")]


def _cells_run() -> list[str]:
    """The code this kernel has run, in the order it ran (empty outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return []
    shell = get_ipython()  # type: ignore[no-untyped-call]
    if shell is None:
        return []
    return [str(c) for c in shell.history_manager.input_hist_raw[1:]]


class Notebook(otter.Notebook):  # type: ignore[misc]
    """otter's ``Notebook``, whose :meth:`check` also applies staff grading's rules."""

    def _metadata(self) -> dict[str, Any]:
        try:
            nb = json.loads(Path(str(self._notebook)).read_text(encoding="utf-8"))
            meta = nb.get("metadata", {})
            return {"otter": meta.get("otter", {}), "snapshotlib": meta.get("snapshotlib", {})}
        except (OSError, ValueError, TypeError, AttributeError):
            return {"otter": {}, "snapshotlib": {}}

    def check(self, question: str, global_env: dict[str, Any] | None = None) -> Any:
        if global_env is None:
            frame = inspect.currentframe()
            caller = frame.f_back if frame is not None else None
            global_env = caller.f_globals if caller is not None else {}
        result = super().check(question, global_env)
        if result is None or not hasattr(result, "passed_all"):
            return result  # otter grading the notebook itself, or a check it refused
        meta = self._metadata()
        info = meta["snapshotlib"].get("questions", {}).get(question, {})
        exercise = str(
            meta["otter"].get("assignment_name") or meta["snapshotlib"].get("exercise", "")
        )
        source = meta["otter"].get("tests", {}).get(question, "")
        answers = _parameters(source) if isinstance(source, str) and source else []
        rules = rules_for(exercise) if exercise else None
        refuse = {a: t for a, t in (getattr(rules, "REFUSE", None) or {}).items() if a in answers}
        found = refusals(_cells_run(), refuse, where="In [{cell}]") if refuse else {}
        if found:
            first = next(iter(found.values()))
            return Checked(question, "refused", "refused: " + first.message(), result)
        if not result.passed_all:
            return Checked(question, "failed", "", result)
        points = float(info.get("points", -1))
        public = float(info.get("public_points", -1))
        hidden = int(info.get("hidden", 0))
        if points == 0 and not hidden:
            return Checked(question, "formative",
                           "right! (practice: this question earns no points)", result)  # fmt: skip
        if points == 0:
            return Checked(question, "formative", "format accepted; the rest is checked when "
                           "it is graded (practice: no points)", result)  # fmt: skip
        if public == 0 and hidden:
            return Checked(question, "form", "format accepted: correctness is graded later, "
                           "by tests you do not see", result)  # fmt: skip
        more = f"; {hidden} more test(s) run when it is graded" if hidden else ""
        return Checked(question, "passed", f"passed the public tests{more}", result)

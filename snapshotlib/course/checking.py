"""``grader.check`` in the course's exercises: otter's check, telling the learner what
staff grading will make of the answer.

An exercise's first cell makes ``grader = Notebook(...)`` from here rather than from
otter. ``grader.check("q1")`` runs the question's public tests as otter does, then:

* applies the rule staff grading applies (:mod:`snapshotlib.grading.refusals`) to the
  code this kernel has run: an answer that uses the engine's own implementation of what
  the question asks for is shown as refused, with the line quoted, whatever its tests say;
* while its public tests run, the engine's functions that the question refuses behave for
  the learner's code as they do in a graded submission's learner edition (absent: a call
  from the learner's code, directly or through another engine function, raises
  ``NotInThisExercise``), while the tests' own calls go through;
* says what a pass means. "passed" only where the public tests check the answer itself;
  where they check only its form, "format accepted: correctness is graded later"; for a
  practice question (no points), "right" or what is wrong, and that it earns no points.

What each question is (its points, public points, hidden tests) comes from the
exercise notebook's ``snapshotlib`` metadata, written when the exercise is built.

In the browser's Python (the course's static site) there is no otter-grader: there
``grader.check`` checks nothing and says so, and where the exercise can be checked.
"""

from __future__ import annotations

import functools
import html
import inspect
import json
import sys
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import absent
from ..text_colours import TEXT, WRONG
from .exercises import rules_for
from .variants import normalised_id

try:
    import otter

    _Base: Any = otter.Notebook
except ImportError:  # the browser's Python (Pyodide): otter-grader does not run there
    otter = None

    class _Base:  # type: ignore[no-redef]
        """Where otter is missing: a notebook whose checks check nothing, and say so."""

        _grading_mode = False

        def __init__(self, nb_path: str | None = None, *args: Any, **kwargs: Any) -> None:
            self._notebook = nb_path

        def check_all(self, *args: Any, **kwargs: Any) -> Checked:
            return Checked("all questions", "unchecked", no_otter())

        def export(self, *args: Any, **kwargs: Any) -> Checked:
            return Checked("export", "unchecked", no_otter())


def no_otter() -> str:
    """What ``grader.check`` says where otter-grader cannot be imported."""
    if sys.platform == "emscripten":  # the course's static site, in a browser
        return ("not checked: otter-grader, which runs the tests, does not run here (in the "
                "browser). Your answer is kept in this notebook; to check it and hand it in, "
                "open the exercise on Binder or in JupyterLab on your own machine")  # fmt: skip
    return ("not checked: otter-grader, which runs the tests, is not installed in this Python: "
            'pip install "snapshotlib[course]" and restart the kernel, or open the exercise '
            "on Binder")  # fmt: skip


@dataclass(frozen=True)
class Checked:
    """The outcome of ``grader.check``: shown as a line of text in the notebook."""

    question: str
    verdict: str  # "passed", "form", "formative", "failed", "refused", "unchecked"
    text: str
    otter_result: Any = None

    @property
    def passed(self) -> bool:
        return self.verdict in ("passed", "form", "formative")

    def _repr_html_(self) -> str:
        if self.verdict == "failed" and self.otter_result is not None:
            return str(self.otter_result._repr_html_())
        colour = WRONG if self.verdict in ("refused", "failed", "unchecked") else TEXT
        return (f"<p style='color: {colour}'><strong><code>{html.escape(self.question)}</code>"
                f"</strong> {html.escape(self.text)}</p>")  # fmt: skip

    def __repr__(self) -> str:
        if self.verdict == "failed" and self.otter_result is not None:
            return repr(self.otter_result)
        return f"{self.question}: {self.text}"


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


def _guard(target: str, real: types.FunctionType, learner: dict[str, Any]) -> Any:
    """``real``, refusing a call made on behalf of the learner's code: a frame of the
    learner's (its globals are the notebook's) between it and the check that runs the
    tests. A call from the tests themselves meets the check first."""

    @functools.wraps(real)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code is not _CHECK_CODE:
            if frame.f_globals is learner:
                absent.refuse(target)
            frame = frame.f_back
        return real(*args, **kwargs)

    return guarded


@contextmanager
def _absent_for(targets: Sequence[str], learner: dict[str, Any]) -> Iterator[None]:
    """The refused functions ``targets`` guarded (:func:`_guard`) wherever the engine's
    modules and the notebook hold them, for the duration of the block."""
    from ..grading.refusals import resolve_target

    found = {}
    for target in targets:
        obj = resolve_target(target)
        if isinstance(obj, types.FunctionType):
            found[id(obj)] = _guard(target, obj, learner)
    replaced: list[tuple[dict[str, Any], str, Any]] = []
    spaces = [vars(m) for name, m in list(sys.modules.items())
              if name.split(".")[0] == "snapshotlib" and m is not None]  # fmt: skip
    for space in [*spaces, learner]:
        for name, value in list(space.items()):
            if id(value) in found:
                replaced.append((space, name, value))
                space[name] = found[id(value)]
    try:
        yield
    finally:
        for space, name, value in replaced:
            space[name] = value


def _not_defined_yet(names: Sequence[str], learner: dict[str, Any]) -> str:
    """Why a question was not checked: what its tests take is not defined in the
    notebook yet (a cell above not run, or stopped by an error)."""
    listed = ", ".join(f"`{n}`" for n in names)
    said = f"{listed} {'is' if len(names) == 1 else 'are'} not defined yet"
    learner_id = learner.get("learner_id")
    if isinstance(learner_id, str) and not normalised_id(learner_id):
        return (
            f"not checked: {said}. Enter your id in the cell at the top "
            '(learner_id = "..."), run the cells from there down to this one, then check '
            "again: your runs are made from your id"
        )
    return (
        f"not checked: {said}. Run the cells above this one (Run > Run All Above "
        "Selected Cell), mend any that stops with an error, then check again"
    )


class Notebook(_Base):  # type: ignore[misc]
    """otter's ``Notebook``, whose :meth:`check` also applies staff grading's rules."""

    def _metadata(self) -> dict[str, Any]:
        try:
            nb = json.loads(Path(str(self._notebook)).read_text(encoding="utf-8"))
            meta = nb.get("metadata", {})
            return {"otter": meta.get("otter", {}), "snapshotlib": meta.get("snapshotlib", {})}
        except (OSError, ValueError, TypeError, AttributeError):
            return {"otter": {}, "snapshotlib": {}}

    def check(self, question: str, global_env: dict[str, Any] | None = None) -> Any:
        if otter is None:
            return Checked(question, "unchecked", no_otter())
        from ..grading.judge import parameters
        from ..grading.refusals import refusals

        if global_env is None:
            frame = inspect.currentframe()
            caller = frame.f_back if frame is not None else None
            global_env = caller.f_globals if caller is not None else {}
        meta = self._metadata()
        info = meta["snapshotlib"].get("questions", {}).get(question, {})
        exercise = str(
            meta["otter"].get("assignment_name") or meta["snapshotlib"].get("exercise", "")
        )
        source = meta["otter"].get("tests", {}).get(question, "")
        answers = parameters(source) if isinstance(source, str) and source else ()
        # (``env``: otter hands a test the whole environment under that name)
        missing = [a for a in answers if a not in global_env and a != "env"]
        if missing and not type(self)._grading_mode:  # otter would test None in their place
            return Checked(question, "unchecked", _not_defined_yet(missing, global_env))
        rules = rules_for(exercise) if exercise else None
        refuse = {a: t for a, t in (getattr(rules, "REFUSE", None) or {}).items() if a in answers}
        targets = sorted({t for ts in refuse.values() for t in ts})
        with _absent_for(targets, global_env):
            result = super().check(question, global_env)
        if result is None or not hasattr(result, "passed_all"):
            return result  # otter grading the notebook itself, or a check it refused
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


_CHECK_CODE = Notebook.check.__code__

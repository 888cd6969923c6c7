"""Judge one submission from the outside: its code runs in a sandbox, the tests do not.

The submission's cells run in a sandboxed process (:mod:`.sandboxed`, started by
:mod:`.channel`) that holds nothing secret. The tests (public and hidden, from the
autograder zip) run here, in a trusted process where no code of the submission has run,
with otter-grader's own test-file classes. They see the learner's answers only as data:
a data answer as its value, a function as a :class:`RemoteFunction` that sends
plain-data arguments to the sandbox and gets plain data back, a class as a
:class:`RemoteClass` that exercise drivers run in the sandbox. Every verdict and every
score is computed here.

Where an exercise asks the learner to write part of the engine (its ``REFUSE``), the
cells run against a learner edition without that part (:mod:`.edition`), and an answer
whose code references the engine's version (:mod:`.refusals`, the rule ``grader.check``
applies too) scores 0 for its question, with the line quoted. If that run reached a
stand-in of the edition at all, the answers of the questions that refuse nothing are
taken from a second run against the whole engine, so that using the engine where a
question allows it never costs a mark.

Each test runs under a CPU budget (``test_cpu``): a test that the learner's data makes
too slow fails saying so, and the rest go on.
"""

from __future__ import annotations

import ast
import math
import signal
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import channel, jail, wire
from .channel import SandboxGone
from .gradebook import SubmissionResult, TestScore
from .limits import Group, Groups
from .refusals import Refusal, refusals
from .submissions import Identity, Notebook, SubmissionError

#: names the tests get from the grader, never from the submission
TRUSTED_NAMES = ("variant", "env")


class TestCpuLimit(Exception):
    """A test used its CPU seconds (it fails; the other tests go on)."""


@dataclass(frozen=True)
class Settings:
    """How a submission is judged (see :func:`snapshotlib.grading.grade`)."""

    limits: jail.Limits = jail.Limits()  # noqa: RUF009 - frozen, safe to share
    cell_cpu: float = 60.0
    call_cpu: float = 60.0
    wall: float = 900.0  # the far backstop for the whole submission
    contain: bool = True
    test_cpu: float = 120.0  # CPU seconds of the grader's own work per test


# ----------------------------------------------------------------- the tests


@dataclass
class Question:
    name: str
    source: str
    points: float
    tests: int
    parameters: tuple[str, ...]
    public_points: float = 0.0
    hidden: int = 0

    @property
    def formative(self) -> bool:
        """Practice with feedback: it has tests, but they carry no points."""
        return self.tests > 0 and self.points == 0


def load_questions(autograder: Path) -> list[Question]:
    """The test files (``tests/NAME.py``) of an otter autograder zip, in name order."""
    from otter.test_files import ExceptionTestFile

    questions = []
    with zipfile.ZipFile(autograder) as z:
        for member in sorted(z.namelist()):
            if member.startswith("tests/") and member.endswith(".py") and member.count("/") == 1:
                source = z.read(member).decode()
                tf = ExceptionTestFile.from_string(source, path=member)
                cases = tf.test_cases
                questions.append(Question(
                    Path(member).stem, source, float(sum(tc.points or 0 for tc in cases)),
                    len(cases), parameters(source),
                    float(sum(tc.points or 0 for tc in cases if not tc.hidden)),
                    sum(1 for tc in cases if tc.hidden),
                ))  # fmt: skip
    return questions


def parameters(source: str) -> tuple[str, ...]:
    """The names a test file's tests take: the answers they judge, and :data:`TRUSTED_NAMES`."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            names += [a.arg for a in node.args.args if a.arg not in names]
    return tuple(names)


def _on_test_cpu(signum: int, frame: Any) -> None:
    raise TestCpuLimit


@contextmanager
def _test_budget(seconds: float) -> Iterator[None]:
    previous = signal.signal(signal.SIGPROF, _on_test_cpu)
    signal.setitimer(signal.ITIMER_PROF, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, previous)


def _failure(name: str, e: BaseException, budget: float) -> str:
    if isinstance(e, TestCpuLimit):
        return (f"{name}: checking this answer took more than {budget:g} s of the grader's "
                "CPU time (is what it gives far larger than the question needs?)")  # fmt: skip
    text = str(e).strip().strip("'")
    if isinstance(e, AssertionError):
        return f"{name}: {text}" if text else f"{name}: failed"
    return f"{name}: {type(e).__name__}: {text}"


def test_name(case: Any) -> str:
    """A test case's name as its test file writes it (``test_names_the_message...``),
    which says what it checks, rather than otter's ``q1 - 2``."""
    function = getattr(case.body, "test_func", None)
    return str(getattr(function, "__name__", None) or case.name)


def run_question(question: Question, env: dict[str, Any], budget: float) -> tuple[float, str, bool]:
    """A question's tests on ``env``: points earned, the failed tests' messages, and
    whether every test passed."""
    from otter.test_files import ExceptionTestFile

    tf = ExceptionTestFile.from_string(question.source, path=f"tests/{question.name}.py")
    earned, messages = 0.0, []
    for tc in tf.test_cases:
        try:
            with _test_budget(budget):
                tc.body.call_func(env)
        except Exception as e:  # the test failed: its message is the learner's feedback
            messages.append(_failure(test_name(tc), e, budget)[:4000])
            continue
        earned += float(tc.points or 0)
    score = min(max(earned, 0.0), question.points) if math.isfinite(earned) else 0.0
    return score, "\n".join(messages), not messages


# ----------------------------------------------------------------- the learner's answers


class RemoteFunction:
    """A learner's function in the sandbox: called with plain data, returns plain data."""

    remote = True

    def __init__(self, name: str, run: _Run) -> None:
        self.name = name
        self.run = run
        self.__name__ = name

    def _ask(self, message: dict[str, Any]) -> Any:
        reply = self.run.ask({**message, "name": self.name})
        if "error" in reply:
            raise AssertionError(f"{self.name} raised {str(reply['error'])[:2000]}")
        try:
            return wire.decode(reply.get("value"))
        except wire.WireError as e:
            raise AssertionError(f"{self.name} returned malformed data: {e}") from None

    def __call__(self, *args: Any) -> Any:
        return self._ask({"op": "call", "args": wire.encode(list(args))})

    def run_driver(self, driver: str, args: tuple[Any, ...]) -> Any:
        return self._ask({"op": "driver", "driver": driver, "args": wire.encode(list(args))})

    def __repr__(self) -> str:
        return f"<the learner's {self.name}>"


class RemoteClass(RemoteFunction):
    """A learner's class in the sandbox, for exercise drivers to run there."""


@dataclass
class _Run:
    """One run of the submission's cells in a sandbox, and what it gave."""

    sandbox: channel.Sandbox
    settings: Settings
    ran: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        return self.sandbox.ask(message, max(60.0, 10 * self.settings.call_cpu))

    def start(self, names: list[str]) -> None:
        """Wait for the cells to run, then read the answers."""
        ran = self.sandbox.receive(self.settings.wall)
        self.ran = ran if ran.get("op") == "ran" else {}
        described = self.sandbox.ask({"op": "describe", "names": names},
                                     max(60.0, self.settings.call_cpu)).get("answers")  # fmt: skip
        if not isinstance(described, dict):
            raise SandboxGone("the submission's process sent a malformed description")
        self.answers = described

    def absent_used(self) -> bool:
        used = self.ran.get("absent_used")
        return bool(used) if isinstance(used, list) else True

    def env(self, names: list[str], notes: list[str]) -> dict[str, Any]:
        env: dict[str, Any] = {}
        for answer in names:
            info = self.answers.get(answer)
            if not isinstance(info, dict):
                continue
            kind = info.get("kind")
            if kind == "data":
                try:
                    env[answer] = wire.decode(info.get("value"))
                except wire.WireError as e:
                    notes.append(f"{answer}: {e}")
            elif kind == "function":
                env[answer] = RemoteFunction(answer, self)
            elif kind == "class":
                env[answer] = RemoteClass(answer, self)
            elif kind == "unsupported":
                notes.append(f"{answer} is not plain data: {str(info.get('why'))[:300]}")
        return env

    def cell_errors(self) -> list[str]:
        errors = self.ran.get("errors", [])
        return [str(e)[:2000] for e in errors[:20]] if isinstance(errors, list) else []

    def cell_timeouts(self) -> int:
        n = self.ran.get("cell_timeouts", 0)
        return n if isinstance(n, int) and 0 <= n < 10_000 else 0


# ----------------------------------------------------------------- one submission


@dataclass
class Batch:
    """What every submission of a batch is judged with."""

    exercise: str
    questions: list[Question]
    settings: Settings
    hide: list[Path]
    empty: Path
    logs: Path
    edition: Path | None  # the learner edition, where the exercise refuses anything
    groups: Groups | None = None


def no_scores(questions: list[Question]) -> tuple[TestScore, ...]:
    """Every question at 0, for a submission that could not be judged."""
    return tuple(TestScore(q.name, 0.0, q.points, formative=q.formative) for q in questions)


def failed(name: str, questions: list[Question], status: str, reason: str, seconds: float,
           learner: str = "") -> SubmissionResult:  # fmt: skip
    """A result with no points, for a submission whose judging did not end as it should."""
    return SubmissionResult(name, status, no_scores(questions), round(seconds, 2),
                            detail=reason[:4000], learner_id=learner)  # fmt: skip


_WHY = {
    "timeout": "it used its wall-clock backstop",
    "cpu-limit": "its processes used their CPU seconds",
    "memory": "its processes used their memory",
}


def _status_after_death(sandbox: channel.Sandbox, log: str, timed_out: bool) -> str:
    code = sandbox.proc.returncode
    if timed_out:
        return "timeout"
    if (
        sandbox.cpu_exceeded
        or code == -signal.SIGXCPU
        or (code == -signal.SIGKILL and "SIGXCPU" in log)
    ):
        return "cpu-limit"
    if "MemoryError" in log or (sandbox.group is not None and sandbox.group.out_of_memory()):
        return "memory"
    return "crashed"


def judge(
    notebook: Notebook | SubmissionError, name: str, identity: Identity, batch: Batch, *,
    scratch: Path, uid: int,
) -> SubmissionResult:  # fmt: skip
    """Grade one submitted notebook (or say why it cannot be); ``scratch`` (not yet
    existing) is its folder, ``uid`` its user id as root."""
    from ..course.exercises import precomputed, rules_for
    from ..course.variants import normalised_id, variant_of

    started = time.monotonic()
    questions = batch.questions
    zero = no_scores(questions)
    learner = identity.learner_id
    digest = notebook.digest if isinstance(notebook, Notebook) else ""

    def result(
        status: str, scores: tuple[TestScore, ...], detail: str, **kw: Any
    ) -> SubmissionResult:
        return SubmissionResult(name, status, scores, round(time.monotonic() - started, 2),
                                detail=detail, learner_id=learner, identity=identity.source,
                                digest=digest, **kw)  # fmt: skip

    if isinstance(notebook, SubmissionError):
        return result("invalid", zero, str(notebook))
    rules = rules_for(batch.exercise)
    refuse: dict[str, tuple[str, ...]] = dict(getattr(rules, "REFUSE", {}) or {})
    variant = variant_of(batch.exercise, learner) if getattr(rules, "VARIANT", False) else None
    names = sorted({p for q in questions for p in q.parameters} - set(TRUSTED_NAMES))
    restricted = {q.name for q in questions if set(q.parameters) & set(refuse)}
    request: dict[str, Any] = {
        "cells": list(notebook.cells), "cell_cpu": batch.settings.cell_cpu,
        "call_cpu": batch.settings.call_cpu,
        "variant": None if variant is None else {"exercise": batch.exercise, "variant": variant},
        "given": precomputed.compute(rules, variant) if rules is not None else {},
    }  # fmt: skip
    refused: dict[str, Refusal] = refusals(notebook.cells, refuse)
    group = (
        batch.groups.make(scratch.name, batch.settings.limits.memory_mb) if batch.groups else None
    )
    runs: list[_Run] = []
    log = batch.logs / f"{scratch.name}.log"

    def start(edition: Path | None, folder: Path) -> _Run:
        sandbox = channel.start(folder, request, batch.settings.limits, batch.settings.wall,
                                contain=batch.settings.contain, hide=batch.hide, uid=uid,
                                empty=batch.empty, log=log, edition=edition,
                                group=group)  # fmt: skip
        run = _Run(sandbox, batch.settings)
        runs.append(run)
        run.start([*names, "learner_id"])
        return run

    try:
        try:
            first = start(batch.edition if refuse else None, scratch)
            second = first
            others = [q for q in questions if q.name not in restricted and q.tests]
            if refuse and others and first.absent_used():
                second = start(None, scratch.with_name(scratch.name + "-whole"))
        except (SandboxGone, OSError, jail.JailError) as e:
            for run in runs:
                run.sandbox.close()
            if not runs:
                return result("crashed", zero, f"{name}: the sandbox could not start: {e}")
            sandbox = runs[-1].sandbox
            text = log.read_text(errors="replace") if log.exists() else ""
            timed_out = time.monotonic() >= sandbox.deadline
            status = _status_after_death(sandbox, text, timed_out)
            why = _WHY.get(status, f"its process ended ({e})")
            tail = "\n".join(text.strip().splitlines()[-15:])
            reason = f"{name}: the submission did not finish: {why}\n{tail}".strip()
            return result(status, zero, reason, **_usage(group))
        notes: list[str] = []
        typed = first.answers.get("learner_id")
        typed_id = typed.get("value") if isinstance(typed, dict) else None
        if (
            isinstance(typed_id, str)
            and normalised_id(typed_id)
            and (normalised_id(typed_id) != normalised_id(learner))
        ):
            notes.append(f"the notebook's learner_id is {typed_id[:80]!r}, but course staff name "
                         f"this submission's learner {learner!r} ({identity.source}): graded as "
                         f"{learner!r}")  # fmt: skip
        envs = {id(first): first.env(names, notes)}
        if second is not first:
            envs[id(second)] = second.env(names, notes)
        scores = []
        for q in questions:
            run = first if q.name in restricted else second
            env = {**envs[id(run)], "variant": variant}
            hit = [refused[a] for a in q.parameters if a in refused]
            if hit:
                scores.append(TestScore(q.name, 0.0, q.points, hit[0].message(), q.formative))
                continue
            score, message, passed = run_question(q, env, batch.settings.test_cpu)
            missing = [a for a in q.parameters if a not in env and a not in TRUSTED_NAMES]
            if missing and q.tests:  # say why, before the tests' own messages
                errors = run.cell_errors()
                why = f" ({errors[0]})" if errors else ""
                message = f"{', '.join(missing)}: not defined when the notebook ran{why}\n{message}"
            scores.append(TestScore(q.name, score, q.points, message.strip(), q.formative, passed))
        detail = "\n".join(_cell_errors(first, second))
        timeouts = first.cell_timeouts()
        return result("ok", tuple(scores), detail, cell_timeouts=timeouts,
                      notes=tuple(dict.fromkeys(notes)), **_usage(group))  # fmt: skip
    finally:
        for run in runs:
            run.sandbox.close()
        if group is not None:
            group.remove()


def _cell_errors(first: _Run, second: _Run) -> list[str]:
    """What went wrong in the cells. Where a second run against the whole engine graded
    the questions that refuse nothing, the first run's uses of what the exercise refuses
    are summed up in a line, not repeated cell by cell."""
    errors = first.cell_errors()
    if second is first:
        return errors
    absent = [e.partition(":")[0] for e in errors if "NotInThisExercise" in e]
    rest = [e for e in errors if "NotInThisExercise" not in e]
    if absent:
        rest.append(
            f"{', '.join(absent)} use what this exercise asks the learner to write: absent when "
            "its questions that refuse it were graded, there when the others were"
        )
    return rest + [f"(whole engine) {e}" for e in second.cell_errors() if e not in errors]


def _usage(group: Group | None) -> dict[str, Any]:
    if group is None:
        return {}
    peak = group.memory_peak()
    return {"cpu_seconds": round(group.cpu_seconds(), 2),
            "peak_mb": None if peak is None else round(peak / 2**20, 1)}  # fmt: skip

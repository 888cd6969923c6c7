"""Judge one submission from the outside: its code runs in a sandbox, the tests do not.

The submission's cells run in a sandboxed process (``sandboxed``) that holds nothing
secret. The tests (public and hidden, from the autograder zip) run here, in a trusted
process where no code of the submission has run, with otter-grader's own test-file
classes. They see the learner's answers only as data: a data answer as its value, a
function as a :class:`RemoteFunction` that sends plain-data arguments to the sandbox and
gets plain data back, a class as a :class:`RemoteClass` that exercise drivers run in the
sandbox. Every verdict and every score is computed here.

An answer that calls or subclasses the engine's own implementation of what the
exercise asks for (``REFUSE`` in the exercise's module) is refused: its question scores
0 and the gradebook says why.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import os
import selectors
import signal
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import jail, wire
from .gradebook import SubmissionResult, TestScore

#: names the tests get from the grader, never from the submission
TRUSTED_NAMES = ("variant", "env")
_MAX_CELLS_BYTES = 4 * 1024 * 1024


class SandboxGone(RuntimeError):
    """The sandbox died or stopped answering."""


class Refused(AssertionError):
    """An answer used the engine's own implementation of what it was to implement."""


@dataclass(frozen=True)
class Settings:
    """How a submission is judged (see :func:`snapshotlib.grading.grade`)."""

    limits: jail.Limits = jail.Limits()  # noqa: RUF009 - frozen, safe to share
    cell_cpu: float = 60.0
    call_cpu: float = 60.0
    wall: float = 900.0  # the far backstop for the whole submission
    contain: bool = True


# ----------------------------------------------------------------- the tests


@dataclass
class Question:
    name: str
    source: str
    points: float


def load_questions(autograder: Path) -> list[Question]:
    """The test files (``tests/NAME.py``) of an otter autograder zip, in name order."""
    from otter.test_files import ExceptionTestFile

    questions = []
    with zipfile.ZipFile(autograder) as z:
        for member in sorted(z.namelist()):
            if member.startswith("tests/") and member.endswith(".py") and member.count("/") == 1:
                source = z.read(member).decode()
                tf = ExceptionTestFile.from_string(source, path=member)
                points = float(sum(tc.points or 0 for tc in tf.test_cases))
                questions.append(Question(Path(member).stem, source, points))
    return questions


def _parameters(question: Question) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(question.source)):
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            names += [a.arg for a in node.args.args if a.arg not in names]
    return names


# ----------------------------------------------------------------- delegation


def _final_names(targets: list[str]) -> dict[str, str]:
    return {t.rpartition(":")[2].rpartition(".")[2]: t for t in targets}


def _defines(tree: ast.AST, name: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def _mentions(tree: ast.AST) -> set[str]:
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.alias):
            used.add(node.name.rpartition(".")[2])
    return used


def static_refusals(cells: list[str], refuse: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Answer name -> the refused engine name that a cell defining the answer mentions.

    Only the cells that define an answer count (a learner may try the engine's version
    elsewhere); a call made from another cell is caught while the answer runs."""
    trees = []
    for source in cells:
        try:
            trees.append(ast.parse(source))
        except SyntaxError:
            continue  # IPython syntax (magics): the sandbox reports the cell
    found = {}
    for answer, targets in refuse.items():
        used: set[str] = set()
        for tree in trees:
            if _defines(tree, answer):
                used |= _mentions(tree)
        for name, target in _final_names(list(targets)).items():
            if name in used:
                found[answer] = target
                break
    return found


def refusal_text(answer: str, target: str) -> str:
    return (
        f"{answer} uses {target.replace(':', '.')}, the engine's own implementation of what "
        "this question asks you to write: the question scores 0. Write it yourself."
    )


# ----------------------------------------------------------------- the sandbox


class Sandbox:
    """The submission's process, spoken to in JSON lines over two pipes."""

    def __init__(self, proc: subprocess.Popen[bytes], uid: int | None, deadline: float) -> None:
        self.proc = proc
        self.uid = uid
        self.deadline = deadline
        self.buffer = b""
        self.alive = True
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.alive = False
            raise SandboxGone("the submission's process has ended") from None

    def receive(self, wall: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        until = min(self.deadline, time.monotonic() + wall)
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = until - time.monotonic()
                if left <= 0:
                    self.alive = False
                    raise SandboxGone("no answer within the wall-clock backstop")
                if not sel.select(left):
                    continue
                try:
                    chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                except BlockingIOError:
                    continue
                if not chunk:
                    self.alive = False
                    raise SandboxGone("the submission's process has ended")
                self.buffer += chunk
                if len(self.buffer) > wire.MAX_BYTES:
                    self.alive = False
                    raise SandboxGone("the submission's process sent too much data")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise SandboxGone("the submission's process sent something that is not JSON") from None
        if not isinstance(reply, dict):
            raise SandboxGone("the submission's process sent something that is not a reply")
        return reply

    def ask(self, message: dict[str, Any], wall: float) -> dict[str, Any]:
        if not self.alive:
            raise SandboxGone("the submission's process has ended")
        self.send(message)
        return self.receive(wall)

    def close(self) -> None:
        with contextlib.suppress(SandboxGone, OSError, ValueError):
            if self.alive and self.proc.poll() is None:
                self.send({"op": "end"})
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin:
                self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        jail.kill_user(self.uid)
        if self.proc.stdout:
            self.proc.stdout.close()


class RemoteFunction:
    """A learner's function in the sandbox: called with plain data, returns plain data."""

    remote = True

    def __init__(self, name: str, judge: _Judgement) -> None:
        self.name = name
        self.judge = judge
        self.__name__ = name

    def _ask(self, message: dict[str, Any]) -> Any:
        message = {**message, "name": self.name}
        reply = self.judge.sandbox_ask(message)
        if "refused" in reply:
            target = str(reply["refused"])
            self.judge.refused.setdefault(self.name, target)
            raise Refused(refusal_text(self.name, target))
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
class _Judgement:
    settings: Settings
    sandbox: Sandbox | None = None
    refused: dict[str, str] = field(default_factory=dict)

    def sandbox_ask(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.sandbox is None:
            raise SandboxGone("no sandbox")
        wall = max(60.0, 10 * self.settings.call_cpu)
        return self.sandbox.ask(message, wall)


def start_sandbox(
    scratch: Path, request: dict[str, Any], settings: Settings, hide: list[Path], uid: int,
    empty: Path, log: Path,
) -> Sandbox:  # fmt: skip
    scratch.mkdir(parents=True)
    cage = jail.prepare(scratch, hide, uid, empty) if settings.contain else None
    if cage is None:
        for sub in ("home", "tmp"):
            (scratch / sub).mkdir()
    env = {
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch / "home"),
        "TMPDIR": str(scratch / "tmp"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "snapshotlib.grading.sandboxed"], cwd=scratch, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=out,
            start_new_session=True, preexec_fn=jail.preexec(settings.limits, cage),
        )  # fmt: skip
    sandbox = Sandbox(proc, cage.uid if cage else None, time.monotonic() + settings.wall)
    sandbox.send(request)
    return sandbox


def read_cells(notebook: Path) -> list[str]:
    """The code cells of a submitted notebook; ValueError naming what is wrong."""
    try:
        nb = json.loads(notebook.read_bytes()[: _MAX_CELLS_BYTES * 4])
        cells = [
            "".join(c["source"]) if isinstance(c["source"], list) else str(c["source"])
            for c in nb["cells"] if c.get("cell_type") == "code"
        ]  # fmt: skip
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise ValueError(f"{notebook.name} is not a Jupyter notebook ({e})") from None
    if sum(map(len, cells)) > _MAX_CELLS_BYTES:
        raise ValueError(f"{notebook.name}: more than 4 MiB of code")
    return cells


def _status_after_death(proc: subprocess.Popen[bytes], log: str, timed_out: bool) -> str:
    code = proc.returncode
    if timed_out:
        return "timeout"
    if code == -signal.SIGXCPU or (code == -signal.SIGKILL and "SIGXCPU" in log):
        return "cpu-limit"
    if "MemoryError" in log:
        return "memory"
    return "crashed"


def judge(
    notebook: Path, name: str, exercise: str, questions: list[Question], *,
    scratch: Path, settings: Settings, hide: list[Path], uid: int, empty: Path,
) -> SubmissionResult:  # fmt: skip
    """Grade one submitted notebook; ``scratch`` (not yet existing) is its folder."""
    from otter.test_files import ExceptionTestFile

    from ..course.exercises import rules_for
    from ..course.variants import variant_of

    started = time.monotonic()
    zero = tuple(TestScore(q.name, 0.0, q.points) for q in questions)

    def result(
        status: str, scores: tuple[TestScore, ...], timeouts: int, detail: str
    ) -> SubmissionResult:
        return SubmissionResult(
            name, status, scores, round(time.monotonic() - started, 2), timeouts, detail
        )

    try:
        cells = read_cells(notebook)
    except ValueError as e:
        return result("invalid", zero, 0, str(e))
    rules = rules_for(exercise)
    refuse: dict[str, tuple[str, ...]] = dict(getattr(rules, "REFUSE", {}) or {})
    names = sorted({p for q in questions for p in _parameters(q)} - set(TRUSTED_NAMES))
    log = scratch.parent / "logs" / f"{scratch.name}.log"
    request = {"cells": cells, "cell_cpu": settings.cell_cpu, "call_cpu": settings.call_cpu,
               "refuse": {k: list(v) for k, v in refuse.items()}}  # fmt: skip
    state = _Judgement(settings)
    state.refused.update(static_refusals(cells, refuse))
    try:
        sandbox = start_sandbox(scratch, request, settings, hide, uid, empty, log)
    except (OSError, jail.JailError) as e:
        return result("crashed", zero, 0, f"the sandbox could not start: {e}")
    state.sandbox = sandbox
    try:
        try:
            ran = sandbox.receive(settings.wall)
            described = sandbox.ask(
                {"op": "describe", "names": [*names, "learner_id"]}, max(60.0, settings.call_cpu)
            ).get("answers")
            if not isinstance(described, dict):
                raise SandboxGone("the submission's process sent a malformed description")
        except SandboxGone:
            sandbox.close()
            text = log.read_text(errors="replace")
            timed_out = time.monotonic() >= sandbox.deadline
            status = _status_after_death(sandbox.proc, text, timed_out)
            tail = "\n".join(text.strip().splitlines()[-15:])
            why = "it used its wall-clock backstop" if timed_out else "its process ended"
            return result(status, zero, 0, f"the submission did not finish: {why}\n{tail}".strip())
        env: dict[str, Any] = {}
        notes: list[str] = []
        for answer in names:
            info = described.get(answer)
            if not isinstance(info, dict):
                continue
            kind = info.get("kind")
            if kind == "data":
                try:
                    env[answer] = wire.decode(info["value"])
                except wire.WireError as e:
                    notes.append(f"{answer}: {e}")
            elif kind == "function":
                env[answer] = RemoteFunction(answer, state)
            elif kind == "class":
                env[answer] = RemoteClass(answer, state)
                bases = info.get("refused") or []
                if bases:
                    state.refused.setdefault(answer, str(bases[0]))
            elif kind == "unsupported":
                notes.append(f"{answer} is not plain data: {str(info.get('why'))[:200]}")
        learner = described.get("learner_id")
        learner_id = learner.get("value") if isinstance(learner, dict) else None
        if not (isinstance(learner_id, str) and learner_id.strip()):
            learner_id = Path(name).stem
            notes.append(f"no learner_id in the submission: variant of {learner_id!r} (file name)")
        env["variant"] = variant_of(exercise, learner_id)
        scores = []
        for q in questions:
            tf = ExceptionTestFile.from_string(q.source, path=f"tests/{q.name}.py")
            uses = set(_parameters(q))
            tf.run(env)
            refused_here = [a for a in state.refused if a in uses]
            if refused_here:
                notes += [f"{q.name}: {refusal_text(a, state.refused[a])}" for a in refused_here]
                score = 0.0
            else:
                score = float(
                    sum(r.test_case.points or 0 for r in tf.test_case_results if r.passed)
                )
            score = min(max(score, 0.0), q.points) if math.isfinite(score) else 0.0
            scores.append(TestScore(q.name, score, q.points))
        errors = [str(e) for e in ran.get("errors", [])][:5] if isinstance(ran, dict) else []
        timeouts = ran.get("cell_timeouts", 0) if isinstance(ran, dict) else 0
        timeouts = timeouts if isinstance(timeouts, int) and 0 <= timeouts < 10_000 else 0
        detail = "\n".join([*dict.fromkeys(notes), *errors])[:4000]
        return result("ok", tuple(scores), timeouts, detail)
    finally:
        sandbox.close()

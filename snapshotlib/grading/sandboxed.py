"""The program that runs a submission inside its sandbox; it holds nothing secret.

``python -m snapshotlib.grading.sandboxed`` reads a request (one JSON line: the
submission's code cells, CPU seconds per cell and per call, the variant the grader
gives it, and the exercise's setup the grader computed for that variant), runs the
cells in one namespace as a notebook would, and then answers the trusted grader's
questions about the learner's answers, one JSON line each:

* ``describe``: each answer as plain data, or that it is a function or a class;
* ``call``: a learner's function called on plain data, its result as plain data;
* ``driver``: a learner's class run by an exercise's driver, its report as plain data.

It runs against whatever ``snapshotlib`` is first on its path: for an exercise that
asks the learner to write part of the engine, a learner edition without that part
(:mod:`snapshotlib.grading.edition`). No test and no expected result ever comes here,
and nothing here decides a score: whatever this process answers is judged by the grader
in its own process, as if the learner's code had computed it. The protocol uses two
descriptors of its own; the submission's stdout and stderr go to a capped log, its stdin
is empty. ``grader.check`` calls in the notebook do nothing here.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

from .. import absent
from . import wire

#: what a learner's cell printed, kept for the gradebook's detail (the rest is dropped)
_LOG_CAP = 64 * 1024


class CpuLimit(BaseException):
    """A cell or a call used its CPU seconds (a BaseException, so ``except Exception``
    in the submission does not swallow it)."""


class _CappedLog(io.TextIOBase):
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def write(self, s: str) -> int:
        if self.size < _LOG_CAP:
            self.parts.append(s[: _LOG_CAP - self.size])
            self.size += len(self.parts[-1])
        return len(s)

    def writable(self) -> bool:
        return True


class _Grader:
    """Stands for otter's ``Notebook`` in the sandbox: checks happen in the grader."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


def _stub_otter() -> None:
    otter = types.ModuleType("otter")
    otter.Notebook = _Grader  # type: ignore[attr-defined]
    sys.modules["otter"] = otter
    checking = types.ModuleType("snapshotlib.course.checking")
    checking.Notebook = _Grader  # type: ignore[attr-defined]
    sys.modules["snapshotlib.course.checking"] = checking


def _on_cpu_limit(signum: int, frame: Any) -> None:
    raise CpuLimit


def _cpu_limited(seconds: float, work: Callable[[], Any]) -> Any:
    """``work()``, interrupted by :class:`CpuLimit` after ``seconds`` of CPU time (and
    again every second after, for code that catches it)."""
    signal.setitimer(signal.ITIMER_PROF, seconds, 1.0)
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)


def _describe(namespace: dict[str, Any], names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        if name not in namespace:
            out[name] = {"kind": "missing"}
            continue
        value = namespace[name]
        if value is Ellipsis:  # the exercise's placeholder: not answered
            out[name] = {"kind": "missing"}
        elif isinstance(value, type):
            out[name] = {"kind": "class"}
        elif callable(value):
            out[name] = {"kind": "function"}
        else:
            try:
                out[name] = {"kind": "data", "value": wire.encode(value)}
            except wire.WireError as e:
                out[name] = {"kind": "unsupported", "why": str(e)}
            except Exception as e:  # an object of the learner's that fails when read
                out[name] = {"kind": "unsupported", "why": _error_text(e)}
    return out


def _error_text(e: BaseException) -> str:
    lines = traceback.format_exception_only(type(e), e)
    return "".join(lines).strip()[:2000]


def _given(request: dict[str, Any]) -> None:
    """Set what the grader gives: the variant, and the exercise's precomputed setup."""
    from ..course import variants
    from ..course.exercises import precomputed

    graded = request.get("variant")
    if isinstance(graded, dict):
        variants.grade_as(str(graded["exercise"]), int(graded["variant"]))
    precomputed.give(request.get("given") or {})


class _Session:
    def __init__(self, request: dict[str, Any]) -> None:
        self.cell_cpu = float(request["cell_cpu"])
        self.call_cpu = float(request["call_cpu"])
        self.namespace: dict[str, Any] = {"__name__": "__main__"}

    def run_cells(self, cells: list[str]) -> dict[str, Any]:
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config

        config = Config()
        config.HistoryManager.enabled = False  # no history thread (one process, one thread)
        shell = InteractiveShell.instance(config=config, user_ns=self.namespace)
        errors: list[str] = []
        timeouts = 0
        for number, source in enumerate(cells, start=1):

            def run(s: str = source) -> Any:
                return shell.run_cell(s, store_history=False)  # type: ignore[no-untyped-call]

            try:
                result = _cpu_limited(self.cell_cpu, run)
            except CpuLimit:
                timeouts += 1
                errors.append(f"cell {number}: interrupted after {self.cell_cpu:g} s of CPU time")
                continue
            failure = result.error_before_exec or result.error_in_exec
            if isinstance(failure, CpuLimit):
                timeouts += 1
                errors.append(f"cell {number}: interrupted after {self.cell_cpu:g} s of CPU time")
            elif failure is not None:
                errors.append(f"cell {number}: {_error_text(failure)}")
        return {"op": "ran", "errors": errors[-20:], "cell_timeouts": timeouts,
                "absent_used": list(absent.USED)}  # fmt: skip

    def call(self, work: Callable[[], Any]) -> dict[str, Any]:
        try:
            value = _cpu_limited(self.call_cpu, work)
            return {"value": wire.encode(value)}
        except CpuLimit:
            return {"error": f"CpuLimit: used more than {self.call_cpu:g} s of CPU time"}
        except wire.WireError as e:
            return {"error": f"the result is not plain data: {e}"}
        except Exception as e:  # the learner's error goes back to the test as text
            return {"error": _error_text(e)}

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message.get("op")
        if op == "describe":
            return {"answers": _describe(self.namespace, [str(n) for n in message["names"]])}
        name = str(message.get("name"))
        target = self.namespace.get(name)
        args = wire.decode(message.get("args", []))
        if op == "call":
            if not callable(target):
                return {"error": f"{name} is not a function"}
            return self.call(lambda: target(*args))
        if op == "driver":
            from .drivers import find_driver

            driver = find_driver(str(message["driver"]))
            return self.call(lambda: driver(target, *args))
        return {"error": f"unknown request {op!r}"}


def main() -> None:
    # The protocol gets descriptors of its own; the submission's prints go to a log.
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    log = _CappedLog()
    sys.stdout = sys.stderr = log  # type: ignore[assignment]
    signal.signal(signal.SIGPROF, _on_cpu_limit)
    _stub_otter()

    def reply(message: dict[str, Any]) -> None:
        proto_out.write(json.dumps(message, separators=(",", ":"), allow_nan=False).encode())
        proto_out.write(b"\n")
        proto_out.flush()

    request = json.loads(proto_in.readline())
    _given(request)
    session = _Session(request)
    ran = session.run_cells([str(c) for c in request["cells"]])
    ran["log"] = "".join(log.parts)[-4000:]
    reply(ran)
    for line in proto_in:
        message = json.loads(line)
        if message.get("op") == "end":
            break
        try:
            answer = session.handle(message)
        except (wire.WireError, KeyError, ValueError, TypeError) as e:
            answer = {"error": f"bad request: {e}"}
        reply(answer)


if __name__ == "__main__":
    main()

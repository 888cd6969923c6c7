"""Run a learner's class where it lives: in the learner's kernel, or in the grader's
sandbox, and get back plain data either way.

An exercise whose answer is a class (an algorithm the simulator runs) is tested through a
*driver*: a function ``driver(answer_class, *args) -> plain data`` in an exercise module
(``snapshotlib.course.exercises.exNN``). In the learner's notebook :func:`run_driver`
calls it directly; in the grader the answer is a :class:`RemoteAnswer` and the driver
runs in the submission's sandbox, which sends back only the data. The tests then judge
that data in the grader's own process, so a submission cannot reach them.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

#: drivers live in these modules only (the sandbox refuses to import others on request)
DRIVER_PACKAGE = "snapshotlib.course.exercises."


class RemoteAnswer(Protocol):
    """A learner's answer that lives in a sandbox (see ``snapshotlib.grading.judge``)."""

    def run_driver(self, driver: str, args: tuple[Any, ...]) -> Any: ...


def find_driver(driver: str) -> Any:
    """The function ``"module:function"`` names, if it is a driver of an exercise module."""
    module, _, function = driver.partition(":")
    if not module.startswith(DRIVER_PACKAGE) or not function.isidentifier():
        raise ValueError(f"{driver!r} is not a driver of an exercise module")
    return getattr(importlib.import_module(module), function)


def run_driver(driver: str, answer: Any, *args: Any) -> Any:
    """``driver(answer, *args)``: here if ``answer`` is the learner's own class, in the
    sandbox if it is a remote answer; plain data either way."""
    if hasattr(answer, "run_driver") and getattr(answer, "remote", False):
        return answer.run_driver(driver, args)
    from .wire import roundtrip

    return roundtrip(find_driver(driver)(answer, *args))

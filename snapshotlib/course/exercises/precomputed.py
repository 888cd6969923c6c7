"""Exercise setup that the grader computes outside a submission's sandbox.

A graded submission runs against an edition of the engine without the implementations
its exercise asks the learner to write (:mod:`snapshotlib.grading.edition`). Some
exercises make each learner's runs with exactly that code (exercise 1 picks its cuts
with the engine's cut check). Such a setup function is marked :func:`precomputed`: when
a submission is graded, the grader calls it in its own process, for the submission's
own variant, and hands the result to the sandbox as JSON; there the call returns that
result (:func:`give`). Anywhere else it is an ordinary function. Its arguments and its
result must be JSON data. By default the grader calls it with the variant (with no
argument for an exercise without variants); :func:`precomputed_for` says otherwise, e.g.
``@precomputed_for(lambda variant: [(17,)])`` for ``job_log(17)``.

>>> @precomputed
... def square(n):
...     return n * n
>>> square(3)
9
>>> give({key_of(square): [[[3], 10]]})  # what the grader hands a sandbox
>>> square(3), square(4)
(10, 16)
>>> give({})
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: the results the grader gave: function key -> {arguments as JSON: result}
_GIVEN: dict[str, dict[str, Any]] = {}


def key_of(function: Callable[..., Any]) -> str:
    """``module:qualname`` of a precomputed function."""
    key: str = function.precomputed_key  # type: ignore[attr-defined]
    return key


def _args_key(args: tuple[Any, ...]) -> str:
    return json.dumps(list(args), sort_keys=True, separators=(",", ":"))


Calls = Callable[[Any], list[tuple[Any, ...]]]


def _by_variant(variant: int | None) -> list[tuple[Any, ...]]:
    return [()] if variant is None else [(variant,)]


def precomputed(function: F) -> F:
    """Mark an exercise's setup function as computed by the grader when grading, for the
    submission's variant."""
    return precomputed_for(_by_variant)(function)


def precomputed_for(calls: Calls) -> Callable[[F], F]:
    """:func:`precomputed`, the grader calling it as ``calls(variant)`` lists."""

    def mark(function: F) -> F:
        key = f"{function.__module__}:{function.__qualname__}"

        @functools.wraps(function)
        def setup(*args: Any) -> Any:
            given = _GIVEN.get(key, {}).get(_args_key(args))
            return function(*args) if given is None else json.loads(given)

        setup.precomputed_key = key  # type: ignore[attr-defined]
        setup.precomputed_calls = calls  # type: ignore[attr-defined]
        return setup  # type: ignore[return-value]

    return mark


def setups(module: Any) -> list[Callable[..., Any]]:
    """The precomputed functions of an exercise module."""
    found = [v for v in vars(module).values() if callable(v) and hasattr(v, "precomputed_key")]
    return sorted(found, key=key_of)


def compute(module: Any, variant: int | None) -> dict[str, list[list[Any]]]:
    """What the grader hands a sandbox: each precomputed function of ``module`` called
    with the variant (or with nothing, for an exercise without variants)."""
    return {
        key_of(f): [[list(args), f(*args)] for args in f.precomputed_calls(variant)]  # type: ignore[attr-defined]
        for f in setups(module)
    }


def give(results: dict[str, list[list[Any]]]) -> None:
    """Make the precomputed functions return ``results`` (in a sandbox; ``{}`` undoes it)."""
    _GIVEN.clear()
    for key, calls in results.items():
        _GIVEN[key] = {_args_key(tuple(args)): json.dumps(value) for args, value in calls}

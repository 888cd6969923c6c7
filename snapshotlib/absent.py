"""Stand-ins for the engine's implementations that an exercise asks a learner to write.

A graded submission runs against a *learner edition* of the engine (made by
:mod:`snapshotlib.grading.edition`): a copy of this package in which each function or
class an exercise refuses is replaced by a stand-in of the same name with none of its
code. Calling such a function, or making or subclassing such a class, raises
:class:`NotInThisExercise`, which says that the exercise asks you to write it. The rest
of the engine is the real one.

Each use is also noted in :data:`USED`, so the grader can tell whether a notebook's run
reached a stand-in at all.

>>> check = stand_in_function("snapshotlib.checks.cut:check_frontier")
>>> check({}, {})  # doctest: +ELLIPSIS
Traceback (most recent call last):
snapshotlib.absent.NotInThisExercise: check_frontier is not in this exercise's edition ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

#: the targets (``"module:qualname"``) whose stand-ins were used, in the order first used
USED: list[str] = []


class NotInThisExercise(Exception):
    """An engine implementation that this exercise asks the learner to write was used."""


def refuse(target: str) -> NoReturn:
    """Note that ``target``'s stand-in was used, and raise :class:`NotInThisExercise`."""
    if target not in USED:
        USED.append(target)
    name = target.rpartition(":")[2]
    raise NotInThisExercise(
        f"{name} is not in this exercise's edition of snapshotlib: the exercise asks you "
        "to write it yourself"
    )


def stand_in_function(target: str) -> Callable[..., NoReturn]:
    """A function that refuses every call (for tests; editions write theirs as source)."""

    def absent(*args: Any, **kwargs: Any) -> NoReturn:
        refuse(target)

    absent.__name__ = absent.__qualname__ = target.rpartition(":")[2].rpartition(".")[2]
    return absent


def refuse_subclass(target: str, cls: type) -> None:
    """What a stand-in class's ``__init_subclass__`` does: a class of the engine's own may
    build on it (its code needs the name), a learner's class may not."""
    if not cls.__module__.startswith("snapshotlib."):
        refuse(target)

"""Readers of the forms an answer may take, shared by the public and hidden tests.

A question's public test (``grader.check``) and its hidden tests must accept exactly the
same forms of an answer, or an answer could pass one and fail the other for its form
alone. So every test of a question reads the answer with the same reader before it
looks at the value. Each reader returns the answer in one canonical form, or raises
:class:`AssertionError` (the tests' way of failing) saying, for the learner, what form
to give. The forms accepted everywhere:

* a **whole number** is an ``int`` or a ``float`` with no fractional part (``7.0``), never
  a ``bool`` (:func:`whole_number`);
* a **set of names** is a ``set``, ``frozenset``, ``list`` or ``tuple`` of strings
  (:func:`names`);
* a **pair** is a ``tuple`` or ``list`` of two items (:func:`pair`).

:func:`scenario_within` reads a scenario a learner wrote, refusing one larger than the
exercise allows before anything plays it: the grader checks every step of the run, and
a large run would keep it busy for minutes.

Standard library only: the tests import this in the learner's notebook too.

>>> whole_number(7.0, "markers_sent")
7
>>> sorted(names(("b", "e"), "in_transit_mine"))
['b', 'e']
>>> pair(["c", "d"], "first_swap_mine")
('c', 'd')
"""

from __future__ import annotations

import math
import numbers
from typing import Any

#: what a scenario may take by default: more actions than this and the grader refuses it
MAX_ACTIONS = 2000


def shown(value: Any) -> str:
    """An answer as a message shows it: the exercise's placeholder ``...`` says it is not
    answered yet.

    >>> shown(...), shown({"P1": 3})
    ('`...` (not answered yet)', "{'P1': 3}")
    """
    return "`...` (not answered yet)" if value is Ellipsis else repr(value)


def is_whole(value: Any) -> bool:
    """Whether ``value`` is a whole number: an ``int`` (not a ``bool``) or an integral,
    finite ``float``.

    Examples
    --------
    >>> is_whole(3), is_whole(3.0), is_whole(3.5), is_whole(True), is_whole("3")
    (True, True, False, False, False)
    >>> import numpy
    >>> is_whole(numpy.int64(3)), is_whole(numpy.float64(3.0)), is_whole(numpy.bool_(True))
    (True, True, False)
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):  # NumPy's integers too: a learner's arithmetic
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def whole_number(
    value: Any,
    what: str,
    *,
    low: int | None = None,
    high: int | None = None,
    why: str = "",
) -> int:
    """``value`` as an ``int``, if it is a whole number (:func:`is_whole`) from ``low`` to
    ``high`` (either may be left open).

    Parameters
    ----------
    value : Any
        The answer.
    what : str
        How the messages name it, e.g. ``"markers_sent"`` or ``"ring_processes['P1']"``.
    low, high : int, optional
        The smallest and largest numbers allowed.
    why : str, optional
        Said after a number out of range, e.g. ``"the initiators send markers"``.

    Returns
    -------
    int

    Raises
    ------
    AssertionError
        Saying what to write instead.

    Examples
    --------
    >>> whole_number(4, "inversions_mine", low=0)
    4
    >>> whole_number(6.0, "illegal_mine", low=1, high=6)
    6
    >>> whole_number("4", "inversions_mine")
    Traceback (most recent call last):
    AssertionError: inversions_mine is '4': write a whole number, e.g. 4 (not in quotes)
    >>> whole_number(7, "illegal_mine", low=1, high=6)
    Traceback (most recent call last):
    AssertionError: illegal_mine is 7: write a whole number from 1 to 6
    >>> whole_number(0.0, "markers_sent", low=1, why="they send markers")
    Traceback (most recent call last):
    AssertionError: markers_sent is 0.0: write a whole number of at least 1: they send markers
    """
    if not is_whole(value):
        quoted = " (not in quotes)" if isinstance(value, str) else ""
        example = low if low is not None and low > 4 else 4
        if high is not None and example > high:
            example = high
        raise AssertionError(
            f"{what} is {shown(value)}: write a whole number, e.g. {example}{quoted}"
        )
    number = int(value)
    if (low is not None and number < low) or (high is not None and number > high):
        if low is not None and high is not None:
            allowed = f"from {low} to {high}"
        elif low is not None:
            allowed = f"of at least {low}"
        else:
            allowed = f"of at most {high}"
        raise AssertionError(
            f"{what} is {shown(value)}: write a whole number {allowed}"
            + (f": {why}" if why else "")
        )
    return number


def names(value: Any, what: str, *, example: str = '{"b", "e"}') -> frozenset[str]:
    """``value`` as a frozenset of names, if it is a set, frozenset, list or tuple of
    strings (a name written twice counts once).

    Parameters
    ----------
    value : Any
        The answer.
    what : str
        How the messages name it.
    example : str, optional
        An example of the form, shown when ``value`` does not have it.

    Returns
    -------
    frozenset of str

    Raises
    ------
    AssertionError
        Saying what to write instead.

    Examples
    --------
    >>> sorted(names({"b"}, "in_transit_mine"))
    ['b']
    >>> names(frozenset(), "in_transit_mine")
    frozenset()
    >>> names("be", "in_transit_mine")
    Traceback (most recent call last):
    AssertionError: in_transit_mine is 'be': write a set of names (strings), e.g. {"b", "e"}
    """
    if isinstance(value, (set, frozenset, list, tuple)) and all(isinstance(x, str) for x in value):
        return frozenset(value)
    raise AssertionError(
        f"{what} is {shown(value)}: write a set of names (strings), e.g. {example}"
    )


def pair(value: Any, what: str, *, example: str = '("c", "d")') -> tuple[Any, Any]:
    """``value`` as a tuple, if it is a tuple or list of two items.

    Parameters
    ----------
    value : Any
        The answer.
    what : str
        How the messages name it.
    example : str, optional
        An example of the form, shown when ``value`` does not have it.

    Returns
    -------
    tuple
        The two items.

    Raises
    ------
    AssertionError
        Saying what to write instead.

    Examples
    --------
    >>> pair(("c", "d"), "first_swap_mine")
    ('c', 'd')
    >>> pair("cd", "first_swap_mine")
    Traceback (most recent call last):
    AssertionError: first_swap_mine is 'cd': write a pair, e.g. ("c", "d")
    """
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return value[0], value[1]
    raise AssertionError(f"{what} is {shown(value)}: write a pair, e.g. {example}")


def _channel_count(doc: dict[str, Any], processes: int) -> int:
    """How many channels the scenario's network has, at most."""
    channels = doc.get("channels", "complete")
    if channels == "ring":
        return processes
    if isinstance(channels, (list, tuple)):
        return len(channels)
    return processes * (processes - 1)


def actions_bound(doc: dict[str, Any]) -> int:
    """The most actions that playing the scenario document ``doc`` can take, without
    playing it.

    Every step but ``run`` is one action; every message is received at most once, and an
    application answers a message with at most one more (a request's reply), so the
    sends add at most two receipts each; every snapshot step records each process at
    most once, and each record sends one marker per channel, each received once.

    Examples
    --------
    >>> actions_bound({"processes": ["P1", "P2"], "steps": [
    ...     {"do": "send", "from": "P1", "to": "P2"}, {"do": "snapshot", "at": "P1"},
    ...     {"do": "run"}]})
    6
    """
    procs = doc.get("processes")
    steps = doc.get("steps")
    n = len(procs) if isinstance(procs, (list, tuple)) else 0
    steps = steps if isinstance(steps, (list, tuple)) else []
    kinds = [s.get("do") if isinstance(s, dict) else None for s in steps]
    own = sum(kind not in ("run", "deliver") for kind in kinds)
    receipts = 2 * kinds.count("send") + kinds.count("snapshot") * _channel_count(doc, n)
    return own + max(receipts, kinds.count("deliver"))


def scenario_within(
    doc: Any,
    what: str = "my_scenario",
    *,
    processes: int,
    steps: int,
    actions: int = MAX_ACTIONS,
    error: type[Exception] = AssertionError,
) -> dict[str, Any]:
    """``doc``, a scenario document a learner wrote, if it is a dict no larger than the
    exercise allows: at most ``processes`` processes, ``steps`` steps and (by
    :func:`actions_bound`) ``actions`` actions. Checked before anything plays it; the rest
    of the document is left to :func:`snapshotlib.formats.scenario.parse_scenario`.

    Parameters
    ----------
    doc : Any
        The learner's scenario.
    what : str, optional
        How the messages name it.
    processes, steps, actions : int
        The exercise's limits.
    error : type of Exception, optional
        What to raise: :class:`AssertionError` in a test, or the exercise's own error
        where its ``play`` raises one (``ScenarioError``).

    Returns
    -------
    dict
        ``doc`` itself.

    Raises
    ------
    error
        Naming the limit, when ``doc`` is not a dict or is too large.

    Examples
    --------
    >>> doc = {"processes": ["P1", "P2"], "steps": [{"do": "run"}]}
    >>> scenario_within(doc, processes=6, steps=200) is doc
    True
    >>> big = {"processes": [f"P{k}" for k in range(100)], "steps": []}
    >>> scenario_within(big, processes=6, steps=200)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: my_scenario has 100 processes; this exercise takes at most 6 (the grader...
    >>> long = {"processes": ["P1", "P2"], "steps": [{"do": "run"}] * 500}
    >>> scenario_within(long, processes=6, steps=200)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: my_scenario has 500 steps; this exercise takes at most 200 (the grader...
    """
    checks = "(the grader checks every step of your run)"
    if not isinstance(doc, dict):
        raise error(f"{what} must be a scenario dict, not {type(doc).__name__}")
    procs, given = doc.get("processes"), doc.get("steps")
    if isinstance(procs, (list, tuple)) and len(procs) > processes:
        raise error(
            f"{what} has {len(procs)} processes; this exercise takes at most {processes} {checks}"
        )
    if isinstance(given, (list, tuple)) and len(given) > steps:
        raise error(f"{what} has {len(given)} steps; this exercise takes at most {steps} {checks}")
    most = actions_bound(doc)
    if most > actions:
        raise error(
            f"{what} can take up to {most} actions (its steps, the receipt of every message "
            f"and the markers of every snapshot); this exercise takes at most {actions} "
            f"{checks}: send fewer messages or start fewer snapshots"
        )
    return doc

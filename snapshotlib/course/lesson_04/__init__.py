"""Checks for lesson 04, Dijkstra's proof: inversions, swaps and proposed reorderings.

Every checker takes an execution and the learner's answer and returns a
:class:`~snapshotlib.course.Feedback`, so the same functions serve the lesson, where the
execution may be the learner's own, and graded exercises. An execution is a
:class:`~snapshotlib.Simulator` that has run (its trace and the colouring of one of its
snapshots are read); the swap checks need only the trace, so they also take a
:class:`~snapshotlib.trace.Trace`.

Actions are named as everywhere else in the course: by their label, or ``kind#index``
for an unlabelled one (``send#12``); a whole number is taken as a trace index. Only the
computation's own actions (internal events, sends, receives) are reordered: starting a
snapshot and accepting a marker belong to the snapshot algorithm.

A wrong answer gets a hint that names the slip; the right answer, explained, is folded
under *Show answer*. :data:`MY_RUN` and :data:`PROPOSAL` are the lesson's pre-filled
execution and proposed swaps, and :func:`expected_answers` gives one right answer per
try-it, for the lesson's tests.

>>> from snapshotlib.formats.scenario import parse_scenario, run_scenario
>>> sim = run_scenario(parse_scenario({
...     "processes": ["P", "Q"],
...     "steps": [{"do": "snapshot", "at": "P"},
...               {"do": "internal", "at": "P", "label": "p1"},
...               {"do": "internal", "at": "Q", "label": "q1"},
...               {"do": "run"}]}))
>>> inversions(sim), first_legal_swap(sim)
(1, ('p1', 'q1'))
>>> print(check_inversions(sim, 1))  # doctest: +ELLIPSIS
✓ 1 inversion(s): right. Each legal swap removes exactly one, so 1 swap(s) put every ...
"""

from __future__ import annotations

from .text import (
    MY_RUN,
    PROPOSAL,
    channel_story,
    coloured_order,
    first_illegal_swap,
    first_legal_swap,
    inversions,
    swap_problem,
)
from .tryit import check_first_swap, check_illegal_swap, check_inversions, expected_answers

__all__ = [
    "MY_RUN",
    "PROPOSAL",
    "channel_story",
    "check_first_swap",
    "check_illegal_swap",
    "check_inversions",
    "coloured_order",
    "expected_answers",
    "first_illegal_swap",
    "first_legal_swap",
    "inversions",
    "swap_problem",
]

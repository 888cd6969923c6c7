"""Lesson 03's try-it checkers: each takes a run (the lesson's, or the learner's own) and
the learner's answer, and returns a Feedback; ``expected_answers`` gives one right
answer to each.
"""

from __future__ import annotations

import re
from typing import Any

from ...snapshot import GlobalSnapshot
from ..feedback import Feedback, no_answer_yet
from .text import worked_example


def _labels(answer: Any) -> list[str] | None:
    """A learner's list of event or message labels, read leniently."""
    if answer is None or answer is Ellipsis:
        return None
    if isinstance(answer, str):
        parts = [p for p in re.split(r"[\s,;]+", answer.strip()) if p]
        if len(parts) == 1 and len(parts[0]) > 1 and parts[0].isalpha() and parts[0].isupper():
            parts = list(parts[0])  # "FGH"
        return [p.upper() for p in parts]
    if isinstance(answer, (set, frozenset)):
        return sorted(str(x).strip().upper() for x in answer)
    try:
        return [str(x).strip().upper() for x in answer]
    except TypeError:
        return [str(answer).strip().upper()]


def check_p2_events(answer: Any, snapshot: GlobalSnapshot | None = None) -> Feedback:
    """Check a prediction of the events in P2's recorded state.

    Parameters
    ----------
    answer
        P2's recorded events in order, e.g. ``["F", "G"]`` (a string ``"F, G"`` is
        read too); ``None`` while there is no answer yet.
    snapshot
        The recorded snapshot to check against; by default the worked example's.

    Examples
    --------
    >>> print(check_p2_events(["F", "G"]))  # doctest: +ELLIPSIS
    ✗ P2's recorded events: F, G is not quite it. Hint: P2 records when its first...
    """
    snap = snapshot if snapshot is not None else worked_example().snapshot("s1")
    expected = list(snap.processes["P2"].events)
    what = "P2's recorded events"
    got = _labels(answer)
    if got is None:
        return no_answer_yet(what, "Write a list of labels, e.g. ['F'], and run again.")
    if got == expected:
        return Feedback(
            True,
            f"{what}: right, {', '.join(expected)}. "
            "P2 recorded when P3's marker reached it, after H.",
        )
    reveal = (
        f"{', '.join(expected)}: P2 records on its first marker. On C32 P3's marker is behind "
        "I, on C12 P1's marker is behind B. Click 8 delivers I (event F), click 9 B (event "
        "G), P2 sends H at click 10, and click 11 brings P3's marker: P2 has done F, G and "
        "H. P1's marker arrives only at click 12."
    )
    shown = ", ".join(got) or "nothing"
    others = [x for x in got if x not in expected]
    if sorted(got) == sorted(expected):
        hint = "Right events, wrong order: list them in the order P2 did them (left to right)."
    elif others:
        hint = (
            f"Only P2's own events can be in P2's state; {', '.join(others)} "
            f"{'is' if len(others) == 1 else 'are'} not P2's."
        )
    elif not got:
        hint = (
            "P2 does record events: it records when its first marker arrives. Which marker "
            "reaches P2 first, and what has P2 done by then?"
        )
    elif got == expected[: len(got)]:
        hint = (
            "P2 records when its first marker arrives. On each channel into P2, what is "
            "ahead of the marker? Follow the deliveries in order."
        )
    else:
        hint = "List P2's events in the order P2 did them, up to the arrival of its first marker."
    return Feedback(False, f"{what}: {shown} is not quite it.", hint, reveal)


def check_c21_state(answer: Any, snapshot: GlobalSnapshot | None = None) -> Feedback:
    """Check a prediction of the recorded state of channel C21 (from P2 to P1).

    Parameters
    ----------
    answer
        The messages recorded on C21, each named by the event that sent it, e.g.
        ``["B"]``; ``[]`` for an empty channel; ``None`` while there is no answer yet.
    snapshot
        The recorded snapshot to check against; by default the worked example's.

    Examples
    --------
    >>> print(check_c21_state([]))  # doctest: +ELLIPSIS
    ✗ C21's recorded state: empty is not quite it. Hint: P1 has been recording C21 since...
    """
    snap = snapshot if snapshot is not None else worked_example().snapshot("s1")
    expected = [m.label or "" for m in snap.channels["P2->P1"]]
    what = "C21's recorded state"
    got = _labels(answer)
    if got is None:
        return no_answer_yet(
            what, "Write a list of message names, e.g. ['B'], or [] for an empty channel."
        )
    if got == expected:
        return Feedback(
            True,
            f"{what}: right, {', '.join(expected) or 'empty'}. "
            "P2 recorded after sending it and P1 recorded before receiving it.",
        )
    reveal = (
        f"{', '.join(expected) or 'empty'}: P2 sent H to P1 at click 10, before it recorded "
        "(click 11), so H travels on C21 ahead of P2's marker. P1 has been recording C21 "
        "since it started the snapshot (click 4); H arrives at click 13 (event D), before "
        "the marker closes C21 at click 14."
    )
    shown = ", ".join(got) or "empty"
    if not got:
        hint = (
            "P1 has been recording C21 since click 4: does anything arrive on C21 before "
            "P2's marker closes it?"
        )
    elif got == ["D"]:
        hint = (
            "Name a message after the event that sent it. D is where P1 receives it; "
            "which event of P2 sent it?"
        )
    elif "D" in got:
        hint = (
            "A channel's state lists messages (named by their send event), not events; "
            "and D happens at P1 after P1 recorded."
        )
    else:
        hint = (
            "C21 is the channel from P2 to P1: only a message that P2 sent to P1 can be in "
            "it. Which one did P2 send before recording that P1 received after recording?"
        )
    return Feedback(False, f"{what}: {shown} is not quite it.", hint, reveal)


def expected_answers() -> dict[str, Any]:
    """One right answer for each try-it of the lesson, by the name of its answer variable.

    >>> expected_answers()
    {'p2_prediction': ['F', 'G', 'H'], 'c21_prediction': ['H']}
    """
    snap = worked_example().snapshot("s1")
    return {
        "p2_prediction": list(snap.processes["P2"].events),
        "c21_prediction": [m.label or "" for m in snap.channels["P2->P1"]],
    }

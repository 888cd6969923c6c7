"""Lesson 02, Chandy–Lamport step by step: text views of a run and the try-it checks.

The text views print what the explorer shows, as plain deterministic text (the
notebook compares it with its stored output): :func:`status` (who has recorded, what
is in flight, which channels are being recorded), :func:`snapshot_text` (the assembled
global snapshot), :func:`parts_done` (when each process finished its part) and, for
the recorded state that never occurred, :func:`states_table` and
:func:`reordering_text`.

The checks answer the lesson's try-it questions by asking the engine, never by
re-implementing the rules: each replays the learner's run on a copy of the simulator,
lets it go on, and compares. Wrong answers get a hint that names the rule involved;
the right answer, explained, is folded under *Show answer*.
:func:`expected_answers` gives one right answer per try-it, for the lesson's tests.

>>> from snapshotlib import Channel, Deliver

>>> from snapshotlib import Network, Simulator, Send, StartSnapshot
>>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 3, "P2": 0})
>>> sim.step(Send("P1", "P2", 1, label="x"))
>>> sim.step(StartSnapshot("P2", "s1"))
>>> print(check_channel_state(["x"], sim, "P1->P2"))
✗ The recorded state of P1->P2 is not settled yet: P1 has not recorded its state for s1.
>>> sim.step(Deliver(Channel("P2", "P1")))  # P1 records: x is ahead of its marker
>>> print(check_channel_state(["x"], sim, "P1->P2"))
✓ Right: P2 will record x on P1->P2.
"""

from __future__ import annotations

from .text import (
    SCENARIOS,
    Moment,
    describe_action,
    moments,
    occurrences,
    parts_done,
    recorded_moment,
    reordering_text,
    replay,
    snapshot_text,
    states_table,
    status,
)
from .tryit import (
    check_channel_state,
    check_in_transit,
    check_occurred,
    check_recording_after_marker,
    expected_answers,
)

__all__ = [
    "SCENARIOS",
    "Moment",
    "check_channel_state",
    "check_in_transit",
    "check_occurred",
    "check_recording_after_marker",
    "describe_action",
    "expected_answers",
    "moments",
    "occurrences",
    "parts_done",
    "recorded_moment",
    "reordering_text",
    "replay",
    "snapshot_text",
    "states_table",
    "status",
]

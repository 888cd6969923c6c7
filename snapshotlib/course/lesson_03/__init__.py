"""Lesson 03, the worked example: step narration, the recorded snapshot as text, checks.

The example is the classic three-process run with events A..J
(``examples/scenarios/worked-example.json``): P1 initiates right after B, its marker to
P3 is fast and its marker to P2 slow, and channel P2→P1 ends up holding the message
sent at H. Channels are named as in lecture notes: ``C21`` is the channel from P2 to P1.

The lesson's commentary comes from :func:`narrate`, which runs its own copy of the
example, so the explorer on the page is left to the learner. The try-it checks give a
hint when wrong and fold the answer under *Show answer*; :func:`expected_answers`
gives one right answer per try-it, for the lesson's tests.

Examples
--------
>>> from snapshotlib.formats.scenario import load_scenario, run_scenario
>>> sim = run_scenario(load_scenario(SCENARIOS / "worked-example.json"))
>>> print(check_p2_events(["F", "G", "H"], sim.snapshot("s1")))
✓ P2's recorded events: right, F, G, H. P2 recorded when P3's marker reached it, after H.
>>> causal_history(sim, "D")
['A', 'B', 'I', 'C', 'F', 'G', 'H']
"""

from __future__ import annotations

from .text import (
    SCENARIOS,
    Narration,
    causal_history,
    channel_name,
    describe_step,
    in_flight,
    narrate,
    snapshot_text,
    token_account,
    worked_example,
)
from .tryit import check_c21_state, check_p2_events, expected_answers

__all__ = [
    "SCENARIOS",
    "Narration",
    "causal_history",
    "channel_name",
    "check_c21_state",
    "check_p2_events",
    "describe_step",
    "expected_answers",
    "in_flight",
    "narrate",
    "snapshot_text",
    "token_account",
    "worked_example",
]

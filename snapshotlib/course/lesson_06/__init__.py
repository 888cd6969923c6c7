"""Lessons 06a and 06b, stable predicates and the lattice of cuts: what the initiator can
decide from a snapshot.

The lesson evaluates three stable predicates on recorded snapshots (token
conservation, termination, deadlock; see :mod:`snapshotlib.checks.predicates`), shows
how each process's part reaches the initiator, what goes wrong when channel states are
ignored, and a buggy application that really loses tokens. It ends with the lattice of
a small run's consistent cuts (:mod:`snapshotlib.checks.lattice`), where the recorded
state lies between S0 and S1, and the modalities *possibly* and *definitely*. The
functions here print what the notebook shows as text, run a scenario under another
application, check on many random runs that the answers are stable, and check the
learner's answers (each checker returns a :class:`~snapshotlib.course.Feedback`).

>>> from snapshotlib.formats.scenario import parse_scenario, run_scenario

>>> from snapshotlib.checks.predicates import conservation

>>> sim = run_scenario(parse_scenario({
...     "processes": ["P1", "P2"], "app": "tokens", "initial": {"P1": 3},
...     "steps": [{"do": "send", "from": "P1", "to": "P2", "label": "a", "payload": 2},
...               {"do": "snapshot", "at": "P2", "id": "s1"}, {"do": "run"}]}))
>>> print(snapshot_text(sim, "s1"))
snapshot s1, initiated by P2: complete
  P1: 1 token
  P2: 0 tokens
  P1->P2: a (2 tokens)
  P2->P1: empty
>>> conservation(sim, without_channels(sim.snapshot("s1"))).reason
'1 token recorded (1 in processes, 0 in transit) but 3 at the start: some lost'
>>> print(check_in_transit(sim, 2))
✓ 2 tokens in transit: right. The channels recorded a (2 tokens) on P1->P2.
"""

from __future__ import annotations

from ...checks.true_state import state_at, true_state
from ...sweeps.stability import StabilitySweep, stability_sweep
from .text import (
    MODALITIES,
    OverwritingTokens,
    collection_log,
    cut_text,
    message_text,
    modality,
    no_token_held,
    p1_and_p3_hold_none,
    path_text,
    run_with_app,
    snapshot_text,
    state_text,
    timeline,
    without_channels,
)
from .tryit import check_deadlock, check_in_transit, check_modality, check_termination

__all__ = [
    "MODALITIES",
    "OverwritingTokens",
    "StabilitySweep",
    "check_deadlock",
    "check_in_transit",
    "check_modality",
    "check_termination",
    "collection_log",
    "cut_text",
    "message_text",
    "modality",
    "no_token_held",
    "p1_and_p3_hold_none",
    "path_text",
    "run_with_app",
    "snapshot_text",
    "stability_sweep",
    "state_at",
    "state_text",
    "timeline",
    "true_state",
    "without_channels",
]

"""Lessons 05a and 05b, why FIFO matters and snapshots without it: what went wrong in a
broken snapshot, and the try-it checks.

On a non-FIFO channel a message and a marker can swap places, and the marker algorithm
breaks in one of three ways:

* a **red message accepted in a white action**: a message sent after its sender
  recorded overtakes the marker, so the receiver accepts it before recording. The
  receipt is inside the cut, the send outside: an inconsistent cut (EWD 864a's
  forbidden case).
* a **red message recorded in transit**: the same overtaking, but the receiver has
  recorded already (a marker reached it on another channel) and is still recording
  this channel, so it takes the message for one in transit. The sender's recorded
  state still counts what the message carries, and now the channel does too.
* a **white message missed**: the marker overtakes a message sent before the sender
  recorded, so the receiver closes the channel before the message arrives. The message
  is in transit across the cut but no recorded state holds it.

Examples
--------
>>> steps = [
...     {"do": "snapshot", "at": "P1"},
...     {"do": "send", "from": "P1", "to": "P2", "label": "m"},
...     {"do": "deliver", "from": "P1", "to": "P2", "msg": "m", "label": "r"},
... ]
>>> print(check_breaking_run(steps))  # doctest: +ELLIPSIS
✓ It breaks: a red message accepted in a white action. Message m was sent by P1 ...
"""

from __future__ import annotations

from .live import compare_marker_transports
from .text import (
    MISSED,
    RED_IN_WHITE,
    RED_RECORDED,
    Break,
    checks_table,
    diagnose,
    narrate,
    run_with,
    steps_table,
    tally,
)
from .tryit import check_breaking_run, check_lai_yang_record

__all__ = [
    "MISSED",
    "RED_IN_WHITE",
    "RED_RECORDED",
    "Break",
    "check_breaking_run",
    "check_lai_yang_record",
    "checks_table",
    "compare_marker_transports",
    "diagnose",
    "narrate",
    "run_with",
    "steps_table",
    "tally",
]

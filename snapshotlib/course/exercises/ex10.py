"""Exercise 10, *Predict, then measure*: each learner's ring, and the sweep points that
measure what a Chandy–Lamport snapshot records on it.

Lesson 09's model is for a complete graph: every tick of marker delay adds
``rate × message size`` bytes to the snapshot, whatever the number of processes. On a
**ring** the marker has to go all the way round before the initiator's one input
channel is closed, so the model is another one, and the learner works it out. Each
learner gets a ring of their own (:func:`config`): its size, the messages each process
sends per tick, their size, and three marker delays to measure at. :func:`point` is
the sweep point (README, "Sweeps") of one measurement, for
:func:`snapshotlib.sweeps.execute.run_point`. Every run is long enough that the
recording ends before it does, and messages take one tick.

Question 1 (the model, ``ring_bytes``) is graded, and may not run the engine. Question 2
is practice and earns no points: the largest marker delay at which the ring's snapshot
stays within a memory budget of the learner's own (:func:`budget`), found with the model
and checked by the two runs either side of it. Its tests read the answer with
:func:`read_delay`.

>>> sorted(config(7))
['budget', 'delays', 'message_bytes', 'rate', 'size']
>>> point(7, config(7)["delays"][0])["topology"]
'ring'
"""

from __future__ import annotations

import random
from typing import Any

from .forms import is_whole, shown

NAME = "10_predict_then_measure"
VARIANT = True

#: running the ring is measuring it: the prediction may not do it
_MEASURE = (
    "snapshotlib.sweeps.execute:run_point",
    "snapshotlib.sweeps.execute:_run_classic",
    "snapshotlib.sweeps.runner:TickRun",
    "snapshotlib.spark.sweep:run_sweep",
    "snapshotlib.spark.sweep:run_sweep_local",
    "snapshotlib.course.lesson_09:run_lesson_sweep",
    "snapshotlib.spark.anywhere:run_sweep_anywhere",
    "snapshotlib.simulator:Simulator",
)
REFUSE: dict[str, tuple[str, ...]] = {"ring_bytes": _MEASURE}


def config(variant: int) -> dict[str, Any]:
    """The learner's ring: ``size`` processes, ``rate`` messages each sends per tick,
    ``message_bytes`` each, the three marker ``delays`` (ticks) to measure at, and the
    ``budget``: the bytes a snapshot may record (question 2).

    The budget lies between what the ring records at a marker delay of 12 to 30 ticks
    and at one tick more, so that one delay is the answer and it is none of the three
    measured ones."""
    rng = random.Random(f"{NAME}/{variant}")
    size, rate = rng.randint(3, 8), rng.randint(1, 4)
    message_bytes = rng.choice([100, 150, 200, 250, 400, 500])
    delays = sorted(rng.sample(range(1, 11), 3))
    per_tick = rate * message_bytes * (size - 1)  # what one more tick of delay adds
    at_answer = rate * message_bytes * ((size - 1) * rng.randint(12, 30) + 1)
    budget = at_answer + rng.randrange(0, per_tick, 50)
    return {"size": size, "rate": rate, "message_bytes": message_bytes, "delays": delays,
            "budget": budget}  # fmt: skip


def ring_point(size: int, rate: int, message_bytes: int, marker_delay: int) -> dict[str, Any]:
    """The sweep point of one Chandy–Lamport run on a ring, long enough that the
    snapshot's recording ends before the run does."""
    return {
        "algorithm": "chandy-lamport",
        "topology": "ring",
        "size": size,
        "rate": rate,
        "message_bytes": message_bytes,
        "marker_delay": marker_delay,
        "message_delay": 1,
        "duration": 2 * ((size - 1) * marker_delay + 10) + 20,
        "tokens": 10**6,
        "seed": 0,
    }


def point(variant: int, marker_delay: int) -> dict[str, Any]:
    """The sweep point that measures the learner's ring at ``marker_delay``."""
    c = config(variant)
    return ring_point(c["size"], c["rate"], c["message_bytes"], marker_delay)


def describe(variant: int) -> str:
    """The learner's ring in words."""
    c = config(variant)
    delays = ", ".join(map(str, c["delays"]))
    return (
        f"A ring of {c['size']} processes, P1 -> P2 -> ... -> P{c['size']} -> P1. Every "
        f"process sends {c['rate']} message{'s' * (c['rate'] != 1)} per tick to the next, "
        f"each {c['message_bytes']} bytes; a message takes 1 tick. One process starts a "
        f"Chandy–Lamport snapshot; each marker takes the marker delay to cross a channel. "
        f"Marker delays to measure at: {delays} ticks. Memory budget for one snapshot: "
        f"{c['budget']:,} bytes."
    )


def read_delay(answer: Any, what: str = "max_delay") -> int:
    """The learner's largest marker delay (question 2): a whole number of ticks, at least
    1; AssertionError saying what to write otherwise.

    >>> read_delay(17)
    17
    >>> read_delay(17.0)
    17
    >>> read_delay("17")
    Traceback (most recent call last):
    AssertionError: max_delay is '17': write a whole number of ticks, e.g. 12
    """
    if not (is_whole(answer) and answer >= 1):
        raise AssertionError(f"{what} is {shown(answer)}: write a whole number of ticks, e.g. 12")
    return int(answer)


def within_budget(variant: int, marker_delay: int) -> tuple[int, bool]:
    """What the learner's ring records at ``marker_delay`` (a run of the engine), and
    whether that is within their budget."""
    from ...sweeps.execute import run_point

    recorded = int(run_point(point(variant, marker_delay))["recorded_bytes"])
    return recorded, recorded <= config(variant)["budget"]

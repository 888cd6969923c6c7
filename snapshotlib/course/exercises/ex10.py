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
(what the learner measured) is practice and earns no points: one call of the engine
answers it. Its tests read the answers with :func:`read_measured` and
:func:`read_slope`, public and hidden alike.

>>> sorted(config(7))
['delays', 'message_bytes', 'rate', 'size']
>>> point(7, config(7)["delays"][0])["topology"]
'ring'
"""

from __future__ import annotations

import math
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
    ``message_bytes`` each, and the three marker ``delays`` (ticks) to measure at."""
    rng = random.Random(f"{NAME}/{variant}")
    return {
        "size": rng.randint(3, 8),
        "rate": rng.randint(1, 4),
        "message_bytes": rng.choice([100, 150, 200, 250, 400, 500]),
        "delays": sorted(rng.sample(range(1, 11), 3)),
    }


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
        f"Marker delays to measure at: {delays} ticks."
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_measured(answer: Any, variant: int, what: str = "measured") -> dict[int, float]:
    """What the learner measured (question 2): a dict whose keys are exactly their
    ``delays`` (whole numbers), each to a number of bytes; AssertionError saying what to
    write otherwise.

    >>> delays = config(7)["delays"]
    >>> read_measured(dict.fromkeys(delays, 1000), 7) == dict.fromkeys(delays, 1000)
    True
    >>> read_measured({**dict.fromkeys(delays, 1000), 99: 0}, 7)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: measured is {...}: write a dict from each of your delays [...] to the bytes ...
    """
    delays = config(variant)["delays"]
    keys = list(answer) if isinstance(answer, dict) else []
    if not (
        isinstance(answer, dict)
        and all(is_whole(k) for k in keys)
        and sorted(int(k) for k in keys) == delays
    ):
        raise AssertionError(
            f"{what} is {shown(answer)}: write a dict from each of your delays {delays} to the "
            "bytes recorded at it, and nothing else"
        )
    for d, value in answer.items():
        if not _number(value):
            raise AssertionError(
                f"{what}[{d!r}] is {value!r}: write the number of bytes recorded, e.g. 1200"
            )
    return {int(d): value for d, value in answer.items()}


def read_slope(answer: Any, what: str = "slope") -> float:
    """The slope the learner measured (question 2): a finite number; AssertionError
    saying what to write otherwise.

    >>> read_slope(8000)
    8000
    >>> read_slope("8000")
    Traceback (most recent call last):
    AssertionError: slope is '8000': write a number of bytes per tick, e.g. 1200
    """
    if not _number(answer):
        raise AssertionError(
            f"{what} is {shown(answer)}: write a number of bytes per tick, e.g. 1200"
        )
    return answer  # type: ignore[no-any-return]

"""Exercise 9, *Choose the time-to-live and the heartbeat timeout*: a design exercise,
graded on simulated outcomes.

Each learner runs the live lab's snapshot service (lesson 10) on a cluster of their own
(:func:`cluster`): how many nodes, how often they send heartbeats, how long a node takes
to report its part of a snapshot (a log-normal spread, the upload's), and how often and
how long a node stalls (a pause in which its heartbeats do not arrive, though it is
alive). Two settings decide what the controller does:

* the **time-to-live** (``ttl_ms``): a snapshot not complete by then is FAILED;
* the **heartbeat timeout** (``heartbeat_timeout_ms``): a node silent that long is
  declared down, and the snapshots waiting for it are FAILED at once.

The learner chooses both to meet a budget of their own (:func:`budget`): at most so many
healthy snapshots failed by the time-to-live, no snapshot holding the nodes' buffers
longer than they can hold, at most so many false alarms (live nodes declared down) per
node and hour, and a crashed node noticed fast enough. :func:`outcomes` simulates a
setting (4,000 snapshots, 20 node-hours of heartbeats, 1,000 crashes) and measures the
four; :func:`observations` gives what an engineer would have
measured before choosing: durations of healthy snapshots and gaps between heartbeats.
The tests grade a choice on :func:`outcomes` with the grading seed, so what the learner's
``grader.check`` says is the grade.

>>> sorted(cluster(7))  # doctest: +NORMALIZE_WHITESPACE
['heartbeat_ms', 'nodes', 'part_median_ms', 'part_spread', 'stall_max_ms',
 'stall_min_ms', 'stalls_per_hour']
>>> o = outcomes(7, ttl_ms=60_000, heartbeat_timeout_ms=30_000)
>>> o["healthy_failed"], o["false_alarms_per_node_hour"]
(0, 0.0)
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from .forms import is_whole, shown

NAME = "09_ttl_and_heartbeat_timeout"
VARIANT = True
REFUSE: dict[str, tuple[str, ...]] = {}

#: how the tests measure a choice: these many healthy snapshots, node-hours of
#: heartbeats and crashes, with this seed (the learner's check measures the same)
SNAPSHOTS = 4000
NODE_HOURS = 20
CRASHES = 1000
GRADING_SEED = 9
#: a heartbeat takes this long to arrive (ms), plus an exponential jitter of this mean
HEARTBEAT_DELAY_MS = 5
HEARTBEAT_JITTER_MS = 10


def cluster(variant: int) -> dict[str, Any]:
    """The learner's cluster: ``nodes``, a heartbeat every ``heartbeat_ms``, each node's
    part of a snapshot in a log-normal time (median ``part_median_ms``, ``part_spread``
    the standard deviation of its logarithm), and ``stalls_per_hour`` stalls per node,
    each from ``stall_min_ms`` to ``stall_max_ms`` long."""
    rng = random.Random(f"{NAME}/cluster/{variant}")
    return {
        "nodes": rng.randint(4, 8),
        "heartbeat_ms": rng.randrange(150, 651, 50),
        "part_median_ms": rng.randrange(300, 1501, 50),
        "part_spread": rng.choice((0.3, 0.35, 0.4, 0.45, 0.5)),
        "stalls_per_hour": rng.choice((2, 3, 4, 6)),
        "stall_min_ms": 300,
        "stall_max_ms": rng.randrange(1000, 3001, 100),
    }


def budget(variant: int) -> dict[str, Any]:
    """The learner's budget: ``healthy_failed`` of the :data:`SNAPSHOTS` healthy snapshots
    at most, none held longer than ``max_ttl_ms`` (the nodes' buffers), at most
    ``false_alarms_per_node_hour``, and 95 % of crashed nodes declared down within
    ``detection_p95_ms`` of the crash. Made so that a range of settings meets it."""
    c = cluster(variant)
    # the slowest of n parts is below q with probability F(q)^n: a time-to-live at the
    # 1 - 1/1000 quantile of that fails about one healthy snapshot in a thousand
    slowest = _part_quantile(c, (1 - 0.001) ** (1 / c["nodes"]))
    longest_gap = c["stall_max_ms"] + c["heartbeat_ms"] + 4 * HEARTBEAT_JITTER_MS
    return {
        "healthy_failed": 4,
        "max_ttl_ms": int(round(1.8 * slowest, -2)),
        "false_alarms_per_node_hour": 0.25,
        "detection_p95_ms": int(round(longest_gap * 1.3 + c["heartbeat_ms"], -2)),
    }


def _part_quantile(c: dict[str, Any], p: float) -> float:
    from statistics import NormalDist

    return float(c["part_median_ms"] * math.exp(c["part_spread"] * NormalDist().inv_cdf(p)))


def _snapshot_ms(c: dict[str, Any], rng: random.Random) -> float:
    """A healthy snapshot's duration: the slowest node's part."""
    mu = math.log(c["part_median_ms"])
    return max(rng.lognormvariate(mu, c["part_spread"]) for _ in range(c["nodes"]))


def _arrivals(c: dict[str, Any], hours: float, rng: random.Random) -> list[float]:
    """When one node's heartbeats reach the controller over ``hours``: each is sent every
    ``heartbeat_ms`` and takes a short, jittered delay, except that during a stall none
    leaves the node until the stall ends."""
    span = hours * 3_600_000
    stalls = []
    t = rng.expovariate(c["stalls_per_hour"] / 3_600_000)
    while t < span:
        stalls.append((t, t + rng.uniform(c["stall_min_ms"], c["stall_max_ms"])))
        t += rng.expovariate(c["stalls_per_hour"] / 3_600_000)
    out, k, s = [], 0, 0
    while (sent := k * c["heartbeat_ms"]) < span:
        while s < len(stalls) and stalls[s][1] <= sent:
            s += 1
        if s < len(stalls) and stalls[s][0] <= sent:
            sent = stalls[s][1]  # held until the stall ends
        out.append(sent + HEARTBEAT_DELAY_MS + rng.expovariate(1 / HEARTBEAT_JITTER_MS))
        k += 1
    out.sort()
    return out


def observations(variant: int, seed: int = 0) -> dict[str, list[float]]:
    """What an engineer measures on the cluster before choosing: the durations (ms) of
    500 healthy snapshots, and the gaps (ms) between one node's consecutive heartbeats
    over an hour, in the order they were seen."""
    c = cluster(variant)
    rng = random.Random(f"{NAME}/observe/{variant}/{seed}")
    arrivals = _arrivals(c, 1, rng)
    return {
        "snapshot_ms": [round(_snapshot_ms(c, rng), 1) for _ in range(500)],
        "heartbeat_gaps_ms": [round(b - a, 1) for a, b in itertools.pairwise(arrivals)],
    }


def outcomes(
    variant: int, ttl_ms: float, heartbeat_timeout_ms: float, seed: int = GRADING_SEED
) -> dict[str, Any]:
    """What the two settings do on the learner's cluster, simulated: how many of
    :data:`SNAPSHOTS` healthy snapshots the time-to-live fails, live nodes declared down
    per node and hour, and the time (ms) from a node's crash until it is declared down
    (and the snapshots waiting for it FAILED), as its 95th percentile."""
    c = cluster(variant)
    rng = random.Random(f"{NAME}/outcomes/{variant}/{seed}")
    durations = [_snapshot_ms(c, rng) for _ in range(SNAPSHOTS)]
    healthy_failed = sum(d > ttl_ms for d in durations)
    alarms = 0
    for _ in range(NODE_HOURS):
        arrivals = _arrivals(c, 1, rng)
        alarms += sum(b - a > heartbeat_timeout_ms for a, b in itertools.pairwise(arrivals))
    detections = []
    for _ in range(CRASHES):
        crash = rng.uniform(0, _snapshot_ms(c, rng))  # a crash in the middle of a snapshot
        # the node's last heartbeat left at the last multiple of heartbeat_ms before it
        # crashed (its phase against the snapshot's start is random) and arrived shortly
        phase = rng.uniform(0, c["heartbeat_ms"])
        last_sent = crash - ((crash - phase) % c["heartbeat_ms"])
        last_heard = last_sent + HEARTBEAT_DELAY_MS + rng.expovariate(1 / HEARTBEAT_JITTER_MS)
        detections.append(max(0.0, last_heard + heartbeat_timeout_ms - crash))
    detections.sort()
    return {
        "healthy_failed": healthy_failed,
        "longest_hold_ms": ttl_ms,
        "false_alarms_per_node_hour": round(alarms / NODE_HOURS, 2),
        "detection_p95_ms": round(detections[int(0.95 * len(detections))]),
    }


def read_ms(answer: Any, what: str) -> int:
    """A setting in whole milliseconds, at least 1; AssertionError saying what to write.

    >>> read_ms(1500, "ttl_ms")
    1500
    >>> read_ms("1.5 s", "ttl_ms")
    Traceback (most recent call last):
    AssertionError: ttl_ms is '1.5 s': write a whole number of milliseconds, e.g. 1500
    """
    if not (is_whole(answer) and answer >= 1):
        raise AssertionError(
            f"{what} is {shown(answer)}: write a whole number of milliseconds, e.g. 1500"
        )
    return int(answer)


def describe(variant: int) -> str:
    """The learner's cluster and budget in words."""
    c, b = cluster(variant), budget(variant)
    return (
        f"Your cluster: {c['nodes']} nodes, each sending a heartbeat every "
        f"{c['heartbeat_ms']} ms (it arrives {HEARTBEAT_DELAY_MS} ms later plus a jitter of "
        f"{HEARTBEAT_JITTER_MS} ms on average). A node reports its part of a snapshot in "
        f"about {c['part_median_ms']} ms (the median; the spread is log-normal), and a "
        "snapshot is complete when the slowest node's part is in. About "
        f"{c['stalls_per_hour']} times an hour a node stalls for {c['stall_min_ms']} to "
        f"{c['stall_max_ms']} ms: it is alive, but no heartbeat leaves it meanwhile.\n"
        f"Your budget: at most {b['healthy_failed']} of {SNAPSHOTS} healthy snapshots failed "
        f"by the time-to-live; no snapshot held open longer than {b['max_ttl_ms']} ms (the "
        f"nodes buffer for it until then); at most {b['false_alarms_per_node_hour']} live "
        "nodes declared down per node and hour; 95 % of crashed nodes declared down (and "
        f"the snapshots waiting for them FAILED) within {b['detection_p95_ms']} ms of the "
        "crash."
    )

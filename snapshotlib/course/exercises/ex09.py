"""Exercise 9, *The coordinator's registry*: checkpoint logs as plain data, the runs they
come from, and the coordinator's own decisions to grade against.

A **log** is what a checkpoint coordinator hears, in order: a list of events, each a
dict with the ``step`` it happened at and one of

* ``"trigger": ID``: checkpoint ID starts (its barriers are injected);
* ``"done": ID, "node": NODE``: NODE reports its part of ID finished;
* ``"crash": NODE``: NODE fails;
* ``"end": True``: the log stops here (always last).

Within a step the order is: reports for checkpoints triggered earlier, then (unwritten)
the time-to-live running out, then triggers and the reports that come with them, then a
crash. :func:`job_log` takes a log from a run of lesson 08's streaming jobs,
:func:`random_log` draws one with the awkward cases made likely, and :func:`replay` runs
a log through the engine's :class:`~snapshotlib.dataflow.coordinator.CheckpointCoordinator`
(the tests' truth).

>>> case = random_log(3)
>>> case["log"][-1]["end"], sorted(case) == ["log", "nodes", "ttl"]
(True, True)
>>> replay(**job_log(1)) == job_registry(1)
True
"""

from __future__ import annotations

import random
from typing import Any

from .precomputed import precomputed_for

NAME = "09_coordinator_ttl_restore"
VARIANT = False

#: the engine's coordinator decides what the answers are asked to decide
_COORDINATOR = (
    "snapshotlib.dataflow.coordinator:CheckpointCoordinator",
    "snapshotlib.dataflow.coordinator:CheckpointEntry",
    "snapshotlib.dataflow.job:StreamJob",
    "snapshotlib.course.exercises.ex09:replay",
    "snapshotlib.course.exercises.ex09:job_registry",
    "snapshotlib.course.lesson_08:registry_table",
    "snapshotlib.course.lesson_08:registry_text",
    "snapshotlib.course.lesson_08:restore_text",
    "snapshotlib.course.lesson_08:check_restore_point",
)
REFUSE: dict[str, tuple[str, ...]] = {"registry": _COORDINATOR, "restore_point": _COORDINATOR}

#: the order of events within one step (see the module docstring)
_EARLIER_REPORT, _TRIGGER, _CRASH, _END = 0, 1, 3, 4


def _ordered(events: list[tuple[int, int, int, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [e for *_, e in sorted(events, key=lambda x: x[:3])]


def _job(seed: int) -> Any:
    from ...dataflow import StreamJob, word_count

    rng = random.Random(f"{NAME}/job/{seed}")
    flow = word_count(records=rng.randint(8, 16), keys=rng.randint(3, 8))
    job = StreamJob(
        flow,
        rng.choice(["aligned", "unaligned", "chandy-lamport"]),
        seed=seed,
        ttl=rng.choice([None, rng.randint(12, 40)]),
        interval=rng.randint(8, 20),
        max_concurrent=rng.choice([1, 2]),
    )
    crash = rng.random() < 0.7
    job.run(crash_at=(rng.randint(25, 110), rng.choice(job.network.processes)) if crash else None)
    return job


@precomputed_for(lambda variant: [(17,)])  # the notebook's job: made by the coordinator
def job_log(seed: int) -> dict[str, Any]:
    """The log of a random run of a word-count job (variant, interval, time-to-live, at
    most one or two checkpoints at a time, maybe a crash), with its nodes and TTL."""
    job = _job(seed)
    events: list[tuple[int, int, int, dict[str, Any]]] = []
    for n, entry in enumerate(job.coordinator.entries.values()):
        t = entry.triggered_at
        events.append((t, _TRIGGER, n, {"step": t, "trigger": entry.id}))
        for node, at in entry.nodes_completed.items():
            rank = _TRIGGER if at == t else _EARLIER_REPORT
            events.append((at, rank, n, {"step": at, "done": entry.id, "node": node}))
    crashes = [(at, what) for at, what in job.events if what.endswith(" crashed")]
    for at, what in crashes:
        events.append((at, _CRASH, 0, {"step": at, "crash": what.split()[0]}))
    events.append((job.steps, _END, 0, {"step": job.steps, "end": True}))
    return {
        "log": _ordered(events),
        "nodes": list(job.network.processes),
        "ttl": job.coordinator.ttl,
    }


def job_registry(seed: int) -> dict[str, tuple[str, int | None]]:
    """The registry the engine kept for :func:`job_log` ``(seed)``: id -> (status, ended_at)."""
    return {e.id: (e.status, e.ended_at) for e in _job(seed).coordinator.entries.values()}


def random_log(seed: int) -> dict[str, Any]:
    """A random log with its nodes and TTL, the awkward cases made likely: a last report
    in the very step the TTL runs out or one step late, a trigger or a crash in the step
    a checkpoint expires, reports for checkpoints already failed, several pending at once,
    a checkpoint still pending at the end, no TTL at all."""
    rng = random.Random(f"{NAME}/random/{seed}")
    nodes = ["S", "A", "B", "K"][: rng.randint(2, 4)]
    ttl = None if rng.random() < 0.15 else rng.randint(4, 12)
    span = 8 if ttl is None else ttl
    events: list[tuple[int, int, int, dict[str, Any]]] = []
    step, crash_at = rng.randint(0, 3), rng.choice([None, rng.randint(10, 45)])
    for n in range(rng.randint(3, 7)):
        cid = f"c{n + 1}"
        events.append((step, _TRIGGER, n, {"step": step, "trigger": cid}))
        for k, node in enumerate(rng.sample(nodes, len(nodes))):
            at = step + rng.randint(0, span)
            if k == len(nodes) - 1 and ttl is not None:
                at = rng.choice([at, step + ttl, step + ttl + 1, step + ttl + 1, step + ttl + 2])
            rank = _TRIGGER if at == step else _EARLIER_REPORT
            events.append((at, rank, n, {"step": at, "done": cid, "node": node}))
        gap = rng.choice([1, 2, 3, 5, span + 1])
        if ttl is not None and rng.random() < 0.3:
            gap = ttl + 1  # the next trigger in the step this one would expire
        step += gap
    if crash_at is not None:
        if ttl is not None and rng.random() < 0.4:
            crash_at = events[0][0] + ttl + 1  # in the step the first would expire
        events.append((crash_at, _CRASH, 0, {"step": crash_at, "crash": rng.choice(nodes)}))
    end = max(e[0] for e in events) + rng.randint(0, 4)
    if rng.random() < 0.3:  # stop the log while something is pending
        end = max(e[0] for e in events if "trigger" in e[3])
        events = [e for e in events if e[0] <= end]
    events.append((end, _END, 0, {"step": end, "end": True}))
    return {"log": _ordered(events), "nodes": nodes, "ttl": ttl}


def replay(
    log: list[dict[str, Any]], nodes: list[str], ttl: int | None
) -> dict[str, tuple[str, int | None]]:
    """Run ``log`` through the engine's coordinator, step by step as a job does: each
    checkpoint's (status, ended_at), ``ended_at`` ``None`` while it is INITIATED."""
    from ...dataflow.coordinator import CheckpointCoordinator

    coordinator = CheckpointCoordinator(nodes, ttl)
    by_step: dict[int, list[dict[str, Any]]] = {}
    for event in log:
        by_step.setdefault(int(event["step"]), []).append(event)
    for step in range(max(by_step, default=0) + 1):
        events = by_step.get(step, [])
        expired = False
        for event in events:
            early = "done" in event and coordinator.entries[event["done"]].triggered_at < step
            if not early and not expired:
                coordinator.expire(step)
                expired = True
            if "trigger" in event:
                coordinator.trigger(event["trigger"], step)
            elif "done" in event:
                coordinator.node_done(event["done"], event["node"], step)
            elif "crash" in event:
                coordinator.on_crash(event["crash"], step)
        if not expired:
            coordinator.expire(step)
    return {e.id: (e.status, e.ended_at) for e in coordinator.entries.values()}


def random_rows(seed: int) -> list[dict[str, Any]]:
    """A registry at the moment of a crash, as rows in no particular order: completed
    checkpoints often end in another order than they started."""
    rng = random.Random(f"{NAME}/rows/{seed}")
    rows, step = [], rng.randint(0, 5)
    for n in range(rng.randint(1, 7)):
        status = rng.choice(["COMPLETED", "COMPLETED", "FAILED", "INITIATED"])
        ended = None if status == "INITIATED" else step + rng.randint(1, 30)
        rows.append({"id": f"c{n + 1}", "status": status, "triggered_at": step, "ended_at": ended})
        step += rng.randint(2, 10)
    rng.shuffle(rows)
    return rows

"""Exercise 12, *The live controller's decisions*: journals of real clusters' controllers,
random ones with the awkward cases made likely, and the rule the controller follows.

A **journal** is what the live lab's controller appends, one event per line, each with
its time ``t`` in milliseconds and one of:

* ``"trigger": ID`` (and ``"node"``, the initiator): the snapshot is registered;
* ``"part": ID, "node": NODE, "ok": BOOL``: NODE reported its part (written, or failed);
* ``"left": NODE`` / ``"joined": NODE``: the membership changed;
* ``"restore": ID``: a restore from snapshot ID was decided (every node ready);
* ``"start_failed": ID``: the initiating node could not be asked to start it;
* ``"failed": ID`` (and ``"error"``): every part was in, but the controller could not
  complete the snapshot (a part it read back was not one, or the manifest was not
  written); journalled before the last part, at its time;
* ``"controller_started": True``: a controller (re)started on the registry;
* ``"end": True``: the journal stops here (always last; added when it was read).

:func:`recorded` gives journals recorded from real clusters with the status each
snapshot really ended with (``tools/record_live_journals.py`` made them, and checked
:func:`replay` against each), :func:`random_journal` draws one, and :func:`replay`
applies the controller's rule (the tests' truth).

>>> case = random_journal(3)
>>> case["journal"][-1]["end"], sorted(case) == ["journal", "nodes", "ttl_ms"]
(True, True)
>>> all(replay(**c) == c["registry"] for c in (recorded(k) for k in range(len(CASES))))
True
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

NAME = "12_live_controller"
VARIANT = False

REFUSE: dict[str, tuple[str, ...]] = {
    "statuses": (
        "snapshotlib.course.exercises.ex12:replay",
        "snapshotlib.live.controller:create_app",
        "snapshotlib.live.control:Controller",
        "snapshotlib.live.snapshot_service:Journal",
    ),
}

#: the recorded journals (see the module docstring)
DATA = Path(__file__).with_name("data") / "live_journals.json"
#: events that fail every snapshot still open
FAIL_ALL = ("left", "joined", "restore", "controller_started")


@cache
def _cases() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(DATA.read_text(encoding="utf-8")))


class _Cases:
    def __len__(self) -> int:
        return len(_cases())


#: ``len(CASES)``: how many recorded journals there are
CASES = _Cases()


def recorded(k: int) -> dict[str, Any]:
    """Recorded journal ``k``: ``journal``, ``nodes``, ``ttl_ms``, the ``registry`` (each
    snapshot's real final status) and the scenario's ``name``."""
    case = _cases()[k]
    return {key: json.loads(json.dumps(value)) for key, value in case.items()}


def replay(
    journal: list[dict[str, Any]], nodes: list[str], ttl_ms: int, **_: Any
) -> dict[str, str]:
    """Each snapshot's status as the controller decides from ``journal``."""
    status: dict[str, str] = {}
    started: dict[str, int] = {}
    parts: dict[str, set[str]] = {}

    def still_open() -> list[str]:
        return [sid for sid, s in status.items() if s in ("INITIATED", "IN_PROGRESS")]

    for event in sorted(journal, key=lambda e: e["t"]):
        t = event["t"]
        for sid in still_open():  # the time-to-live runs out before anything else
            if t - started[sid] >= ttl_ms:
                status[sid] = "FAILED"
        if "trigger" in event:
            sid = event["trigger"]
            status[sid], started[sid], parts[sid] = "INITIATED", t, set()
        elif "part" in event:
            sid = event["part"]
            if status.get(sid) not in ("INITIATED", "IN_PROGRESS"):
                continue
            if not event["ok"]:
                status[sid] = "FAILED"
                continue
            parts[sid].add(event["node"])
            status[sid] = "COMPLETED" if parts[sid] >= set(nodes) else "IN_PROGRESS"
        elif "start_failed" in event or "failed" in event:  # fails its own snapshot
            sid = str(event.get("start_failed", event.get("failed")))
            if status.get(sid) in ("INITIATED", "IN_PROGRESS"):
                status[sid] = "FAILED"
        elif any(kind in event for kind in FAIL_ALL):
            for sid in still_open():
                status[sid] = "FAILED"
    return status


def random_journal(seed: int) -> dict[str, Any]:
    """A journal with the awkward cases made likely: the last part at the very
    millisecond the time-to-live runs out (or one before), parts after a failure,
    changes of membership, restores and restarts while snapshots are open, a start that
    failed, a completion that failed, snapshots still open at the end, overlapping
    snapshots."""
    rng = random.Random(f"{NAME}/{seed}")
    nodes = [f"P{i}" for i in range(1, rng.randint(2, 4) + 1)]
    ttl = rng.choice([300, 500, 1000])
    t = 0
    journal: list[dict[str, Any]] = []
    for n in range(1, rng.randint(1, 5) + 1):
        sid = f"snap-{n:04d}-{rng.randrange(16**5):05x}"
        t += rng.randint(0, ttl)
        journal.append({"t": t, "trigger": sid, "node": rng.choice(nodes)})
        fate = rng.choice(["complete", "complete", "boundary", "bad part", "membership",
                           "start failed", "not completed", "open"])  # fmt: skip
        reporting = (
            list(nodes) if fate != "open" else rng.sample(nodes, rng.randint(0, len(nodes) - 1))
        )
        last = t + rng.choice([ttl - 1, ttl]) if fate == "boundary" else None
        parts = []
        for k, node in enumerate(rng.sample(reporting, len(reporting))):
            when = last if last is not None and k == len(reporting) - 1 else None
            when = when if when is not None else t + rng.randint(0, ttl - 2)
            ok = not (fate == "bad part" and k == len(reporting) - 1)
            parts.append({"t": when, "part": sid, "node": node, "ok": ok})
        if fate == "not completed" and parts:
            # as the controller journals it: just before the last part, at its time
            latest = max(range(len(parts)), key=lambda k: (parts[k]["t"], k))
            failed = {"t": parts[latest]["t"], "failed": sid, "error": "manifest: disk full"}
            parts.insert(latest, failed)
        journal += parts
        if fate == "start failed":
            journal.append({"t": t + rng.randint(0, 3), "start_failed": sid})
        elif fate == "membership":
            kind = rng.choice(["left", "joined", "restore", "controller_started"])
            value: Any = {"left": rng.choice(nodes), "joined": rng.choice(nodes)}.get(kind, True)
            if kind == "restore":
                value = "snap-0001-00000"
            journal.append({"t": t + rng.randint(0, ttl + 100), kind: value})
    end = max(e["t"] for e in journal) + rng.choice([0, 1, ttl // 2, ttl + 50])
    journal.sort(key=lambda e: e["t"])
    journal.append({"t": end, "end": True})
    return {"journal": journal, "nodes": nodes, "ttl_ms": ttl}

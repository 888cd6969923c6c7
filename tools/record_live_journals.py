"""Record the controller journals exercise 12 is graded on, from real live clusters.

    python tools/record_live_journals.py        # needs the live extra; about 2 minutes

Each scenario starts a cluster of 3 nodes, makes something happen (snapshots, a crash,
a time-to-live running out, a node leaving, a restore, the controller killed), waits
until no snapshot is open, and keeps the controller's journal (times made relative to
its first event) with the status each snapshot really ended with in the registry. The
exercise's rule (``ex12.replay``) must give those statuses from the journal: a
scenario where it does not is run again (a report and a membership change can race by
a millisecond), and one that never agrees stops the tool, since it would mean the rule
taught is not the controller's. Writes ``snapshotlib/course/exercises/data/
live_journals.json``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from snapshotlib.course.exercises import ex12  # noqa: E402
from snapshotlib.live.cluster import LiveCluster, LiveClusterError  # noqa: E402

FAST = {"heartbeat_ms": 200, "heartbeat_timeout_ms": 1500}
TRIES = 3


def until(what: Callable[[], Any], backstop_s: float = 60.0) -> Any:
    deadline = time.monotonic() + backstop_s
    while True:
        try:
            value = what()
        except (OSError, LiveClusterError):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError("the cluster did not get there")
        time.sleep(0.1)


def health(c: LiveCluster, node: str) -> str:
    return str(next(n["health"] for n in c.cluster()["nodes"] if n["id"] == node))


def settle(c: LiveCluster) -> None:
    """Wait until no snapshot is open."""
    until(
        lambda: all(
            s["status"] in ("COMPLETED", "FAILED")
            for s in c.request("GET", "/v1/snapshots")["snapshots"]
        )
    )


def restore_when_back(c: LiveCluster, node: str) -> None:
    until(lambda: health(c, node) == "awaiting-restore")
    until(lambda: c.restore())
    until(lambda: all(n["health"] == "up" for n in c.cluster()["nodes"]))


# ------------------------------------------------------------------- scenarios
def one_after_another(c: LiveCluster) -> None:
    for node in ("P1", "P2", "P3"):
        c.wait(c.trigger(node))


def all_at_once(c: LiveCluster) -> None:
    threads = [threading.Thread(target=c.trigger, args=(n,)) for n in ("P1", "P2", "P3")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def crash_mid_snapshot(c: LiveCluster) -> None:
    c.wait(c.trigger("P1"))
    c.trigger("P2")
    time.sleep(0.3)
    c.crash("P3")
    restore_when_back(c, "P3")
    c.wait(c.trigger("P1"))


def time_to_live(c: LiveCluster) -> None:
    c.trigger("P1")
    time.sleep(0.3)
    c.trigger("P2")


def leave_then_join(c: LiveCluster) -> None:
    c.wait(c.trigger("P1"))
    c.trigger("P3")
    time.sleep(0.2)
    os.killpg(c.pids["P2"], signal.SIGTERM)
    restore_when_back(c, "P2")
    c.wait(c.trigger("P2"))


def restore_while_open(c: LiveCluster) -> None:
    done = c.trigger("P1")
    c.wait(done)
    c.trigger("P2")
    time.sleep(0.2)
    c.restore(done)
    until(lambda: all(n["epoch"] == 1 for n in c.cluster()["nodes"]))
    c.wait(c.trigger("P3"))


def controller_killed(c: LiveCluster) -> None:
    c.trigger("P1")
    time.sleep(0.3)
    os.killpg(c.pids["controller"], signal.SIGKILL)
    until(lambda: c.cluster())
    until(lambda: all(n["health"] == "up" for n in c.cluster()["nodes"]))
    c.wait(c.trigger("P2"))


def silent_node(c: LiveCluster) -> None:
    c.trigger("P1")
    pid = c.pids["P3"]
    os.kill(pid, signal.SIGSTOP)
    try:
        until(lambda: health(c, "P3") == "down")
    finally:
        os.kill(pid, signal.SIGCONT)
    until(lambda: health(c, "P3") == "up")
    c.wait(c.trigger("P2"))


SCENARIOS: list[tuple[str, Callable[[LiveCluster], None], dict[str, Any]]] = [
    ("one snapshot after another", one_after_another, {}),
    ("three initiators at once", all_at_once, {"marker_delay_ms": 200}),
    ("a crash mid-snapshot, then a restore", crash_mid_snapshot, {"marker_delay_ms": 800}),
    ("the time-to-live runs out", time_to_live, {"marker_delay_ms": 1000, "ttl_ms": 1500}),
    ("a node leaves, then joins", leave_then_join, {"marker_delay_ms": 800}),
    ("a restore while a snapshot is open", restore_while_open, {"marker_delay_ms": 800}),
    ("the controller is killed", controller_killed, {"marker_delay_ms": 800}),
    ("a node falls silent, then is back", silent_node, {"marker_delay_ms": 800}),
]


def record(name: str, scenario: Callable[[LiveCluster], None], settings: dict[str, Any]) -> Any:
    with tempfile.TemporaryDirectory(prefix="journal-") as folder:
        with LiveCluster(3, rate=30.0, workdir=folder, **{**FAST, **settings}) as c:
            scenario(c)
            settle(c)
            rows = c.request("GET", "/v1/snapshots")["snapshots"]
            end = time.time_ns() // 1_000_000
            ttl = c.ttl_ms
        lines = Path(folder, "journal.jsonl").read_text(encoding="utf-8").splitlines()
    events = (json.loads(line) for line in lines)
    # what came after the end is the cluster stopping (every node leaving)
    journal = sorted((e for e in events if e["t"] <= end), key=lambda e: e["t"])
    journal.append({"t": end, "end": True})
    first = journal[0]["t"]
    for event in journal:
        event["t"] -= first
    return {
        "name": name,
        "nodes": ["P1", "P2", "P3"],
        "ttl_ms": ttl,
        "journal": journal,
        "registry": {r["snapshot_id"]: r["status"] for r in rows},
    }


def main() -> int:
    cases = []
    for name, scenario, settings in SCENARIOS:
        for attempt in range(1, TRIES + 1):
            case = record(name, scenario, settings)
            if ex12.replay(**case) == case["registry"]:
                break
            print(f"{name}: the rule disagrees (try {attempt}): {case}", file=sys.stderr)
        else:
            print(f"{name}: the controller does not follow the rule", file=sys.stderr)
            return 1
        statuses = sorted(case["registry"].values())
        print(f"{name}: {len(case['journal'])} events, {statuses}")
        cases.append(case)
    ex12.DATA.parent.mkdir(exist_ok=True)
    ex12.DATA.write_text(json.dumps(cases, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {ex12.DATA.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

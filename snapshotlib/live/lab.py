"""The live lab, graded: a learner's snapshot algorithm on real processes.

``snapshotlib live lab --algorithm my_markers.py:MarkerRules`` starts a cluster whose
nodes run the learner's class (:mod:`.algorithm_choice`) while the bank sends money at
random, and takes snapshots from random nodes at random moments, two at once now and
then. Halfway it crashes a node, restores every node to the latest completed snapshot
and goes on in the new epoch. Every snapshot must complete and pass the engine's check
of the run the nodes' logs assemble into (:mod:`.runlog`): a consistent cut whose
channel states hold what crossed it, with all the money. A learner's bug shows as the
check names it: the message a channel recorded wrongly, the node that recorded what the
engine did not. What the class raised on a node is shown too (the node goes on).

The run is random but seeded: ``--seed`` chooses the moments, the initiators and the
node that crashes; the transfers' timing is the machine's own.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..simulator import Simulator
from ..trace import APP, NOT_RECEIVED
from .cluster import LiveCluster, LiveClusterError

#: wall-clock backstops (seconds) for what the cluster does by itself; never limits on
#: the work, which a loaded machine slows down
BACKSTOP_S = 60.0
#: a snapshot whose part is not done this long after a node recorded fails (the lab's
#: time-to-live: a class that never finishes fails in seconds, not in half a minute)
LAB_TTL_MS = 8000
#: each marker is held up this long on its channel (what follows it waits behind it, so
#: channels stay FIFO): meanwhile the other nodes go on sending, so a snapshot finds
#: messages in transit to record, which a fast loopback network would rarely leave
MARKER_DELAY_MS = 25


@dataclass(frozen=True)
class LabSnapshot:
    """One snapshot the lab took: who started it, in which epoch, and the verdict."""

    snapshot_id: str
    initiator: str
    epoch: int
    ok: bool
    reason: str = ""
    #: messages in transit across the cut (what the channel states must hold)
    in_transit: int = 0

    def line(self) -> str:
        verdict = "passed" if self.ok else f"FAILED: {self.reason}"
        transit = f", {self.in_transit} in transit" if self.ok else ""
        return f"{self.snapshot_id} from {self.initiator} (epoch {self.epoch}{transit}): {verdict}"


@dataclass(frozen=True)
class LabReport:
    """The lab's outcome: every snapshot's verdict, what crashed, what the class raised."""

    algorithm: str
    snapshots: tuple[LabSnapshot, ...]
    crashed: str | None
    raised: tuple[str, ...]
    #: what went wrong besides the snapshots (a crash or restore that did not finish)
    problems: tuple[str, ...] = ()

    @property
    def passed(self) -> int:
        return sum(s.ok for s in self.snapshots)

    @property
    def tested_channels(self) -> bool:
        """Whether some snapshot had messages in transit: else the run did not test what
        a class records on its channels, and passing says nothing of it."""
        return any(s.in_transit for s in self.snapshots)

    @property
    def ok(self) -> bool:
        every = bool(self.snapshots) and self.passed == len(self.snapshots)
        return every and self.tested_channels and not self.raised and not self.problems

    def summary(self) -> str:
        """The verdict in a few lines (each snapshot's was said as it was judged)."""
        crash = f", {self.crashed} crashed and restored" if self.crashed else ""
        lines = [f"{self.passed} of {len(self.snapshots)} snapshots passed{crash}"]
        lines.extend(self.problems)
        if self.passed == len(self.snapshots) and not self.tested_channels:
            lines.append(
                "no snapshot had a message in transit across its cut, so this run did not "
                "test the channel states: run it again with another --seed"
            )
        if self.raised:
            lines.append("your class, on the nodes:")
            lines.extend(f"  {r}" for r in self.raised)
        return "\n".join(lines)


def run_lab(
    algorithm: str,
    *,
    snapshots: int = 6,
    nodes: int = 4,
    crash: bool = True,
    seed: int = 0,
    rate: float = 200.0,
    workdir: str | Path | None = None,
    say: Callable[[str], None] = print,
) -> LabReport:
    """Run the lab on ``algorithm`` (``MODULE:CLASS`` or ``FILE.py:CLASS``); see the
    module docstring. ``say`` hears a line per snapshot as it is judged."""
    if snapshots < 1 or nodes < 2:
        raise ValueError("the lab takes at least 1 snapshot on at least 2 nodes")
    rng = random.Random(seed)
    taken: list[LabSnapshot] = []
    problems: list[str] = []
    crashed: str | None = None
    crash_at = snapshots // 2 if crash and snapshots > 1 else None
    with LiveCluster(
        nodes,
        "complete",
        rate=rate,
        seed=seed,
        workdir=workdir,
        algorithm=algorithm,
        ttl_ms=LAB_TTL_MS,
        marker_delay_ms=MARKER_DELAY_MS,
        heartbeat_ms=200,
        heartbeat_timeout_ms=30000,  # nobody is taken for gone on a loaded machine
    ) as cluster:
        assert cluster.spec is not None  # started by the with statement
        ids = list(cluster.spec.ids)
        epoch = 0
        while len(taken) < snapshots:
            if crash_at is not None and crashed is None and len(taken) >= crash_at:
                good = [s for s in taken if s.ok]
                if good:  # a restore needs a completed snapshot to go back to
                    crashed = rng.choice(ids)
                    say(f"crashing {crashed}, then restoring every node to {good[-1].snapshot_id}")
                    try:
                        epoch = _crash_and_restore(cluster, crashed, good[-1].snapshot_id)
                    except LiveClusterError as e:
                        problems.append(f"the crash and restore did not finish: {e}")
                        say(problems[-1])
                        break
                else:
                    crash_at = None
                    say("no snapshot passed to restore to: no crash this time")
            time.sleep(rng.uniform(0.2, 0.8))  # a run of random transfers in between
            initiators = rng.sample(ids, 2 if rng.random() < 0.4 else 1)
            initiators = initiators[: snapshots - len(taken)]
            started = [(_trigger(cluster, p), p) for p in initiators]
            for sid, p in started:
                if isinstance(sid, LiveClusterError):
                    judged = LabSnapshot("-", p, epoch, False, f"could not start: {sid}")
                else:
                    judged = _judge(cluster, sid, p, epoch)
                say(judged.line())
                taken.append(judged)
        raised = _raised(cluster.workdir, ids, algorithm.rpartition(":")[2])
    return LabReport(algorithm, tuple(taken), crashed, raised, tuple(problems))


def _trigger(cluster: LiveCluster, node: str) -> str | LiveClusterError:
    """A snapshot started at ``node``: its id, or why the controller refused it (a class
    whose start raised, say)."""
    try:
        return cluster.trigger(node)
    except LiveClusterError as e:
        return e


def _judge(cluster: LiveCluster, snapshot_id: str, initiator: str, epoch: int) -> LabSnapshot:
    try:
        status = cluster.wait(snapshot_id, timeout=BACKSTOP_S + LAB_TTL_MS / 1000)
    except LiveClusterError as e:
        return LabSnapshot(snapshot_id, initiator, epoch, False, str(e))
    if status["status"] != "COMPLETED":
        why = status.get("error") or status["status"]
        return LabSnapshot(snapshot_id, initiator, epoch, False, f"did not complete: {why}")
    try:
        check = cluster.check(snapshot_id)
    except LiveClusterError as e:
        return LabSnapshot(snapshot_id, initiator, epoch, False, str(e))
    transit = 0 if check.simulator is None else in_transit(check.simulator, snapshot_id)
    return LabSnapshot(snapshot_id, initiator, epoch, check.ok, check.reason or "", transit)


def in_transit(sim: Simulator, snapshot_id: str) -> int:
    """Application messages sent before their sender recorded ``snapshot_id`` and
    received after their receiver did (or not yet): what its channel states must hold."""
    red = sim.red_from(snapshot_id)
    channels = sim.network.channels
    trace = sim.trace
    count = 0
    for mid, msg in enumerate(trace.messages):
        if msg.kind != APP:
            continue
        src, dst = channels[msg.channel].src, channels[msg.channel].dst
        if src in red and dst in red and msg.sent_by < red[src]:
            received = trace.received_by[mid]
            count += received == NOT_RECEIVED or received >= red[dst]
    return count


def _crash_and_restore(cluster: LiveCluster, node: str, snapshot_id: str) -> int:
    """Kill ``node``, wait for it to come back empty, restore everyone to
    ``snapshot_id``; the new epoch once every node runs in it."""
    cluster.crash(node)
    _eventually(lambda: _nodes(cluster)[node]["health"] == "awaiting-restore", f"{node} back")
    epoch = int(cluster.restore(snapshot_id)["epoch"])
    _eventually(
        lambda: all(n["health"] == "up" and n["epoch"] == epoch for n in _nodes(cluster).values()),
        f"every node up in epoch {epoch}",
    )
    return epoch


def _nodes(cluster: LiveCluster) -> dict[str, dict[str, Any]]:
    return {n["id"]: n for n in cluster.cluster()["nodes"]}


def _eventually(ready: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + BACKSTOP_S
    while not ready():
        if time.monotonic() > deadline:
            raise LiveClusterError(f"not within {BACKSTOP_S:.0f} s: {what}")
        time.sleep(0.1)


#: lines of what the class raised the report lists at most
MAX_RAISED = 10


def _raised(workdir: Path, ids: list[str], class_name: str) -> tuple[str, ...]:
    """What the learner's class raised or did wrong on the nodes (each node says it in
    its output, a line starting with the node and the class), the first few."""
    found: list[str] = []
    for node in ids:
        try:
            text = (workdir / f"{node}.err").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        mine = (f"{node}: {class_name}.", f"{node}: {class_name} ")
        found.extend(line for line in text.splitlines() if line.startswith(mine))
    found = list(dict.fromkeys(found))
    if len(found) > MAX_RAISED:
        found[MAX_RAISED:] = [f"... and {len(found) - MAX_RAISED} more lines like these"]
    return tuple(found)

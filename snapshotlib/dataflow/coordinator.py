"""The checkpoint coordinator and its registry (the course's lesson on Chandy–Lamport in
production: a historical registry of snapshots, time-to-live, FAILED on a crash).

Every checkpoint has an id, a status (``INITIATED``, ``COMPLETED``, ``FAILED``), the
times it was triggered and ended (in simulation steps), its size, and which node
finished its part when. Nothing is ``COMPLETED`` unless every node finished; a
checkpoint with a crashed node, or still unfinished past its time-to-live, is
``FAILED`` and its partial state is discarded. Only a ``COMPLETED`` checkpoint can be
restored.

>>> reg = CheckpointCoordinator(["S", "K"], ttl=10)
>>> _ = reg.trigger("c1", at=0)
>>> reg.node_done("c1", "S", at=2)
>>> reg.entry("c1").status
'INITIATED'
>>> reg.node_done("c1", "K", at=5)
>>> reg.entry("c1").status, reg.latest_completed().id
('COMPLETED', 'c1')
>>> _ = reg.trigger("c2", at=6)
>>> reg.expire(now=17)
['c2']
>>> reg.entry("c2").reason
'past its time-to-live (10 steps)'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

INITIATED, COMPLETED, FAILED = "INITIATED", "COMPLETED", "FAILED"


@dataclass
class CheckpointEntry:
    """One row of the registry."""

    id: str
    triggered_at: int
    nodes: tuple[str, ...]
    status: str = INITIATED
    ended_at: int | None = None
    reason: str = ""
    state_bytes: int = 0
    inflight_bytes: int = 0
    inflight_messages: int = 0
    #: node -> the step at which it finished its part
    nodes_completed: dict[str, int] = field(default_factory=dict)
    #: the recorded global state, kept only once COMPLETED (a GlobalSnapshot)
    snapshot: Any = None
    #: the job's last checkpoint, taken when its input is done: no time-to-live
    final: bool = False

    @property
    def size_bytes(self) -> int:
        return self.state_bytes + self.inflight_bytes

    @property
    def duration(self) -> int | None:
        return None if self.ended_at is None else self.ended_at - self.triggered_at

    def row(self) -> dict[str, Any]:
        """A JSON-friendly view, as the coordinator's metadata endpoint would show it."""
        return {
            "snapshot_id": self.id,
            "status": self.status,
            "triggered_at": self.triggered_at,
            "ended_at": self.ended_at,
            "duration": self.duration,
            "total_size_bytes": self.size_bytes,
            "state_bytes": self.state_bytes,
            "inflight_bytes": self.inflight_bytes,
            "nodes_completed": len(self.nodes_completed),
            "nodes_failed": 0
            if self.status != FAILED
            else len(self.nodes) - len(self.nodes_completed),
            "reason": self.reason,
        }


class CheckpointCoordinator:
    """Tracks every checkpoint of a job; ``ttl`` (steps) fails the slow ones."""

    def __init__(self, nodes: Iterable[str], ttl: int | None = None) -> None:
        self.nodes = tuple(nodes)
        self.ttl = ttl
        self.entries: dict[str, CheckpointEntry] = {}

    def trigger(self, checkpoint_id: str, at: int, final: bool = False) -> CheckpointEntry:
        if checkpoint_id in self.entries:
            raise ValueError(f"checkpoint {checkpoint_id} was already triggered")
        entry = CheckpointEntry(checkpoint_id, at, self.nodes, final=final)
        self.entries[checkpoint_id] = entry
        return entry

    def entry(self, checkpoint_id: str) -> CheckpointEntry:
        return self.entries[checkpoint_id]

    def pending(self) -> list[CheckpointEntry]:
        return [e for e in self.entries.values() if e.status == INITIATED]

    def node_done(self, checkpoint_id: str, node: str, at: int) -> None:
        """``node`` finished its part; the checkpoint completes with the last node."""
        e = self.entries[checkpoint_id]
        if e.status != INITIATED or node in e.nodes_completed:
            return
        e.nodes_completed[node] = at
        if len(e.nodes_completed) == len(self.nodes):
            e.status, e.ended_at = COMPLETED, at

    def fail(self, checkpoint_id: str, at: int, reason: str) -> None:
        e = self.entries[checkpoint_id]
        if e.status == INITIATED:
            e.status, e.ended_at, e.reason = FAILED, at, reason
            e.snapshot = None  # partial state discarded

    def on_crash(self, node: str, at: int) -> list[str]:
        """Fail every unfinished checkpoint: ``node`` crashed. Returns their ids."""
        failed = [e.id for e in self.pending()]
        for cid in failed:
            self.fail(cid, at, f"{node} crashed")
        return failed

    def expire(self, now: int) -> list[str]:
        """Fail the unfinished checkpoints older than the time-to-live (a final one
        has none: nothing else is left to run, and it may wait for the drain)."""
        if self.ttl is None:
            return []
        late = [e.id for e in self.pending() if not e.final and now - e.triggered_at > self.ttl]
        for cid in late:
            self.fail(cid, now, f"past its time-to-live ({self.ttl} steps)")
        return late

    def latest_completed(self) -> CheckpointEntry | None:
        """The checkpoint a restore uses: the last one COMPLETED (never a FAILED one)."""
        done = [e for e in self.entries.values() if e.status == COMPLETED]
        return max(done, key=lambda e: e.triggered_at, default=None)

    def rows(self) -> list[dict[str, Any]]:
        return [e.row() for e in self.entries.values()]

"""The controller's view of who is in the cluster, from the nodes' heartbeats.

Every node sends a heartbeat every ``heartbeat_ms`` (:mod:`.node`). A node is a
*member* from its first heartbeat; it *leaves* when it says so (it is stopping) or when
no heartbeat came for ``heartbeat_timeout_ms`` (it crashed, or cannot reach the
controller); it *joins* again when heartbeats come back, or come from a new incarnation
of it (a process restarted after a crash, with a new process id). Every leave and join
is a membership change, and a snapshot in progress across one is cancelled: its markers
may never reach the node that left, and a node that joined holds no state of it.

A stall of the controller's own is not counted as the nodes' silence: when the
controller stalls (a loaded machine, a pause of its own), heartbeats queue up unread,
and a detector that woke from the stall and counted it against the nodes would make
every node leave at once. So of a gap between two looks, what is beyond ``stall_s``
(much longer than the monitor's period) is forgiven every node, as failure detectors
that watch for their own pauses do; a node that is really gone is still found out, a
little later.

The view is one process's and needs the controller up: what the system-design text's
gossip membership (Consul, Serf) adds is that every node holds this view, spreads it
peer to peer, and agrees on it without a single controller to ask. Standard library only.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

#: a node's standing, as ``GET /v1/cluster`` shows it
UP, DOWN, AWAITING_RESTORE, UNKNOWN = "up", "down", "awaiting-restore", "unknown"


@dataclass
class Member:
    """What the controller last heard from one node."""

    node_id: str
    incarnation: str = ""
    last_seen: float | None = None
    left: bool = True
    left_because: str = ""
    beat: dict[str, Any] = field(default_factory=dict)

    def health(self) -> str:
        if self.last_seen is None:
            return UNKNOWN
        if self.left:
            return DOWN
        return AWAITING_RESTORE if self.beat.get("awaiting_restore") else UP


class Membership:
    """The membership view of the nodes ``node_ids`` (see the module docstring).

    Times are the caller's monotonic seconds; the methods are thread-safe (heartbeats
    arrive in worker threads, the monitor runs on the event loop).
    """

    def __init__(
        self, node_ids: tuple[str, ...], timeout_s: float, *, stall_s: float | None = None
    ) -> None:
        self.timeout_s = timeout_s
        #: a gap between two looks longer than this is the controller's own stall
        #: (default: a quarter of the timeout)
        self.stall_s = timeout_s / 4 if stall_s is None else stall_s
        self._members = {n: Member(n) for n in node_ids}
        self._lock = threading.Lock()
        self._last_look: float | None = None

    def beat(self, beat: dict[str, Any], now: float) -> list[str]:
        """Take one heartbeat; the membership changes it makes, described."""
        node_id = str(beat["node_id"])
        with self._lock:
            member = self._members[node_id]
            first = member.last_seen is None
            changes: list[str] = []
            incarnation = str(beat.get("incarnation", ""))
            if beat.get("leaving"):
                if not member.left:
                    changes.append(f"{node_id} left (it is stopping)")
                member.left, member.left_because = True, "it stopped"
            elif member.left or incarnation != member.incarnation:
                if not first:
                    again = "restarted" if incarnation != member.incarnation else "is back"
                    changes.append(f"{node_id} joined ({again})")
                member.left, member.left_because = False, ""
            member.incarnation = incarnation
            member.last_seen = now
            member.beat = dict(beat)
            return changes

    def expire(self, now: float) -> list[str]:
        """Nodes silent for longer than the timeout leave; the changes, described.

        Called periodically; of a gap since the last call longer than ``stall_s``, what
        is beyond ``stall_s`` was the controller's stall, not the nodes' silence (see the
        module docstring).
        """
        changes = []
        with self._lock:
            gap = 0.0 if self._last_look is None else now - self._last_look
            self._last_look = now
            # forgive what is beyond stall_s, not the whole gap: a monitor that is late
            # at every look still counts stall_s of silence each time, so a node that
            # is gone is found out even on a machine that stays overloaded
            forgiven = gap - self.stall_s
            if forgiven > 0:
                for member in self._members.values():
                    if member.last_seen is not None:
                        member.last_seen = min(now, member.last_seen + forgiven)
            for member in self._members.values():
                if member.left or member.last_seen is None:
                    continue
                silent = now - member.last_seen
                if silent > self.timeout_s:
                    member.left = True
                    member.left_because = f"no heartbeat for {silent:.1f} s"
                    changes.append(f"{member.node_id} left (no heartbeat for {silent:.1f} s)")
        return changes

    def health(self) -> dict[str, str]:
        with self._lock:
            return {n: m.health() for n, m in self._members.items()}

    def view(self, now: float) -> dict[str, dict[str, Any]]:
        """Per node: health, epoch, what it buffers, and how long ago it was heard."""
        with self._lock:
            return {
                n: {
                    "health": m.health(),
                    "epoch": m.beat.get("epoch"),
                    "buffered_messages": m.beat.get("buffered_messages"),
                    "buffered_bytes": m.beat.get("buffered_bytes"),
                    "balance": m.beat.get("balance"),
                    "open_snapshots": m.beat.get("open_snapshots"),
                    "heard_ms_ago": None
                    if m.last_seen is None
                    else max(0, int((now - m.last_seen) * 1000)),
                }
                for n, m in self._members.items()
            }

    def epoch(self) -> int:
        """The highest epoch any node has reported (0 before any heartbeat)."""
        with self._lock:
            return max((int(m.beat.get("epoch", 0)) for m in self._members.values()), default=0)

    def not_ready(self, *, restoring: bool = False) -> str:
        """Why a snapshot (or, with ``restoring``, a restore) cannot run now, or ``""``.

        A node never heard from does not block a snapshot (the controller may have just
        started; the snapshot's time-to-live covers a node that is gone) but does block a
        restore, whose epoch must be above every node's; one that left blocks both, and a
        snapshot also one awaiting a restore.
        """
        with self._lock:
            for member in self._members.values():
                if restoring and member.last_seen is None:
                    return f"{member.node_id} has not been heard from since the controller started"
                if member.last_seen is not None and member.left:
                    return f"{member.node_id} is down ({member.left_because})"
                if not restoring and member.beat.get("awaiting_restore"):
                    return (
                        f"{member.node_id} restarted after a crash and holds no state: "
                        "restore the cluster first (POST /v1/snapshots/latest/restore)"
                    )
        return ""

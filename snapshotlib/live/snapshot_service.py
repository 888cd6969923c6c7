"""The live controller's work on the registry and storage: registering snapshots,
recording the nodes' parts, completing a snapshot (every part read back and checked,
its manifest written, then COMPLETED), failing what a time-to-live, a membership change
or a restore ends; and its journal (see :mod:`.controller`).
"""

from __future__ import annotations

import json
import logging
import queue
import random
import secrets
import statistics
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi import HTTPException

from .api_models import PartAnswer, PartReport
from .parts import CheckedPart, PartError, check_part, digest
from .registry import (
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    INITIATED,
    AlreadyRegistered,
    Registry,
)
from .retention import Pruned, prune, prune_logs
from .spec import ClusterSpec, NodeSpec, SpecError
from .storage import StorageError, parse_storage_uri, read, write_durable
from .timestamps import iso, now_iso

log = logging.getLogger(__name__)

#: the estimate before any snapshot has completed (ms)
DEFAULT_ESTIMATE_MS = 1000
#: how many recent completed snapshots the estimate is the median of
ESTIMATE_WINDOW = 10
#: how often a snapshot number taken meanwhile by another controller is read anew
#: (two controllers racing in step on a busy machine lost 5 tries in a row)
REGISTER_TRIES = 50
#: the longest random pause (seconds) before reading it anew, to break that step
REGISTER_PAUSE_S = 0.02
#: the statuses of a snapshot still in progress
OPEN = (INITIATED, IN_PROGRESS)
#: the reason given to snapshots a starting controller finds open
ORPHANED = (
    "the controller stopped while it was in progress (what the nodes reported meanwhile "
    "is lost); resolved when a controller started again"
)


class SnapshotService:
    """The controller's work on the registry and storage, for the endpoints.

    Its methods block (database, fsync), so the endpoints run them in worker threads;
    the locks are thread locks for that reason, and no ``await`` happens while one is held.
    """

    def __init__(
        self,
        spec: ClusterSpec,
        registry: Registry,
        journal: Journal,
        retain: int | None,
        run_logs: Path | None = None,
    ) -> None:
        self.spec = spec
        self.retain = retain
        #: the run's logs (its first epoch's folder): pruned with the snapshots
        self.run_logs = run_logs
        #: prunings done (:meth:`prune`)
        self.prunings = 0
        self.registry = registry
        self.journal = journal
        self.network = spec.network()
        # two triggers must not draw the same number
        self._ids = threading.Lock()
        # "all parts in -> manifest -> COMPLETED" happens once per snapshot
        self._completion = threading.Lock()
        #: failed snapshots whose cleanup is yet to be sent: (snapshot id, reason)
        self.to_clean: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
        #: per cleaned-up snapshot: each node's answer
        self.cleanups: dict[str, dict[str, dict[str, Any]]] = {}

    def latest_completed(self) -> str:
        """The newest COMPLETED snapshot's id (``""`` if none): an incremental one's base."""
        done = self.registry.list(COMPLETED)
        return str(done[-1]["snapshot_id"]) if done else ""

    def fail(self, snapshot_id: str, reason: str, **fields: Any) -> bool:
        """Move an open snapshot to FAILED (and have it cleaned up); whether it moved."""
        moved = self.registry.finish(
            snapshot_id, FAILED, error=reason, completed_at=now_iso(), **fields
        )
        if moved:
            self.to_clean.put((snapshot_id, reason))
        return moved

    def fail_open(self, reason: str) -> list[str]:
        """Fail every snapshot in progress with ``reason``; their ids."""
        return [
            row["snapshot_id"]
            for status in OPEN
            for row in self.registry.list(status)
            if self.fail(row["snapshot_id"], reason)
        ]

    def resolve_orphans(self) -> list[str]:
        """At start-up: snapshots left open by a controller that stopped fail."""
        return self.fail_open(ORPHANED)

    def expire(self, now_ms: int | None = None) -> list[str]:
        """Fail the open snapshots whose time-to-live ran out by ``now_ms`` (default:
        now); their ids. Times in whole ms, as the journal has them."""
        now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
        expired = []
        for status in OPEN:
            for row in self.registry.list(status):
                if now - int(row["started_ns"]) // 1_000_000 < self.spec.ttl_ms:
                    continue
                sid = row["snapshot_id"]
                reported = {p["node_id"] for p in self.registry.parts(sid)}
                missing = [n for n in self.spec.ids if n not in reported]
                reason = (
                    f"time-to-live of {self.spec.ttl_ms} ms ran out; "
                    f"no part from {', '.join(missing) or 'no node'}"
                )
                if self.fail(sid, reason):
                    expired.append(sid)
        return expired

    def restorable(self, snapshot_id: str) -> dict[str, Any]:
        """The COMPLETED snapshot to restore (``latest``: the newest)."""
        if snapshot_id == "latest":
            done = self.registry.list(COMPLETED)
            if not done:
                raise HTTPException(409, "snapshot_id: no COMPLETED snapshot to restore yet")
            row = done[-1]
        else:
            row = self.snapshot(snapshot_id)
        if row["status"] != COMPLETED:
            raise HTTPException(
                409,
                f"snapshot_id: {row['snapshot_id']} is {row['status']}; only a COMPLETED "
                "snapshot (its manifest written) can be restored",
            )
        return row

    def restore_decided(self, snapshot_id: str) -> list[str]:
        """A restore of ``snapshot_id`` was decided: journalled, and the snapshots in
        progress (of the epoch being left) failed; their ids."""
        self.journal.write({"restore": snapshot_id})
        return self.fail_open(f"the cluster was restored from {snapshot_id}")

    def register(
        self, node_id: str, snapshot_type: str, target_storage_uri: str
    ) -> tuple[dict[str, Any], int]:
        """A new INITIATED snapshot's row, and the estimate of its duration (ms)."""
        with self._ids:
            durations = self.registry.durations(ESTIMATE_WINDOW)
            estimate = int(statistics.median(durations)) if durations else DEFAULT_ESTIMATE_MS
            tries = 0
            while True:
                tries += 1
                started_ns = time.time_ns()
                try:
                    row = self.registry.create_next(
                        lambda number: f"snap-{number:04d}-{secrets.token_hex(3)[:5]}",
                        snapshot_type=snapshot_type,
                        initiated_by_node_id=node_id,
                        target_storage_uri=target_storage_uri,
                        initiated_at=iso(started_ns),
                        started_ns=started_ns,
                    )
                    self.journal.write(
                        {"trigger": row["snapshot_id"], "node": node_id}, started_ns // 1_000_000
                    )
                except AlreadyRegistered:
                    # on SQLite another controller's process took the number between
                    # reading it and writing it: read the next one
                    if tries == REGISTER_TRIES:
                        raise
                    time.sleep(random.uniform(0, REGISTER_PAUSE_S))
                    continue
                return row, estimate

    def snapshot(self, snapshot_id: str) -> dict[str, Any]:
        row = self.registry.get(snapshot_id)
        if row is None:
            raise HTTPException(
                404, f"snapshot_id: no snapshot {snapshot_id!r} (GET /v1/snapshots lists them)"
            )
        return row

    def status(self, snapshot_id: str) -> str | None:
        row = self.registry.get(snapshot_id)
        return None if row is None else str(row["status"])

    def report(self, snapshot_id: str, report: PartReport) -> PartAnswer:
        row = self.snapshot(snapshot_id)
        node_named(self.spec, report.node_id, "node_id")
        if report.ok and not report.part_uri:
            raise HTTPException(422, "part_uri: the written part's URI is required when ok is true")
        if report.ok:
            require_inside(report.part_uri, row["target_storage_uri"])
        with self._completion:
            now_ms = time.time_ns() // 1_000_000
            age_ms = now_ms - int(row["started_ns"]) // 1_000_000
            if row["status"] in OPEN and age_ms >= self.spec.ttl_ms:
                # decided as the monitor would, had it looked just now
                self.expire(now_ms)
            recorded = self.registry.record_part(
                snapshot_id,
                report.node_id,
                part_uri=report.part_uri,
                size_bytes=report.size_bytes,
                ok=report.ok,
                error=report.error,
                reported_at=now_iso(),
            )
            if recorded:
                # settled first: a completion that fails journals why before this part,
                # so the part (the last one) finds its snapshot no longer open
                try:
                    row = self._settle(snapshot_id, now_ms)
                finally:  # the part is recorded: journalled even if settling failed
                    part = {"part": snapshot_id, "node": report.node_id, "ok": report.ok}
                    self.journal.write(part, now_ms)
            else:
                row = self.snapshot(snapshot_id)
        return PartAnswer(
            snapshot_id=snapshot_id,
            node_id=report.node_id,
            recorded=recorded,
            status=row["status"],
            error=row["error"],
        )

    def _settle(self, snapshot_id: str, now_ms: int) -> dict[str, Any]:
        """Bring a snapshot's status up to date with its parts (a part reported at
        ``now_ms``); its row afterwards."""
        row = self.snapshot(snapshot_id)
        if row["status"] == COMPLETED:
            return row
        reported = [p for p in self.registry.parts(snapshot_id) if p["node_id"] in self.spec.ids]
        good = [p for p in reported if p["ok"]]
        bad = [p for p in reported if not p["ok"]]
        done, failed = len(good), len(bad)
        if row["status"] == FAILED:
            # late parts of a failed snapshot are kept and counted, the status stays
            self.registry.update(
                snapshot_id, only_from=(FAILED,), nodes_completed=done, nodes_failed=failed
            )
        elif bad:
            self.fail(
                snapshot_id,
                "parts failed: " + "; ".join(_part_error(p) for p in bad),
                nodes_completed=done,
                nodes_failed=failed,
            )
        elif done == len(self.spec.ids):
            self._complete(row, good, now_ms)
        else:
            self.registry.update(
                snapshot_id,
                status=IN_PROGRESS,
                only_from=(INITIATED, IN_PROGRESS),
                nodes_completed=done,
                nodes_failed=0,
            )
        return self.snapshot(snapshot_id)

    def _complete(self, row: dict[str, Any], good: Sequence[dict[str, Any]], now_ms: int) -> None:
        """Write the manifest, then (only then) mark the snapshot COMPLETED."""
        snapshot_id = row["snapshot_id"]
        by_node = {p["node_id"]: p for p in good}
        ordered = [by_node[node_id] for node_id in self.spec.ids]
        total = sum(int(p["size_bytes"]) for p in ordered)
        try:
            # read back and checked now, so a restore can check them against the manifest
            checked = [self._checked_part(snapshot_id, p) for p in ordered]
        except PartError as e:
            self._fail_complete(snapshot_id, f"part: {e}", now_ms)
            return
        manifest = {
            "snapshot_id": snapshot_id,
            "snapshot_type": row["snapshot_type"],
            "initiated_by_node_id": row["initiated_by_node_id"],
            "initiated_at": row["initiated_at"],
            "parts": [
                {
                    "node_id": p["node_id"],
                    "part_uri": p["part_uri"],
                    "size_bytes": p["size_bytes"],
                    "sha256": c.sha256,
                    "balance": c.balance,
                    "in_flight": c.in_flight,
                }
                for p, c in zip(ordered, checked, strict=True)
            ],
            "total_size_bytes": total,
            # what the snapshot recorded (a consistent one: the cluster's money)
            "recorded_total": sum(c.total for c in checked),
            "total_money": self.spec.total_money,
        }
        data = (json.dumps(manifest, indent=1) + "\n").encode()
        try:
            location = parse_storage_uri(row["target_storage_uri"])
            manifest_uri = write_durable(location, f"{snapshot_id}.json", data, once=True)
        except (StorageError, OSError) as e:
            self._fail_complete(snapshot_id, f"manifest: {e}", now_ms)
            return
        now_ns = time.time_ns()
        self.registry.finish_completed(
            snapshot_id,
            digest(data),
            completed_at=iso(now_ns),
            duration_ms=max(0, (now_ns - int(row["started_ns"])) // 1_000_000),
            total_size_bytes=total,
            nodes_completed=len(ordered),
            nodes_failed=0,
            checkpoint_manifest_uri=manifest_uri,
        )

    def prune(self) -> Pruned:
        """Prune to the retained snapshots (:mod:`.retention`), no trigger registering a
        snapshot meanwhile (one open would stop the pruning, and one registered during
        it could build on what is pruned); then, when some went, the run's logs to what
        the snapshots still registered need (triggers may go on: see :mod:`.log_base`)."""
        assert self.retain is not None
        with self._ids:
            pruned = prune(self.registry, self.retain)
        for snapshot_id in pruned.snapshots:  # what the nodes freed goes with its row
            self.cleanups.pop(snapshot_id, None)
        if self.run_logs is not None and pruned.snapshots:
            try:
                prune_logs(self.spec, self.registry, self.run_logs, pruned)
            except Exception as e:  # the registry unreachable: the next pruning tries
                pruned.errors.append(f"pruning the logs: {e}")
        self.prunings += 1
        for error in pruned.errors:
            log.warning("pruning: %s", error)
        return pruned

    def _fail_complete(self, snapshot_id: str, error: str, now_ms: int) -> None:
        """Every part was in, but the snapshot cannot complete: FAILED, saying why (in
        the journal too, at the last part's time)."""
        done = len(self.spec.ids)
        self.journal.write({"failed": snapshot_id, "error": error}, now_ms)
        self.registry.finish(
            snapshot_id,
            FAILED,
            error=error,
            completed_at=now_iso(),
            nodes_completed=done,
            nodes_failed=0,
        )

    def _checked_part(self, snapshot_id: str, reported: dict[str, Any]) -> CheckedPart:
        uri = str(reported["part_uri"])
        node_id = str(reported["node_id"])
        try:
            data = read(uri)
        except (StorageError, OSError) as e:
            raise PartError(f"{node_id}'s part of {snapshot_id}: {e}") from None
        return check_part(data, uri, snapshot_id=snapshot_id, node_id=node_id, network=self.network)


class Journal:
    """The controller's journal (see the module docstring): no file, no journal."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = None if path is None else Path(path)
        self._lock = threading.Lock()

    def write(self, event: dict[str, Any], t_ms: int | None = None) -> None:
        if self.path is None:
            return
        line = {"t": time.time_ns() // 1_000_000 if t_ms is None else t_ms, **event}
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    def changes(self, changes: Sequence[str]) -> None:
        """Membership changes, as :mod:`.membership` describes them ("P3 left (...)")."""
        for change in changes:
            node, kind = change.split(" ", 2)[:2]
            self.write({kind: node})


def node_named(spec: ClusterSpec, node_id: str, field: str) -> NodeSpec:
    try:
        return spec.node(node_id)
    except SpecError:
        raise HTTPException(
            422, f"{field}: unknown node {node_id!r}; expected one of {', '.join(spec.ids)}"
        ) from None


def require_inside(part_uri: str, target_storage_uri: str) -> None:
    """A reported part must be a file directly in its snapshot's storage: the manifest
    lists it, and a check reads it (the report comes over the network, from anyone)."""
    location = parse_storage_uri(target_storage_uri)
    name = part_uri.removeprefix(location.uri)
    try:
        inside = name != part_uri and location.object_uri(name) == part_uri
    except StorageError:
        inside = False
    if not inside:
        raise HTTPException(
            422,
            f"part_uri: a file directly in the snapshot's target_storage_uri "
            f"{location.uri} expected, got {part_uri!r}",
        )


def _part_error(part: dict[str, Any]) -> str:
    error = str(part["error"] or "failed without a reason")
    node_id = str(part["node_id"])
    return error if error.startswith(f"{node_id}:") else f"{node_id}: {error}"

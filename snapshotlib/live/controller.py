"""The live lab's controller: a REST API that triggers snapshots and keeps their registry.

``POST /v1/snapshots/trigger`` registers a snapshot and asks its initiating node to start
it; each node, once its part is written, reports it to
``POST /internal/v1/snapshots/{snapshot_id}/parts``. When every node has reported its part,
the controller writes the snapshot's manifest and only then marks it ``COMPLETED``: a
completed snapshot always has its manifest. ``GET /v1/snapshots[/{id}]`` and
``GET /v1/cluster`` tell what happened; the OpenAPI pages are at ``/docs``.

Under failure: nodes send heartbeats to ``POST /internal/v1/heartbeats``; a node that
leaves or joins (:mod:`.membership`) fails every snapshot in progress, and so does a
snapshot's time-to-live running out; every failed snapshot is then cleaned up at the
nodes (``GET /v1/snapshots/{id}/cleanup`` says what each freed).
``POST /v1/snapshots/{id}/restore`` (``latest``: the newest completed) rolls every node
back to that snapshot's manifest, checked and in two phases (:mod:`.restore`);
``POST /v1/nodes/{id}/crash`` kills a node, for the lab. When a snapshot completes the
controller reads every part back (:mod:`.parts`) and writes each one's SHA-256 and
money into the manifest. Snapshots still open when a controller starts were left by one
that stopped: they fail at once, with that reason; a restore it left is aborted or
finished.

With a ``journal`` file the controller appends, one JSON line each, every event that
decides a snapshot's status, with its time in ms (``t``): a trigger, a start that
failed, a part reported, a node that left or joined, a restore, its own start. A
snapshot's status is then a function of its journal (exercise 12 asks for it): at each
event, and at the end, a snapshot open ``ttl_ms`` after its trigger has failed first.

Every client error is answered ``{"detail": "<field>: <what was expected>"}``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import secrets
import statistics
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Literal, get_args

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool

from .membership import DOWN, Membership
from .node_calls import Cleanup, Crash, Initiate, NodeCalls, PrepareNode, RestoreNode, Resume
from .parts import CheckedPart, PartError, check_part, digest
from .registry import (
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    INITIATED,
    STATUSES,
    AlreadyRegistered,
    Registry,
)
from .restore import RestoreRefused, Restores
from .retention import prune
from .spec import ClusterSpec, NodeSpec, SpecError
from .storage import StorageError, parse_storage_uri, read, write_durable
from .storage_policy import StoragePolicy
from .token_gate import TokenGate

#: ``await health()``: node id -> ``"up"``, ``"down"`` or ``"unknown"``
Health = Callable[[], Awaitable[dict[str, str]]]

log = logging.getLogger(__name__)

#: the estimate before any snapshot has completed (ms)
DEFAULT_ESTIMATE_MS = 1000
#: how many recent completed snapshots the estimate is the median of
ESTIMATE_WINDOW = 10
#: how often a snapshot number taken meanwhile by another controller is read anew
REGISTER_TRIES = 5
#: how often heartbeats and times-to-live are looked at (seconds)
MONITOR_EVERY_S = 0.1
#: the statuses of a snapshot still in progress
OPEN = (INITIATED, IN_PROGRESS)
#: the reason given to snapshots a starting controller finds open
ORPHANED = (
    "the controller stopped while it was in progress (what the nodes reported meanwhile "
    "is lost); resolved when a controller started again"
)

SnapshotType = Literal["full", "incremental"]
Status = Literal["INITIATED", "IN_PROGRESS", "COMPLETED", "FAILED"]


# ------------------------------------------------------------------ messages
class TriggerRequest(BaseModel):
    """Start a snapshot at a node."""

    model_config = ConfigDict(extra="forbid", strict=True)

    initiated_by_node_id: str = Field(description="the node that initiates", examples=["P3"])
    snapshot_type: SnapshotType = Field(examples=["full"])
    target_storage_uri: str | None = Field(
        default=None,
        description="directory for the parts and manifest; the controller's default if omitted",
        examples=["file:///var/snapshots/"],
    )


class TriggerAnswer(BaseModel):
    snapshot_id: str
    status: Status
    initiated_at: str
    estimated_completion_ms: int


class PartReport(BaseModel):
    """A node's report that its part of a snapshot is written (or could not be)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    node_id: str
    part_uri: str = ""
    size_bytes: int = Field(default=0, ge=0, le=2**53)
    ok: bool
    error: str | None = None


class PartAnswer(BaseModel):
    snapshot_id: str
    node_id: str
    #: False when the node had reported already (its first report is kept)
    recorded: bool
    status: Status
    error: str | None


class Heartbeat(BaseModel):
    """A node's heartbeat: it is alive, in ``epoch``, buffering this much for snapshots."""

    model_config = ConfigDict(extra="forbid", strict=True)

    node_id: str
    incarnation: str = Field(max_length=200)
    epoch: int = Field(ge=-1, le=2**53)
    awaiting_restore: bool = False
    balance: int = Field(ge=-(2**53), le=2**53)
    buffered_messages: int = Field(ge=0, le=2**53)
    buffered_bytes: int = Field(ge=0, le=2**53)
    open_snapshots: list[str] = Field(default_factory=list, max_length=10_000)
    leaving: bool = False


class HeartbeatAnswer(BaseModel):
    #: membership changes this heartbeat made (a join), described
    changes: list[str]


class NodeRestored(BaseModel):
    node_id: str
    #: after the recorded channel messages were delivered to it
    balance: int
    reinjected: int


class RestoreAnswer(BaseModel):
    snapshot_id: str
    epoch: int
    log_folder: str
    duration_ms: int
    total_money: int
    nodes: list[NodeRestored]
    #: snapshots that were in progress, failed by the restore
    failed: list[str]


class NodeCleanup(BaseModel):
    node_id: str
    abandoned: bool | None
    freed_messages: int | None
    freed_bytes: int | None
    error: str | None = None


class CleanupView(BaseModel):
    snapshot_id: str
    nodes: list[NodeCleanup]


class CrashAnswer(BaseModel):
    node_id: str
    detail: str


class SnapshotView(BaseModel):
    snapshot_id: str
    status: Status
    duration_ms: int | None
    total_size_bytes: int | None
    nodes_completed: int
    nodes_failed: int
    checkpoint_manifest_uri: str | None
    initiated_by_node_id: str
    snapshot_type: str
    initiated_at: str
    completed_at: str | None
    target_storage_uri: str
    error: str | None


class SnapshotList(BaseModel):
    snapshots: list[SnapshotView]


class NodeView(BaseModel):
    id: str
    address: str
    health: str
    epoch: int | None = None
    buffered_messages: int | None = None
    buffered_bytes: int | None = None
    heard_ms_ago: int | None = None
    #: from its last heartbeat: its balance, and the snapshots it is recording
    balance: int | None = None
    open_snapshots: list[str] | None = None


class ClusterView(BaseModel):
    nodes: list[NodeView]
    channels: list[str]
    rate: float
    markers: str
    marker_delay_ms: int
    total_money: int
    heartbeat_ms: int
    heartbeat_timeout_ms: int
    ttl_ms: int


class ErrorAnswer(BaseModel):
    detail: str


#: request bodies by route path, to list the allowed fields when an extra one is sent
_BODIES: dict[str, type[BaseModel]] = {
    "/v1/snapshots/trigger": TriggerRequest,
    "/internal/v1/snapshots/{snapshot_id}/parts": PartReport,
    "/internal/v1/heartbeats": Heartbeat,
}
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorAnswer} for code in (401, 403, 404, 409, 422, 503)
}


# ---------------------------------------------------------------------- app
def create_app(
    spec: ClusterSpec,
    registry_url: str,
    storage_uri: str,
    initiate: Initiate | None = None,
    health: Health | None = None,
    cleanup: Cleanup | None = None,
    prepare: PrepareNode | None = None,
    restore: RestoreNode | None = None,
    resume: Resume | None = None,
    crash: Crash | None = None,
    journal: str | Path | None = None,
    token: str | None = None,
    storage_policy: StoragePolicy | None = None,
    retain: int | None = None,
) -> FastAPI:
    """The controller of the cluster ``spec``.

    ``registry_url`` is the registry's database (``sqlite:////abs/registry.db``);
    ``storage_uri`` the default ``target_storage_uri``. ``initiate``, ``cleanup``,
    ``prepare``, ``restore``, ``resume`` and ``crash`` are the calls to the nodes
    (:mod:`.node_calls`; gRPC by default);
    ``health`` reports which nodes are up (by default: from their heartbeats);
    ``journal`` is the file the controller's decisive events are appended to.
    ``token``: every call must carry it as ``Authorization: Bearer TOKEN``
    (:mod:`.api_token`; the served controller always has one); None, as in tests that
    call the app in-process, takes every call. ``storage_policy``: where a trigger's
    ``target_storage_uri`` may point (:mod:`.storage_policy`; the served controller
    always has one); None takes any. ``retain``: keep the last this many completed
    snapshots and prune the older ones (:mod:`.retention`); None keeps every one.
    """
    try:
        default_location = parse_storage_uri(storage_uri)
    except StorageError as e:
        reason = str(e).removeprefix("target_storage_uri: ")
        raise StorageError(f"storage_uri (the default target_storage_uri): {reason}") from None
    if initiate is None:
        # imported here so the controller (and its tests) run without grpc installed
        from .rpc import initiate_over_grpc

        initiate = partial(initiate_over_grpc, token=token)
    start: Initiate = initiate
    timeout_s = spec.heartbeat_timeout_ms / 1000
    # a monitor's look later than this is the controller's own stall (membership.py):
    # at least a few of its periods, so a merely late look still counts the silence
    membership = Membership(spec.ids, timeout_s, stall_s=max(timeout_s / 4, 5 * MONITOR_EVERY_S))
    health_of: Health = health or _membership_health(membership)
    calls = NodeCalls(
        cleanup=cleanup, prepare=prepare, restore=restore, resume=resume, crash=crash, token=token
    )
    if retain is not None and retain < 1:
        raise ValueError(f"retain: at least 1 completed snapshot to keep, got {retain}")
    controller = _Controller(spec, Registry(registry_url), Journal(journal), retain)
    controller.journal.write({"controller_started": True})
    orphans = controller.resolve_orphans()
    restores = Restores(spec, controller.registry, calls, controller.restore_decided)
    # a restore this controller's predecessor left: aborted, or finished once running
    restores.recover()

    async def clean_up(snapshot_id: str, reason: str) -> None:
        """Ask every node not known down to abandon a failed snapshot; keep the answers."""
        health_now = membership.health()
        nodes = [n for n in spec.nodes if health_now.get(n.id) != DOWN]
        answers = await asyncio.gather(
            *(calls.cleanup(n, snapshot_id, reason) for n in nodes), return_exceptions=True
        )
        results = {}
        for node, answer in zip(nodes, answers, strict=True):
            if isinstance(answer, BaseException):
                results[node.id] = {"error": str(answer) or type(answer).__name__}
            else:
                results[node.id] = dict(answer)
        controller.cleanups[snapshot_id] = results

    async def monitor() -> None:
        """Heartbeats that stopped, times-to-live that ran out, cleanups to send."""
        cleaning: set[asyncio.Task[None]] = set()
        while True:
            await asyncio.sleep(MONITOR_EVERY_S)
            try:
                changes = membership.expire(time.monotonic())
                controller.journal.changes(changes)
                if changes:
                    reason = "membership changed: " + "; ".join(changes)
                    await run_in_threadpool(controller.fail_open, reason)
                await run_in_threadpool(controller.expire)
            except SQLAlchemyError as e:  # the registry is down: try again next time
                log.warning("registry: %s", e)
            except Exception:  # the monitor must outlive any one bad turn
                log.exception("the controller's monitor")
            while not controller.to_clean.empty():
                snapshot_id, reason = controller.to_clean.get()
                task = asyncio.create_task(clean_up(snapshot_id, reason))
                cleaning.add(task)
                task.add_done_callback(cleaning.discard)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        watcher = asyncio.create_task(monitor())
        restores.start()
        yield
        restores.stop()
        watcher.cancel()
        controller.registry.close()

    app = FastAPI(
        title="snapshotlib live controller",
        summary="Triggers Chandy–Lamport snapshots of a live cluster and keeps their registry.",
        version="1",
        lifespan=lifespan,
        # the bearer scheme, declared for the API pages (their Authorize button); the
        # token itself is checked by the TokenGate, before a request's body is read
        dependencies=[] if token is None else [Depends(_BEARER)],
    )
    if token is not None:
        # every route; the API pages hold no data and stay open
        pages = (app.docs_url, app.openapi_url, app.swagger_ui_oauth2_redirect_url)
        app.add_middleware(TokenGate, token=token, open_paths=[p for p in pages if p])
    app.state.spec = spec
    app.state.registry = controller.registry
    app.state.membership = membership
    #: snapshots found open at start-up, failed then
    app.state.orphans = orphans
    _add_error_handlers(app)

    @app.post(
        "/v1/snapshots/trigger", status_code=202, response_model=TriggerAnswer, responses=_ERRORS
    )
    async def trigger(request: TriggerRequest) -> TriggerAnswer:
        """Register a snapshot and ask its initiating node to start it."""
        node = _node(spec, request.initiated_by_node_id, "initiated_by_node_id")
        busy = restores.busy()
        if busy:
            raise HTTPException(409, f"cluster: {busy}; trigger after it")
        not_ready = membership.not_ready()
        if not_ready:
            raise HTTPException(409, f"cluster: {not_ready}; a snapshot needs every node")
        if request.target_storage_uri is None:
            location = default_location
        else:
            try:
                if storage_policy is None:
                    location = parse_storage_uri(request.target_storage_uri)
                else:
                    location = storage_policy.check(request.target_storage_uri)
            except StorageError as e:
                raise HTTPException(422, str(e)) from None
        row, estimate = await run_in_threadpool(
            controller.register, node.id, request.snapshot_type, location.uri
        )
        snapshot_id = row["snapshot_id"]
        base = ""
        if request.snapshot_type == "incremental":
            base = await run_in_threadpool(controller.latest_completed)
        try:
            await start(node, snapshot_id, location.uri, request.snapshot_type, base)
        except Exception as e:
            reason = (
                f"initiated_by_node_id: node {node.id} at {node.address} could not start "
                f"{snapshot_id}: {str(e) or type(e).__name__}"
            )
            controller.journal.write({"start_failed": snapshot_id})
            failed = await run_in_threadpool(controller.fail, snapshot_id, reason)
            # unless the snapshot completed meanwhile (the node started it, its answer was lost)
            if failed or await run_in_threadpool(controller.status, snapshot_id) != COMPLETED:
                raise HTTPException(503, reason) from None
        return TriggerAnswer(
            snapshot_id=snapshot_id,
            status=INITIATED,
            initiated_at=row["initiated_at"],
            estimated_completion_ms=estimate,
        )

    @app.get("/v1/snapshots/{snapshot_id}", response_model=SnapshotView, responses=_ERRORS)
    def get_snapshot(snapshot_id: str) -> SnapshotView:
        """One snapshot: its status, and once completed its duration, size and manifest."""
        return SnapshotView.model_validate(controller.snapshot(snapshot_id))

    @app.get("/v1/snapshots", response_model=SnapshotList, responses=_ERRORS)
    def list_snapshots(status: Status | None = None) -> SnapshotList:
        """Every snapshot, oldest first; only those with ``status`` if given."""
        rows = controller.registry.list(status)
        return SnapshotList(snapshots=[SnapshotView.model_validate(r) for r in rows])

    @app.get("/v1/cluster", response_model=ClusterView)
    async def cluster() -> ClusterView:
        """The cluster's nodes (with their health), channels and bank."""
        try:
            states = await health_of()
        except Exception:
            # a health probe that fails says nothing about the nodes
            states = {}
        heard = membership.view(time.monotonic())
        return ClusterView(
            nodes=[
                NodeView(
                    id=n.id,
                    address=n.address,
                    **{**heard[n.id], "health": states.get(n.id, "unknown")},
                )
                for n in spec.nodes
            ],
            channels=[f"{src}->{dst}" for src, dst in spec.channels],
            rate=spec.rate,
            markers=spec.markers,
            marker_delay_ms=spec.marker_delay_ms,
            total_money=spec.total_money,
            heartbeat_ms=spec.heartbeat_ms,
            heartbeat_timeout_ms=spec.heartbeat_timeout_ms,
            ttl_ms=spec.ttl_ms,
        )

    @app.get("/v1/snapshots/{snapshot_id}/cleanup", response_model=CleanupView, responses=_ERRORS)
    def get_cleanup(snapshot_id: str) -> CleanupView:
        """What each node freed when a failed snapshot was cleaned up."""
        controller.snapshot(snapshot_id)
        results = controller.cleanups.get(snapshot_id)
        if results is None:
            raise HTTPException(
                404, f"snapshot_id: {snapshot_id} has not been cleaned up (only a FAILED one is)"
            )
        return CleanupView(
            snapshot_id=snapshot_id,
            nodes=[
                NodeCleanup(
                    node_id=node_id,
                    abandoned=r.get("abandoned"),
                    freed_messages=r.get("freed_messages"),
                    freed_bytes=r.get("freed_bytes"),
                    error=r.get("error"),
                )
                for node_id, r in results.items()
            ],
        )

    @app.post(
        "/v1/snapshots/{snapshot_id}/restore", response_model=RestoreAnswer, responses=_ERRORS
    )
    async def restore_snapshot(snapshot_id: str) -> RestoreAnswer:
        """Roll every node back to a COMPLETED snapshot (``latest``: the newest one):
        states restored, recorded channel messages delivered first, in a new epoch."""
        if restores.lock.locked() and restores.unfinished is None:
            raise HTTPException(409, "a restore is already running")
        # (a turn of the finisher of an unfinished restore is waited for: this restore
        # replaces it)
        async with restores.lock:
            row = await run_in_threadpool(controller.restorable, snapshot_id)
            not_ready = membership.not_ready(restoring=True)
            if not_ready:
                raise HTTPException(503, f"cluster: {not_ready}; a restore needs every node")
            began = time.monotonic()
            try:
                done = await restores.run(row, above=membership.epoch())
            except RestoreRefused as e:
                raise HTTPException(e.status, e.detail) from None
            restored = [NodeRestored(**n) for n in done["nodes"]]
            return RestoreAnswer(
                snapshot_id=str(row["snapshot_id"]),
                epoch=done["epoch"],
                log_folder=done["log_folder"],
                duration_ms=int((time.monotonic() - began) * 1000),
                total_money=sum(r.balance for r in restored),
                nodes=restored,
                failed=done["failed"],
            )

    @app.post(
        "/v1/nodes/{node_id}/crash", status_code=202, response_model=CrashAnswer, responses=_ERRORS
    )
    async def crash_node(node_id: str) -> CrashAnswer:
        """Kill a node (SIGKILL), as a crash would: for the lab."""
        node = _node(spec, node_id, "node_id")
        try:
            await calls.crash(node)
        except Exception as e:
            raise HTTPException(503, f"node_id: {node.id} at {node.address}: {e}") from None
        return CrashAnswer(
            node_id=node.id,
            detail=f"killed; the controller notices within {spec.heartbeat_timeout_ms} ms",
        )

    @app.post("/internal/v1/heartbeats", response_model=HeartbeatAnswer, responses=_ERRORS)
    def heartbeat(beat: Heartbeat) -> HeartbeatAnswer:
        """A node is alive (and says what it buffers); a join fails open snapshots."""
        _node(spec, beat.node_id, "node_id")
        changes = membership.beat(beat.model_dump(), time.monotonic())
        controller.journal.changes(changes)
        if changes:
            controller.fail_open("membership changed: " + "; ".join(changes))
        return HeartbeatAnswer(changes=changes)

    @app.post(
        "/internal/v1/snapshots/{snapshot_id}/parts",
        response_model=PartAnswer,
        responses=_ERRORS,
    )
    def report_part(snapshot_id: str, report: PartReport) -> PartAnswer:
        """A node reports its part; the last ok part completes the snapshot."""
        return controller.report(snapshot_id, report)

    return app


class _Controller:
    """The controller's work on the registry and storage, for the endpoints.

    Its methods block (database, fsync), so the endpoints run them in worker threads;
    the locks are thread locks for that reason, and no ``await`` happens while one is held.
    """

    def __init__(
        self, spec: ClusterSpec, registry: Registry, journal: Journal, retain: int | None
    ) -> None:
        self.spec = spec
        self.retain = retain
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
            snapshot_id, FAILED, error=reason, completed_at=_now(), **fields
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
                        initiated_at=_iso(started_ns),
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
        _node(self.spec, report.node_id, "node_id")
        if report.ok and not report.part_uri:
            raise HTTPException(422, "part_uri: the written part's URI is required when ok is true")
        if report.ok:
            _require_inside(report.part_uri, row["target_storage_uri"])
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
                reported_at=_now(),
            )
            if recorded:
                part = {"part": snapshot_id, "node": report.node_id, "ok": report.ok}
                self.journal.write(part, now_ms)
            row = self._settle(snapshot_id) if recorded else self.snapshot(snapshot_id)
        return PartAnswer(
            snapshot_id=snapshot_id,
            node_id=report.node_id,
            recorded=recorded,
            status=row["status"],
            error=row["error"],
        )

    def _settle(self, snapshot_id: str) -> dict[str, Any]:
        """Bring a snapshot's status up to date with its parts; its row afterwards."""
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
            self._complete(row, good)
        else:
            self.registry.update(
                snapshot_id,
                status=IN_PROGRESS,
                only_from=(INITIATED, IN_PROGRESS),
                nodes_completed=done,
                nodes_failed=0,
            )
        return self.snapshot(snapshot_id)

    def _complete(self, row: dict[str, Any], good: Sequence[dict[str, Any]]) -> None:
        """Write the manifest, then (only then) mark the snapshot COMPLETED."""
        snapshot_id = row["snapshot_id"]
        by_node = {p["node_id"]: p for p in good}
        ordered = [by_node[node_id] for node_id in self.spec.ids]
        total = sum(int(p["size_bytes"]) for p in ordered)
        try:
            # read back and checked now, so a restore can check them against the manifest
            checked = [self._checked_part(snapshot_id, p) for p in ordered]
        except PartError as e:
            self._fail_complete(snapshot_id, f"part: {e}")
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
            self._fail_complete(snapshot_id, f"manifest: {e}")
            return
        now_ns = time.time_ns()
        self.registry.finish_completed(
            snapshot_id,
            digest(data),
            completed_at=_iso(now_ns),
            duration_ms=max(0, (now_ns - int(row["started_ns"])) // 1_000_000),
            total_size_bytes=total,
            nodes_completed=len(ordered),
            nodes_failed=0,
            checkpoint_manifest_uri=manifest_uri,
        )
        if self.retain is not None:
            pruned = prune(self.registry, self.retain)
            for error in pruned.errors:
                log.warning("pruning: %s", error)

    def _fail_complete(self, snapshot_id: str, error: str) -> None:
        """Every part was in, but the snapshot cannot complete: FAILED, saying why."""
        done = len(self.spec.ids)
        self.registry.finish(
            snapshot_id,
            FAILED,
            error=error,
            completed_at=_now(),
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


# ------------------------------------------------------------------- errors
#: the token's scheme (the docs' Authorize button); at module level, as the annotation
#: that names it is read in this module's namespace
_BEARER = HTTPBearer(
    auto_error=False, description="the cluster's token: the file api-token in its workdir"
)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        route = request.scope.get("route")
        body = _BODIES.get(getattr(route, "path", ""))
        fields = tuple(body.model_fields) if body is not None else ()
        return JSONResponse({"detail": describe_errors(exc.errors(), fields)}, status_code=422)

    @app.exception_handler(SQLAlchemyError)
    async def registry_down(_request: Request, exc: SQLAlchemyError) -> JSONResponse:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        return JSONResponse({"detail": f"registry: {reason}"}, status_code=503)

    @app.exception_handler(Exception)
    async def internal(_request: Request, exc: Exception) -> JSONResponse:
        # a JSON body instead of a bare text answer; the server logs the traceback
        return JSONResponse(
            {"detail": f"internal error: {type(exc).__name__}: {exc}"}, status_code=500
        )


def describe_errors(errors: Sequence[Any], fields: Sequence[str] = ()) -> str:
    """One message naming each invalid field, from pydantic's error list.

    >>> describe_errors([{"type": "literal_error", "loc": ("body", "snapshot_type"),
    ...     "msg": "Input should be 'full' or 'incremental'", "input": "partial"}])
    "snapshot_type: must be 'full' or 'incremental', got 'partial'"
    """
    messages: list[str] = []
    for error in errors:
        loc = [str(p) for p in error.get("loc", ())]
        kind = error.get("type", "")
        value = error.get("input")
        if kind == "json_invalid":
            reason = (error.get("ctx") or {}).get("error", "")
            messages.append(f"body: not valid JSON ({reason})")
            continue
        field = ".".join(loc[1:]) or (loc[0] if loc else "request")
        if kind == "missing":
            text = "required"
            if field == "body" and fields:
                text = f"required: a JSON object with {', '.join(fields)}"
        elif kind == "extra_forbidden":
            text = "not a field of this request"
            if fields:
                text += f" (fields: {', '.join(fields)})"
        elif kind in ("model_attributes_type", "model_type", "dict_type"):
            text = f"must be a JSON object, got {_show(value)}"
        else:
            message = str(error.get("msg", "invalid"))
            text = message.replace("Input should be", "must be", 1) + f", got {_show(value)}"
        messages.append(f"{field}: {text}")
    return "; ".join(messages) or "invalid request"


def _show(value: Any) -> str:
    """A short rendering of a rejected value, as JSON where it is JSON."""
    if isinstance(value, str):
        text = repr(value)
    elif isinstance(value, (bytes, bytearray)):
        text = repr(bytes(value[:60]))
    elif isinstance(value, dict):
        return "an object"
    elif isinstance(value, (list, tuple)):
        return "a list"
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError):
            text = type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------ helpers
def _node(spec: ClusterSpec, node_id: str, field: str) -> NodeSpec:
    try:
        return spec.node(node_id)
    except SpecError:
        raise HTTPException(
            422, f"{field}: unknown node {node_id!r}; expected one of {', '.join(spec.ids)}"
        ) from None


def _require_inside(part_uri: str, target_storage_uri: str) -> None:
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


def _membership_health(membership: Membership) -> Health:
    async def health() -> dict[str, str]:
        return membership.health()

    return health


def _iso(time_ns: int) -> str:
    """``time_ns`` as ISO 8601 UTC, to the second, with ``Z``."""
    moment = datetime.fromtimestamp(time_ns // 1_000_000_000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _now() -> str:
    return _iso(time.time_ns())


# the query filter and the registry accept the same statuses
assert get_args(Status) == STATUSES

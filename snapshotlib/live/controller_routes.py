"""The controller's routes, as FastAPI routers over its one object (:class:`Controller`):
snapshots (trigger, read, clean-up, restore), the cluster (its view, a node's crash),
and the nodes' own calls (heartbeats, parts). Each route checks what HTTP brings and
answers in HTTP's terms; the work is the controller's."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from .api_models import (
    ERROR_RESPONSES,
    CleanupView,
    ClusterView,
    CrashAnswer,
    Heartbeat,
    HeartbeatAnswer,
    NodeCleanup,
    NodeRestored,
    NodeView,
    PartAnswer,
    PartReport,
    RestoreAnswer,
    SnapshotList,
    SnapshotView,
    Status,
    TriggerAnswer,
    TriggerRequest,
)
from .control import Controller
from .registry import COMPLETED, INITIATED
from .restore import RestoreRefused
from .snapshot_service import node_named
from .storage import StorageError


def _controller(request: Request) -> Controller:
    controller: Controller = request.app.state.controller
    return controller


#: a route's controller, as FastAPI hands it over
Ctl = Annotated[Controller, Depends(_controller)]

snapshot_routes = APIRouter(prefix="/v1/snapshots", responses=ERROR_RESPONSES)
#: the cluster's view answers no error of its own (but the token's)
cluster_routes = APIRouter(prefix="/v1")
node_routes = APIRouter(prefix="/internal/v1", responses=ERROR_RESPONSES)


# ---------------------------------------------------------------- snapshots
@snapshot_routes.post("/trigger", status_code=202, response_model=TriggerAnswer)
async def trigger(request: TriggerRequest, ctl: Ctl) -> TriggerAnswer:
    """Register a snapshot and ask its initiating node to start it."""
    node = node_named(ctl.spec, request.initiated_by_node_id, "initiated_by_node_id")
    busy = ctl.restores.busy()
    if busy:
        raise HTTPException(409, f"cluster: {busy}; trigger after it")
    not_ready = ctl.membership.not_ready()
    if not_ready:
        raise HTTPException(409, f"cluster: {not_ready}; a snapshot needs every node")
    try:
        location = ctl.target_location(request.target_storage_uri)
    except StorageError as e:
        raise HTTPException(422, str(e)) from None
    service = ctl.service
    row, estimate = await run_in_threadpool(
        service.register, node.id, request.snapshot_type, location.uri
    )
    snapshot_id = row["snapshot_id"]
    base = ""
    if request.snapshot_type == "incremental":
        base = await run_in_threadpool(service.latest_completed)
    try:
        await ctl.initiate(node, snapshot_id, location.uri, request.snapshot_type, base)
    except Exception as e:
        reason = (
            f"initiated_by_node_id: node {node.id} at {node.address} could not start "
            f"{snapshot_id}: {str(e) or type(e).__name__}"
        )
        service.journal.write({"start_failed": snapshot_id})
        failed = await run_in_threadpool(service.fail, snapshot_id, reason)
        # unless the snapshot completed meanwhile (the node started it, its answer was lost)
        if failed or await run_in_threadpool(service.status, snapshot_id) != COMPLETED:
            raise HTTPException(503, reason) from None
    return TriggerAnswer(
        snapshot_id=snapshot_id,
        status=INITIATED,
        initiated_at=row["initiated_at"],
        estimated_completion_ms=estimate,
    )


@snapshot_routes.get("/{snapshot_id}", response_model=SnapshotView)
def get_snapshot(snapshot_id: str, ctl: Ctl) -> SnapshotView:
    """One snapshot: its status, and once completed its duration, size and manifest."""
    return SnapshotView.model_validate(ctl.service.snapshot(snapshot_id))


@snapshot_routes.get("", response_model=SnapshotList)
def list_snapshots(ctl: Ctl, status: Status | None = None) -> SnapshotList:
    """Every snapshot, oldest first; only those with ``status`` if given."""
    rows = ctl.service.registry.list(status)
    return SnapshotList(snapshots=[SnapshotView.model_validate(r) for r in rows])


@snapshot_routes.get("/{snapshot_id}/cleanup", response_model=CleanupView)
def get_cleanup(snapshot_id: str, ctl: Ctl) -> CleanupView:
    """What each node freed when a failed snapshot was cleaned up."""
    ctl.service.snapshot(snapshot_id)
    results = ctl.service.cleanups.get(snapshot_id)
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


@snapshot_routes.post("/{snapshot_id}/restore", response_model=RestoreAnswer)
async def restore_snapshot(snapshot_id: str, ctl: Ctl) -> RestoreAnswer:
    """Roll every node back to a COMPLETED snapshot (``latest``: the newest one):
    states restored, recorded channel messages delivered first, in a new epoch."""
    restores = ctl.restores
    if restores.requested:
        raise HTTPException(409, "a restore is already running")
    # (a turn of the finisher of an unfinished restore is waited for, as this restore
    # replaces it; so is a pruning, whose replay of the logs spans only what the
    # retained snapshots need)
    restores.requested = True
    try:
        async with restores.lock:
            row = await run_in_threadpool(ctl.service.restorable, snapshot_id)
            not_ready = ctl.membership.not_ready(restoring=True)
            if not_ready:
                raise HTTPException(503, f"cluster: {not_ready}; a restore needs every node")
            began = time.monotonic()
            try:
                done = await restores.run(row, above=ctl.membership.epoch())
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
    finally:
        restores.requested = False


# ------------------------------------------------------------------ cluster
@cluster_routes.get("/cluster", response_model=ClusterView)
async def cluster(ctl: Ctl) -> ClusterView:
    """The cluster's nodes (with their health), channels and bank."""
    try:
        states = await ctl.health()
    except Exception:
        # a health probe that fails says nothing about the nodes
        states = {}
    heard = ctl.membership.view(time.monotonic())
    spec = ctl.spec
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


@cluster_routes.post(
    "/nodes/{node_id}/crash", status_code=202, response_model=CrashAnswer, responses=ERROR_RESPONSES
)
async def crash_node(node_id: str, ctl: Ctl) -> CrashAnswer:
    """Kill a node (SIGKILL), as a crash would: for the lab."""
    node = node_named(ctl.spec, node_id, "node_id")
    try:
        await ctl.calls.crash(node)
    except Exception as e:
        raise HTTPException(503, f"node_id: {node.id} at {node.address}: {e}") from None
    return CrashAnswer(
        node_id=node.id,
        detail=f"killed; the controller notices within {ctl.spec.heartbeat_timeout_ms} ms",
    )


# ----------------------------------------------------------- nodes' own calls
@node_routes.post("/heartbeats", response_model=HeartbeatAnswer)
def heartbeat(beat: Heartbeat, ctl: Ctl) -> HeartbeatAnswer:
    """A node is alive (and says what it buffers); a join fails open snapshots."""
    node_named(ctl.spec, beat.node_id, "node_id")
    highest = ctl.epoch_given(beat.epoch)
    if highest is not None:
        raise HTTPException(
            409,
            f"epoch: {beat.node_id} says it is in epoch {beat.epoch}, but no restore "
            f"of this cluster gave an epoch above {highest}",
        )
    changes = ctl.membership.beat(beat.model_dump(), time.monotonic())
    ctl.service.journal.changes(changes)
    if changes:
        ctl.service.fail_open("membership changed: " + "; ".join(changes))
    return HeartbeatAnswer(changes=changes)


@node_routes.post("/snapshots/{snapshot_id}/parts", response_model=PartAnswer)
async def report_part(snapshot_id: str, report: PartReport, ctl: Ctl) -> PartAnswer:
    """A node reports its part; the last ok part completes the snapshot."""
    answer = await run_in_threadpool(ctl.service.report, snapshot_id, report)
    if answer.recorded and answer.status == COMPLETED:
        ctl.completed()
    return answer

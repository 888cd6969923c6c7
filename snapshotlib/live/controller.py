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
failed, a part reported, a completion that failed (a part read back that is not one, a
manifest not written), a node that left or joined, a restore, its own start. A
snapshot's status is then a function of its journal (exercise 12 asks for it): at each
event, and at the end, a snapshot open ``ttl_ms`` after its trigger has failed first.

Every client error is answered ``{"detail": "<field>: <what was expected>"}``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool

from .api_models import (
    BODIES,
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
    describe_errors,
)
from .membership import DOWN, Membership
from .node_calls import Cleanup, Crash, Initiate, NodeCalls, PrepareNode, RestoreNode, Resume
from .registry import (
    COMPLETED,
    INITIATED,
    Registry,
)
from .restore import RestoreRefused, Restores
from .snapshot_service import Journal, SnapshotService, node_named
from .spec import ClusterSpec
from .storage import StorageError, parse_storage_uri
from .storage_policy import StoragePolicy
from .token_gate import TokenGate

#: ``await health()``: node id -> ``"up"``, ``"down"`` or ``"unknown"``
Health = Callable[[], Awaitable[dict[str, str]]]

log = logging.getLogger(__name__)

#: how often heartbeats and times-to-live are looked at (seconds)
MONITOR_EVERY_S = 0.1


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
    run_logs: Path | None = None,
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
    ``run_logs``: the nodes' log folder of this run; with ``retain``, the logs are pruned
    too, to what the retained snapshots' checks need (:mod:`.log_base`).
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
    controller = SnapshotService(spec, Registry(registry_url), Journal(journal), retain, run_logs)
    controller.journal.write({"controller_started": True})
    orphans = controller.resolve_orphans()
    restores = Restores(
        spec,
        controller.registry,
        calls,
        controller.restore_decided,
        run_tag="" if run_logs is None else run_logs.name,
    )
    pruning: set[asyncio.Task[None]] = set()
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
        pages = (
            app.docs_url,
            app.redoc_url,
            app.openapi_url,
            app.swagger_ui_oauth2_redirect_url,
        )
        app.add_middleware(TokenGate, token=token, open_paths=[p for p in pages if p])
    app.state.spec = spec
    app.state.registry = controller.registry
    app.state.service = controller
    app.state.membership = membership
    #: snapshots found open at start-up, failed then
    app.state.orphans = orphans
    app.state.restores = restores
    _add_error_handlers(app)

    @app.post(
        "/v1/snapshots/trigger",
        status_code=202,
        response_model=TriggerAnswer,
        responses=ERROR_RESPONSES,
    )
    async def trigger(request: TriggerRequest) -> TriggerAnswer:
        """Register a snapshot and ask its initiating node to start it."""
        node = node_named(spec, request.initiated_by_node_id, "initiated_by_node_id")
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

    @app.get("/v1/snapshots/{snapshot_id}", response_model=SnapshotView, responses=ERROR_RESPONSES)
    def get_snapshot(snapshot_id: str) -> SnapshotView:
        """One snapshot: its status, and once completed its duration, size and manifest."""
        return SnapshotView.model_validate(controller.snapshot(snapshot_id))

    @app.get("/v1/snapshots", response_model=SnapshotList, responses=ERROR_RESPONSES)
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

    @app.get(
        "/v1/snapshots/{snapshot_id}/cleanup", response_model=CleanupView, responses=ERROR_RESPONSES
    )
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
        "/v1/snapshots/{snapshot_id}/restore",
        response_model=RestoreAnswer,
        responses=ERROR_RESPONSES,
    )
    async def restore_snapshot(snapshot_id: str) -> RestoreAnswer:
        """Roll every node back to a COMPLETED snapshot (``latest``: the newest one):
        states restored, recorded channel messages delivered first, in a new epoch."""
        if restores.requested:
            raise HTTPException(409, "a restore is already running")
        # (a turn of the finisher of an unfinished restore is waited for, as this restore
        # replaces it; so is a pruning, whose replay of the logs spans only what the
        # retained snapshots need)
        restores.requested = True
        try:
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
        finally:
            restores.requested = False

    @app.post(
        "/v1/nodes/{node_id}/crash",
        status_code=202,
        response_model=CrashAnswer,
        responses=ERROR_RESPONSES,
    )
    async def crash_node(node_id: str) -> CrashAnswer:
        """Kill a node (SIGKILL), as a crash would: for the lab."""
        node = node_named(spec, node_id, "node_id")
        try:
            await calls.crash(node)
        except Exception as e:
            raise HTTPException(503, f"node_id: {node.id} at {node.address}: {e}") from None
        return CrashAnswer(
            node_id=node.id,
            detail=f"killed; the controller notices within {spec.heartbeat_timeout_ms} ms",
        )

    #: the highest epoch the restore log holds, as last read: only a restore gives a node
    #: its epoch, so a node reporting a higher one is forged (or from another cluster)
    assigned_epoch = [controller.registry.highest_epoch()]

    @app.post("/internal/v1/heartbeats", response_model=HeartbeatAnswer, responses=ERROR_RESPONSES)
    def heartbeat(beat: Heartbeat) -> HeartbeatAnswer:
        """A node is alive (and says what it buffers); a join fails open snapshots."""
        node_named(spec, beat.node_id, "node_id")
        if beat.epoch > assigned_epoch[0]:
            # read again: another controller on this registry may have assigned it
            highest = controller.registry.highest_epoch()
            assigned_epoch[0] = max(assigned_epoch[0], highest)  # heartbeats race here
            if beat.epoch > highest:
                raise HTTPException(
                    409,
                    f"epoch: {beat.node_id} says it is in epoch {beat.epoch}, but no restore "
                    f"of this cluster gave an epoch above {highest}",
                )
        changes = membership.beat(beat.model_dump(), time.monotonic())
        controller.journal.changes(changes)
        if changes:
            controller.fail_open("membership changed: " + "; ".join(changes))
        return HeartbeatAnswer(changes=changes)

    @app.post(
        "/internal/v1/snapshots/{snapshot_id}/parts",
        response_model=PartAnswer,
        responses=ERROR_RESPONSES,
    )
    async def report_part(snapshot_id: str, report: PartReport) -> PartAnswer:
        """A node reports its part; the last ok part completes the snapshot."""
        answer = await run_in_threadpool(controller.report, snapshot_id, report)
        if retain is not None and answer.recorded and answer.status == COMPLETED:
            # after the answer, in the background: the node need not wait for deletes
            task = asyncio.create_task(prune_in_turn())
            pruning.add(task)
            task.add_done_callback(pruning.discard)
        return answer

    async def prune_in_turn() -> None:
        """Prune to the retained snapshots, never while a restore runs (it may be
        reading what would go)."""
        async with restores.lock:
            try:
                await run_in_threadpool(controller.prune)
            except Exception:  # best effort: the next completion prunes again
                log.exception("pruning to the retained snapshots")

    return app


# ------------------------------------------------------------------- errors
#: the token's scheme, as the API pages show it (their Authorize button)
_BEARER = HTTPBearer(
    auto_error=False, description="the cluster's token: the file api-token in its workdir"
)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        route = request.scope.get("route")
        body = BODIES.get(getattr(route, "path", ""))
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


def _membership_health(membership: Membership) -> Health:
    async def health() -> dict[str, str]:
        return membership.health()

    return health

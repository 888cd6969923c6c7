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

from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from sqlalchemy.exc import SQLAlchemyError

from . import controller_routes
from .api_models import BODIES, describe_errors
from .control import Controller, Health
from .node_calls import Cleanup, Crash, Initiate, PrepareNode, RestoreNode, Resume
from .spec import ClusterSpec
from .storage_policy import StoragePolicy
from .token_gate import TokenGate


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
    """The controller of the cluster ``spec``: its routes (:mod:`.controller_routes`)
    over one :class:`~snapshotlib.live.control.Controller`.

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
    controller = Controller(
        spec,
        registry_url,
        storage_uri,
        initiate=initiate,
        health=health,
        cleanup=cleanup,
        prepare=prepare,
        restore=restore,
        resume=resume,
        crash=crash,
        journal=journal,
        token=token,
        storage_policy=storage_policy,
        retain=retain,
        run_logs=run_logs,
    )
    app = FastAPI(
        title="snapshotlib live controller",
        summary="Triggers Chandy–Lamport snapshots of a live cluster and keeps their registry.",
        version="1",
        lifespan=controller.lifespan,
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
    app.state.controller = controller  # what the routes act on (and tests look into)
    _add_error_handlers(app)
    for router in (
        controller_routes.snapshot_routes,
        controller_routes.cluster_routes,
        controller_routes.node_routes,
    ):
        app.include_router(router)
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

"""The live lab's gRPC messages and services, the calls the controller makes, and the
cluster's token on every call.

The messages and stubs are made from ``snapshot.proto`` when this module is imported
(``grpc.protos_and_services``, which uses grpcio-tools' compiler): no generated code is
kept in the repository, so it can never disagree with the ``.proto`` or with the
installed protobuf runtime.

Every gRPC call between the cluster's processes (the controller's to the nodes, the
nodes' streams and markers to each other, ``LiveCluster.health``) carries the cluster's
token (:mod:`.api_token`) in its metadata, and a node refuses a call without it
(UNAUTHENTICATED): another user of the machine cannot crash, restore or feed a node.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from .node_calls import NodeRefused

if TYPE_CHECKING:
    from .restore import RestorePart
    from .spec import NodeSpec

# The path is looked up on sys.path, like a module. An editable install puts no entry
# for the package there (an import hook finds it), so a process started outside the
# checkout (a notebook's kernel in notebooks/, say) would not find the .proto: the
# folder holding the package goes on sys.path, where an installed package already is.
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
if _PACKAGE_PARENT not in sys.path:
    sys.path.append(_PACKAGE_PARENT)
protos: Any
services: Any
protos, services = grpc.protos_and_services("snapshotlib/live/snapshot.proto")  # type: ignore[attr-defined]

#: how long the controller waits for a node to take a request (seconds, wall time: this
#: is a backstop for a node that hangs, not a measure of work)
CALL_TIMEOUT_S = 10.0


#: the metadata key that carries the cluster's token
TOKEN_KEY = "authorization"


class NodeUnreachable(RuntimeError):
    """A node did not answer (it is down, or not listening yet)."""


def token_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    """The metadata that carries ``token`` (none without one)."""
    return () if token is None else ((TOKEN_KEY, f"Bearer {token}"),)


class RequireToken(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """A node's server takes a call only with the cluster's token."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    async def intercept_service(
        self,
        continuation: Callable[[Any], Awaitable[Any]],
        details: Any,
    ) -> Any:
        handler = await continuation(details)
        sent = dict(details.invocation_metadata or ()).get(TOKEN_KEY, "")
        sent = sent if isinstance(sent, str) else sent.decode(errors="replace")
        if handler is None or secrets.compare_digest(sent.encode(), self._expected):
            return handler
        return _refusing(handler)


def _refusing(handler: Any) -> Any:
    """A handler of ``handler``'s kind that refuses the call."""

    async def refuse(_request: Any, context: Any) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "not this cluster's token")

    kinds = {
        (False, False): grpc.unary_unary_rpc_method_handler,
        (False, True): grpc.unary_stream_rpc_method_handler,
        (True, False): grpc.stream_unary_rpc_method_handler,
        (True, True): grpc.stream_stream_rpc_method_handler,
    }
    make = kinds[(bool(handler.request_streaming), bool(handler.response_streaming))]
    return make(
        refuse,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


async def initiate_over_grpc(
    node: NodeSpec,
    snapshot_id: str,
    storage_uri: str,
    snapshot_type: str = "full",
    base_snapshot_id: str = "",
    *,
    token: str | None = None,
) -> None:
    """Ask ``node`` to initiate ``snapshot_id``; :class:`NodeUnreachable` if it cannot."""
    request = protos.InitiateRequest(
        snapshot_id=snapshot_id,
        target_storage_uri=storage_uri,
        snapshot_type=snapshot_type,
        base_snapshot_id=base_snapshot_id,
    )
    async with grpc.aio.insecure_channel(node.address) as channel:
        stub = services.NodeControlStub(channel)
        try:
            answer = await stub.Initiate(
                request, timeout=CALL_TIMEOUT_S, metadata=token_metadata(token)
            )
        except grpc.aio.AioRpcError as e:
            if e.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
                raise NodeRefused(e.details()) from None
            raise NodeUnreachable(f"node {node.id} at {node.address}: {e.details()}") from None
    if not answer.accepted:
        raise NodeUnreachable(f"node {node.id} refused: {answer.reason}")


async def _call(node: NodeSpec, method: str, request: Any, token: str | None) -> Any:
    """``NodeControl.<method>(request)`` at ``node``; :class:`NodeUnreachable` naming the
    node when the call fails."""
    async with grpc.aio.insecure_channel(node.address) as channel:
        stub = services.NodeControlStub(channel)
        try:
            return await getattr(stub, method)(
                request, timeout=CALL_TIMEOUT_S, metadata=token_metadata(token)
            )
        except grpc.aio.AioRpcError as e:
            if e.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
                raise NodeRefused(e.details()) from None
            raise NodeUnreachable(f"node {node.id} at {node.address}: {e.details()}") from None


async def cleanup_over_grpc(
    node: NodeSpec, snapshot_id: str, reason: str, *, token: str | None = None
) -> dict[str, Any]:
    """Ask ``node`` to abandon a failed snapshot; what it freed."""
    answer = await _call(
        node, "Cleanup", protos.CleanupRequest(snapshot_id=snapshot_id, reason=reason), token
    )
    return {
        "abandoned": answer.abandoned,
        "freed_messages": answer.freed_messages,
        "freed_bytes": answer.freed_bytes,
    }


async def prepare_restore_over_grpc(
    node: NodeSpec, part: RestorePart, epoch: int, *, token: str | None = None
) -> dict[str, Any]:
    """Ask ``node`` to fetch and check its part ``part`` for a restore in ``epoch``; what
    the part holds."""
    request = protos.PrepareRestoreRequest(
        snapshot_id=part.snapshot_id, part_uri=part.uri, part_sha256=part.sha256, epoch=epoch
    )
    answer = await _call(node, "PrepareRestore", request, token)
    return {"balance": answer.balance, "in_flight": answer.in_flight}


async def restore_over_grpc(
    node: NodeSpec, part: RestorePart, epoch: int, log_folder: str, *, token: str | None = None
) -> dict[str, Any]:
    """Ask ``node`` to roll back to its part ``part`` in ``epoch``."""
    request = protos.RestoreRequest(
        snapshot_id=part.snapshot_id,
        part_uri=part.uri,
        part_sha256=part.sha256,
        epoch=epoch,
        log_folder=log_folder,
    )
    answer = await _call(node, "Restore", request, token)
    return {"balance": answer.balance, "reinjected": answer.reinjected}


async def resume_over_grpc(node: NodeSpec, epoch: int, *, token: str | None = None) -> None:
    """Let ``node``'s bank send again in ``epoch``."""
    await _call(node, "Resume", protos.ResumeRequest(epoch=epoch), token)


async def crash_over_grpc(node: NodeSpec, *, token: str | None = None) -> None:
    """Have ``node`` kill itself."""
    await _call(node, "Crash", protos.CrashRequest(), token)

"""The controller's calls to its nodes: the ones a test gives, else gRPC.

gRPC (:mod:`.rpc`) is imported when a call is first made, so a controller given every
call (as the controller's tests give fakes) runs without grpc installed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .restore import RestorePart
    from .spec import NodeSpec

#: ``await initiate(node, snapshot_id, target_storage_uri, snapshot_type, base_snapshot_id)``:
#: tell a node to start a snapshot (an incremental one writes only what changed since the
#: base, the latest completed snapshot)
Initiate = Callable[["NodeSpec", str, str, str, str], Awaitable[None]]
#: ``await cleanup(node, snapshot_id, reason)``: the node abandons a failed snapshot;
#: ``{"abandoned": bool, "freed_messages": int, "freed_bytes": int}``
Cleanup = Callable[["NodeSpec", str, str], Awaitable[dict[str, Any]]]
#: ``await prepare(node, part, epoch)``: the node fetches and checks its part, changing
#: nothing; ``{"balance": int, "in_flight": int}`` the part holds
PrepareNode = Callable[["NodeSpec", "RestorePart", int], Awaitable[dict[str, Any]]]
#: ``await restore(node, part, epoch, log_folder)``: ``{"balance": int, "reinjected": int}``,
#: the node paused in the new epoch
RestoreNode = Callable[["NodeSpec", "RestorePart", int, str], Awaitable[dict[str, Any]]]
#: ``await resume(node, epoch)``: the node's bank sends again
Resume = Callable[["NodeSpec", int], Awaitable[None]]
#: ``await crash(node)``: the node kills itself
Crash = Callable[["NodeSpec"], Awaitable[None]]


class NodeRefused(RuntimeError):
    """A node that answered and refused the call; the message (the node's) says why."""


class NodeCalls:
    """The calls to the nodes: those given, gRPC (with ``token``) for the rest."""

    def __init__(
        self,
        *,
        cleanup: Cleanup | None = None,
        prepare: PrepareNode | None = None,
        restore: RestoreNode | None = None,
        resume: Resume | None = None,
        crash: Crash | None = None,
        token: str | None = None,
    ) -> None:
        self._given: dict[str, Any] = {
            "cleanup": cleanup,
            "prepare_restore": prepare,
            "restore": restore,
            "resume": resume,
            "crash": crash,
        }
        self._token = token

    def _call(self, name: str) -> Any:
        call = self._given[name]
        if call is None:
            from . import rpc

            call = self._given[name] = partial(getattr(rpc, f"{name}_over_grpc"), token=self._token)
        return call

    async def cleanup(self, node: NodeSpec, snapshot_id: str, reason: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("cleanup")(node, snapshot_id, reason)
        return result

    async def prepare_restore(
        self, node: NodeSpec, part: RestorePart, epoch: int
    ) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("prepare_restore")(node, part, epoch)
        return result

    async def restore(
        self, node: NodeSpec, part: RestorePart, epoch: int, log_folder: str
    ) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("restore")(node, part, epoch, log_folder)
        return result

    async def resume(self, node: NodeSpec, epoch: int) -> None:
        await self._call("resume")(node, epoch)

    async def crash(self, node: NodeSpec) -> None:
        await self._call("crash")(node)

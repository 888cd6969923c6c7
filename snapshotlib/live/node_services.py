"""The gRPC services a live node serves: its input streams (``ChannelService.Open``),
out-of-band markers (``SnapshotService.SendMarker``) and the controller's calls
(``NodeControl``). Each hands what it takes to its :class:`~snapshotlib.live.node.Node`;
every call has passed the node's token check (:class:`~snapshotlib.live.rpc.RequireToken`)
by then.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import TYPE_CHECKING, Any

import grpc

from .part_writer import Target
from .restore_part import RestoreError
from .rpc import protos, services
from .spec import SpecError

if TYPE_CHECKING:
    from .node import Node

#: call metadata of an out-of-band marker: the sender's vector clock, where parts go
CLOCK_KEY = "x-snapshotlib-clock"
STORAGE_KEY = "x-snapshotlib-target-storage-uri-bin"  # "-bin": any bytes, not only ASCII
EPOCH_KEY = "x-snapshotlib-epoch"
TYPE_KEY = "x-snapshotlib-snapshot-type"
BASE_KEY = "x-snapshotlib-base-snapshot-id"


class ChannelService(services.ChannelServiceServicer):  # type: ignore[misc,name-defined]
    def __init__(self, node: Node) -> None:
        self.node = node

    async def Open(self, request_iterator: Any, context: Any) -> Any:
        count = 0
        size = len(self.node.spec.nodes)
        async for envelope in request_iterator:
            problem = ""
            if len(envelope.clock) != size:
                problem = f"clock: {size} entries expected, got {len(envelope.clock)}"
            elif envelope.HasField("transfer") and envelope.transfer.amount <= 0:
                problem = f"transfer: an amount above 0 expected, got {envelope.transfer.amount}"
            if problem:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
            try:
                self.node.accept(envelope)
            except SpecError as e:  # a sender with no channel to this node
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
            count += 1
        return protos.StreamClosed(received=count)


class MarkerService(services.SnapshotServiceServicer):  # type: ignore[misc,name-defined]
    """The text's ``SnapshotService``: out-of-band markers arrive here."""

    def __init__(self, node: Node) -> None:
        self.node = node

    async def SendMarker(self, request: Any, context: Any) -> Any:
        if self.node.spec.markers != "out-of-band":
            # a marker beside the stream would break the FIFO order the check relies on
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION, "markers travel in band in this cluster"
            )
        metadata = dict(context.invocation_metadata() or ())
        try:
            channel = self.node.input_from(request.sender_node_id)
            clock = [int(c) for c in str(metadata.get(CLOCK_KEY, "")).split(",")]
            if len(clock) != len(self.node.spec.nodes):
                raise ValueError(f"{CLOCK_KEY}: {len(self.node.spec.nodes)} entries expected")
        except (SpecError, ValueError) as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        target = Target(
            bytes(metadata.get(STORAGE_KEY, b"")).decode(errors="replace"),
            str(metadata.get(TYPE_KEY, "")) or "full",
            str(metadata.get(BASE_KEY, "")),
        )
        if str(metadata.get(EPOCH_KEY, "")) != str(self.node.epoch):
            return protos.MarkerResponse(accepted=False)  # sent before a restore
        self.node.accept_marker(channel, request.snapshot_id, clock, target)
        return protos.MarkerResponse(accepted=True)


class ControlService(services.NodeControlServicer):  # type: ignore[misc,name-defined]
    def __init__(self, node: Node) -> None:
        self.node = node

    async def Initiate(self, request: Any, context: Any) -> Any:
        target = Target(
            request.target_storage_uri, request.snapshot_type or "full", request.base_snapshot_id
        )
        reason = self.node.initiate(request.snapshot_id, target)
        return protos.InitiateResponse(accepted=not reason, reason=reason)

    async def Health(self, request: Any, context: Any) -> Any:
        node = self.node
        node.log.flush()  # a reader asking after the node's state reads its log next
        return protos.HealthResponse(
            node_id=node.me,
            balance=node.host.balance,
            sent=node.sent,
            received=node.received,
            streams_open=node.streams_open,
            streams=len(node.outputs),
            epoch=node.epoch,
            awaiting_restore=node.awaiting_restore,
            buffered_messages=(buffered := node.buffered())[0],
            buffered_bytes=buffered[1],
        )

    async def Crash(self, request: Any, context: Any) -> Any:
        # answered first, then killed: the caller learns the node took the request
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGKILL)
        return protos.CrashResponse()

    async def Cleanup(self, request: Any, context: Any) -> Any:
        held, freed, size = self.node.abandon(request.snapshot_id, request.reason or "cleanup")
        return protos.CleanupResponse(abandoned=held, freed_messages=freed, freed_bytes=size)

    async def PrepareRestore(self, request: Any, context: Any) -> Any:
        try:
            prepared = await self.node.prepare_restore(
                request.snapshot_id, request.part_uri, request.part_sha256, request.epoch
            )
        except RestoreError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        return protos.PrepareRestoreResponse(
            balance=prepared.part.balance, in_flight=prepared.part.in_flight
        )

    async def Restore(self, request: Any, context: Any) -> Any:
        try:
            balance, reinjected = await self.node.restore(
                request.snapshot_id,
                request.part_uri,
                request.part_sha256,
                request.epoch,
                request.log_folder,
            )
        except RestoreError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        return protos.RestoreResponse(balance=balance, reinjected=reinjected)

    async def Resume(self, request: Any, context: Any) -> Any:
        if not self.node.resume(request.epoch):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"epoch: {self.node.me} is in epoch {self.node.epoch}, not {request.epoch}",
            )
        return protos.ResumeResponse()

"""The controller's one object: what its routes (:mod:`.controller_routes`) act on.

It holds the cluster's spec, its registry and storage work (:class:`SnapshotService`),
who is in the cluster (:class:`Membership`), the restores (:class:`Restores`) and the
calls to the nodes; it runs the monitor (heartbeats that stopped, times-to-live that ran
out, cleanups to send) and the pruning to the retained snapshots. HTTP is the routes'
business: nothing here knows a request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool

from .membership import DOWN, Membership
from .node_calls import Cleanup, Crash, Initiate, NodeCalls, PrepareNode, RestoreNode, Resume
from .registry import Registry
from .restore import Restores
from .snapshot_service import Journal, SnapshotService
from .spec import ClusterSpec
from .storage import StorageError, StorageLocation, parse_storage_uri
from .storage_policy import StoragePolicy

#: ``await health()``: node id -> ``"up"``, ``"down"`` or ``"unknown"``
Health = Callable[[], Awaitable[dict[str, str]]]

log = logging.getLogger(__name__)

#: how often heartbeats and times-to-live are looked at (seconds)
MONITOR_EVERY_S = 0.1


class Controller:
    """The controller of the cluster ``spec``; the arguments are
    :func:`~snapshotlib.live.controller.create_app`'s."""

    def __init__(
        self,
        spec: ClusterSpec,
        registry_url: str,
        storage_uri: str,
        *,
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
    ) -> None:
        try:
            self.default_location = parse_storage_uri(storage_uri)
        except StorageError as e:
            reason = str(e).removeprefix("target_storage_uri: ")
            raise StorageError(f"storage_uri (the default target_storage_uri): {reason}") from None
        if retain is not None and retain < 1:
            raise ValueError(f"retain: at least 1 completed snapshot to keep, got {retain}")
        if initiate is None:
            # imported here so the controller (and its tests) run without grpc installed
            from .rpc import initiate_over_grpc

            initiate = partial(initiate_over_grpc, token=token)
        self.spec = spec
        self.initiate: Initiate = initiate
        self.storage_policy = storage_policy
        self.retain = retain
        timeout_s = spec.heartbeat_timeout_ms / 1000
        # a monitor's look later than this is the controller's own stall (membership.py):
        # at least a few of its periods, so a merely late look still counts the silence
        self.membership = Membership(
            spec.ids, timeout_s, stall_s=max(timeout_s / 4, 5 * MONITOR_EVERY_S)
        )
        self.health: Health = health or self._health_from_heartbeats
        self.calls = NodeCalls(
            cleanup=cleanup,
            prepare=prepare,
            restore=restore,
            resume=resume,
            crash=crash,
            token=token,
        )
        self.service = SnapshotService(
            spec, Registry(registry_url), Journal(journal), retain, run_logs
        )
        self.service.journal.write({"controller_started": True})
        #: snapshots found open at start-up, failed then
        self.orphans = self.service.resolve_orphans()
        self.restores = Restores(
            spec,
            self.service.registry,
            self.calls,
            self.service.restore_decided,
            run_tag="" if run_logs is None else run_logs.name,
        )
        # a restore this controller's predecessor left: aborted, or finished once running
        self.restores.recover()
        #: the highest epoch the restore log holds, as last read: only a restore gives a
        #: node its epoch, so a node reporting a higher one is forged (or from another
        #: cluster)
        self.assigned_epoch = self.service.registry.highest_epoch()
        self._background: set[asyncio.Task[Any]] = set()

    # ---------------------------------------------------------------- lifetime
    @asynccontextmanager
    async def lifespan(self, _app: object) -> AsyncIterator[None]:
        """The app's lifespan: the monitor and the restores' finisher run meanwhile."""
        watcher = asyncio.create_task(self.monitor())
        self.restores.start()
        yield
        self.restores.stop()
        watcher.cancel()
        self.service.registry.close()

    async def _health_from_heartbeats(self) -> dict[str, str]:
        return self.membership.health()

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def monitor(self) -> None:
        """Heartbeats that stopped, times-to-live that ran out, cleanups to send."""
        service = self.service
        while True:
            await asyncio.sleep(MONITOR_EVERY_S)
            try:
                changes = self.membership.expire(time.monotonic())
                service.journal.changes(changes)
                if changes:
                    reason = "membership changed: " + "; ".join(changes)
                    await run_in_threadpool(service.fail_open, reason)
                await run_in_threadpool(service.expire)
            except SQLAlchemyError as e:  # the registry is down: try again next time
                log.warning("registry: %s", e)
            except Exception:  # the monitor must outlive any one bad turn
                log.exception("the controller's monitor")
            while not service.to_clean.empty():
                snapshot_id, reason = service.to_clean.get()
                self._in_background(self.clean_up(snapshot_id, reason))

    async def clean_up(self, snapshot_id: str, reason: str) -> None:
        """Ask every node not known down to abandon a failed snapshot; keep the answers."""
        health_now = self.membership.health()
        nodes = [n for n in self.spec.nodes if health_now.get(n.id) != DOWN]
        answers = await asyncio.gather(
            *(self.calls.cleanup(n, snapshot_id, reason) for n in nodes), return_exceptions=True
        )
        results = {}
        for node, answer in zip(nodes, answers, strict=True):
            if isinstance(answer, BaseException):
                results[node.id] = {"error": str(answer) or type(answer).__name__}
            else:
                results[node.id] = dict(answer)
        try:  # a snapshot pruned meanwhile keeps nothing
            pruned = await run_in_threadpool(self.service.status, snapshot_id) is None
        except SQLAlchemyError:  # the registry is down: keep the answers
            pruned = False
        if not pruned:
            self.service.cleanups[snapshot_id] = results

    # ------------------------------------------------------------------ checks
    def target_location(self, uri: str | None) -> StorageLocation:
        """Where a trigger's snapshot goes: the default, or ``uri`` if the cluster may
        write there; :class:`StorageError` if not."""
        if uri is None:
            return self.default_location
        if self.storage_policy is None:
            return parse_storage_uri(uri)
        return self.storage_policy.check(uri)

    def epoch_given(self, epoch: int) -> int | None:
        """None if a restore of this cluster gave ``epoch`` (or none was needed), else
        the highest epoch a restore gave."""
        if epoch <= self.assigned_epoch:
            return None
        # read again: another controller on this registry may have assigned it
        highest = self.service.registry.highest_epoch()
        self.assigned_epoch = max(self.assigned_epoch, highest)  # heartbeats race here
        return None if epoch <= highest else highest

    # ----------------------------------------------------------------- pruning
    def completed(self) -> None:
        """A snapshot completed: with ``retain``, prune to the retained ones after the
        answer, in the background (the node need not wait for deletes)."""
        if self.retain is not None:
            self._in_background(self._prune_in_turn())

    async def _prune_in_turn(self) -> None:
        """Prune to the retained snapshots, never while a restore runs (it may be
        reading what would go)."""
        async with self.restores.lock:
            try:
                await run_in_threadpool(self.service.prune)
            except Exception:  # best effort: the next completion prunes again
                log.exception("pruning to the retained snapshots")

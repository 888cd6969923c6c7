"""The controller's restore of a completed snapshot: checked, in two phases, logged.

1. **The manifest** names each node's part with the part's SHA-256, balance and
   in-flight money (the controller read and checked every part when the snapshot
   completed), and the snapshot's total. A manifest that lacks any of these, or whose
   total is not the cluster's money (an inconsistent snapshot), is refused.
2. **Prepare.** Every node fetches and checks its part (:mod:`.restore_part`) and says
   what it holds, which must be what the manifest says. Nothing changes anywhere: on
   any refusal the restore is ABORTED in the registry's restore log and the answer names
   the node, the part and what is wrong; every node runs on as it was.
3. **Switch.** Every node was ready: the log says SWITCHING, and from then on the
   restore is finished whatever happens. Every node switches to the new epoch (paused),
   then all resume, and the log says DONE.

A controller that starts reads the log: a restore left PREPARING is ABORTED (nothing
had changed), one left SWITCHING is finished in the background, tried again until every
node has switched and resumed (a node answers a repeated switch as it did the first).
Until then no snapshot is triggered; a new restore may replace it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool

from .node_calls import NodeCalls, NodeRefused
from .parts import PartError, check_stored_manifest
from .registry import (
    ABORTED,
    DONE,
    PREPARING,
    RESUMING,
    SWITCHING,
    AlreadyRegistered,
    Registry,
    epoch_folder,
)
from .restore_part import SHA256
from .spec import ClusterSpec, NodeSpec
from .storage import StorageError, read
from .timestamps import now_iso

log = logging.getLogger(__name__)

#: how often a restore decided but not finished is tried again (seconds)
FINISH_EVERY_S = 1.0
#: how often an epoch taken meanwhile by another controller is drawn anew
BEGIN_TRIES = 5
#: a restore decided and not finished: switching nodes, or resuming them
UNFINISHED = (SWITCHING, RESUMING)


class RestoreRefused(Exception):
    """A restore that cannot run or did not finish: ``status`` and ``detail`` for the
    HTTP answer."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(frozen=True)
class RestorePart:
    """A node's part of a snapshot, as its manifest lists it."""

    snapshot_id: str
    node_id: str
    uri: str
    sha256: str
    balance: int
    in_flight: int


def manifest_parts(
    spec: ClusterSpec, snapshot_id: str, uri: str, sha256: str | None
) -> dict[str, RestorePart]:
    """Each node's part, from the manifest at ``uri`` whose bytes must have ``sha256``
    (the registry's), checked against the cluster; :class:`RestoreRefused` (409) naming
    what is wrong."""
    try:
        data = read(uri)
    except (OSError, StorageError) as e:
        raise RestoreRefused(409, f"manifest {uri}: cannot be read ({e})") from None
    try:
        check_stored_manifest(data, uri, sha256)
    except PartError as e:
        raise RestoreRefused(409, str(e)) from None
    try:
        manifest = json.loads(data)
        total = manifest.get("recorded_total")
        listed = {str(p["node_id"]): p for p in manifest["parts"]}
        parts = {
            node_id: RestorePart(
                snapshot_id,
                node_id,
                str(p["part_uri"]),
                str(p.get("sha256", "")),
                _whole(p.get("balance")),
                _whole(p.get("in_flight")),
            )
            for node_id, p in listed.items()
        }
    except (OSError, StorageError, ValueError, KeyError, TypeError) as e:
        raise RestoreRefused(409, f"manifest {uri}: cannot be read ({e})") from None
    missing = [n for n in spec.ids if n not in parts]
    if missing:
        raise RestoreRefused(409, f"manifest {uri}: no part of {', '.join(missing)}")
    unchecked = [
        n
        for n in spec.ids
        if not SHA256.match(parts[n].sha256) or min(parts[n].balance, parts[n].in_flight) < 0
    ]
    if unchecked or not isinstance(total, int) or isinstance(total, bool):
        raise RestoreRefused(
            409,
            f"manifest {uri}: no SHA-256, balance and in-flight money recorded for "
            f"{', '.join(unchecked) or 'the snapshot'}; its parts cannot be checked",
        )
    held = sum(parts[n].balance + parts[n].in_flight for n in spec.ids)
    if held != total:
        raise RestoreRefused(409, f"manifest {uri}: its parts hold {held}, its total says {total}")
    if total != spec.total_money:
        raise RestoreRefused(
            409,
            f"snapshot_id: {snapshot_id} recorded {total} in all, the cluster holds "
            f"{spec.total_money}: an inconsistent snapshot is never restored (it would "
            f"{'create' if total > spec.total_money else 'destroy'} money)",
        )
    return {n: parts[n] for n in spec.ids}


def _whole(value: Any) -> int:
    """A manifest's amount, or -1 for anything that is not a whole number at least 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return -1


class Restores:
    """The controller's restores (see the module docstring).

    ``on_decided(snapshot_id)`` runs when a restore is decided: it fails the snapshots in
    progress (they belong to the epoch being left) and returns their ids.
    """

    def __init__(
        self,
        spec: ClusterSpec,
        registry: Registry,
        calls: NodeCalls,
        on_decided: Callable[[str], list[str]],
        run_tag: str = "",
    ) -> None:
        self.spec = spec
        #: the run's log folder's name, which each new epoch's folder names after its
        #: number (``epoch-002-run-001-a1b2c3``): a pruning knows this run's epochs by it
        self.run_tag = run_tag
        self.registry = registry
        self.calls = calls
        self.on_decided = on_decided
        #: one restore at a time, the background finisher's turns and prunings included
        self.lock = asyncio.Lock()
        #: the restore log's row of a restore decided but not finished
        self.unfinished: dict[str, Any] | None = None
        #: why it is not finished yet, as last tried
        self.unfinished_because = ""
        self._finisher: asyncio.Task[None] | None = None
        #: whether a request's restore holds the lock or waits for it (a second request
        #: is refused; a finisher's turn or a pruning holding the lock is waited for)
        self.requested = False

    # ------------------------------------------------------------ start-up
    def recover(self) -> None:
        """At start-up: what a controller that stopped left in the restore log."""
        for row in self.registry.restores(PREPARING):
            self._abort(
                row["epoch"],
                (PREPARING,),
                "the controller stopped before every node was ready; nothing had changed",
            )
        decided = self.registry.restores(*UNFINISHED)
        self._supersede(decided[:-1], decided[-1]["epoch"] if decided else 0)
        self.unfinished = decided[-1] if decided else None

    def start(self) -> None:
        """Finish, in the background, a restore found decided but not finished."""
        if self.unfinished is not None and (self._finisher is None or self._finisher.done()):
            self._finisher = asyncio.get_running_loop().create_task(self._finish_unfinished())

    def stop(self) -> None:
        if self._finisher is not None:
            self._finisher.cancel()

    def busy(self) -> str:
        """Why a snapshot cannot be triggered now because of a restore, or ``""``."""
        if self.unfinished is not None:
            row = self.unfinished
            because = f" ({self.unfinished_because})" if self.unfinished_because else ""
            return (
                f"the restore of {row['snapshot_id']} (epoch {row['epoch']}) is not finished"
                f"{because}; the controller finishes it as soon as it can"
            )
        if self.requested:
            return "a restore is running"
        return ""

    # ------------------------------------------------------------- restore
    async def run(self, row: dict[str, Any], above: int) -> dict[str, Any]:
        """Restore the COMPLETED snapshot ``row`` in an epoch above ``above`` (and above
        every epoch logged); what each node holds after. :class:`RestoreRefused`."""
        sid = str(row["snapshot_id"])
        uri = str(row["checkpoint_manifest_uri"])
        sha256 = await run_in_threadpool(self.registry.manifest_sha256, sid)
        parts = await run_in_threadpool(manifest_parts, self.spec, sid, uri, sha256)
        folder_tag = f"{self.run_tag}-" * bool(self.run_tag) + secrets.token_hex(3)
        epoch = await run_in_threadpool(self._begin, sid, folder_tag, above)
        folder = epoch_folder({"epoch": epoch, "log_folder": folder_tag})
        nodes = [self.spec.node(n) for n in self.spec.ids]
        answers = await asyncio.gather(
            *(self.calls.prepare_restore(n, parts[n.id], epoch) for n in nodes),
            return_exceptions=True,
        )
        problems, unreachable = [], False
        for node, answer in zip(nodes, answers, strict=True):
            part = parts[node.id]
            if isinstance(answer, BaseException):
                refused = isinstance(answer, NodeRefused)
                problems.append(
                    _not_ready(node, answer, f"{node.id}'s part of {sid} ({part.uri})", refused)
                )
                unreachable = unreachable or not refused
            elif (answer["balance"], answer["in_flight"]) != (part.balance, part.in_flight):
                problems.append(
                    f"{node.id}'s part of {sid} ({part.uri}) holds {answer['balance']} and "
                    f"{answer['in_flight']} in flight, the manifest says {part.balance} and "
                    f"{part.in_flight}"
                )
        if problems:
            reason = "; ".join(problems)
            await run_in_threadpool(self._abort, epoch, (PREPARING,), reason)
            raise RestoreRefused(
                503 if unreachable else 409,
                f"restore of {sid} refused, nothing changed (every node runs on as it was): "
                f"{reason}",
            )
        await run_in_threadpool(self._decide, epoch, sid)
        # decided: from here the restore is finished, by this call or the finisher
        logged = {"epoch": epoch, "snapshot_id": sid, "log_folder": folder_tag, "status": SWITCHING}
        self.unfinished, self.unfinished_because = logged, ""
        try:
            failed = await run_in_threadpool(self.on_decided, sid)
            restored = await self._switch(logged, parts)
        except Exception as e:
            detail = e.detail if isinstance(e, RestoreRefused) else f"{type(e).__name__}: {e}"
            if self.unfinished is None:  # given up: a node lost what it was switched to
                raise RestoreRefused(503, f"restore of {sid} (epoch {epoch}): {detail}") from None
            self.unfinished_because = detail
            self.start()
            raise RestoreRefused(
                503,
                f"restore of {sid} (epoch {epoch}) was decided, every node ready, but is not "
                f"finished: {detail}; the controller finishes it as soon as it can (no "
                "snapshot is triggered meanwhile)",
            ) from None
        return {"epoch": epoch, "log_folder": folder, "nodes": restored, "failed": failed}

    def _begin(self, snapshot_id: str, folder_tag: str, above: int) -> int:
        for tries in range(1, BEGIN_TRIES + 1):
            try:
                # the folder's name holds the epoch, known only once drawn: the log keeps
                # the rest of it (see _folder)
                return self.registry.begin_restore(
                    snapshot_id, folder_tag, started_at=now_iso(), above=above
                )
            except AlreadyRegistered:
                if tries == BEGIN_TRIES:
                    raise
        raise AssertionError("unreachable")

    def _decide(self, epoch: int, snapshot_id: str) -> None:
        if not self.registry.set_restore(epoch, SWITCHING, only_from=(PREPARING,)):
            raise RestoreRefused(
                409,
                f"restore of {snapshot_id}: epoch {epoch} was aborted meanwhile (by another "
                "controller starting on this registry); nothing changed: restore again",
            )
        self._supersede(
            [r for r in self.registry.restores(*UNFINISHED) if r["epoch"] != epoch], epoch
        )

    def _supersede(self, rows: Sequence[dict[str, Any]], epoch: int) -> None:
        for row in rows:
            self._abort(
                row["epoch"],
                UNFINISHED,
                f"replaced by the restore of epoch {epoch} before it finished",
            )

    def _abort(self, epoch: int, only_from: Sequence[str], reason: str) -> None:
        """The logged restore of ``epoch`` is ABORTED for ``reason``, if it still is in
        one of the states ``only_from``."""
        self.registry.set_restore(
            epoch, ABORTED, only_from=tuple(only_from), error=reason, finished_at=now_iso()
        )

    async def _switch(
        self, logged: dict[str, Any], parts: dict[str, RestorePart]
    ) -> list[dict[str, Any]]:
        """Every node to the logged restore's epoch (the log then says RESUMING), then
        every node running (DONE); what each node holds. :class:`RestoreRefused` naming
        the nodes that did not: tried again later, unless a node lost what it had been
        switched to (the restore is then given up, ABORTED, and the cluster awaits
        another)."""
        epoch, folder = int(logged["epoch"]), epoch_folder(logged)
        nodes = [self.spec.node(n) for n in self.spec.ids]
        answers: list[Any] = []
        if logged["status"] == SWITCHING:
            answers = await asyncio.gather(
                *(self.calls.restore(n, parts[n.id], epoch, folder) for n in nodes),
                return_exceptions=True,
            )
            errors = _failures(nodes, answers)
            if errors:
                raise RestoreRefused(503, f"not switched: {'; '.join(errors)}")
            await run_in_threadpool(
                self.registry.set_restore, epoch, RESUMING, only_from=(SWITCHING,)
            )
            logged["status"] = RESUMING
        resumed = await asyncio.gather(
            *(self.calls.resume(n, epoch) for n in nodes), return_exceptions=True
        )
        lost = [n.id for n, a in zip(nodes, resumed, strict=True) if isinstance(a, NodeRefused)]
        if lost:
            # a node not in the epoch any more was restarted after its switch, holding
            # nothing; switching it alone again would restore it to a state the others
            # have left: the restore is over, and the cluster awaits a new one
            reason = (
                f"{', '.join(lost)} left epoch {epoch} after switching to it (restarted, "
                "holding nothing): restore the cluster again"
            )
            await run_in_threadpool(self._abort, epoch, (RESUMING,), reason)
            self._finished(epoch)
            raise RestoreRefused(503, reason)
        errors = _failures(nodes, resumed)
        if errors:
            raise RestoreRefused(503, f"switched, not resumed: {'; '.join(errors)}")
        await run_in_threadpool(
            self.registry.set_restore, epoch, DONE, only_from=(RESUMING,), finished_at=now_iso()
        )
        self._finished(epoch)
        return [
            {"node_id": n.id, "balance": int(a["balance"]), "reinjected": int(a["reinjected"])}
            for n, a in zip(nodes, answers, strict=True)
            if isinstance(a, dict)
        ]

    def _finished(self, epoch: int) -> None:
        if self.unfinished is not None and self.unfinished["epoch"] == epoch:
            self.unfinished, self.unfinished_because = None, ""

    async def _finish_unfinished(self) -> None:
        while self.unfinished is not None:
            async with self.lock:
                logged = self.unfinished
                if logged is None:
                    return
                try:
                    sid = logged["snapshot_id"]
                    row = await run_in_threadpool(self.registry.get, sid)
                    uri = "" if row is None else str(row["checkpoint_manifest_uri"])
                    sha256 = await run_in_threadpool(self.registry.manifest_sha256, sid)
                    parts = (
                        await run_in_threadpool(manifest_parts, self.spec, sid, uri, sha256)
                        if logged["status"] == SWITCHING
                        else {}  # every node switched: they are only resumed
                    )
                    await self._switch(logged, parts)
                    log.info("restore of epoch %s finished", logged["epoch"])
                except RestoreRefused as e:
                    self.unfinished_because = e.detail
                except Exception as e:  # the finisher must outlive any one bad turn
                    self.unfinished_because = f"{type(e).__name__}: {e}"
                    log.exception("finishing the restore of epoch %s", logged["epoch"])
            await asyncio.sleep(FINISH_EVERY_S)


def _failures(nodes: Sequence[NodeSpec], answers: Sequence[Any]) -> list[str]:
    """What went wrong, naming the node, for each node whose call failed."""
    failed = zip(nodes, answers, strict=True)
    return [_named(n, a) for n, a in failed if isinstance(a, BaseException)]


def _named(node: NodeSpec, error: BaseException) -> str:
    said = str(error) or type(error).__name__
    return said if said.startswith(f"{node.id}'s ") else f"{node.id}: {said}"


def _not_ready(node: NodeSpec, error: BaseException, part: str, refused: bool) -> str:
    """Why ``node`` is not ready to switch to ``part``: its own words when they name
    the part, else prefixed with it; a call that failed otherwise (no answer, an error
    of gRPC's) did not check it."""
    said = str(error) or type(error).__name__
    if said.startswith(f"{node.id}'s "):
        return said
    if not refused:  # unreachable, or an error of the call rather than the node's word
        return f"{part}: not checked ({said})"
    return f"{part}: {said.removeprefix(f'{node.id}: ')}"

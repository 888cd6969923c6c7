"""A live node: one OS process running the bank and the engine's Chandy–Lamport.

Run as ``python -m snapshotlib.live.node --spec SPEC.json --node P1 --log-dir DIR
--token-file WORKDIR/api-token --storage URI --storage-root DIR`` (and the controller's
``--allow-endpoint`` and ``--allow-bucket``: a node writes and reads parts only where
the controller may)
(:class:`~snapshotlib.live.cluster.LiveCluster` and ``snapshotlib live up`` start it).

The node serves gRPC on its address: ``ChannelService.Open`` takes the stream of each
input channel, ``NodeControl`` takes the controller's ``Initiate`` and ``Health``. It
opens one stream per output channel and writes every transfer on it in the order it
sent them. Markers go on that stream too by default (``markers="in-band"``), so
channels are FIFO (a ``marker_delay_ms`` holds a marker, and what follows it, up on its
stream). With ``markers="out-of-band"`` a marker is the system-design text's
``SnapshotService.SendMarker`` call instead, on a connection of its own, after the
spec's ``marker_delay_ms``: transfers sent meanwhile overtake it, and the snapshots it
yields can be inconsistent (the check names how). Between them the node sends money to
random neighbours at the cluster's rate.

Everything runs on one asyncio loop, so the algorithm sees one action at a time, as in
the simulator. Every action (send, receive, marker, initiate) is one line of the node's
log (``DIR/<node>.<first action>.jsonl``, rotated: :mod:`.action_log`), with the node's
vector clock after it: the controller assembles the logs of all nodes into one run the
engine checks (:mod:`snapshotlib.live.runlog`). When its part of a snapshot is done the node writes
the part (its recorded balance and recorded channel states) durably under the
snapshot's storage URI, then reports it to the controller.

Under failure (lesson 10): the node sends the controller a heartbeat every
``heartbeat_ms`` (with its epoch and what it buffers for snapshots); a snapshot whose
part is not done ``ttl_ms`` after the node recorded is abandoned here and reported
failed; ``Cleanup`` abandons a snapshot the controller failed (each abandon is a log
line the replay applies). ``PrepareRestore`` fetches and checks the node's part of a
completed snapshot (:mod:`.restore_part`), changing nothing; ``Restore`` then rolls the
node back to it in a new *epoch*: the part's balance, then the channel messages it
recorded, delivered in order; envelopes of an older epoch are dropped from then on, its log goes
on in a new folder, and the bank waits for ``Resume``. A node started with
``--await-restore`` (restarted after a crash) holds nothing and drops everything until a
restore. ``Crash`` kills the process (SIGKILL), for the lab.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import os
import random
import re
import secrets
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from ..algorithms.base import SnapshotError
from ..algorithms.chandy_lamport import ChandyLamport
from ..trace import MARKER
from .action_log import ActionLog
from .algorithm_choice import algorithm_class
from .api_token import TokenError, read_token
from .controller_client import ControllerClient
from .host import NodeHost
from .keyed_state import KeyedState
from .lifetime import exit_with_parent
from .node_services import (
    BASE_KEY,
    CLOCK_KEY,
    EPOCH_KEY,
    STORAGE_KEY,
    TYPE_KEY,
    ChannelService,
    ControlService,
    MarkerService,
)
from .part_writer import Target, write_part
from .restore_part import PreparedRestore, RestoreError, prepare_restore
from .rpc import RequireToken, protos, services, token_metadata
from .spec import ClusterSpec, SpecError
from .storage import StorageError, StorageLocation, parse_storage_uri
from .storage_policy import (
    MAX_OBJECT_URI_CHARS,
    StoragePolicy,
    add_storage_arguments,
    storage_policy_of,
)

#: the largest transfer, as a share of the initial balance (of one account's, with several)
MAX_SHARE = 0.05
#: how often the log is flushed to disk (seconds)
FLUSH_EVERY_S = 0.2
#: transfers waiting to go out on one channel before the bank holds back (backpressure:
#: a node sending faster than its neighbours take would otherwise queue without bound,
#: and a marker would wait behind the whole queue)
MAX_BACKLOG = 32
#: gRPC's reconnection backoff starts at 1 s and grows to 2 min: a node started before
#: its neighbours listen would keep its streams down for seconds, and then a marker on
#: a fresh out-of-band connection overtakes everything queued on them
LINK_OPTIONS = (("grpc.initial_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 1000))
#: the epoch of a node restarted after a crash: it matches no sender's until a restore
NO_EPOCH = -1
#: how often the time-to-live of open snapshots is looked at (seconds)
TTL_EVERY_S = 0.1
#: messages met between two looks for those no open snapshot recorded (to forget them)
FORGET_EVERY = 1024
#: chunk tables of the newest parts kept for an incremental snapshot's base (the base is
#: the latest completed snapshot, so only the last few can be asked for)
KEPT_TABLES = 16
#: a log folder a restore may name: one plain name under the cluster's logs
LOG_FOLDER = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")


class Node:
    """Node ``me`` of the cluster ``spec`` (see the module docstring)."""

    def __init__(
        self,
        spec: ClusterSpec,
        me: str,
        log_dir: Path,
        *,
        await_restore: bool = False,
        token: str | None = None,
        storage_policy: StoragePolicy | None = None,
    ) -> None:
        self.spec = spec
        #: where this node may write parts and read them back (:mod:`.storage_policy`),
        #: whoever named the place: the controller, a marker, a restore
        self.storage_policy = storage_policy
        #: the cluster's token (:mod:`.api_token`): every call this node takes must carry
        #: it, and every call it makes does
        self.token = token
        self.controller = ControllerClient(
            spec.controller, me, token, spec.heartbeat_timeout_ms / 1000
        )
        self.me = spec.node(me).id
        self.network = spec.network()
        self.position = spec.ids.index(me)
        self.rng = random.Random(spec.seed + self.position)
        #: which account a transfer touches: a generator apart, so the transfers made
        #: are the same whatever the number of accounts
        self.account_rng = random.Random(f"{spec.seed}/{self.position}/accounts")
        self.jitter_rng = random.Random(f"{spec.seed}/{self.position}/jitter")
        #: per snapshot this node wrote a part of: chunk index -> (SHA-256, URI)
        self._chunk_tables: dict[str, dict[int, tuple[str, str]]] = {}
        self._in_by_sender = {c.src: self.network.channel_index(c) for c in self.network.inputs(me)}
        self._queues: dict[int, asyncio.Queue[Any]] = {}
        self.received = 0
        self.sent = 0
        self.streams_open = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        #: out-of-band markers: a gRPC channel per output channel, apart from its stream
        self._marker_links: dict[int, grpc.aio.Channel] = {}
        self.stopping = asyncio.Event()
        #: this process's name in heartbeats: a restarted node is a new member
        self.incarnation = f"{os.getpid()}-{secrets.token_hex(4)}"
        #: a restore starts a new epoch; envelopes of any other epoch are dropped
        self.epoch = NO_EPOCH if await_restore else 0
        self.awaiting_restore = await_restore
        #: a restore's first phase done here, waiting for the second (:meth:`restore`)
        self._prepared: PreparedRestore | None = None
        #: the last restore done: (epoch, part SHA-256, balance after, re-injected)
        self._restored: tuple[int, str, int, int] | None = None
        #: the bank holds back during a restore, until every node is restored
        self.held = await_restore
        self.log_root = log_dir.parent
        #: the snapshot algorithm (the engine's, or the learner's: :mod:`.algorithm_choice`)
        self.algorithm_class = algorithm_class(spec)
        self.log = ActionLog(None, self.me)
        # a node restarted after a crash holds nothing (its money died with the process)
        money = 0 if await_restore else spec.initial_money
        self._start_epoch(
            KeyedState(spec.state_keys, money, self.account_rng),
            None if await_restore else log_dir,
        )

    def _start_epoch(self, state: KeyedState, log_dir: Path | None) -> None:
        """Everything an epoch has of its own, anew: the engine's host (with the money of
        ``state``), the clock, the channel numbers, the snapshots, the log (in
        ``log_dir``). The log is opened first: when it cannot be, nothing changed."""
        log = ActionLog(log_dir, self.me, segment_lines=self.spec.log_segment_lines)
        # named in each part: a check reads that run's logs
        folder = "" if log_dir is None else log_dir.name
        self.state = state
        balance = state.total
        self.clock = [0] * len(self.spec.nodes)
        self.algorithm = self.algorithm_class()
        self.host = NodeHost(
            self.network,
            self.me,
            self.algorithm,
            balance,
            self._transmit_control,
            lambda event: None,  # the records say what the node needs (_notice)
        )
        self.inputs = self.host.input_channels(self.me)
        self.outputs = self.host.output_channels(self.me)
        self._seq_out = dict.fromkeys(self.outputs, 0)
        #: where (and how) each snapshot's parts go, once this node knows
        self._targets: dict[str, Target] = {}
        #: per snapshot: the accounts when this node recorded
        self._entries_at_record: dict[str, dict[str, tuple[int, int]]] = {}
        #: per snapshot: this node's vector clock when it recorded its state
        self._clock_at_record: dict[str, list[int]] = {}
        #: the snapshots whose part this node made (ids only: the rest is forgotten)
        self._finished: set[str] = set()
        #: when the messages no open snapshot recorded are next forgotten (a count)
        self._forget_at = FORGET_EVERY
        #: per snapshot still open here: when this node recorded (monotonic seconds)
        self._open_since: dict[str, float] = {}
        #: per snapshot still open here: the action in which this node recorded
        self._recorded_at: dict[str, int] = {}
        self.log.close(wait=False)  # on the loop: the old epoch's compression goes on
        self.log, self.log_folder = log, folder

    # --------------------------------------------------------------- actions
    def _tick(self, merge: Any = ()) -> list[int]:
        clock = self.clock
        for i, c in enumerate(merge):
            if c > clock[i]:
                clock[i] = c
        clock[self.position] += 1
        return clock

    def _write(self, line: dict[str, Any]) -> None:
        line["clock"] = list(self.clock)
        self.log.write(json.dumps(line, separators=(",", ":")) + "\n")

    def send_transfer(self, channel: int, amount: int) -> None:
        """Send ``amount`` on output ``channel``: one action, one envelope."""
        action, _ = self.host.send(channel, amount)
        self.state.debit(amount)
        self._tick()
        seq = self._seq_out[channel]
        self._seq_out[channel] = seq + 1
        self.sent += 1
        self._write(
            {"i": action, "kind": "send", "ch": self._name(channel), "seq": seq, "amount": amount}
        )
        self._queues[channel].put_nowait(
            protos.Envelope(
                sender_node_id=self.me,
                seq=seq,
                clock=self.clock,
                transfer=protos.Transfer(amount=amount),
                epoch=self.epoch,
            )
        )
        self._forget_messages()

    def accept(self, envelope: Any) -> None:
        """Take one envelope from an input stream (in the order it was sent)."""
        channel = self.input_from(envelope.sender_node_id)
        if envelope.epoch != self.epoch:
            return  # sent before a restore (or to a node that holds nothing yet)
        body = envelope.WhichOneof("body")
        if body == "transfer":
            amount = envelope.transfer.amount
            self._tick(envelope.clock)
            try:
                action, _ = self.host.accept_transfer(channel, -1, amount)
            except Exception as e:  # a learner's class: said, and the node goes on
                action = self._algorithm_failed("on_app_receive", e)
            self.state.credit(amount)
            self.received += 1
            self._write(
                {
                    "i": action,
                    "kind": "receive",
                    "ch": self._name(channel),
                    "seq": envelope.seq,
                    "amount": amount,
                }
            )
            self._notice(action)
            self._forget_messages()
        elif body == "marker":
            target = Target(
                envelope.target_storage_uri,
                envelope.snapshot_type or "full",
                envelope.base_snapshot_id,
            )
            self.accept_marker(channel, envelope.marker.snapshot_id, envelope.clock, target)

    def accept_marker(
        self, channel: int, snapshot_id: str, clock: Sequence[int], target: Target
    ) -> None:
        """Take a marker of ``snapshot_id`` from input ``channel``, sent at ``clock``."""
        if target.storage_uri:
            self._targets.setdefault(snapshot_id, target)
        self._tick(clock)
        # logged before the algorithm runs: the markers it sends come after it
        self._write(
            {
                "i": self.host.time,
                "kind": "marker",
                "ch": self._name(channel),
                "snapshot": snapshot_id,
            }
        )
        try:
            action = self.host.accept_control(channel, -1, MARKER, snapshot_id)
        except Exception as e:  # a learner's class: said, and the node goes on
            action = self._algorithm_failed("on_control", e)
        self._notice(action)

    def input_from(self, sender: str) -> int:
        """The input channel from node ``sender``; :class:`SpecError` if there is none."""
        channel = self._in_by_sender.get(sender)
        if channel is None:
            raise SpecError(f"{self.me} has no channel from {sender!r}")
        return channel

    def initiate(self, snapshot_id: str, target: Target) -> str:
        """Start ``snapshot_id`` here; the reason when it cannot be started, else ``""``."""
        if self.awaiting_restore:
            return f"{self.me} restarted after a crash and holds no state: restore it first"
        algorithm = self.algorithm
        if snapshot_id in algorithm.snapshot_records() or snapshot_id in self.host.ignored:
            return f"{self.me} already took part in {snapshot_id}"
        try:
            self.storage_location(target.storage_uri)
        except StorageError as e:
            return str(e)
        if target.snapshot_type not in ("full", "incremental"):
            return f"snapshot_type: 'full' or 'incremental', got {target.snapshot_type!r}"
        self._targets[snapshot_id] = target
        self._tick()
        self._write({"i": self.host.time, "kind": "initiate", "snapshot": snapshot_id})
        try:
            action = self.host.initiate(snapshot_id)
        except SnapshotError as e:
            return str(e)
        except Exception as e:  # a learner's class
            self._notice(self._algorithm_failed("start", e))  # what it did before it raised
            return (
                f"{self.me}: {self.algorithm_class.__name__}.start raised {type(e).__name__}: {e}"
            )
        self._notice(action)
        return ""

    def storage_location(self, uri: str, what: str = "target_storage_uri") -> StorageLocation:
        """``uri`` parsed, if this cluster may store there; :class:`StorageError` naming
        ``what`` and what is allowed if not."""
        if self.storage_policy is None:  # a node made in-process, trusted as its maker
            return parse_storage_uri(uri)
        # the controller limited the target as given; it comes here normalised
        return self.storage_policy.check(uri, what, MAX_OBJECT_URI_CHARS)

    # ------------------------------------------------------------- failures
    def buffered(self, snapshot_id: str | None = None) -> tuple[int, int]:
        """Messages recorded for open snapshots (or for ``snapshot_id`` only), and the
        bytes they take in a part: what a cleanup frees."""
        messages = self.host.messages
        count = size = 0
        for sid, recorded in self._recording():
            if snapshot_id is None or sid == snapshot_id:
                count += len(recorded)
                size += len(json.dumps([messages[m].payload for m in recorded]))
        return count, size

    def _recording(self) -> list[tuple[str, list[int]]]:
        """(snapshot, messages recorded so far) for every input channel this node is
        recording, read from the records (whatever the class keeps besides)."""
        return [
            (sid, rec.channels[ch])
            for sid, rec in self.algorithm.snapshot_records().items()
            if sid not in self.host.ignored
            for ch in self.inputs
            if ch in rec.channels and ch not in rec.closed
        ]

    def abandon(self, snapshot_id: str, reason: str) -> tuple[bool, int, int]:
        """Give ``snapshot_id`` up here: what was recorded for it goes, its later markers
        are ignored. Logged (the replay does the same at the same point). Returns
        whether the node held anything of it, and the messages and bytes freed."""
        if snapshot_id in self._finished:
            return False, 0, 0  # the part is made: nothing is buffered for it
        held = snapshot_id in self._open_since
        freed, size = self.buffered(snapshot_id)
        for kept in (
            self._open_since,
            self._recorded_at,
            self._entries_at_record,
            self._clock_at_record,
        ):
            kept.pop(snapshot_id, None)
        self._tick()
        self._write({"i": self.host.note(), "kind": "discard", "snapshot": snapshot_id})
        self.log.flush()  # on disk before the cleanup is answered: a reader may look now
        self.host.ignore(snapshot_id)
        self.host.algorithm.discard(snapshot_id)
        print(f"{self.me}: abandoned {snapshot_id}: {reason}", file=sys.stderr)
        return held, freed, size

    async def _watch_ttl(self) -> None:
        """Abandon a snapshot whose part is not done ``ttl_ms`` after this node recorded,
        and report it failed (the text's node-local time-to-live)."""
        ttl = self.spec.ttl_ms / 1000
        while not self.stopping.is_set():
            await asyncio.sleep(TTL_EVERY_S)
            now = time.monotonic()
            for snapshot_id, since in list(self._open_since.items()):
                if now - since < ttl:
                    continue
                missing = ", ".join(self._missing_markers(snapshot_id)) or "no channel"
                reason = f"{self.me}: time-to-live of {self.spec.ttl_ms} ms ran out with "
                if self.algorithm_class is ChandyLamport:
                    reason += f"no marker on {missing}"
                else:  # a learner's class may leave a channel open after its marker
                    reason += f"{missing} still open (no marker, or the class did not close it)"
                self.abandon(snapshot_id, reason)
                report = {"node_id": self.me, "part_uri": "", "size_bytes": 0, "ok": False}
                report["error"] = reason
                self._spawn(asyncio.to_thread(self.controller.report, snapshot_id, report))

    def _missing_markers(self, snapshot_id: str) -> list[str]:
        rec = self.algorithm.snapshot_records().get(snapshot_id)
        return [self._name(ch) for ch in self.inputs if rec is None or ch not in rec.closed]

    async def prepare_restore(
        self, snapshot_id: str, part_uri: str, part_sha256: str, epoch: int
    ) -> PreparedRestore:
        """A restore's first phase: fetch and check this node's part (:mod:`.restore_part`)
        and keep it for :meth:`restore`; nothing else changes, the bank goes on.
        :class:`RestoreError` naming what is wrong."""
        if epoch <= self.epoch:
            raise RestoreError(f"epoch: above {self.me}'s {self.epoch} expected, got {epoch}")
        prepared = await prepare_restore(
            self.network,
            self.me,
            self.account_rng,
            snapshot_id=snapshot_id,
            part_uri=part_uri,
            part_sha256=part_sha256,
            epoch=epoch,
            policy=self.storage_policy,
        )
        self._prepared = prepared
        return prepared

    async def restore(
        self, snapshot_id: str, part_uri: str, part_sha256: str, epoch: int, log_folder: str
    ) -> tuple[int, int]:
        """The second phase: roll back to this node's part of ``snapshot_id`` in ``epoch``
        (see the module docstring); the bank holds back until :meth:`resume`. Returns the
        balance after and the messages re-injected.

        The part prepared for this epoch is used, or (a node restarted since, or a
        controller completing a restore after its own restart) fetched and checked now.
        Asked again for the epoch it is in, from the same part, the node answers as the
        first time: a controller may repeat the call. :class:`RestoreError` (nothing
        changed) for a part or call it cannot take."""
        if not LOG_FOLDER.match(log_folder):
            raise RestoreError(f"log_folder: one plain folder name expected, got {log_folder!r}")
        done = self._restored
        if done is not None and (done[0], done[1]) == (epoch, part_sha256):
            return done[2], done[3]
        prepared = self._prepared
        if prepared is None or (prepared.epoch, prepared.part.sha256) != (epoch, part_sha256):
            prepared = await self.prepare_restore(snapshot_id, part_uri, part_sha256, epoch)
            done = self._restored  # the same switch, asked twice, done while this one read
            if done is not None and (done[0], done[1]) == (epoch, part_sha256):
                return done[2], done[3]
        if epoch <= self.epoch:  # another restore came first while the part was read
            raise RestoreError(f"epoch: above {self.me}'s {self.epoch} expected, got {epoch}")
        # the new epoch's log first: a node that cannot open it stays as it was, and the
        # switch can be asked again
        self._start_epoch(prepared.state, self.log_root / log_folder)
        self._prepared = None
        self.held = True
        self.epoch = epoch
        for queue in self._queues.values():  # what the old epoch had yet to send
            while not queue.empty():
                queue.get_nowait()
        # an incremental checkpoint may build on the restored one
        self._remember(snapshot_id, prepared.table)
        self.awaiting_restore = False
        self._tick()
        balance = prepared.part.balance
        self._write(
            {
                "i": self.host.note(),
                "kind": "restore",
                "snapshot": snapshot_id,
                "epoch": epoch,
                "balance": balance,
            }
        )
        reinjected = 0
        for ch, amounts in prepared.part.channels.items():  # delivered first, in order
            for amount in amounts:
                self._tick()
                try:
                    action, _ = self.host.accept_transfer(ch, -1, amount)
                except Exception as e:  # a learner's class: said, and the restore goes on
                    action = self._algorithm_failed("on_app_receive", e)
                self.state.credit(amount)
                self._write(
                    {"i": action, "kind": "reinject", "ch": self._name(ch), "amount": amount}
                )
                reinjected += 1
        self.log.flush()
        self._restored = (epoch, part_sha256, self.host.balance, reinjected)
        return self.host.balance, reinjected

    def _remember(self, snapshot_id: str, table: dict[int, tuple[str, str]]) -> None:
        """Keep a part's chunk table, for an incremental snapshot that takes it as base."""
        self._chunk_tables[snapshot_id] = table
        while len(self._chunk_tables) > KEPT_TABLES:  # the oldest cannot be a base now
            del self._chunk_tables[next(iter(self._chunk_tables))]

    def resume(self, epoch: int) -> bool:
        """The bank sends again, if ``epoch`` is this node's."""
        if epoch != self.epoch:
            return False
        self.held = False
        return True

    def heartbeat(self) -> dict[str, Any]:
        count, size = self.buffered()
        return {
            "node_id": self.me,
            "incarnation": self.incarnation,
            "epoch": self.epoch,
            "awaiting_restore": self.awaiting_restore,
            "balance": self.host.balance,
            "buffered_messages": count,
            "buffered_bytes": size,
            "open_snapshots": sorted(self._open_since),
            "leaving": self.stopping.is_set(),
        }

    async def _send_heartbeats(self) -> None:
        every = self.spec.heartbeat_ms / 1000
        loop = asyncio.get_running_loop()
        beats = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="heartbeat")
        while not self.stopping.is_set():
            began = time.monotonic()
            # one at a time, on a thread of its own: a controller slow to answer piles up
            # no threads, and slow part writes or restores do not hold heartbeats up
            await loop.run_in_executor(beats, self.controller.heartbeat, self.heartbeat())
            rest = max(0.0, every - (time.monotonic() - began))
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), rest)
        # a node that stops says so: it leaves at once instead of timing out
        await loop.run_in_executor(beats, self.controller.heartbeat, self.heartbeat())
        beats.shutdown(wait=False)

    # ------------------------------------------------- what the algorithm does
    def _transmit_control(self, channel: int, message: int, kind: str, tag: str) -> None:
        marker = protos.MarkerRequest(
            snapshot_id=tag, sender_node_id=self.me, timestamp_ns=time.time_ns()
        )
        target = self._targets.get(tag, Target(""))
        if self.spec.markers == "out-of-band":
            self._spawn(self._send_marker(channel, marker, list(self.clock), target, self.epoch))
            return
        self._queues[channel].put_nowait(
            protos.Envelope(
                sender_node_id=self.me,
                clock=self.clock,
                marker=marker,
                target_storage_uri=target.storage_uri,
                epoch=self.epoch,
                snapshot_type=target.snapshot_type,
                base_snapshot_id=target.base,
            )
        )

    async def _send_marker(
        self, channel: int, marker: Any, clock: list[int], target: Target, epoch: int
    ) -> None:
        """The text's ``SendMarker`` call, after the spec's delay, on the marker link.

        ``MarkerRequest`` is the text's message, field for field; what the lab needs
        besides (the sender's vector clock, where the parts go) rides in the call's
        metadata.
        """
        await asyncio.sleep(self.spec.marker_delay_ms / 1000)
        metadata = (
            *token_metadata(self.token),
            (CLOCK_KEY, ",".join(map(str, clock))),
            (STORAGE_KEY, target.storage_uri.encode()),
            (EPOCH_KEY, str(epoch)),
            (TYPE_KEY, target.snapshot_type),
            (BASE_KEY, target.base),
        )
        stub = services.SnapshotServiceStub(self._marker_links[channel])
        try:
            await stub.SendMarker(marker, metadata=metadata, wait_for_ready=True)
        except grpc.aio.AioRpcError as e:
            dst = self.network.channels[channel].dst
            print(f"{self.me}: marker {marker.snapshot_id} to {dst} lost: {e}", file=sys.stderr)

    def _notice(self, action: int) -> None:
        """What the algorithm's call in ``action`` did to this node's part of each
        snapshot, read from its records (a learner's class need write no events): a
        state recorded starts the part's time-to-live; a part done (state recorded, every
        input channel closed) is made at once, written while the bank goes on, and the
        snapshot's markers are taken without the algorithm hearing them from then on
        (the replay does the same: :mod:`.runlog`)."""
        for sid, rec in list(self.algorithm.snapshot_records().items()):
            if sid in self._finished or sid in self.host.ignored or self.me not in rec.red_from:
                continue
            recorded_at = rec.red_from[self.me]
            if self._recorded_at.get(sid, recorded_at) != recorded_at:
                print(
                    f"{self.me}: {self.algorithm_class.__name__} recorded {self.me}'s state "
                    f"for {sid} again (at actions {self._recorded_at[sid]} and "
                    f"{recorded_at}); the part holds the second",
                    file=sys.stderr,
                    flush=True,
                )
                self._open_since.pop(sid, None)
            self._recorded_at[sid] = recorded_at
            if sid not in self._open_since:  # recorded in this action
                self._clock_at_record[sid] = list(self.clock)
                self._entries_at_record[sid] = self.state.entries()
                self._open_since[sid] = time.monotonic()
            if rec.part_done(self.me, self.inputs):
                self._open_since.pop(sid, None)
                self._recorded_at.pop(sid, None)
                self._finished.add(sid)
                self.host.ignore(sid)
                # the messages it recorded may be forgotten from here on
                try:
                    part: dict[str, Any] | Exception = self.part(sid, action)
                except Exception as e:  # reported by _finish_part: the snapshot must not wait
                    part = e
                self._clock_at_record.pop(sid, None)
                self._spawn(self._finish_part(sid, part))

    def _algorithm_failed(self, method: str, error: Exception) -> int:
        """A learner's class raised in ``method``: said where the lab shows it (the
        node's output), and the node goes on; the action it happened in."""
        name = self.algorithm_class.__name__
        print(
            f"{self.me}: {name}.{method} raised {type(error).__name__}: {error}",
            file=sys.stderr,
            flush=True,
        )
        return self.host.time - 1

    def _forget_messages(self) -> None:
        """Forget the messages no snapshot open here recorded, now and then."""
        if len(self.host.messages) < self._forget_at:
            return
        records = self.algorithm.snapshot_records()
        keep = [
            m
            for sid in self._open_since
            if sid in records
            for recorded in records[sid].channels.values()
            for m in recorded
        ]
        self.host.forget_messages(keep)
        self._forget_at = len(self.host.messages) + FORGET_EVERY

    async def _finish_part(self, snapshot_id: str, part: dict[str, Any] | Exception) -> None:
        """Write this node's part durably (its chunks first), then tell the controller;
        then forget the snapshot (a finished one's markers cannot come again)."""
        report: dict[str, Any] = {"node_id": self.me, "part_uri": "", "size_bytes": 0}
        self.log.flush()  # the log up to the part is on disk before the part is
        target = self._targets.pop(snapshot_id, Target(""))
        self.algorithm.discard(snapshot_id)
        entries = self._entries_at_record.pop(snapshot_id, None)
        try:
            if isinstance(part, Exception):
                raise part
            if entries is None:
                raise ValueError(f"no accounts recorded for {snapshot_id}")
            incremental = target.snapshot_type == "incremental"
            base = self._chunk_tables.get(target.base, {}) if incremental else {}
            if self.spec.upload_jitter_ms:
                await asyncio.sleep(self.jitter_rng.uniform(0, self.spec.upload_jitter_ms) / 1000)
            location = self.storage_location(target.storage_uri)
            uri, size, table = await write_part(
                self.spec, self.me, part, entries, target, base, location
            )
            self._remember(snapshot_id, table)
            report.update(part_uri=uri, size_bytes=size, ok=True, error=None)
        except (OSError, StorageError) as e:
            report.update(ok=False, error=f"{self.me}: {e}")
        except Exception as e:  # reported all the same: the snapshot must not wait for its TTL
            report.update(ok=False, error=f"{self.me}: {type(e).__name__}: {e}")
        await asyncio.to_thread(self.controller.report, snapshot_id, report)

    def part(self, snapshot_id: str, done_at: int) -> dict[str, Any]:
        """This node's part of ``snapshot_id``, done in action ``done_at`` (the clock is
        the one after it): recorded balance and channel states."""
        rec = self.host.algorithm.snapshot_records()[snapshot_id]
        messages = self.host.messages
        return {
            "snapshot_id": snapshot_id,
            "node_id": self.me,
            "balance": rec.states[self.me],
            "recorded_at_action": rec.red_from[self.me],
            "clock": self._clock_at_record.get(snapshot_id),
            # the causal past of every part's completion is all a check needs to replay
            "done_at_action": done_at,
            "done_clock": list(self.clock),
            "log_folder": self.log_folder,
            "channels": {
                self._name(ch): [messages[m].payload for m in rec.channels.get(ch, [])]
                for ch in self.host.input_channels(self.me)
            },
        }

    # ------------------------------------------------------------ running
    def _name(self, channel: int) -> str:
        return str(self.network.channels[channel])

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _bank(self) -> None:
        """Send money to random neighbours at the cluster's rate."""
        interval = 1.0 / self.spec.rate
        # a transfer moves at most one account's share of it: one account gives it,
        # as a row of a key-value store changes, not a sweep across many
        largest = max(1, int(self.spec.initial_money * MAX_SHARE / self.spec.state_keys))
        while not self.stopping.is_set():
            await asyncio.sleep(interval * self.rng.uniform(0.5, 1.5))
            balance = self.host.balance
            if balance > 0 and not self.host.paused and not self.held and self.outputs:
                channel = self.rng.choice(self.outputs)
                if self._queues[channel].qsize() >= MAX_BACKLOG:
                    continue  # the channel is backed up: this transfer is not made
                self.send_transfer(channel, self.rng.randint(1, min(balance, largest)))

    async def _stream_out(self, channel: int) -> None:
        """Open output ``channel``'s stream and write its envelopes in order; open it
        again when it breaks (its receiver crashed: what was on the wire is lost).

        Envelopes are written one by one rather than from a request iterator: gRPC's
        reader of an iterator may take one more envelope after the call broke, which
        would then be lost although it was never on the wire.
        """
        queue = self._queues[channel]
        address = self.spec.node(self.network.channels[channel].dst).address
        held_up = self.spec.marker_delay_ms / 1000
        pending = None  # taken from the queue, not yet written
        while True:
            async with grpc.aio.insecure_channel(address, options=LINK_OPTIONS) as link:
                await link.channel_ready()
                call = services.ChannelServiceStub(link).Open(
                    wait_for_ready=True, metadata=token_metadata(self.token)
                )
                self.streams_open += 1
                try:
                    while True:
                        if pending is None:
                            pending = await queue.get()
                            if pending is None:  # the node stops
                                await call.done_writing()
                                await call
                                return
                            if held_up and pending.HasField("marker"):
                                await asyncio.sleep(held_up)  # what follows waits too
                        await call.write(pending)
                        pending = None
                except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
                    pass  # the stream broke: open it again, and write pending first
                finally:
                    self.streams_open -= 1
            await asyncio.sleep(0.1)

    async def _flush_log(self) -> None:
        while not self.stopping.is_set():
            await asyncio.sleep(FLUSH_EVERY_S)
            self.log.flush()

    async def run(self) -> None:
        """Serve, stream and send money until :attr:`stopping` is set."""
        self._queues = {ch: asyncio.Queue() for ch in self.outputs}
        if self.spec.markers == "out-of-band":
            # a subchannel pool of its own per link: gRPC would otherwise carry the
            # markers on the data stream's TCP connection, in the same HTTP/2 session
            self._marker_links = {
                ch: grpc.aio.insecure_channel(
                    self.spec.node(self.network.channels[ch].dst).address,
                    options=[*LINK_OPTIONS, ("grpc.use_local_subchannel_pool", 1)],
                )
                for ch in self.outputs
            }
        server = grpc.aio.server(interceptors=[RequireToken(self.token)] if self.token else None)
        services.add_ChannelServiceServicer_to_server(ChannelService(self), server)
        services.add_SnapshotServiceServicer_to_server(MarkerService(self), server)
        services.add_NodeControlServicer_to_server(ControlService(self), server)
        address = self.spec.node(self.me).address
        if server.add_insecure_port(address) == 0:
            raise OSError(f"{self.me}: cannot listen on {address}")
        await server.start()
        streams = [asyncio.create_task(self._stream_out(ch)) for ch in self.outputs]
        helpers = [
            asyncio.create_task(self._bank()),
            asyncio.create_task(self._flush_log()),
            asyncio.create_task(self._watch_ttl()),
        ]
        beats = asyncio.create_task(self._send_heartbeats())
        await self.stopping.wait()
        await asyncio.wait([beats], timeout=2.0)
        for queue in self._queues.values():
            queue.put_nowait(None)
        await asyncio.wait(streams, timeout=2.0)
        for task in [*streams, *helpers, beats, *self._tasks]:
            task.cancel()
        await server.stop(grace=1.0)
        for link in self._marker_links.values():
            await link.close()
        self.log.flush()
        self.log.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one node of a live snapshotlib cluster")
    parser.add_argument("--spec", type=Path, required=True, help="the cluster's spec (JSON)")
    parser.add_argument("--node", required=True, help="this node's name")
    parser.add_argument("--log-dir", type=Path, required=True, help="where its log goes")
    parser.add_argument(
        "--exit-with-parent", action="store_true", help="stop when the starting process is gone"
    )
    parser.add_argument(
        "--await-restore",
        action="store_true",
        help="restarted after a crash: hold no state until the controller restores one",
    )
    parser.add_argument(
        "--token-file", type=Path, required=True, help="the cluster's API token (api-token)"
    )
    add_storage_arguments(parser)
    args = parser.parse_args(argv)
    try:
        spec = ClusterSpec.from_json(args.spec.read_text(encoding="utf-8"))
        spec.node(args.node)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"snapshotlib live node: {args.spec}: {e}", file=sys.stderr)
        return 2
    try:
        token = read_token(args.token_file)
        policy = storage_policy_of(args)
    except (TokenError, StorageError) as e:
        print(f"snapshotlib live node: {e}", file=sys.stderr)
        return 2

    if args.exit_with_parent:
        exit_with_parent()

    async def serve() -> None:
        node = Node(
            spec,
            args.node,
            args.log_dir,
            await_restore=args.await_restore,
            token=token,
            storage_policy=policy,
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, node.stopping.set)
        await node.run()

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())

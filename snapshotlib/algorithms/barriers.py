"""Barrier snapshots of dataflow graphs: aligned (ABS), unaligned, and at-least-once.

Barriers are injected at the sources (processes without input channels): a source
records its state (its read offset) and sends a barrier on every output channel. What
an operator does when barriers arrive is what tells the variants apart.

Aligned (asynchronous barrier snapshots, Carbone et al. 2015), exactly as the
pseudocode of the course's Flink notes::

    upon event (receive | input, barrier) do
        if input != Nil then
            blocked_inputs := blocked_inputs union {input}
            trigger (block | input)
        if blocked_inputs = inputs then
            blocked_inputs := {}
            broadcast (send | outputs, barrier)
            trigger (snapshot | state)
            for each input in inputs: trigger (unblock | input)

No channel state is recorded on a DAG: when an operator snapshots, every input it reads
has delivered exactly the records before the barrier. On a cyclic graph the inputs that
close a cycle (back edges, :func:`back_edges`) are not waited for, and not blocked:
the messages that arrive on them after the snapshot, until their barrier comes round,
are logged as their channel state.

Unaligned: the first barrier an operator sees makes it snapshot at once; its barriers
overtake the data buffered in its output channels (its host's ``emit(..., at=...)``),
and that data becomes part of the checkpoint, together with what arrives on its other
inputs before their barriers. Nothing is blocked; cycles need nothing special.

At-least-once (alignment skipped): an operator keeps reading every input; it snapshots
when the barrier has arrived on all of them. Records read after their input's barrier
but before the snapshot are in the snapshot *and* will be replayed after a restore:
they are the duplicates, listed in :attr:`BarrierSnapshot.crossed`. As Flink's
at-least-once mode, it logs no back edge (:attr:`BarrierSnapshot.logs_back_edges`): the
records on a cycle's back edge when the checkpoint passes are in no operator's state
and in no channel's, so a restore loses them; they are listed in
:attr:`BarrierSnapshot.dropped`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ..trace import APP, BarrierOvertook, InputBlocked, InputUnblocked, RecordCrossed
from .base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from .state import MESSAGES, PLAIN, RECORDING

if TYPE_CHECKING:
    from ..model import Network
    from .host import Host


def back_edges(network: Network) -> frozenset[int]:
    """Channel indices that close a cycle, found by depth-first search from the sources.

    The search starts at every process without inputs, in network order, then at any
    process not reached yet; a channel into a process that is still on the search
    path is a back edge. A DAG has none.

    >>> from snapshotlib.model import Network
    >>> net = Network(["S", "A", "B"], [("S", "A"), ("A", "B"), ("B", "A")],
    ...               strongly_connected=False)
    >>> [str(net.channels[i]) for i in back_edges(net)]
    ['B->A']
    """
    procs = network.processes
    roots = [p for p in procs if not network.inputs(p)] + list(procs)
    state: dict[str, int] = {}  # 1: on the search path, 2: done
    back: set[int] = set()
    for root in roots:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(network.outputs(root)))]
        while stack:
            node, outs = stack[-1]
            for c in outs:
                seen = state.get(c.dst)
                if seen == 1:
                    back.add(network.channel_index(c))
                elif seen is None:
                    state[c.dst] = 1
                    stack.append((c.dst, iter(network.outputs(c.dst))))
                    break
            else:
                state[node] = 2
                stack.pop()
    return frozenset(back)


class BarrierSnapshot(SnapshotAlgorithm):
    """What the three barrier variants share: injection at sources, back-edge logging,
    the per-process bookkeeping."""

    name = "barriers"
    control_kind = "barrier"
    #: whether the variant holds inputs back while it aligns
    blocks = False
    #: whether the records that reach a back edge's reader after its snapshot, until
    #: the barrier comes round, are the channel's recorded state (the ABS paper's way
    #: with cycles). Without it the back edge is recorded empty and those records, with
    #: the ones still on it when its writer snapshots, are listed in :attr:`dropped`.
    logs_back_edges = True
    state_fields: ClassVar[Mapping[str, str]] = {
        "back": PLAIN,
        "regular": PLAIN,
        "arrived": PLAIN,
        "_logging": RECORDING,
        "crossed": MESSAGES,
        "dropped": MESSAGES,
    }

    def bind(self, host: Host) -> None:
        super().bind(host)
        net = host.network
        self.back = back_edges(net)
        self.regular = {p: [c for c in host.input_channels(p) if c not in self.back]
                        for p in net.processes}  # fmt: skip
        #: (snapshot id, process) -> input channels whose barrier has arrived
        self.arrived: dict[tuple[str, str], set[int]] = {}
        #: channel -> {snapshot id: the list its accepted messages are logged to}
        self._logging: list[dict[str, list[int]]] = [{} for _ in net.channels]
        #: snapshot id -> ids of the messages read after their barrier, before the
        #: snapshot of the process reading them (at-least-once only)
        self.crossed: dict[str, list[int]] = {}
        #: snapshot id -> ids of the messages on an unlogged back edge across the cut
        #: (sent before its writer's snapshot, read after its reader's): a restore
        #: loses them (only when :attr:`logs_back_edges` is false)
        self.dropped: dict[str, list[int]] = {}

    # ------------------------------------------------------------ the protocol
    def start(self, process: str, snapshot_id: str, action: int) -> None:
        if self.host.input_channels(process):
            raise SnapshotError(f"barriers are injected at sources; {process} has inputs")
        rec = self.records.get(snapshot_id) or self.new_record(snapshot_id)
        if process in rec.red_from:
            raise SnapshotError(f"{process} has already recorded its state for {snapshot_id}")
        rec.initiators.append(process)
        self.snapshot(rec, process, action)

    def on_control(self, process: str, channel: int, message: int, action: int) -> None:
        snapshot_id = self.host.message(message).tag
        assert snapshot_id is not None
        rec = self.records.get(snapshot_id)
        if rec is None:
            return  # a barrier of a checkpoint that was discarded (failed): ignored
        if channel in self.back and process in rec.red_from:
            if channel in rec.closed:  # recorded empty, and its writer has snapshotted
                return
            self._close(rec, channel, action)  # the barrier came round the cycle: log complete
            return
        self.on_barrier(rec, process, channel, action)

    def on_app_receive(self, channel: int, message: int) -> None:
        for messages in self._logging[channel].values():
            messages.append(message)

    def on_barrier(self, rec: SnapshotRecord, process: str, channel: int, action: int) -> None:
        """A barrier of ``rec`` reached ``process`` on ``channel`` (not a logged back edge)."""
        raise NotImplementedError

    # --------------------------------------------------------------- helpers
    def snapshot(
        self,
        rec: SnapshotRecord,
        process: str,
        action: int,
        logged: bool = False,
        via: int | None = None,
    ) -> None:
        """Record ``process``'s state and send the barrier on every output (``via``: the
        channel whose barrier made it record, for the trace's event).

        Input channels already closed keep their state; back edges (or, with
        ``logged``, every input whose barrier has not arrived) are logged until it does;
        the rest are closed empty.
        """
        host = self.host
        self.record_state(rec, process, action, via)
        arrived = self.arrived.get((rec.id, process), set())
        for ch in host.input_channels(process):
            if ch in rec.closed:
                continue
            if ch in self.back and not self.logs_back_edges:
                # recorded empty; what reaches the reader until the writer snapshots is lost
                self._logging[ch][rec.id] = self.dropped.setdefault(rec.id, [])
                self.close_channel(rec, ch, action)
            elif ch in self.back or (logged and ch not in arrived):
                messages = rec.channels.get(ch)
                if messages is None:
                    messages = self.open_channel(rec, ch, action)
                self._logging[ch][rec.id] = messages
            else:
                self.close_channel(rec, ch, action)
        for ch in host.output_channels(process):
            if ch in self.back and not self.logs_back_edges and rec.id in self._logging[ch]:
                # the writer's snapshot: what is still on the back edge is lost as well
                del self._logging[ch][rec.id]
                queued = host.queued(ch)
                self.dropped[rec.id].extend(m for m in queued if host.message(m).kind == APP)
            self.send_barrier(rec, ch, action)
        self.arrived.pop((rec.id, process), None)  # as the pseudocode: blocked_inputs := {}
        self.note_progress(rec, process, action)

    def send_barrier(self, rec: SnapshotRecord, channel: int, action: int) -> None:
        self.host.emit(channel, action, self.control_kind, rec.id)

    def _close(self, rec: SnapshotRecord, channel: int, action: int) -> None:
        self._logging[channel].pop(rec.id, None)
        self.close_channel(rec, channel, action)
        self.note_progress(rec, self.host.network.channels[channel].dst, action)

    def block(self, rec: SnapshotRecord, channel: int, action: int) -> None:
        """Hold ``channel`` back while its reader aligns ``rec``'s barriers."""
        self.host.block(channel)
        self.host.event(InputBlocked(action, rec.id, channel))

    def unblock(self, snapshot_id: str, channel: int, action: int) -> None:
        self.host.unblock(channel)
        self.host.event(InputUnblocked(action, snapshot_id, channel))

    def discard(self, snapshot_id: str) -> None:
        """Forget a failed checkpoint: its logs stop, its blocked inputs are released."""
        after = self.host.time - 1  # between actions: after the last one
        for key in [k for k in self.arrived if k[0] == snapshot_id]:
            # while a process aligns one checkpoint, no other's barrier can reach it
            # (channels are FIFO), so what it holds back is this one's arrived inputs
            arrived = self.arrived.pop(key)
            for ch in sorted(arrived) if self.blocks else ():
                self.unblock(snapshot_id, ch, after)
        super().discard(snapshot_id)
        self.crossed.pop(snapshot_id, None)
        self.dropped.pop(snapshot_id, None)
        for logs in self._logging:
            logs.pop(snapshot_id, None)


class AlignedBarriers(BarrierSnapshot):
    """Asynchronous barrier snapshots with alignment: exactly-once, no channel state on
    a DAG (back edges logged on a cycle), inputs blocked while aligning."""

    name = "aligned"
    local_actions = True
    blocks = True

    def on_barrier(self, rec: SnapshotRecord, process: str, channel: int, action: int) -> None:
        blocked = self.arrived.setdefault((rec.id, process), set())
        blocked.add(channel)
        self.block(rec, channel, action)
        if blocked.issuperset(self.regular[process]):
            self.snapshot(rec, process, action, via=channel)  # records, broadcasts
            for ch in self.regular[process]:
                self.unblock(rec.id, ch, action)


class UnalignedBarriers(BarrierSnapshot):
    """Unaligned checkpoints: snapshot on the first barrier, barriers overtake buffered
    data, which is recorded; nothing is blocked."""

    name = "unaligned"
    state_fields: ClassVar[Mapping[str, str]] = {"overtaken": MESSAGES}

    def bind(self, host: Host) -> None:
        super().bind(host)
        self.back = frozenset()  # nothing waits for a barrier, so cycles need no care
        self.regular = {p: host.input_channels(p) for p in host.network.processes}
        #: (snapshot id, channel) -> the messages its barrier overtook
        self.overtaken: dict[tuple[str, int], list[int]] = {}

    def on_barrier(self, rec: SnapshotRecord, process: str, channel: int, action: int) -> None:
        if process not in rec.red_from:  # every input is logged, this one closed at once
            self.snapshot(rec, process, action, logged=True, via=channel)
        self._close(rec, channel, action)

    def send_barrier(self, rec: SnapshotRecord, channel: int, action: int) -> None:
        # Overtake the data queued behind the last control message (never an older
        # barrier): that data is in flight across the cut, so it is recorded.
        host = self.host
        queue = list(host.queued(channel))
        at = len(queue)
        while at > 0 and host.message(queue[at - 1]).kind == APP:
            at -= 1
        self.overtaken[(rec.id, channel)] = queue[at:]
        host.emit(channel, action, self.control_kind, rec.id, at=at)
        if at < len(queue):
            host.event(BarrierOvertook(action, rec.id, channel, tuple(queue[at:])))

    def _close(self, rec: SnapshotRecord, channel: int, action: int) -> None:
        # the channel's state: what its reader logged (sent earlier), then what the
        # barrier overtook at its writer (sent later)
        rec.channels.setdefault(channel, []).extend(self.overtaken.pop((rec.id, channel), []))
        super()._close(rec, channel, action)


class AtLeastOnceBarriers(BarrierSnapshot):
    """Alignment skipped: inputs keep flowing; the snapshot is taken when the last
    barrier arrives, so records read after an earlier barrier are duplicated on restore."""

    name = "at-least-once"
    local_actions = True
    logs_back_edges = False

    def on_barrier(self, rec: SnapshotRecord, process: str, channel: int, action: int) -> None:
        arrived = self.arrived.setdefault((rec.id, process), set())
        arrived.add(channel)
        if process not in rec.red_from and arrived.issuperset(self.regular[process]):
            self.snapshot(rec, process, action, via=channel)

    def on_app_receive(self, channel: int, message: int) -> None:
        super().on_app_receive(channel, message)
        reader = self.host.network.channels[channel].dst
        for (snapshot_id, process), arrived in self.arrived.items():
            if process == reader and channel in arrived:
                rec = self.records.get(snapshot_id)
                if rec is not None and process not in rec.red_from:
                    self.crossed.setdefault(snapshot_id, []).append(message)
                    action = self.host.time - 1  # the receive, already in the trace
                    self.host.event(RecordCrossed(action, snapshot_id, channel, message))


BARRIER_VARIANTS: dict[str, type[BarrierSnapshot]] = {
    "aligned": AlignedBarriers,
    "unaligned": UnalignedBarriers,
    "at-least-once": AtLeastOnceBarriers,
}

"""The Princeton COS 418 (assignment 2) delivery model, driving a :class:`Simulator`.

Time advances in ticks. A message sent at time ``now`` (a token transfer, or a marker
sent by Chandy–Lamport) is due at ``now + 1 + d`` with ``d`` drawn uniformly from
0..4. On each tick, time goes up by one; then every server, in sorted-id order, looks
at its outbound links in sorted-destination order and delivers the head of the first
link whose head is due: at most one delivery per sending server per tick, FIFO with
head-of-line blocking. Everything goes through the simulator's own primitives
(:meth:`Simulator.send`, :meth:`Simulator.start_snapshot`, :meth:`Simulator.deliver`),
so the run is an ordinary trace that every check of the library can read.

The model is event-driven: a link is visited only on the tick its head becomes due
(``_wake``, buckets keyed by time) and then waits in its source's heap of ready links,
ordered by destination. A tick costs time for the servers that deliver, not for the
9,900 links of a 100-server complete graph.

Examples
--------
>>> from snapshotlib.formats.cos418 import parse_events, parse_topology
>>> top = parse_topology("2\\nN1 1\\nN2 0\\nN1 N2\\nN2 N1\\n", "2nodes.top")
>>> run = replay(top, parse_events("send N1 N2 1\\nsnapshot N2\\ntick\\n", "x.events", top))
>>> snap = run.snapshots[0]
>>> dict(snap.tokens), snap.messages
({'N1': 0, 'N2': 0}, (SnapMessage(src='N1', dst='N2', tokens=1),))
>>> run.conserved, run.simulator.states
(True, {'N1': 0, 'N2': 1})
"""

from __future__ import annotations

import gc
import random
from array import array
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from heapq import heappop, heappush
from pathlib import Path

from .algorithms.chandy_lamport import ChandyLamport
from .formats.cos418 import (
    Cos418Error,
    Cos418Snapshot,
    Event,
    EventScript,
    SendEvent,
    SnapMessage,
    SnapshotEvent,
    TickEvent,
    Topology,
    load_events,
    load_topology,
    write_snap,
)
from .model import Network, NetworkError
from .simulator import ActionError, Simulator
from .trace import APP, SnapshotComplete

#: COS 418's ``maxDelay``: a message is due 1 to ``MAX_DELAY`` ticks after it is sent
MAX_DELAY = 5

__all__ = [
    "MAX_DELAY",
    "Cos418Run",
    "DelayStream",
    "TickModel",
    "replay",
    "run_cos418",
    "write_snaps",
]


class DelayStream:
    """The extra delays 0..4, one per message, equal to ``rng.randrange(5)`` in turn.

    ``random.Random.randrange(5)`` takes the top three bits of one 32-bit Mersenne
    Twister output and retries when they are 5, 6 or 7. Drawing many words at once
    with ``getrandbits`` and filtering their top bytes gives the very same sequence
    (the tests check this) at a fraction of the cost of a Python call per message.

    >>> s = DelayStream(7)
    >>> r = random.Random(7)
    >>> [s[i] for i in range(8)] == [r.randrange(5) for _ in range(8)]
    True
    """

    _CHUNK = 1 << 14
    # byte -> its top three bits; bytes whose top bits are 5..7 are dropped (retries)
    _TOP3 = bytes(b >> 5 for b in range(256))
    _RETRY = bytes(range(5 << 5, 256))

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        #: the delays drawn so far; index ``i`` is the delay of the ``i``-th message
        self.draws = bytearray()

    def __getitem__(self, index: int) -> int:
        return self.upto(index + 1)[index]

    def upto(self, n: int) -> bytearray:
        """:attr:`draws`, holding at least ``n`` delays."""
        draws = self.draws
        while len(draws) < n:
            words = self._CHUNK
            # getrandbits(32 * k) lays the k outputs out least significant word first
            raw = self._rng.getrandbits(32 * words).to_bytes(4 * words, "little")
            draws += raw[3::4].translate(self._TOP3, self._RETRY)
        return draws


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector (reference counting goes on) for a run.

    A run allocates millions of trace records and frees almost nothing; the collector
    would pass over the growing trace again and again (about 40% of the run on the
    complete100 workload) and find nothing to free. Nesting is fine: the collector's
    earlier state is restored on the way out.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class Cos418Run:
    """The outcome of a COS 418 run.

    Attributes
    ----------
    simulator
        The simulator after the run, with its full trace.
    snapshots
        One per ``snapshot`` event, in order (ids ``"0"``, ``"1"``, ...).
    deliveries
        Messages and markers delivered.
    ticks
        Ticks taken (the final time), including those after the last event.
    name
        Base name for the ``.snap`` files (the events file's name without extension).
    total_tokens
        Tokens in the system, which every snapshot must account for.
    """

    simulator: Simulator
    snapshots: tuple[Cos418Snapshot, ...]
    deliveries: int
    ticks: int
    name: str
    total_tokens: int

    @property
    def conserved(self) -> bool:
        """Whether every snapshot accounts for exactly the tokens in the system."""
        return all(s.total == self.total_tokens for s in self.snapshots)


class TickModel:
    """A simulator (app ``tokens``, Chandy–Lamport) under the COS 418 tick model.

    Parameters
    ----------
    topology
        Servers, initial tokens and links.
    seed
        Seed of the delay generator: the same seed gives the same trace.

    Examples
    --------
    >>> from snapshotlib.formats.cos418 import parse_topology
    >>> model = TickModel(parse_topology("2\\nN1 1\\nN2 0\\nN1 N2\\nN2 N1\\n"))
    >>> model.send("N1", "N2", 1)
    >>> model.snapshot("N2")
    '0'
    >>> model.finish()
    >>> model.deliveries, model.sim.states
    (3, {'N1': 0, 'N2': 1})
    """

    def __init__(self, topology: Topology, seed: int = 0) -> None:
        try:
            # Channels sorted by (src, dst): channel index order is then COS 418's visiting
            # order, and Chandy–Lamport sends markers in sorted-destination order as well.
            network = Network(topology.ids, sorted(topology.links))
        except NetworkError as e:
            raise Cos418Error(f"{topology.source}: {e}") from None
        self.topology = topology
        self.seed = seed
        self.sim = Simulator(network, "tokens", topology.initial, ChandyLamport())
        #: the current time (ticks taken so far)
        self.time = 0
        #: messages and markers delivered so far
        self.deliveries = 0
        #: ids of the snapshots started so far, in order
        self.snapshot_ids: list[str] = []
        rank = {s: r for r, s in enumerate(sorted(topology.ids))}
        self._src_rank = [rank[c.src] for c in network.channels]
        self._link: dict[str, dict[str, int]] = {p: {} for p in topology.ids}
        for i, c in enumerate(network.channels):
            self._link[c.src][c.dst] = i
        self._ready: list[list[int]] = [[] for _ in rank]  # per source: due links (a heap)
        self._active: set[int] = set()  # sources whose heap is not empty
        self._wake: dict[int, list[int]] = {}  # time -> links whose head becomes due then
        self._due = array("q")  # message id -> receive time
        self._delays = DelayStream(seed)

    # ------------------------------------------------------------ interactive
    def send(self, src: str, dst: str, tokens: int) -> None:
        """``src`` passes ``tokens`` tokens to ``dst`` now.

        :class:`~snapshotlib.ActionError` if ``src`` has fewer tokens.
        """
        self.play((SendEvent(src, dst, tokens),))

    def snapshot(self, server: str) -> str:
        """``server`` initiates the next snapshot; returns its id (``"0"``, ``"1"``, ...)."""
        self.play((SnapshotEvent(server),))
        return self.snapshot_ids[-1]

    def tick(self, count: int = 1) -> None:
        """Advance time by ``count`` ticks, delivering what is due on each."""
        self.play((TickEvent(count),))

    def in_flight(self) -> int:
        """Messages and markers sent but not yet delivered."""
        return len(self.sim.trace.messages) - self.deliveries

    def finish(self) -> None:
        """Tick until every snapshot is complete, then until every link is empty.

        Ticks on which nothing can be delivered are skipped in one go (they are still
        counted in :attr:`time`).
        """
        with paused_gc():
            self._finish()

    def _finish(self) -> None:
        sim = self.sim
        pending = {sid for sid in sim.snapshot_ids() if not sim.snapshot(sid).complete}
        events = sim.trace.events
        seen = len(events)
        while pending or self.in_flight():
            if not self._active:
                if not self._wake:
                    # Only possible if a snapshot cannot complete with nothing in flight.
                    raise Cos418Error("snapshots cannot complete: nothing is in flight")
                self.time = min(self._wake) - 1
            self.tick()
            if pending:
                pending.difference_update(
                    e.snapshot_id for e in events[seen:] if isinstance(e, SnapshotComplete)
                )
                seen = len(events)

    # --------------------------------------------------------------- the loop
    def play(self, events: Iterable[Event], script: EventScript | None = None) -> None:
        """Take ``events`` in order (the hot loop; everything else calls it).

        With ``script`` (where ``events`` come from), an unaffordable send is a
        :class:`Cos418Error` naming the events line; otherwise the simulator's
        :class:`~snapshotlib.ActionError` propagates.
        """
        with paused_gc():
            self._play(events, script)

    def _play(self, events: Iterable[Event], script: EventScript | None) -> None:
        # Everything the loop touches is bound to a local: this is the hot path.
        sim = self.sim
        sim_send = sim.send
        deliver = sim.deliver
        messages = sim.trace.messages
        queues = sim.queues
        link = self._link
        ready = self._ready
        active = self._active
        wake = self._wake
        src_rank = self._src_rank
        due = self._due
        due_append = due.append
        draws = self._delays.draws
        t = self.time
        delivered = 0
        index = -1  # the event being taken, for error messages
        try:
            for index, event in enumerate(events):
                kind = type(event)
                if kind is SendEvent:
                    src = event.src  # type: ignore[union-attr]
                    try:
                        ch = link[src][event.dst]  # type: ignore[union-attr]
                    except KeyError:
                        raise self._error(
                            script,
                            index,
                            t,
                            f"there is no link {src} -> {event.dst}",  # type: ignore[union-attr]
                        ) from None
                    n = len(messages)
                    mid = sim_send(src, ch, event.tokens)  # type: ignore[union-attr]
                    if mid != n or len(messages) != n + 1:
                        self.time = t
                        self._admit(n, -1)
                        continue
                    try:
                        d = t + 1 + draws[mid]
                    except IndexError:
                        d = t + 1 + self._delays.upto(mid + 1)[mid]
                    due_append(d)
                    if len(queues[ch]) == 1:  # the link was empty: wake it when due
                        bucket = wake.get(d)
                        if bucket is None:
                            wake[d] = [ch]
                        else:
                            bucket.append(ch)
                    continue
                if kind is SnapshotEvent:
                    server = event.server  # type: ignore[union-attr]
                    if server not in sim.states:
                        raise self._error(script, index, t, f"unknown server {server!r}")
                    sid = str(len(self.snapshot_ids))
                    n = len(messages)
                    sim.start_snapshot(server, sid)
                    self.snapshot_ids.append(sid)
                    self.time = t
                    self._admit(n, -1)
                    continue
                end = t + event.count  # type: ignore[union-attr]
                while t < end:
                    t += 1
                    bucket = wake.pop(t, None)
                    if bucket is not None:
                        for ch in bucket:
                            s = src_rank[ch]
                            heap = ready[s]
                            if not heap:
                                active.add(s)
                            heappush(heap, ch)
                    if not active:
                        if not wake:  # nothing in flight: the remaining ticks are idle
                            t = end
                        continue
                    order = sorted(active)
                    delivered += len(order)  # exactly one delivery per active source
                    n = len(messages)
                    for s in order:
                        heap = ready[s]
                        ch = heappop(heap)
                        deliver(ch)
                        if len(messages) != n:  # markers sent: due from t + 1 on
                            self.time = t
                            self._admit(n, ch)
                            n = len(messages)
                        q = queues[ch]
                        if q:
                            d = due[q[0]]
                            if d <= t + 1:  # due already: next tick, after this source's turn
                                heappush(heap, ch)
                            else:
                                bucket = wake.get(d)
                                if bucket is None:
                                    wake[d] = [ch]
                                else:
                                    bucket.append(ch)
                        if not heap:
                            active.discard(s)
        except ActionError as e:
            if script is None or type(event) is not SendEvent:
                raise
            raise self._error(script, index, t, self._overdraw(e, event, t)) from None
        finally:
            self.time = t
            self.deliveries += delivered

    def _admit(self, first: int, skip: int) -> None:
        """Give messages ``first..`` their due time; wake their link if each is its head.

        ``skip`` is the link just delivered from, which the tick loop reschedules itself.
        """
        queues = self.sim.queues
        messages = self.sim.trace.messages
        delays = self._delays.upto(len(messages))
        wake = self._wake
        base = self.time + 1
        for mid in range(first, len(messages)):
            ch = messages[mid][0]
            d = base + delays[mid]
            self._due.append(d)
            if ch != skip and queues[ch][0] == mid:
                wake.setdefault(d, []).append(ch)

    @staticmethod
    def _error(script: EventScript | None, index: int, t: int, reason: str) -> Cos418Error:
        where = f"{script.source}, line {script.line(index)}" if script else f"time {t}"
        return Cos418Error(f"{where}: {reason}")

    def _overdraw(self, error: ActionError, event: SendEvent, t: int) -> str:
        """Why a send failed, with the tokens still on their way to the sender."""
        sim = self.sim
        src = event.src
        messages = sim.trace.messages
        coming = [
            messages[m].payload
            for ch in sim.input_channels(src)
            for m in sim.queues[ch]
            if messages[m].kind == APP
        ]
        return (
            f"{error.args[0]} at time {t}; {len(coming)} message(s) with {sum(coming)}"
            f" token(s) are still in flight to {src} (the delays drawn with seed {self.seed}"
            " are too long for this script: COS 418's simulator would stop here too)"
        )

    # --------------------------------------------------------------- results
    def snapshots(self) -> tuple[Cos418Snapshot, ...]:
        """Every snapshot started so far, as ``.snap`` files hold them."""
        sim = self.sim
        channels = sim.network.channels
        out = []
        for sid in self.snapshot_ids:
            snap = sim.snapshot(sid)
            tokens = {p: int(s) for p, s in sorted(snap.states.items())}
            recorded = tuple(
                SnapMessage(c.src, c.dst, int(m.payload))
                for c in channels  # the network's order is sorted (src, dst) order
                for m in snap.channels.get(str(c), ())
            )
            out.append(Cos418Snapshot(sid, tokens, recorded))
        return tuple(out)


def replay(
    topology: Topology, script: EventScript, seed: int = 0, name: str | None = None
) -> Cos418Run:
    """Run ``script`` on ``topology`` under the COS 418 model, then drain the links.

    A send the sender cannot afford is a :class:`Cos418Error` naming the events line.
    ``name`` (default: the script's file name without extension) names the ``.snap``
    files :func:`write_snaps` writes.
    """
    with paused_gc():
        model = TickModel(topology, seed)
        model.play(script.events, script)
        model.finish()
        snapshots = model.snapshots()
    return Cos418Run(
        model.sim,
        snapshots,
        model.deliveries,
        model.time,
        name if name is not None else Path(script.source).stem,
        topology.total_tokens,
    )


def run_cos418(top_path: str | Path, events_path: str | Path, seed: int = 0) -> Cos418Run:
    """Read a ``.top`` and an ``.events`` file and run them (see :func:`replay`).

    Parse errors and unaffordable sends are :class:`Cos418Error` naming file and line.
    """
    topology = load_topology(top_path)
    script = load_events(events_path, topology)
    return replay(topology, script, seed, name=Path(events_path).stem)


def write_snaps(result: Cos418Run, out_dir: str | Path) -> list[Path]:
    """Write one ``.snap`` file per snapshot into ``out_dir`` (created if needed).

    Files are named as in the COS 418 data folder: ``NAME.snap`` when the run took a
    single snapshot, ``NAME0.snap``, ``NAME1.snap``, ... otherwise.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    single = len(result.snapshots) == 1
    return [
        write_snap(s, out / f"{result.name}{'' if single else s.id}.snap") for s in result.snapshots
    ]

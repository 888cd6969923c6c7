"""Stop-the-world snapshots: pause, drain the channels, record every state, resume.

The baseline the non-blocking algorithms are measured against (the "Synchronous
Stop-The-World" row of the course's production lesson). It runs where the barrier
variants run, on a dataflow job whose sources initiate, in three phases:

1. **Pause.** An initiator (a source) stops its own actions
   (its host's ``pause``: it reads nothing more) and sends a
   ``drain`` message on every output.
2. **Drain.** Every process goes on accepting and handling what is in flight (an
   operator forwards its records), but a process that gets its first drain message
   stops its own actions too. It passes the drain message on, on every output, once one
   has arrived on each of its inputs except the back edges of a cycle
   (:func:`~snapshotlib.algorithms.barriers.back_edges`), as an aligned barrier would,
   but nothing is blocked. A *wave* ends when a drain message has been delivered on
   every channel.
3. **Record and resume.** At the end of a wave, if no record is in flight anywhere,
   every process records its state in that one action, every channel is recorded
   empty, and the paused processes resume. If records are still in flight (only on a
   cycle: records still going round it), the initiators send another wave.

On a DAG the first wave always ends with every channel empty: a process passes the
drain message on only when each of its inputs has delivered everything its writer
sends before resuming (by induction from the paused sources), so nothing follows a
drain message on any channel. The snapshot is then trivially consistent: no record is
in flight when the states are recorded, so no channel state is needed, and a restore
replays nothing. The price is the pause: the sources read nothing from the trigger to
the end of the last wave.

Every wave costs one drain message per channel, so even a job with nothing in flight
pauses for as many steps as it has channels. When that outlasts the checkpoint interval,
each checkpoint falls due as the one before ends, the sources never read again, and
the job starves: give :class:`~snapshotlib.dataflow.StreamJob` a ``min_pause``.

Assumption: at the end of a wave the coordinator learns exactly whether a record is
still in flight (here it looks at the channels; a real one compares the counts of
records sent and received that the processes report with their acknowledgements). A
cycle whose records never leave it would never drain; a dataflow loop's records make
finitely many rounds.

>>> from snapshotlib.dataflow import StreamJob, word_count
>>> from snapshotlib.checks import check_snapshot
>>> job = StreamJob(word_count(records=10), algorithm=StopTheWorld, seed=1).run()
>>> entry = job.coordinator.entry("c1")
>>> entry.status, entry.inflight_messages, check_snapshot(job.sim, "c1").ok
('COMPLETED', 0, True)
>>> job.sim.algorithm.waves["c1"], job.sim.paused
(1, set())
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ..trace import APP, PartDone, SnapshotComplete
from .barriers import back_edges
from .base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from .state import PLAIN

if TYPE_CHECKING:
    from .host import Host


@dataclass
class Wave:
    """One drain wave of one snapshot: which drain messages have arrived where."""

    number: int
    #: process -> input channels on which this wave's drain message has arrived
    arrived: dict[str, set[int]] = field(default_factory=dict)
    #: processes that have passed this wave's drain message on
    passed: set[str] = field(default_factory=set)
    #: drain messages of this wave delivered so far
    delivered: int = 0


class StopTheWorld(SnapshotAlgorithm):
    """Pause the initiators, drain every channel with waves of drain messages, then
    record every process at once (every channel empty) and resume."""

    name = "stop-the-world"
    control_kind = "drain"
    state_fields: ClassVar[Mapping[str, str]] = {
        "regular": PLAIN,
        "draining": PLAIN,
        "holding": PLAIN,
        "waves": PLAIN,
    }

    def bind(self, host: Host) -> None:
        super().bind(host)
        net = host.network
        back = back_edges(net)
        self.regular = {p: {c for c in host.input_channels(p) if c not in back}
                        for p in net.processes}  # fmt: skip
        #: snapshot id -> its current drain wave (while it is draining)
        self.draining: dict[str, Wave] = {}
        #: snapshot id -> the processes it has paused (while it is draining)
        self.holding: dict[str, set[str]] = {}
        #: snapshot id -> the waves it took to drain (1 on a DAG), once recorded
        self.waves: dict[str, int] = {}

    # ------------------------------------------------------------ the protocol
    def start(self, process: str, snapshot_id: str, action: int) -> None:
        if self.host.input_channels(process):
            raise SnapshotError(
                f"stop-the-world snapshots are started at sources; {process} has inputs"
            )
        rec = self.records.get(snapshot_id) or self.new_record(snapshot_id)
        if process in rec.initiators:
            raise SnapshotError(f"{process} has already started {snapshot_id}")
        if snapshot_id not in self.draining:
            if rec.red_from:
                raise SnapshotError(f"{snapshot_id} is already recorded")
            self.draining[snapshot_id] = Wave(1)
        rec.initiators.append(process)
        self._hold(snapshot_id, process)
        self._pass_on(rec, self.draining[snapshot_id], process, action)

    def on_control(self, process: str, channel: int, message: int, action: int) -> None:
        snapshot_id = self.host.message(message).tag
        assert snapshot_id is not None
        rec = self.records.get(snapshot_id)
        wave = self.draining.get(snapshot_id)
        if rec is None or wave is None:
            return  # a drain message of a snapshot that was discarded (failed)
        wave.delivered += 1
        self._hold(snapshot_id, process)
        arrived = wave.arrived.setdefault(process, set())
        arrived.add(channel)
        if process not in wave.passed and arrived >= self.regular[process]:
            self._pass_on(rec, wave, process, action)
        if wave.delivered == rec.n_channels:
            self._end_wave(rec, wave, action)

    def discard(self, snapshot_id: str) -> None:
        """Forget a failed snapshot: its drain stops and what it paused resumes."""
        super().discard(snapshot_id)
        self.draining.pop(snapshot_id, None)
        self._release(snapshot_id)

    # --------------------------------------------------------------- helpers
    def in_flight(self) -> int:
        """Records (application messages) in flight on all channels now."""
        host = self.host
        queues = (host.queued(ch) for ch in range(len(host.network.channels)))
        return sum(host.message(m).kind == APP for q in queues for m in q)

    def _hold(self, snapshot_id: str, process: str) -> None:
        self.holding.setdefault(snapshot_id, set()).add(process)
        self.host.pause(process)

    def _release(self, snapshot_id: str) -> None:
        held = self.holding.pop(snapshot_id, set())
        still = set().union(*self.holding.values()) if self.holding else set()
        for process in sorted(held - still):
            self.host.resume(process)

    def _pass_on(self, rec: SnapshotRecord, wave: Wave, process: str, action: int) -> None:
        wave.passed.add(process)
        host = self.host
        for ch in host.output_channels(process):
            host.emit(ch, action, self.control_kind, rec.id, wave.number)

    def _end_wave(self, rec: SnapshotRecord, wave: Wave, action: int) -> None:
        if self.in_flight():
            # records still in flight (round a cycle): the initiators, still paused,
            # send another wave behind them
            nxt = Wave(wave.number + 1)
            self.draining[rec.id] = nxt
            for process in rec.initiators:
                self._pass_on(rec, nxt, process, action)
            return
        host = self.host
        for p in host.network.processes:
            self.record_state(rec, p, action)
        for ch in range(rec.n_channels):
            self.close_channel(rec, ch, action)
        for p in host.network.processes:
            host.event(PartDone(action, rec.id, p))
        host.event(SnapshotComplete(action, rec.id))
        del self.draining[rec.id]
        self.waves[rec.id] = wave.number
        self._release(rec.id)

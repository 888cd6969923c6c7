"""A snapshot that does not need FIFO channels: every message carries its sender's colour.

On a non-FIFO channel the marker no longer separates the messages sent before its
sender recorded (white) from those sent after (red), so Chandy–Lamport breaks in two
ways: a red message that overtakes the marker is accepted in a white action (EWD 864a's
forbidden case), and a white message that the marker overtakes arrives after the
channel was closed and is lost. This algorithm repairs both.

* **Colour on every message** (Lai and Yang 1987): a message is red when its sender had
  recorded before sending it. A white process that is about to accept a red message
  records its state first, so the accepting action is red: no red message is ever
  accepted in a white action. (The engine reads the bit from the trace instead of
  adding it to the payload, so applications see their messages unchanged.)
* **A count in the marker**: on turning red, a process still sends a marker on every
  output channel (so every process turns red even without traffic), and the marker
  carries the number of white messages sent on that channel. The receiver closes the
  channel once the marker has arrived *and* that many white messages have arrived;
  the channel's state is the white messages it accepted after recording.

Counting the white messages is the simplest way to know when a channel is done; Lai and
Yang instead kept logs of every message sent and received and let the collector
subtract them, and later variants (Mattern's) count as here.

Examples
--------
>>> from snapshotlib import Network, Simulator, Send, StartSnapshot, Deliver
>>> net = Network(["P1", "P2"], fifo=False)
>>> sim = Simulator(net, "tokens", {"P1": 2}, algorithm=LaiYang())
>>> sim.step(StartSnapshot("P1", "s1"))             # P1 records 2 tokens, marker to P2
>>> sim.step(Send("P1", "P2", 1, label="late"))     # a red message ...
>>> late = sim.in_flight("P1->P2")[-1]
>>> sim.step(Deliver(net.channel("P1", "P2"), late))  # ... overtakes the marker
>>> _ = sim.run()
>>> snap = sim.snapshot("s1")
>>> {p: r.state for p, r in snap.processes.items()}   # P2 recorded before accepting it
{'P1': 2, 'P2': 0}
>>> snap.complete
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ..trace import MARKER
from .base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from .state import CHANNEL_MESSAGES, PLAIN

if TYPE_CHECKING:
    from .host import Host


class LaiYang(SnapshotAlgorithm):
    """Colour piggybacked on every message, and markers that count white messages."""

    name = "lai-yang"
    control_kind = MARKER
    local_actions = True
    state_fields: ClassVar[Mapping[str, str]] = {
        "_src": PLAIN,
        "_dst": PLAIN,
        "_arrived": CHANNEL_MESSAGES,
        "_expected": PLAIN,
    }
    state_changes_with_events = True

    def bind(self, host: Host) -> None:
        super().bind(host)
        channels = host.network.channels
        self.listening = [True] * len(channels)  # every message's colour matters
        n = len(channels)
        self._src = [c.src for c in channels]
        self._dst = [c.dst for c in channels]
        #: per channel: application messages accepted on it so far, in order
        self._arrived: list[list[int]] = [[] for _ in range(n)]
        #: per snapshot id: channel -> white messages its sender sent on it (from its marker)
        self._expected: dict[str, dict[int, int]] = {}

    def copy_for(self, host: Host) -> LaiYang:
        """A copy of this run's records and logs, bound to ``host`` (see
        :meth:`SnapshotAlgorithm.copy_for`); faster than the generic deep copy."""
        if type(self) is not LaiYang:
            return super().copy_for(host)  # a subclass may keep more state
        clone = LaiYang.__new__(LaiYang)
        clone.__dict__.update(self.__dict__)
        clone._host = host
        clone.records = {sid: rec.copy() for sid, rec in self.records.items()}
        clone._arrived = [arrived.copy() for arrived in self._arrived]
        clone._expected = {sid: counts.copy() for sid, counts in self._expected.items()}
        return clone

    # ------------------------------------------------------------ the protocol
    def start(self, process: str, snapshot_id: str, action: int) -> None:
        rec = self.records.get(snapshot_id)
        if rec is None:
            rec = self.new_record(snapshot_id)
            self._expected[snapshot_id] = {}
        elif process in rec.red_from:
            raise SnapshotError(f"{process} has already recorded its state for {snapshot_id}")
        rec.initiators.append(process)
        self._record(rec, process, action)

    def on_control(self, process: str, channel: int, message: int, action: int) -> None:
        marker = self.host.message(message)
        assert marker.tag is not None
        rec = self.records[marker.tag]
        if process not in rec.red_from:
            self._record(rec, process, action)
        self._expected[rec.id][channel] = int(marker.payload)
        self._close_if_done(rec, channel, action)

    def on_app_receive(self, channel: int, message: int) -> None:
        self._arrived[channel].append(message)
        dst = self._dst[channel]
        for rec in self.records.values():
            red = self._is_red(rec, message)
            if dst not in rec.red_from:
                if red:
                    # turn red first: the receive action (already in the trace) is red
                    self._record(rec, dst, self.host.time - 1)
                continue
            if not red and channel not in rec.closed:
                rec.channels[channel].append(message)
                self._close_if_done(rec, channel, self.host.time - 1)

    # ------------------------------------------------------------- internals
    def _is_red(self, rec: SnapshotRecord, message: int) -> bool:
        """The colour bit the sender attached: had it recorded when it sent ``message``?"""
        msg = self.host.message(message)
        turned = rec.red_from.get(self._src[msg.channel])
        return turned is not None and msg.sent_by >= turned

    def _record(self, rec: SnapshotRecord, process: str, action: int) -> None:
        host = self.host
        self.record_state(rec, process, action)
        for ch in host.input_channels(process):
            self.open_channel(rec, ch, action)
        for ch in host.output_channels(process):
            # every message sent on it so far is white
            host.emit(ch, action, self.control_kind, rec.id, host.app_sent(ch))
        self.note_progress(rec, process, action)

    def _close_if_done(self, rec: SnapshotRecord, channel: int, action: int) -> None:
        expected = self._expected[rec.id].get(channel)
        if expected is None or channel in rec.closed:
            return
        turned = rec.red_from[self._src[channel]]
        message = self.host.message
        white = sum(1 for m in self._arrived[channel] if message(m).sent_by < turned)
        if white == expected:
            self.close_channel(rec, channel, action)
            self.note_progress(rec, self._dst[channel], action)

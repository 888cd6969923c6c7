"""Chandy–Lamport's marker algorithm, with any number of initiators and snapshots.

Rules (Chandy and Lamport 1985; EWD 864a), per snapshot id:

* A process that initiates records its state, sends a marker on every output channel
  before anything else, and starts recording every input channel.
* On its first marker (the process has not recorded yet) a process does the same,
  except that the channel the marker came on is recorded as empty.
* On a later marker the process stops recording that channel; its state is the
  messages accepted on it since the process recorded.

A process's part is complete when a marker has arrived on each of its input channels;
the snapshot is complete when every process's part is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ..trace import MARKER
from .base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from .state import PLAIN, RECORDING

if TYPE_CHECKING:
    from .host import Host


class ChandyLamport(SnapshotAlgorithm):
    """The marker algorithm; snapshots are told apart by the marker's snapshot id."""

    name = "chandy-lamport"
    control_kind = MARKER
    local_actions = True
    state_fields: ClassVar[Mapping[str, str]] = {
        "_recording": RECORDING,
        "_discarded": PLAIN,
        "_abandoned": PLAIN,
    }

    state_changes_with_events = True

    def bind(self, host: Host) -> None:
        super().bind(host)
        # channel index -> {snapshot id: list the accepted messages go to}
        self._recording: list[dict[str, list[int]]] = [{} for _ in host.network.channels]
        self.listening = self._recording  # a channel is heard while some snapshot records it
        self._discarded: set[str] = set()
        # (process, snapshot id): processes that gave a snapshot up on their own
        self._abandoned: set[tuple[str, str]] = set()

    def copy_for(self, host: Host) -> ChandyLamport:
        """A copy of this run's records and recordings, bound to ``host`` (see
        :meth:`SnapshotAlgorithm.copy_for`); faster than the generic deep copy, which
        exhaustive search would pay at every state."""
        if type(self) is not ChandyLamport:
            return super().copy_for(host)  # a subclass may keep more state
        clone = ChandyLamport.__new__(ChandyLamport)
        clone.__dict__.update(self.__dict__)
        clone._host = host
        records = {sid: rec.copy() for sid, rec in self.records.items()}
        clone.records = records
        clone._recording = [
            {sid: records[sid].channels[ch] for sid in recording} if recording else {}
            for ch, recording in enumerate(self._recording)
        ]
        clone.listening = clone._recording
        clone._discarded = set(self._discarded)
        clone._abandoned = set(self._abandoned)
        return clone

    def start(self, process: str, snapshot_id: str, action: int) -> None:
        rec = self.records.get(snapshot_id)
        if rec is None:
            rec = self.new_record(snapshot_id)
        elif process in rec.red_from:
            raise SnapshotError(f"{process} has already recorded its state for {snapshot_id}")
        rec.initiators.append(process)
        self._record(rec, process, action, via=None)

    def on_control(self, process: str, channel: int, message: int, action: int) -> None:
        snapshot_id = self.host.message(message).tag
        assert snapshot_id is not None
        if (process, snapshot_id) in self._abandoned:
            return  # this process gave the snapshot up: its markers mean nothing here
        rec = self.records.get(snapshot_id)
        if rec is None:
            if snapshot_id in self._discarded:
                return  # a marker of a snapshot that failed
            # First heard of here: started by a process this host does not run (a live
            # node knows of a snapshot only from its first marker).
            rec = self.new_record(snapshot_id)
        if process not in rec.red_from:
            self._record(rec, process, action, via=channel)
        else:
            self._recording[channel].pop(snapshot_id, None)
            self.close_channel(rec, channel, action)
            self.note_progress(rec, process, action)

    def discard(self, snapshot_id: str) -> None:
        super().discard(snapshot_id)
        self._discarded.add(snapshot_id)
        for recording in self._recording:
            recording.pop(snapshot_id, None)

    def discarded(self, snapshot_id: str) -> bool:
        """Whether ``snapshot_id`` was discarded here (its markers are ignored)."""
        return snapshot_id in self._discarded

    def recording(self, channel: int) -> Mapping[str, list[int]]:
        """The snapshots recording ``channel`` now, with the messages recorded so far."""
        return self._recording[channel]

    def abandon(self, process: str, snapshot_id: str) -> None:
        """``process`` alone gives ``snapshot_id`` up (a live node cleaning up a failed
        snapshot, while the others may still be recording it): its input channels stop
        recording it and its later markers are ignored there; the others go on."""
        self._abandoned.add((process, snapshot_id))
        for ch in self.host.input_channels(process):
            self._recording[ch].pop(snapshot_id, None)

    def on_app_receive(self, channel: int, message: int) -> None:
        recording = self._recording[channel]
        if recording:
            for messages in recording.values():
                messages.append(message)

    def _record(self, rec: SnapshotRecord, process: str, action: int, via: int | None) -> None:
        host = self.host
        self.record_state(rec, process, action, via)
        for ch in host.input_channels(process):
            if ch == via:  # the marker came on it: recorded empty
                self.close_channel(rec, ch, action)
            else:
                self._recording[ch][rec.id] = self.open_channel(rec, ch, action)
        for ch in host.output_channels(process):
            host.emit(ch, action, self.control_kind, rec.id)
        self.note_progress(rec, process, action)

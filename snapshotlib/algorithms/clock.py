"""The naive snapshot: every process records when its own clock reads ``at``.

Without a global clock each process only has its local clock, which may be offset and
may run fast or slow. A process records its state the first time it acts (or at the
end of the run) with its clock at or past ``at``; a channel's state is the messages
stamped before ``at`` by their sender that arrive after the receiver recorded. When
clocks disagree, a message can be sent after its sender recorded yet received before
its receiver did: received but never sent, an inconsistent cut. That is why markers are
needed.

The local clock of process ``p`` after ``t`` actions of the whole system is
``offset[p] + rate[p] * t``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from .base import SnapshotAlgorithm, SnapshotError
from .state import PLAIN, RECORD

if TYPE_CHECKING:
    from .host import Host


class ClockSnapshot(SnapshotAlgorithm):
    """Record at local time ``at``; ``rate`` and ``offset`` give each clock's drift."""

    name = "clock"
    control_kind = "none"
    watches_actions = True
    state_fields: ClassVar[Mapping[str, str]] = {
        "at": PLAIN,
        "rate": PLAIN,
        "offset": PLAIN,
        "snapshot_id": PLAIN,
        "_rec": RECORD,
    }

    def __init__(
        self,
        at: float,
        rate: Mapping[str, float] | None = None,
        offset: Mapping[str, float] | None = None,
        snapshot_id: str = "clock",
    ) -> None:
        super().__init__()
        self.at = at
        self.rate = dict(rate or {})
        self.offset = dict(offset or {})
        self.snapshot_id = snapshot_id
        if not isinstance(at, (int, float)) or isinstance(at, bool):
            raise SnapshotError(f"the clock time 'at' must be a number, got {at!r}")
        for name, values in (("rate", self.rate), ("offset", self.offset)):
            for p, v in values.items():
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise SnapshotError(f"clock {name} of {p} must be a number, got {v!r}")
        for p, v in self.rate.items():
            if v <= 0:
                raise SnapshotError(f"clock rate of {p} must be positive, got {v}")

    def bind(self, host: Host) -> None:
        super().bind(host)
        for p in [*self.rate, *self.offset]:
            if p not in host.network.processes:
                raise SnapshotError(f"clock drift given for unknown process {p!r}")
        self._rec = self.new_record(self.snapshot_id)

    def clock(self, process: str, t: int) -> float:
        """The local clock of ``process`` after ``t`` actions of the system."""
        return self.offset.get(process, 0.0) + self.rate.get(process, 1.0) * t

    def before_app_action(self, process: str) -> None:
        rec = self._rec
        if process not in rec.red_from:
            host = self.host
            now = host.time
            if self.clock(process, now) >= self.at:
                # from now on the process records what reaches it stamped before ``at``
                self.record_state(rec, process, now)
                for i in host.input_channels(process):
                    self.open_channel(rec, i, now)
                self.note_progress(rec, process, now)  # a process with no inputs is done

    def on_app_receive(self, channel: int, message: int) -> None:
        host = self.host
        recorded = self._rec.channels.get(channel)
        if recorded is None:  # its receiver has not recorded yet
            return
        src = host.network.channels[channel].src
        if self.clock(src, host.message(message).sent_by) < self.at:
            recorded.append(message)

    def finish(self) -> None:
        """Record the processes whose clock passed ``at`` while they had nothing to do,
        and close each channel between recorded processes once no message stamped
        before ``at`` is still in flight on it."""
        host = self.host
        rec = self._rec
        for p in host.network.processes:
            self.before_app_action(p)
        at = host.time  # after the run's last action, as a late process records
        for i, c in enumerate(host.network.channels):
            if i in rec.closed or c.src not in rec.red_from or c.dst not in rec.red_from:
                continue
            stamped_before = any(
                self.clock(c.src, host.message(m).sent_by) < self.at for m in host.queued(i)
            )
            if not stamped_before:
                self.close_channel(rec, i, at)
                self.note_progress(rec, c.dst, at)

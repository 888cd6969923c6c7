"""The assembled global snapshot: what the initiator collects from every process."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .algorithms.base import SnapshotRecord
    from .apps import Application
    from .simulator import Simulator


@dataclass(frozen=True)
class RecordedMessage:
    """A message recorded as in transit on a channel."""

    id: int
    label: str | None
    payload: Any


@dataclass(frozen=True)
class RecordedProcess:
    """A process's recorded part: its events so far and its application state.

    ``red_from`` is the trace index where the process turned red (Dijkstra's colouring);
    ``done`` says whether it has also finished recording all of its input channels.
    """

    events: tuple[str, ...]
    state: Any
    red_from: int
    done: bool


@dataclass(frozen=True)
class GlobalSnapshot:
    """One snapshot: recorded processes and channels (channels keyed ``"SRC->DST"``).

    ``pending_channels`` are channels whose recording has begun but not finished;
    ``complete`` holds when every process has recorded and no channel is pending.
    """

    id: str
    initiators: tuple[str, ...]
    complete: bool
    processes: Mapping[str, RecordedProcess]
    channels: Mapping[str, tuple[RecordedMessage, ...]]
    pending_channels: tuple[str, ...]

    def to_dict(self, app: Application) -> dict[str, Any]:
        """The JSON form used by ``snapshotlib run --json``."""
        return {
            "id": self.id,
            "initiators": list(self.initiators),
            "complete": self.complete,
            "processes": {
                p: {
                    "events": list(r.events),
                    "state": app.describe(r.state, r.events),
                    "done": r.done,
                }
                for p, r in self.processes.items()
            },
            "channels": {
                name: [{"label": m.label, "payload": m.payload} for m in msgs]
                for name, msgs in self.channels.items()
            },
            "pending_channels": list(self.pending_channels),
        }


def assemble(record: SnapshotRecord, sim: Simulator) -> GlobalSnapshot:
    """Stitch an algorithm's record into a :class:`GlobalSnapshot`."""
    net = sim.network
    trace = sim.trace
    processes = {}
    for p in net.processes:
        if p not in record.red_from:
            continue
        red = record.red_from[p]
        done = record.part_done(p, sim.input_channels(p))
        processes[p] = RecordedProcess(
            tuple(trace.labels_before(p, red)), record.states[p], red, done
        )
    channels = {}
    pending = []
    for i, c in enumerate(net.channels):
        if i not in record.channels:
            continue
        msgs = trace.messages
        channels[str(c)] = tuple(
            RecordedMessage(m, msgs[m].label, msgs[m].payload) for m in record.channels[i]
        )
        if i not in record.closed:
            pending.append(str(c))
    return GlobalSnapshot(
        record.id,
        tuple(record.initiators),
        record.complete,
        processes,
        channels,
        tuple(pending),
    )

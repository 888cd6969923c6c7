"""The assembled global snapshot: what the initiator collects from every process.

With :class:`~snapshotlib.colouring.Colouring` this is the read model of a run's
snapshots: checks, figures, widgets and lessons read a snapshot through
:meth:`Simulator.snapshot <snapshotlib.simulator.Simulator.snapshot>` (what was
recorded) and :func:`~snapshotlib.colouring.colouring` (the colour of each action and
message), never through an algorithm's own records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
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


class RecordedProcess:
    """A process's recorded part: its events so far and its application state.

    ``red_from`` is the trace index where the process turned red (Dijkstra's colouring);
    ``done`` says whether it has also finished recording all of its input channels.
    ``events`` may be given as a function that lists them: it runs on first use, so
    reading a snapshot's states or cut does not walk the trace.
    """

    __slots__ = ("_events", "done", "red_from", "state")

    def __init__(
        self,
        events: Sequence[str] | Callable[[], Sequence[str]],
        state: Any,
        red_from: int,
        done: bool,
    ) -> None:
        self._events = events
        self.state = state
        self.red_from = red_from
        self.done = done

    @property
    def events(self) -> tuple[str, ...]:
        events = self._events
        if callable(events):
            events = self._events = tuple(events())
        return tuple(events)

    def _key(self) -> tuple[Any, ...]:
        return (self.events, self.state, self.red_from, self.done)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordedProcess) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # the state may be mutable

    def __repr__(self) -> str:
        return (
            f"RecordedProcess(events={self.events!r}, state={self.state!r}, "
            f"red_from={self.red_from}, done={self.done})"
        )


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

    @property
    def red_from(self) -> dict[str, int]:
        """The cut: for each process that has recorded, the trace index of its first red
        action (what :func:`~snapshotlib.checks.cut.check_cut` takes)."""
        return {p: r.red_from for p, r in self.processes.items()}

    @property
    def states(self) -> dict[str, Any]:
        """Each recorded process's application state."""
        return {p: r.state for p, r in self.processes.items()}

    def recorded(self, process: str) -> bool:
        """Whether ``process`` has recorded its state for this snapshot."""
        return process in self.processes

    def part_done(self, process: str) -> bool:
        """Whether ``process`` has recorded and finished recording all of its inputs."""
        part = self.processes.get(process)
        return part is not None and part.done

    def closed(self, channel: str) -> bool:
        """Whether the recording of ``channel`` (``"SRC->DST"``) is finished."""
        return channel in self.channels and channel not in self.pending_channels

    def message_ids(self, channel: str) -> tuple[int, ...]:
        """Ids of the messages recorded on ``channel`` (``"SRC->DST"``), in order; empty
        if its recording has not begun."""
        return tuple(m.id for m in self.channels.get(channel, ()))

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
            partial(trace.labels_before, p, red), record.states[p], red, done
        )
    channels = {}
    pending = []
    msgs = trace.messages
    for i in sorted(record.channels):  # the network's channel order
        c = net.channels[i]
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

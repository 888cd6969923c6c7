"""The interface every snapshot algorithm implements, and the records they fill in.

Whatever runs the processes (the simulator, a real process) knows nothing of markers
or barriers: it calls the algorithm when a process initiates a snapshot, when a control
message is accepted, and when an application message is accepted (so the algorithm can
record channel state). The algorithm answers through its :class:`~.host.Host`:
``emit`` to send control messages, ``block`` and ``unblock`` to hold an input channel
back (barrier alignment), ``pause`` and ``resume`` to hold a process's own actions back
(a stop-the-world snapshot), ``event`` to say what happened, and the queries the
protocol lists.

Each snapshot is a :class:`SnapshotRecord` keyed by its id. The moment a process
records its state is where it turns from white to red in Dijkstra's colouring
(``red_from``: the first trace index that belongs to its red part).
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from ..trace import (
    MARKER,
    PartDone,
    RecordingClosed,
    RecordingStarted,
    SnapshotComplete,
    SnapshotDiscarded,
    StateRecorded,
)
from .state import MessageNames, fields_key, split_fields

if TYPE_CHECKING:
    from ..simulator import Simulator
    from .host import Host


class SnapshotError(ValueError):
    """A snapshot request the algorithm cannot honour."""


@dataclass
class SnapshotRecord:
    """What an algorithm has recorded so far for one snapshot id.

    Attributes
    ----------
    id
        The snapshot id (several initiators may share it).
    initiators
        Processes that started this snapshot spontaneously, in order.
    red_from
        For each process that has recorded: the trace index from which its actions are red.
    states
        For each process that has recorded: its application state at that moment.
    channels
        For each channel (by index) whose recording has begun: ids of the messages
        recorded on it so far.
    closed
        Channels (by index) whose recording is finished.
    """

    id: str
    initiators: list[str] = field(default_factory=list)
    red_from: dict[str, int] = field(default_factory=dict)
    states: dict[str, Any] = field(default_factory=dict)
    channels: dict[int, list[int]] = field(default_factory=dict)
    closed: set[int] = field(default_factory=set)
    n_channels: int = 0
    n_processes: int = 0

    def part_done(self, process: str, inputs: Iterable[int]) -> bool:
        """Whether ``process`` has done its part: recorded its state and finished
        recording every one of its ``inputs`` (channel indices, e.g.
        :meth:`Simulator.input_channels`)."""
        closed = self.closed
        return process in self.red_from and all(ch in closed for ch in inputs)

    def copy(self) -> SnapshotRecord:
        """An independent copy (its channel lists copied)."""
        return SnapshotRecord(
            self.id,
            self.initiators.copy(),
            self.red_from.copy(),
            self.states.copy(),
            {ch: messages.copy() for ch, messages in self.channels.items()},
            self.closed.copy(),
            self.n_channels,
            self.n_processes,
        )

    @property
    def complete(self) -> bool:
        """Every process recorded and every channel closed."""
        return len(self.red_from) == self.n_processes and len(self.closed) == self.n_channels


_A = TypeVar("_A", bound="SnapshotAlgorithm")


class SnapshotAlgorithm:
    """Base class for snapshot algorithms; see the module docstring for the protocol."""

    name = "none"
    #: the ``kind`` of the control messages this algorithm sends
    control_kind = MARKER
    #: whether :meth:`before_app_action` must be called before every application action
    watches_actions = False
    #: whether each call touches only its own process: its state, its input channels
    #: (taking, blocking) and the tails of its output channels, and what it does
    #: depends on those alone (not on the trace's length, a message's id, or what is in
    #: flight: asking ``app_sent`` or ``queued`` turns the search's lookups off). Then
    #: actions of different processes commute, and
    #: exhaustive search may skip reorderings of them (:mod:`snapshotlib.search.explore`)
    #: and look up what an action did from a process's part of the state
    #: (:mod:`snapshotlib.search.memo`). Off unless an algorithm says so.
    local_actions = False
    #: The attributes :meth:`bind` sets that hold a run's state, each with what it holds
    #: (:mod:`snapshotlib.algorithms.state`: ``PLAIN``, ``RECORDING``,
    #: ``CHANNEL_MESSAGES``, ``MESSAGES``, ``RECORD``), for :meth:`state_key`. A subclass's
    #: declaration adds to its bases'. Undeclared attributes are keyed safely too.
    state_fields: ClassVar[Mapping[str, str]] = {}
    #: whether :meth:`state_key` can change only in a call that writes a trace event or
    #: in :meth:`on_app_receive` on a channel it listens to; said by a class for itself
    #: alone, never inherited (see :meth:`key_follows_events`)
    state_changes_with_events: ClassVar[bool] = False

    def __init__(self) -> None:
        self.records: dict[str, SnapshotRecord] = {}
        self._host: Host | None = None
        #: per channel index: truthy when :meth:`on_app_receive` must hear about the
        #: messages accepted on it (the simulator skips the call otherwise, which keeps
        #: the delivery hot path cheap when nothing is being recorded)
        self.listening: Sequence[object] = ()

    @property
    def host(self) -> Host:
        """What runs this algorithm's processes (see :mod:`~snapshotlib.algorithms.host`)."""
        if self._host is None:
            raise SnapshotError(f"{self.name} is not attached to a simulator or a process")
        return self._host

    @property
    def sim(self) -> Simulator:
        """The simulator running this algorithm, for algorithms written for the simulator
        alone (the course's exercises read its trace and states); the algorithms of this
        package use :attr:`host` only, and so run on any host."""
        return cast("Simulator", self.host)

    def fresh(self: _A) -> _A:
        """A new instance with this one's parameters, bound to no run (for another run of
        the same set-up, e.g. :meth:`Simulator.fork`). Every run's state is made anew in
        :meth:`bind`, so a shallow copy with no records is a fresh instance."""
        clone = copy.copy(self)
        clone._host = None
        clone.records = {}
        clone.listening = ()
        return clone

    def copy_for(self: _A, host: Host) -> _A:
        """A copy of this instance's run so far, bound to ``host``, a copy of this
        instance's host (:meth:`Simulator.clone`): what exhaustive search does at every
        state it expands. This deep copy works for any algorithm (references to the old
        host's trace or queues become references to the new host's); algorithms with
        plain state override it with a faster one."""
        old = self._host
        clone_memo = getattr(old, "clone_memo", None)
        memo: dict[int, Any] = clone_memo(host) if clone_memo is not None else {}
        memo[id(old)] = host
        clone = copy.deepcopy(self, memo)
        clone._host = host
        return clone

    def state_key(self, names: MessageNames) -> Hashable:
        """This run's algorithm state beyond its records, hashable: equal for two runs
        (with the same records) only if the algorithm will do the same in both from now
        on. Messages are named by ``names``, never by their ids. Exhaustive search keys
        its states by it. The default reads every attribute, as :attr:`state_fields`
        declares or safely when undeclared (:func:`~.state.fields_key`)."""
        return fields_key(self, names)

    def state_parts(
        self, names: MessageNames, inputs: Sequence[Sequence[int]]
    ) -> tuple[tuple[Hashable, ...], Hashable] | None:
        """What :meth:`state_key` says, split by process: one part per process (whose
        input channels ``inputs`` gives) and a part of no process; ``None`` when it
        cannot be split. With :attr:`local_actions`, exhaustive search looks up what an
        action did by the acting process's part (:mod:`snapshotlib.search.memo`). The
        default splits the declared attributes (:func:`~.state.split_fields`), and
        says ``None`` for a class whose :meth:`state_key` is its own."""
        if type(self).state_key is not SnapshotAlgorithm.state_key:
            return None
        return split_fields(self, names, inputs)

    def key_follows_events(self) -> bool:
        """Whether :attr:`state_changes_with_events` holds for this instance's class:
        exhaustive search then keeps the key of a step that wrote no event and recorded
        no message. Only the class's own word counts, not a base's: a subclass may change
        its state in calls that leave no trace."""
        return bool(vars(type(self)).get("state_changes_with_events", False))

    def snapshot_records(self) -> Mapping[str, SnapshotRecord]:
        """The snapshots started so far, by id, in the order they were started
        (read-only: only the algorithm writes its records)."""
        return MappingProxyType(self.records)

    @property
    def bound(self) -> bool:
        """Whether a host runs this instance (it then holds that run's records)."""
        return self._host is not None

    def bind(self, host: Host) -> None:
        """Attach to a host, forgetting any earlier run of it (an undo replays from the
        start); a simulator gives each run an instance of its own."""
        self._host = host
        self.records = {}
        # An algorithm that overrides on_app_receive hears every channel unless it
        # narrows ``listening`` itself (as Chandy-Lamport does); one that does not
        # override it is never called.
        hears = type(self).on_app_receive is not SnapshotAlgorithm.on_app_receive
        self.listening = [hears] * len(host.network.channels)

    def new_record(self, snapshot_id: str) -> SnapshotRecord:
        net = self.host.network
        rec = SnapshotRecord(
            snapshot_id, n_channels=len(net.channels), n_processes=len(net.processes)
        )
        self.records[snapshot_id] = rec
        return rec

    # ------------------------------------------ recording, with its trace events
    def record_state(
        self, rec: SnapshotRecord, process: str, action: int, via: int | None = None
    ) -> None:
        """``process`` records its state for ``rec`` in ``action`` (on its own initiative,
        or on a first control message that came on channel ``via``)."""
        host = self.host
        rec.red_from[process] = action
        rec.states[process] = host.state_of(process)
        host.event(StateRecorded(action, rec.id, process, via))

    def open_channel(self, rec: SnapshotRecord, channel: int, action: int) -> list[int]:
        """Start recording ``channel`` for ``rec``; the list its messages go to."""
        messages: list[int] = []
        rec.channels[channel] = messages
        self.host.event(RecordingStarted(action, rec.id, channel))
        return messages

    def close_channel(self, rec: SnapshotRecord, channel: int, action: int) -> None:
        """Finish recording ``channel`` for ``rec`` (empty if it was never opened)."""
        messages = rec.channels.setdefault(channel, [])
        rec.closed.add(channel)
        self.host.event(RecordingClosed(action, rec.id, channel, tuple(messages)))

    def note_progress(self, rec: SnapshotRecord, process: str, action: int) -> None:
        """After ``action`` changed ``process``'s part of ``rec``: the events of its part,
        and of the whole snapshot, being done, if they are now."""
        host = self.host
        if rec.part_done(process, host.input_channels(process)):
            host.event(PartDone(action, rec.id, process))
            if rec.complete:
                host.event(SnapshotComplete(action, rec.id))

    def start(self, process: str, snapshot_id: str, action: int) -> None:
        """``process`` initiates ``snapshot_id`` in trace action ``action``."""
        raise SnapshotError(f"{self.name} snapshots cannot be started by a process")

    def on_control(self, process: str, channel: int, message: int, action: int) -> None:
        """``process`` accepted control message ``message`` on ``channel``."""

    def on_app_receive(self, channel: int, message: int) -> None:
        """An application message was accepted on ``channel`` (before its handler ran)."""

    def before_app_action(self, process: str) -> None:
        """Called before each application action when :attr:`watches_actions` is set."""

    def discard(self, snapshot_id: str) -> None:
        """Forget a snapshot that failed: its record goes, and control messages of it
        still in flight are ignored from now on."""
        if self.records.pop(snapshot_id, None) is not None:
            self.host.event(SnapshotDiscarded(self.host.time - 1, snapshot_id))

    def finish(self) -> None:
        """Called when a run ends, e.g. to record processes that had nothing more to do."""

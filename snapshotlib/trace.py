"""The trace: a flat, append-only record of every action and every message.

The simulator appends one :class:`ActionRecord` per atomic action and one
:class:`MessageRecord` per message (application message or marker) and fills in
:attr:`Trace.received_by` when a message is accepted. Records are named tuples so that
the hot path stays cheap while readers get named fields. Everything derived (vector
clocks, colours, per-process histories) is computed on demand from these lists.

Action kinds: ``internal``, ``send`` and ``receive`` are the application's atomic
actions (EWD 864a); ``snapshot`` (a process initiates a snapshot) and ``control``
(a marker or other algorithm message is accepted) belong to the snapshot algorithm and
are not part of the computation being observed.

Besides actions and messages, algorithms append typed :class:`TraceEvent` records to
:attr:`Trace.events` when something a reader cares about happens (a process records
its state, a channel's recording starts or closes, an input is blocked or unblocked, a
barrier overtakes data or a record crosses one, a process's part or the whole snapshot
is done, a snapshot is discarded; the simulator adds :class:`ControlSent` for every
control message).
Readers (narration, figures) read these instead of re-deriving them from state. No
event is written for an application delivery, so the hot path pays nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

INTERNAL = "internal"
SEND = "send"
RECEIVE = "receive"
SNAPSHOT = "snapshot"
CONTROL = "control"
APP_KINDS = frozenset({INTERNAL, SEND, RECEIVE})

APP = "app"
#: the control kind of Chandy–Lamport and Lai–Yang markers
MARKER = "marker"

NOT_RECEIVED = -1


class ActionRecord(NamedTuple):
    """One atomic action.

    ``channel`` and ``message`` name the accepted message for ``receive`` and
    ``control`` actions and the sent message for ``send`` actions; otherwise ``-1``.
    """

    kind: str
    process: str
    label: str | None
    channel: int
    message: int


class MessageRecord(NamedTuple):
    """One message: ``kind`` is ``"app"`` for application messages, otherwise the
    algorithm's control kind (``"marker"``); ``tag`` is the snapshot id of a marker."""

    channel: int
    sent_by: int
    kind: str
    label: str | None
    payload: Any
    tag: str | None


_new = tuple.__new__


# Events are named tuples, like the other records: cheap to make on the algorithm's path.
class StateRecorded(NamedTuple):
    """``process`` recorded its state (turned red) for ``snapshot_id`` in ``action``: on
    its own initiative when ``via`` is ``None``, else on the first control message, which
    came on channel ``via``."""

    action: int
    snapshot_id: str
    process: str
    via: int | None


class ControlSent(NamedTuple):
    """Control message ``message`` (a marker, a barrier) was sent on ``channel``."""

    action: int
    snapshot_id: str
    channel: int
    message: int


class RecordingStarted(NamedTuple):
    """Channel ``channel``'s recording began: what is accepted on it now is recorded."""

    action: int
    snapshot_id: str
    channel: int


class RecordingClosed(NamedTuple):
    """Channel ``channel``'s recording finished, holding ``messages`` (ids, in order)."""

    action: int
    snapshot_id: str
    channel: int
    messages: tuple[int, ...]


class PartDone(NamedTuple):
    """``process`` has done its part: state recorded, every input channel closed."""

    action: int
    snapshot_id: str
    process: str


class SnapshotComplete(NamedTuple):
    """Every process has recorded and every channel is closed."""

    action: int
    snapshot_id: str


class InputBlocked(NamedTuple):
    """Deliveries on ``channel`` are held back: its reader aligns ``snapshot_id``'s
    barriers, and this channel's has arrived."""

    action: int
    snapshot_id: str
    channel: int


class InputUnblocked(NamedTuple):
    """Deliveries on ``channel`` go on again (aligned, or the snapshot was discarded)."""

    action: int
    snapshot_id: str
    channel: int


class BarrierOvertook(NamedTuple):
    """The barrier sent on ``channel`` went ahead of the application messages
    ``messages`` buffered on it (an unaligned barrier): they belong to the snapshot."""

    action: int
    snapshot_id: str
    channel: int
    messages: tuple[int, ...]


class RecordCrossed(NamedTuple):
    """Application message ``message`` was read on ``channel`` after its barrier and
    before its reader recorded its state (at-least-once: read again after a restore)."""

    action: int
    snapshot_id: str
    channel: int
    message: int


class SnapshotDiscarded(NamedTuple):
    """``snapshot_id`` failed and was forgotten after ``action`` (the last action taken;
    -1 before any): its records went, and its control messages still in flight are
    ignored."""

    action: int
    snapshot_id: str


#: something that happened to snapshot ``snapshot_id`` in trace action ``action``
TraceEvent = (
    StateRecorded
    | ControlSent
    | RecordingStarted
    | RecordingClosed
    | PartDone
    | SnapshotComplete
    | InputBlocked
    | InputUnblocked
    | BarrierOvertook
    | RecordCrossed
    | SnapshotDiscarded
)
#: every kind of :data:`TraceEvent`
EVENT_TYPES: tuple[type[TraceEvent], ...] = (
    StateRecorded,
    ControlSent,
    RecordingStarted,
    RecordingClosed,
    PartDone,
    SnapshotComplete,
    InputBlocked,
    InputUnblocked,
    BarrierOvertook,
    RecordCrossed,
    SnapshotDiscarded,
)


class Trace:
    """Actions and messages in the order they happened."""

    __slots__ = (
        "_by_process",
        "_by_process_len",
        "actions",
        "events",
        "messages",
        "received_by",
    )

    def __init__(self) -> None:
        self.actions: list[ActionRecord] = []
        self.messages: list[MessageRecord] = []
        self.received_by: list[int] = []
        #: typed events, in the order they happened (see the module docstring)
        self.events: list[TraceEvent] = []
        self._by_process: dict[str, list[int]] = {}
        self._by_process_len = -1

    def __len__(self) -> int:
        return len(self.actions)

    def add_action(
        self, kind: str, process: str, label: str | None, channel: int = -1, message: int = -1
    ) -> int:
        index = len(self.actions)
        self.actions.append(_new(ActionRecord, (kind, process, label, channel, message)))
        return index

    def add_message(
        self,
        channel: int,
        sent_by: int,
        kind: str,
        label: str | None,
        payload: Any,
        tag: str | None,
    ) -> int:
        ident = len(self.messages)
        self.messages.append(_new(MessageRecord, (channel, sent_by, kind, label, payload, tag)))
        self.received_by.append(NOT_RECEIVED)
        return ident

    def events_at(self, action: int, snapshot_id: str | None = None) -> list[TraceEvent]:
        """The events of trace action ``action`` (of ``snapshot_id`` only, if given)."""
        return [
            e
            for e in self.events
            if e.action == action and (snapshot_id is None or e.snapshot_id == snapshot_id)
        ]

    def app_actions(self) -> Iterator[tuple[int, ActionRecord]]:
        """``(index, action)`` for every application action, in order."""
        for i, a in enumerate(self.actions):
            if a.kind in APP_KINDS:
                yield i, a

    def process_actions(self, process: str) -> list[int]:
        """Indices of the application actions of ``process``, in order (cached)."""
        if self._by_process_len != len(self.actions):
            by: dict[str, list[int]] = {}
            for i, a in enumerate(self.actions):
                if a.kind in APP_KINDS:
                    by.setdefault(a.process, []).append(i)
            self._by_process = by
            self._by_process_len = len(self.actions)
        return self._by_process.get(process, [])

    def labels_before(self, process: str, index: int) -> list[str]:
        """Labels of the application actions of ``process`` that precede ``index``.

        An action without a label is shown by its kind and position, e.g. ``"send#3"``.
        """
        out = []
        for i in self.process_actions(process):
            if i >= index:
                break
            out.append(self.action_name(i))
        return out

    def action_name(self, index: int) -> str:
        """A short human name for an action: its label, or ``kind#index``."""
        a = self.actions[index]
        return a.label if a.label is not None else f"{a.kind}#{index}"

    def message_name(self, ident: int) -> str:
        """A short human name for a message: its label, or that of its send action."""
        m = self.messages[ident]
        if m.label is not None:
            return m.label
        if m.kind != APP:
            return f"{m.kind}({m.tag})"
        return f"m{ident}"

    def copy(self) -> Trace:
        """An independent copy (records are immutable, so the lists are shallow-copied)."""
        t = Trace()
        t.actions = self.actions.copy()
        t.messages = self.messages.copy()
        t.received_by = self.received_by.copy()
        t.events = self.events.copy()
        return t

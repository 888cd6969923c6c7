"""One real process as a host of the engine's snapshot algorithms.

A node runs the very class the simulator runs (Chandy–Lamport from
:mod:`snapshotlib.algorithms`, or a learner's own: :mod:`.algorithm_choice`), through
the host protocol of :mod:`snapshotlib.algorithms.host`; a class written for the
simulator alone may also read ``states`` and ``trace.messages``, which a node answers
for itself. Where the simulator answers for every process, a
:class:`NodeHost` answers for its own: its state, its channels, the messages it sent and
accepted (numbered locally, in the order it met them), its actions (numbered locally).
A control message the algorithm emits goes to the node's ``transmit`` callback, which
puts it on the wire; events go to ``on_event`` (the node writes parts and logs from
them). Standard library only: the node supplies the networking.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..algorithms.base import SnapshotAlgorithm
from ..model import Network
from ..trace import APP, MessageRecord, TraceEvent

#: called with (channel index, local message id, control kind, snapshot id)
Transmit = Callable[[int, int, str, str], None]


class NodeHost:
    """The host protocol for process ``me`` of ``network`` (see the module docstring).

    Parameters
    ----------
    network
        The whole cluster's network: channels are named by their index in it, as
        everywhere in the engine.
    me
        This node's process name.
    algorithm
        A fresh algorithm instance; it is bound to this host.
    balance
        The application state: this node's money.
    transmit
        Puts a control message on the wire.
    on_event
        Hears every event the algorithm emits.
    """

    def __init__(
        self,
        network: Network,
        me: str,
        algorithm: SnapshotAlgorithm,
        balance: int,
        transmit: Transmit,
        on_event: Callable[[TraceEvent], None],
    ) -> None:
        self.network = network
        self.me = me
        self.balance = balance
        self.algorithm = algorithm
        self._transmit = transmit
        self._on_event = on_event
        self._inputs = [network.channel_index(c) for c in network.inputs(me)]
        self._outputs = [network.channel_index(c) for c in network.outputs(me)]
        # the messages this node sent or accepted, by local id, as far as they are still
        # needed (:meth:`forget_messages`): the node's actions are in its log
        self._messages: dict[int, MessageRecord] = {}
        self._next_message = 0
        self._app_sent = [0] * len(network.channels)
        self._time = 0
        self.blocked: set[int] = set()
        self.paused = False
        #: snapshots this node gave up or finished: their markers are taken from the
        #: wire, and the algorithm hears nothing of them (:meth:`ignore`)
        self.ignored: set[str] = set()
        algorithm.bind(self)

    # ----------------------------------------------------- the host protocol
    @property
    def time(self) -> int:
        return self._time

    def input_channels(self, process: str) -> list[int]:
        self._require_me(process)
        return list(self._inputs)

    def output_channels(self, process: str) -> list[int]:
        self._require_me(process)
        return list(self._outputs)

    def state_of(self, process: str) -> Any:
        self._require_me(process)
        return self.balance

    @property
    def states(self) -> Mapping[str, Any]:
        """This node's application state by process name, as a simulator's ``states``
        (for a class written for the simulator)."""
        return {self.me: self.balance}

    @property
    def trace(self) -> _NodeTrace:
        """What a class written for the simulator reads of its trace:
        ``trace.messages[message]``, the messages this node met."""
        return _NodeTrace(self._messages)

    @property
    def messages(self) -> Mapping[int, MessageRecord]:
        """The messages this node sent or accepted and has not forgotten, by local id."""
        return self._messages

    def message(self, message: int) -> MessageRecord:
        return self._messages[message]

    def forget_messages(self, keep: Iterable[int]) -> int:
        """Forget every message but those of ``keep`` (the ones a snapshot still open
        recorded); how many went. A node that ran for hours would otherwise hold every
        message it ever met."""
        before = len(self._messages)
        self._messages = {m: self._messages[m] for m in keep}
        return before - len(self._messages)

    def app_sent(self, channel: int) -> int:
        return self._app_sent[channel]

    def queued(self, channel: int) -> Sequence[int]:
        # What is buffered is in the transport (gRPC's stream), past the algorithm's
        # reach: only an unaligned barrier, which overtakes buffers, would need it.
        return ()

    def emit(
        self,
        channel: int,
        sent_by: int,
        kind: str,
        tag: str | None,
        payload: Any = None,
        *,
        at: int | None = None,
    ) -> int:
        if at is not None:
            raise NotImplementedError("a live node cannot overtake what its transport buffers")
        if payload is not None:
            raise ValueError(
                f"a live node's markers carry a snapshot id and nothing more, not {payload!r}"
            )
        if channel not in self._outputs:
            raise ValueError(f"{self.me} cannot send on {self.network.channels[channel]}")
        mid = self._add_message(channel, sent_by, kind, payload, tag)
        self._transmit(channel, mid, kind, tag or "")
        return mid

    def event(self, event: TraceEvent) -> None:
        self._on_event(event)

    def block(self, channel: int) -> None:
        self.blocked.add(channel)

    def unblock(self, channel: int) -> None:
        self.blocked.discard(channel)

    def pause(self, process: str) -> None:
        self._require_me(process)
        self.paused = True

    def resume(self, process: str) -> None:
        self._require_me(process)
        self.paused = False

    # ------------------------------------------------ what the node does
    def initiate(self, snapshot_id: str) -> int:
        """This node starts ``snapshot_id`` on its own initiative; returns the action."""
        action = self._next_action()
        self.algorithm.start(self.me, snapshot_id, action)
        return action

    def send(self, channel: int, amount: int) -> tuple[int, int]:
        """Take ``amount`` from the balance to send on ``channel``: (action, message id).

        The caller puts the transfer on the wire.
        """
        if not 0 < amount <= self.balance:
            raise ValueError(f"{self.me} has {self.balance} and cannot send {amount}")
        action = self._next_action()
        self.balance -= amount
        self._app_sent[channel] += 1
        return action, self._add_message(channel, action, APP, amount, None)

    def accept_transfer(self, channel: int, sent_by: int, amount: int) -> tuple[int, int]:
        """A transfer arrived on ``channel`` (``sent_by``: the sender's action, for the
        record): the algorithm hears it first (it may be recording the channel), then the
        balance grows. Returns (action, local message id)."""
        action = self._next_action()
        mid = self._add_message(channel, sent_by, APP, amount, None)
        try:
            if self.algorithm.listening[channel]:
                self.algorithm.on_app_receive(channel, mid)
        finally:  # the money arrived, whatever a learner's class made of it
            self.balance += amount
        return action, mid

    def accept_control(self, channel: int, sent_by: int, kind: str, tag: str) -> int:
        """A marker (or other control message) arrived on ``channel``; returns the action."""
        action = self._next_action()
        mid = self._add_message(channel, sent_by, kind, None, tag)
        if tag not in self.ignored:
            self.algorithm.on_control(self.me, channel, mid, action)
        return action

    def ignore(self, snapshot_id: str) -> None:
        """From now on the algorithm hears no marker of ``snapshot_id`` here (the node
        gave it up, or made its part): a marker still on its way is taken and dropped."""
        self.ignored.add(snapshot_id)

    def note(self) -> int:
        """An action of the node's own that is neither a message nor the algorithm's (it
        abandons a snapshot, it starts an epoch): numbered like every other; returns it."""
        return self._next_action()

    # ------------------------------------------------------------ helpers
    def _add_message(
        self, channel: int, sent_by: int, kind: str, payload: Any, tag: str | None
    ) -> int:
        mid = self._next_message
        self._next_message += 1
        self._messages[mid] = MessageRecord(channel, sent_by, kind, None, payload, tag)
        return mid

    def _next_action(self) -> int:
        action = self._time
        self._time += 1
        return action

    def _require_me(self, process: str) -> None:
        if process != self.me:
            raise ValueError(f"node {self.me} cannot answer for {process}")


class _NodeTrace:
    """The part of a :class:`~snapshotlib.trace.Trace` a node has: its messages."""

    __slots__ = ("messages",)

    def __init__(self, messages: Mapping[int, MessageRecord]) -> None:
        self.messages = messages

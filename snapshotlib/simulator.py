"""The simulator: owns the channels, runs atomic actions, records the trace.

``step(action)`` is the primitive; ``run(scheduler)`` is a loop around it. Processes
never touch channels: application handlers and snapshot algorithms ask the simulator
to send, so the same code runs under the stepper, random runs and the COS 418 tick
model. Undo is time travel by replay: the trace is the full history, and replaying all
but its last top-level action rebuilds the earlier state exactly (everything is
deterministic).

>>> from snapshotlib import Network, Simulator, Send, StartSnapshot
>>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 0, "P2": 1})
>>> sim.step(Send("P2", "P1", 1, label="H"))
>>> sim.step(StartSnapshot("P1", "s1"))
>>> [str(a) for a in sim.enabled()]
['deliver P1->P2', 'deliver P2->P1']
>>> sim.run()
3
>>> sim.snapshot("s1").channels["P2->P1"]
(RecordedMessage(id=0, label='H', payload=1),)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .actions import Action, Deliver, Internal, Send, StartSnapshot, action_of
from .algorithms.base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from .algorithms.chandy_lamport import ChandyLamport
from .apps import AppError, Application, make_app
from .model import Channel, Network
from .schedulers import FifoOrder, Scheduler
from .snapshot import GlobalSnapshot, assemble
from .trace import (
    APP,
    CONTROL,
    INTERNAL,
    NOT_RECEIVED,
    RECEIVE,
    SEND,
    SNAPSHOT,
    ActionRecord,
    ControlSent,
    MessageRecord,
    Trace,
    TraceEvent,
)

_new = tuple.__new__


class ActionError(ValueError):
    """An action that is not enabled in the current state, with what is."""


def _instance(
    algorithm: SnapshotAlgorithm | Callable[[], SnapshotAlgorithm] | None,
) -> SnapshotAlgorithm:
    """The algorithm instance for a new run. An instance holds one run's records, so one
    already running in another simulator is refused: binding it here would silently
    empty the other run's snapshots."""
    if algorithm is None:
        return ChandyLamport()
    if isinstance(algorithm, SnapshotAlgorithm):
        if algorithm.bound:
            name = type(algorithm).__name__
            raise SnapshotError(
                f"this {name} instance already runs in another simulator; give each run "
                f"its own: pass the class ({name}) or a new instance"
            )
        return algorithm
    made = algorithm()
    if not isinstance(made, SnapshotAlgorithm):
        raise TypeError(f"algorithm: {algorithm!r} made {made!r}, not a SnapshotAlgorithm")
    return made


class Simulator:
    """A network of processes running an application under a snapshot algorithm.

    Parameters
    ----------
    network
        The processes and channels.
    app
        An :class:`~snapshotlib.apps.Application` or the name of a built-in one.
    initial
        Initial value per process, passed to the application (e.g. token counts).
    algorithm
        The snapshot algorithm: a class or factory (a new instance for this run), or an
        instance no other simulator runs; Chandy–Lamport by default.
    """

    def __init__(
        self,
        network: Network,
        app: str | Application = "events",
        initial: Mapping[str, Any] | None = None,
        algorithm: SnapshotAlgorithm | Callable[[], SnapshotAlgorithm] | None = None,
    ) -> None:
        self.network = network
        self.app = make_app(app)
        self.initial = dict(initial or {})
        for p in self.initial:
            if p not in network.processes:
                raise ActionError(f"initial value given for unknown process {p!r}")
        self.algorithm = _instance(algorithm)
        channels = network.channels
        self._src = [c.src for c in channels]
        self._dst = [c.dst for c in channels]
        self._out = {
            p: {c.dst: network.channel_index(c) for c in network.outputs(p)}
            for p in network.processes
        }
        self._in = {
            p: [network.channel_index(c) for c in network.inputs(p)] for p in network.processes
        }
        # each undone action with the trace it came from (which holds a send's payload)
        self._redo: list[tuple[ActionRecord, Trace]] = []
        self._reset()

    # ------------------------------------------------------------------ state
    def _reset(self) -> None:
        self.trace = Trace()
        self.states: dict[str, Any] = {
            p: self.app.initial_state(p, self.initial.get(p)) for p in self.network.processes
        }
        self.queues: list[deque[int]] = [deque() for _ in self.network.channels]
        self.blocked: set[int] = set()
        self.paused: set[str] = set()
        # application messages sent per channel, counted up to message _app_counted
        self._app_sent = [0] * len(self.network.channels)
        self._app_counted = 0
        self._app_sent_asked = False
        self._actor = ""
        self._actor_action = -1
        self._actor_sent: set[int] = set()
        self._actor_sent_by = -1
        self.algorithm.bind(self)
        self._watch = self.algorithm.watches_actions
        self._observe = self.algorithm.on_app_receive
        self._listening = self.algorithm.listening
        self._on_control = self.algorithm.on_control
        #: (process, snapshot id) whose control messages its algorithm does not hear
        self._ignored: frozenset[tuple[str, str]] = frozenset()
        self._on_receive = self.app.on_receive
        self._send_fn = self._handler_send

    @property
    def time(self) -> int:
        """Number of actions taken so far."""
        return len(self.trace.actions)

    def in_flight(self, channel: Channel | str | None = None) -> list[int]:
        """Ids of the messages and markers in flight, oldest first (one channel or all)."""
        if channel is None:
            return sorted(m for q in self.queues for m in q)
        return list(self.queues[self._channel_index(channel)])

    def input_channels(self, process: str) -> list[int]:
        """Channel indices leading to ``process`` (for algorithms)."""
        return self._in[process]

    def output_channels(self, process: str) -> list[int]:
        """Channel indices leaving ``process`` (for algorithms)."""
        return list(self._out[process].values())

    # --------------------------------------------------------------- enabling
    def enabled(self) -> list[Deliver]:
        """Every delivery that may happen next.

        Internal events, sends and snapshot initiations are always possible (internal
        events and sends not at a paused process) and not listed; on a FIFO channel
        only the head may be delivered, on a non-FIFO channel any message in flight.
        """
        out = []
        fifo = self.network.fifo
        for i, q in enumerate(self.queues):
            if not q or i in self.blocked:
                continue
            ch = self.network.channels[i]
            if fifo:
                out.append(Deliver(ch))
            else:
                out.extend(Deliver(ch, m) for m in q)
        return out

    def has_pending(self) -> bool:
        """Whether some unblocked channel still holds a message or marker."""
        return any(q and i not in self.blocked for i, q in enumerate(self.queues))

    # ------------------------------------------------------------------ steps
    def step(self, action: Action) -> None:
        """Take one action; :class:`ActionError` (listing what is enabled) if it cannot."""
        mark = len(self.trace.actions)
        try:
            self._apply(action)
        except ActionError:
            raise  # refused before anything changed
        except Exception as e:
            # A handler failed part way (e.g. a second send on one channel, or a bug in
            # a learner's handler): an atomic action must not half-happen, so rebuild
            # the state from before it.
            self._replay(self.trace.actions[:mark])
            if isinstance(e, AppError):
                raise ActionError(f"cannot {action}: {e}") from None
            raise
        self._redo.clear()

    def run(self, scheduler: Scheduler | None = None, max_steps: int | None = None) -> int:
        """Let ``scheduler`` choose actions until it stops; returns the number taken.

        The default scheduler delivers everything in flight, oldest message first.
        """
        sched = scheduler if scheduler is not None else FifoOrder()
        n = 0
        while max_steps is None or n < max_steps:
            action = sched.choose(self)
            if action is None:
                break
            self.step(action)
            n += 1
        self.algorithm.finish()
        return n

    def _apply(self, action: Action) -> None:
        if isinstance(action, Deliver):
            self._deliver_checked(action)
        elif isinstance(action, Internal):
            self._require_process(action.process, action)
            self._require_running(action.process, action)
            self.internal(action.process, action.label)
        elif isinstance(action, Send):
            self._send_checked(action)
        elif isinstance(action, StartSnapshot):
            self._require_process(action.process, action)
            self.start_snapshot(action.process, action.snapshot_id)
        else:
            raise ActionError(f"{action!r} is not an action")

    def _deliver_checked(self, action: Deliver) -> None:
        i = self._channel_index(action.channel, action)
        q = self.queues[i]
        problem = None
        if not q:
            problem = f"channel {action.channel} is empty"
        elif i in self.blocked:
            problem = f"channel {action.channel} is blocked"
        elif action.message is not None and action.message not in q:
            problem = f"message #{action.message} is not in flight on {action.channel}"
        elif action.message is not None and self.network.fifo and q[0] != action.message:
            problem = f"{action.channel} is FIFO and message #{q[0]} is ahead of #{action.message}"
        if problem:
            raise ActionError(f"cannot {action}: {problem}; {self._enabled_text()}")
        pos = 0 if action.message is None else q.index(action.message)
        self.deliver(i, pos, action.label)

    def _send_checked(self, action: Send) -> None:
        self._require_process(action.src, action)
        self._require_running(action.src, action)
        i = self._out[action.src].get(action.dst)
        if i is None:
            outs = ", ".join(self._out[action.src]) or "none"
            raise ActionError(
                f"cannot {action}: there is no channel {action.src}->{action.dst} "
                f"({action.src} can send to: {outs})"
            )
        self.send(action.src, i, action.payload, action.label)

    def _enabled_text(self) -> str:
        names = [str(a) for a in self.enabled()]
        return "enabled: " + (", ".join(names) if names else "no deliveries (all channels empty)")

    def _require_process(self, process: str, action: object) -> None:
        if process not in self.states:
            known = ", ".join(self.network.processes)
            raise ActionError(f"cannot {action}: unknown process {process!r} (known: {known})")

    def _require_running(self, process: str, action: object) -> None:
        if process in self.paused:
            raise ActionError(
                f"cannot {action}: {process} is paused by the snapshot algorithm "
                "(it still accepts deliveries)"
            )

    def _channel_index(self, channel: Channel | str, action: object = None) -> int:
        if isinstance(channel, str):
            channel = Channel.parse(channel)
        try:
            return self.network.channel_index(channel)
        except ValueError:
            what = f"cannot {action}: " if action is not None else ""
            raise ActionError(f"{what}there is no channel {channel}") from None

    # ------------------------------------------ the primitives (no validation)
    def deliver(self, channel: int, position: int = 0, label: str | None = None) -> int:
        """Accept the message at ``position`` of channel ``channel``; returns the action index.

        The fast path used by schedulers that already know the delivery is enabled.
        """
        q = self.queues[channel]
        if position == 0:
            mid = q.popleft()
        else:
            mid = q[position]
            del q[position]
        trace = self.trace
        msg = trace.messages[mid]
        dst = self._dst[channel]
        actions = trace.actions
        index = len(actions)
        if msg[2] == APP:  # msg.kind, read by position on this hot path
            if self._watch:
                self.algorithm.before_app_action(dst)
                index = len(actions)
            actions.append(_new(ActionRecord, (RECEIVE, dst, label, channel, mid)))
            trace.received_by[mid] = index
            if self._listening[channel]:
                self._observe(channel, mid)
            self._actor = dst
            self._actor_action = index
            states = self.states
            states[dst] = self._on_receive(
                dst, states[dst], self._src[channel], msg[4], self._send_fn
            )
        else:
            actions.append(_new(ActionRecord, (CONTROL, dst, label, channel, mid)))
            trace.received_by[mid] = index
            if not self._ignored or (dst, msg[5]) not in self._ignored:  # msg.tag
                self._on_control(dst, channel, mid, index)
        return index

    def internal(self, process: str, label: str | None = None) -> int:
        """An internal action at ``process``; returns its action index."""
        if self._watch:
            self.algorithm.before_app_action(process)
        index = self.trace.add_action(INTERNAL, process, label)
        self._actor = process
        self._actor_action = index
        self.states[process] = self.app.on_internal(
            process, self.states[process], label, self._send_fn
        )
        return index

    def send(
        self, process: str, channel: int, payload: Any = None, label: str | None = None
    ) -> int:
        """``process`` sends ``payload`` on ``channel``; returns the message id.

        :class:`ActionError` if the application refuses (nothing is changed then).
        """
        dst = self._dst[channel]
        try:
            new_state = self.app.on_send(process, self.states[process], dst, payload)
        except AppError as e:
            raise ActionError(f"cannot send {process}->{dst}: {e}") from None
        if self._watch:
            self.algorithm.before_app_action(process)
        trace = self.trace
        index = len(trace.actions)
        messages = trace.messages  # Trace.add_message, inlined: this is the hot path
        mid = len(messages)
        messages.append(_new(MessageRecord, (channel, index, APP, label, payload, None)))
        trace.received_by.append(NOT_RECEIVED)
        trace.actions.append(_new(ActionRecord, (SEND, process, label, channel, mid)))
        self.states[process] = new_state
        self.queues[channel].append(mid)
        return mid

    @property
    def ignored(self) -> frozenset[tuple[str, str]]:
        """(process, snapshot id) pairs whose control messages the algorithm does not hear
        (:meth:`ignore_snapshot`)."""
        return self._ignored

    def ignore_snapshot(self, process: str, snapshot_id: str) -> None:
        """From now on ``process`` takes control messages of ``snapshot_id`` from its
        channels without its algorithm hearing them: what a live node does with a
        snapshot it gave up or made its part of, which the replay of its log must do
        too. Not an action: an undo or a fork of the run does not keep it."""
        # a new set, never changed in place: a clone may share the old one
        self._ignored = self._ignored | {(process, snapshot_id)}

    def start_snapshot(self, process: str, snapshot_id: str = "s1") -> int:
        """``process`` initiates snapshot ``snapshot_id``; returns the action index."""
        trace = self.trace
        index = trace.add_action(SNAPSHOT, process, snapshot_id)
        try:
            self.algorithm.start(process, snapshot_id, index)
        except SnapshotError as e:
            trace.actions.pop()
            raise ActionError(f"cannot start snapshot {snapshot_id} at {process}: {e}") from None
        return index

    def _handler_send(self, dst: str, payload: Any = None, label: str | None = None) -> None:
        """The ``send`` given to application handlers: one message per channel per action."""
        process = self._actor
        channel = self._out[process].get(dst)
        if channel is None:
            raise AppError(f"{process} has no channel to {dst}")
        if self._actor_sent_by != self._actor_action:
            self._actor_sent = set()
            self._actor_sent_by = self._actor_action
        elif channel in self._actor_sent:
            raise AppError(
                f"{process} already sent on {process}->{dst} in this action "
                "(an atomic action sends at most one message per channel)"
            )
        self._actor_sent.add(channel)
        mid = self.trace.add_message(channel, self._actor_action, APP, label, payload, None)
        self.queues[channel].append(mid)

    # ------------------------------------------------ the algorithm-facing API
    # (the host protocol of snapshotlib.algorithms.host)
    def state_of(self, process: str) -> Any:
        """``process``'s application state now."""
        return self.states[process]

    def message(self, message: int) -> MessageRecord:
        """The trace's record of message ``message``."""
        return self.trace.messages[message]

    def queued(self, channel: int) -> deque[int]:
        """Messages in flight on channel ``channel``, oldest first (the live queue)."""
        self._app_sent_asked = True  # what is in flight is no process's state
        return self.queues[channel]

    @property
    def app_sent_asked(self) -> bool:
        """Whether the algorithm asked :meth:`app_sent` or :meth:`queued` in this run:
        what it did then depends on how many messages were sent or are in flight, which
        no state of one process holds (exhaustive search stops reading effects from its
        table, :mod:`.search.memo`)."""
        return self._app_sent_asked

    def app_sent(self, channel: int) -> int:
        """Application messages sent on ``channel`` so far."""
        # counted from the trace when asked (only when a snapshot records), going on
        # from the last count, so a send on the hot path keeps no counter
        self._app_sent_asked = True
        counts, messages = self._app_sent, self.trace.messages
        for i in range(self._app_counted, len(messages)):
            m = messages[i]
            if m.kind == APP:
                counts[m.channel] += 1
        self._app_counted = len(messages)
        return counts[channel]

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
        """Send a control message (marker, barrier) on ``channel``; returns its id.

        ``at`` puts it at that position of the channel's queue instead of the end, ahead
        of the messages behind it: an unaligned barrier overtaking buffered data.
        """
        mid = self.trace.add_message(channel, sent_by, kind, None, payload, tag)
        if tag is not None:
            self.trace.events.append(ControlSent(sent_by, tag, channel, mid))
        if at is None:
            self.queues[channel].append(mid)
        else:
            self.queues[channel].insert(at, mid)
        return mid

    def event(self, event: TraceEvent) -> None:
        """Write a typed event to the trace (see :mod:`snapshotlib.trace`)."""
        self.trace.events.append(event)

    def block(self, channel: int) -> None:
        """Hold back deliveries on ``channel`` (e.g. while aligning barriers)."""
        self.blocked.add(channel)

    def unblock(self, channel: int) -> None:
        self.blocked.discard(channel)

    def pause(self, process: str) -> None:
        """Hold back ``process``'s own actions (internal events, sends; a source's
        reads) until :meth:`resume`; deliveries to it, and what its handlers send on
        them, go on (e.g. while a stop-the-world snapshot drains the channels)."""
        self.paused.add(process)

    def resume(self, process: str) -> None:
        self.paused.discard(process)

    # ----------------------------------------------------------- time travel
    def undo(self) -> bool:
        """Go back one top-level action; returns ``False`` when there is nothing to undo."""
        old = self.trace
        top = list(old.actions)
        if not top:
            return False
        last = top.pop()
        self._redo.append((last, old))
        self._replay(top)
        return True

    def redo(self) -> bool:
        """Take again the action last undone; ``False`` when there is none."""
        if not self._redo:
            return False
        # The rebuilt trace no longer has the undone send's message: read it from the old one.
        record, source = self._redo.pop()
        self._apply_record(record, source)
        return True

    def _replay(self, records: Iterable[ActionRecord]) -> None:
        old = self.trace
        self._reset()
        for r in records:
            self._apply_record(r, old)

    def _apply_record(self, r: ActionRecord, source: Trace) -> None:
        """Take again an action known to be enabled (an undone or replayed one), straight
        from its record: no :class:`Action` is made and none of :meth:`step`'s checks run
        (undo and :meth:`fork` replay whole traces this way)."""
        kind = r.kind
        if kind in (RECEIVE, CONTROL):  # the very message, wherever it is in the queue
            self.deliver(r.channel, self.queues[r.channel].index(r.message), r.label)
        elif kind == INTERNAL:
            self.internal(r.process, r.label)
        elif kind == SEND:
            self.send(r.process, r.channel, source.messages[r.message].payload, r.label)
        elif kind == SNAPSHOT:
            self.start_snapshot(r.process, r.label or "s1")

    def fork(self, upto: int | None = None) -> Simulator:
        """An independent copy of this run, or of its first ``upto`` actions, to go on
        from without touching this one (what-ifs; lessons that step a copy). Everything
        is deterministic, so the copy has the same message ids, states and snapshots."""
        copy = Simulator(self.network, self.app, self.initial, self.algorithm.fresh())
        for r in self.trace.actions[:upto]:
            copy._apply_record(r, self.trace)
        return copy

    def clone(self, share_algorithm: bool = False) -> Simulator:
        """An independent copy of this run as it stands, made by copying its state rather
        than replaying it (:meth:`fork` replays): what exhaustive search does at every
        state it expands. Application states are shared, so they must be values the
        application never changes in place (the built-in applications' are).

        ``share_algorithm`` keeps this run's algorithm instance instead of a copy: only
        for a copy that takes one step the algorithm hears nothing of, and is itself
        only read or cloned after (the search does that; the algorithm then still
        answers to this run as its host)."""
        new = Simulator.__new__(Simulator)
        new.__dict__.update(self.__dict__)
        new.trace = self.trace.copy()
        new.states = self.states.copy()
        new.queues = [deque(q) for q in self.queues]
        new.blocked = self.blocked.copy()
        new.paused = self.paused.copy()
        new._app_sent = self._app_sent.copy()
        new._actor_sent = self._actor_sent.copy()
        new._redo = []
        new._send_fn = new._handler_send
        if share_algorithm:
            return new
        algorithm = self.algorithm.copy_for(new)
        new.algorithm = algorithm
        new._observe = algorithm.on_app_receive
        new._listening = algorithm.listening
        new._on_control = algorithm.on_control
        return new

    def clone_memo(self, copy: Simulator) -> dict[int, Any]:
        """For a deep copy of what refers to this run (its algorithm): the ids of this
        run's containers mapped to ``copy``'s (a :meth:`clone` of it)."""
        memo: dict[int, Any] = {id(self): copy, id(self.network): self.network}
        memo[id(self.app)] = self.app
        for name in ("trace", "states", "queues", "blocked", "paused", "_app_sent", "_actor_sent"):
            memo[id(getattr(self, name))] = getattr(copy, name)
        for old, copied in zip(self.queues, copy.queues, strict=True):
            memo[id(old)] = copied
        return memo

    def action(self, index: int) -> Action:
        """The action that took trace action ``index``; stepping a run's actions in order
        on a new simulator of the same network, application, initial values and
        algorithm rebuilds the run (:func:`~snapshotlib.actions.action_of`)."""
        return action_of(self.trace.actions[index], self.trace, self.network)

    # --------------------------------------------------------------- results
    def _record(self, snapshot_id: str) -> SnapshotRecord:
        try:
            return self.algorithm.snapshot_records()[snapshot_id]
        except KeyError:
            known = ", ".join(self.algorithm.snapshot_records()) or "none"
            raise KeyError(f"no snapshot {snapshot_id!r} (started: {known})") from None

    def snapshot(self, snapshot_id: str) -> GlobalSnapshot:
        """The global snapshot ``snapshot_id`` as recorded so far."""
        return assemble(self._record(snapshot_id), self)

    def red_from(self, snapshot_id: str) -> dict[str, int]:
        """Snapshot ``snapshot_id``'s cut so far, without assembling the snapshot: for
        each process that has recorded, the trace index of its first red action."""
        return dict(self._record(snapshot_id).red_from)

    def recorded_count(self, snapshot_id: str) -> int:
        """How many messages snapshot ``snapshot_id`` has recorded on its channels so far,
        without assembling the snapshot (a per-step measurement can afford it)."""
        return sum(map(len, self._record(snapshot_id).channels.values()))

    def snapshot_ids(self) -> list[str]:
        """The ids of the snapshots started so far, in the order they were started."""
        return list(self.algorithm.snapshot_records())

    def snapshots(self) -> dict[str, GlobalSnapshot]:
        """Every snapshot started so far, by id, in the order they were started."""
        return {sid: assemble(rec, self) for sid, rec in self.algorithm.snapshot_records().items()}

    def __repr__(self) -> str:
        return (
            f"Simulator({self.network!r}, app={self.app.name!r}, "
            f"algorithm={self.algorithm.name!r}, {self.time} actions)"
        )

"""Applications: what the processes compute while a snapshot is being taken.

An application is a plain object with four handlers. The simulator owns the channels:
handlers never touch them, they only return a new state and may ask the simulator to
send through the ``send`` callable they are given, at most one message per output
channel per action (EWD 864a's atomic action). States should be immutable values
(numbers, strings, tuples) so that recording a state is just keeping a reference.

Writing your own
----------------
Subclass :class:`Application` and override what you need:

>>> class Echo(Application):
...     name = "echo"
...     def initial_state(self, process, value):
...         return 0                      # messages seen so far
...     def on_receive(self, process, state, src, payload, send):
...         if payload > 0:
...             send(src, payload - 1)    # bounce it back, one hop shorter
...         return state + 1
>>> from snapshotlib import Network, Simulator, Send
>>> sim = Simulator(Network(["a", "b"]), app=Echo())
>>> sim.step(Send("a", "b", 3))
>>> _ = sim.run()
>>> sim.states
{'a': 2, 'b': 2}

The optional hooks tell the stable-predicate checks what the application means:
:meth:`Application.amount` and :meth:`Application.message_amount` for conservation,
:meth:`Application.is_passive` for termination and :meth:`Application.waits_for` for
deadlock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

SendFn = Callable[..., None]


class AppError(ValueError):
    """An action the application refuses (e.g. sending tokens it does not have)."""


class Application:
    """Base class: every handler leaves the state unchanged and sends nothing."""

    name = "base"
    #: name of the conserved quantity, or ``None`` when nothing is conserved
    conserved: str | None = None
    #: whether ``on_receive`` or ``on_internal`` may send (exhaustive search reduces
    #: less when they may: a process can then send whenever it receives)
    sends_in_handlers = True

    def initial_state(self, process: str, value: Any) -> Any:
        """The state of ``process`` before any action; ``value`` comes from the scenario."""
        return value

    def on_internal(self, process: str, state: Any, label: str | None, send: SendFn) -> Any:
        """An internal action (it may still send, e.g. a timer firing)."""
        return state

    def on_send(self, process: str, state: Any, dst: str, payload: Any) -> Any:
        """``process`` sends ``payload`` to ``dst``; raise :class:`AppError` to refuse."""
        return state

    def on_receive(self, process: str, state: Any, src: str, payload: Any, send: SendFn) -> Any:
        """``process`` accepts ``payload`` that ``src`` sent."""
        return state

    def describe(self, state: Any, events: tuple[str, ...] = ()) -> Any:
        """A JSON-friendly view of a state, for reports (``events``: the labels so far)."""
        return state

    def amount(self, state: Any) -> int | None:
        """How much of the conserved quantity a process holds."""
        return None

    def message_amount(self, payload: Any) -> int:
        """How much of the conserved quantity a message carries."""
        return 0

    def is_passive(self, state: Any) -> bool:
        """Whether a process will not act again unless a message arrives."""
        return True

    def waits_for(self, process: str, state: Any) -> frozenset[str]:
        """Processes this one is blocked waiting for (empty when not blocked)."""
        return frozenset()


class Events(Application):
    """The default: a process's state is just the list of its events (kept by the trace)."""

    sends_in_handlers = False

    name = "events"

    def initial_state(self, process: str, value: Any) -> Any:
        return None

    def describe(self, state: Any, events: tuple[str, ...] = ()) -> Any:
        return list(events)


class Tokens(Application):
    """Each process holds a number of tokens; a send's payload moves that many tokens.

    The number of tokens in processes plus in channels never changes, which makes it
    the classic invariant for checking a snapshot (token conservation).
    """

    sends_in_handlers = False

    name = "tokens"
    conserved = "tokens"
    unit = "token"

    def initial_state(self, process: str, value: Any) -> Any:
        value = 0 if value is None else value
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise AppError(f"initial {self.unit}s of {process} must be a whole number >= 0")
        return value

    def on_send(self, process: str, state: Any, dst: str, payload: Any) -> Any:
        if type(payload) is int and 0 <= payload <= state:  # the common case, in one test
            return state - payload
        amount = self.message_amount(payload)  # a clear error for a bad payload
        if amount > state:
            raise AppError(f"{process} has {state} {self.unit}(s) and cannot send {amount}")
        return state - amount

    def on_receive(self, process: str, state: Any, src: str, payload: Any, send: SendFn) -> Any:
        return state + payload

    def message_amount(self, payload: Any) -> int:
        if isinstance(payload, bool) or not isinstance(payload, int) or payload < 0:
            raise AppError(f"a {self.unit} payload must be a whole number >= 0, got {payload!r}")
        return payload

    def amount(self, state: Any) -> int | None:
        return int(state)


class Bank(Tokens):
    """Accounts at each branch; a send transfers money. The total is conserved.

    A transfer that would overdraw the sending branch is refused.
    """

    name = "bank"
    conserved = "money"
    unit = "unit of money"


class Requests(Application):
    """Processes ask each other for something and block until they get a reply.

    A process that is not waiting answers a request at once; a waiting process keeps
    the request until its own reply arrives and then answers everyone it kept. Two
    processes that ask each other at the same time wait forever: a deadlock, which a
    snapshot can detect (a cycle of waiting processes with no reply in transit).

    State: ``(waiting_for, kept)`` where ``kept`` are the requesters not yet answered.
    Payloads are ``"request"`` and ``"reply"``.
    """

    name = "requests"

    def initial_state(self, process: str, value: Any) -> Any:
        return (None, ())

    def on_send(self, process: str, state: Any, dst: str, payload: Any) -> Any:
        waiting, kept = state
        if payload != "request":
            raise AppError(f"{process} may only send 'request' by itself, got {payload!r}")
        if waiting is not None:
            raise AppError(f"{process} is blocked waiting for {waiting} and cannot send")
        return (dst, kept)

    def on_receive(self, process: str, state: Any, src: str, payload: Any, send: SendFn) -> Any:
        waiting, kept = state
        if payload == "request":
            if waiting is None:
                send(src, "reply")
                return state
            return (waiting, (*kept, src))
        for requester in kept:
            send(requester, "reply")
        return (None, ())

    def describe(self, state: Any, events: tuple[str, ...] = ()) -> Any:
        waiting, kept = state
        return {"waiting_for": waiting, "kept": list(kept)}

    def is_passive(self, state: Any) -> bool:
        return state[0] is None and not state[1]

    def waits_for(self, process: str, state: Any) -> frozenset[str]:
        return frozenset() if state[0] is None else frozenset({state[0]})


APPLICATIONS: Mapping[str, type[Application]] = {
    "events": Events,
    "tokens": Tokens,
    "bank": Bank,
    "requests": Requests,
}


def make_app(app: str | Application) -> Application:
    """An application instance from a name (``events``, ``tokens``, ``bank``) or itself."""
    if isinstance(app, Application):
        return app
    try:
        return APPLICATIONS[app]()
    except KeyError:
        known = ", ".join(APPLICATIONS)
        raise AppError(f"unknown app {app!r}: expected one of {known}") from None

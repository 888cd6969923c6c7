"""The true global state of a run at any moment, which only the simulator can see.

A snapshot records a state the run may never have passed through; lessons compare it
with the true states before and after (:func:`state_at`, :func:`true_state`), given as
:class:`~snapshotlib.snapshot.GlobalSnapshot` values so the same checks and views read
both.
"""

from __future__ import annotations

from typing import Any

from ..simulator import Simulator
from ..snapshot import GlobalSnapshot, RecordedMessage, RecordedProcess
from ..trace import APP, INTERNAL, RECEIVE, SEND


def state_at(sim: Simulator, index: int) -> GlobalSnapshot:
    """The true global state just before trace action ``index`` (as a snapshot value).

    Only the simulator can see this: every process's state and every message in flight
    at one moment. Processes' states are rebuilt by running the application's handlers
    along the trace (their sends are already in the trace).

    >>> from snapshotlib.formats.scenario import parse_scenario, run_scenario
    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "tokens",
    ...     "initial": {"P1": 1}, "steps": [{"do": "send", "from": "P1", "to": "P2",
    ...     "payload": 1}, {"do": "run"}]}))
    >>> now = state_at(sim, 1)
    >>> now.id, now.states, {c: [m.payload for m in ms] for c, ms in now.channels.items()}
    ('the true state before action 1', {'P1': 0, 'P2': 0}, {'P1->P2': [1], 'P2->P1': []})
    """
    app = sim.app
    trace = sim.trace
    channels = sim.network.channels
    states = {p: app.initial_state(p, sim.initial.get(p)) for p in sim.network.processes}

    def ignore(*args: Any, **kwargs: Any) -> None:
        return None

    for a in trace.actions[:index]:
        if a.kind == SEND:
            payload = trace.messages[a.message].payload
            states[a.process] = app.on_send(
                a.process, states[a.process], channels[a.channel].dst, payload
            )
        elif a.kind == RECEIVE:
            payload = trace.messages[a.message].payload
            states[a.process] = app.on_receive(
                a.process, states[a.process], channels[a.channel].src, payload, ignore
            )
        elif a.kind == INTERNAL:
            states[a.process] = app.on_internal(a.process, states[a.process], a.label, ignore)
    in_flight: dict[str, list[RecordedMessage]] = {str(c): [] for c in channels}
    for m, msg in enumerate(trace.messages):
        received = trace.received_by[m]
        if msg.kind == APP and msg.sent_by < index and not 0 <= received < index:
            in_flight[str(channels[msg.channel])].append(RecordedMessage(m, msg.label, msg.payload))
    return GlobalSnapshot(
        f"the true state before action {index}",
        (),
        True,
        {p: RecordedProcess((), s, index, True) for p, s in states.items()},
        {c: tuple(msgs) for c, msgs in in_flight.items()},
        (),
    )


def true_state(sim: Simulator) -> GlobalSnapshot:
    """The true global state now, after the last action (see :func:`state_at`)."""
    return state_at(sim, sim.time)

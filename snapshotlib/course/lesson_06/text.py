"""Lessons 06a and 06b in words: snapshots and true states, how the parts reach the initiator,
timelines, cuts and paths of the lattice. Built from runs of the engine and
deterministic, so the notebook can compare what it prints with its stored output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from ...apps import Application, Bank, Requests, SendFn, Tokens
from ...checks.lattice import Cut, CutLattice, GlobalState, Predicate
from ...checks.true_state import state_at
from ...formats.scenario import (
    Scenario,
    load_scenario,
    parse_scenario,  # noqa: F401  (for the examples)
    run_scenario,
)
from ...simulator import Simulator
from ...snapshot import GlobalSnapshot, RecordedMessage
from ...snapshot_text import SnapshotStyle
from ...snapshot_text import snapshot_text as snapshot_lines
from ...trace import (
    APP,
    CONTROL,
    RECEIVE,
    SEND,
    SNAPSHOT,
    PartDone,
)


class OverwritingTokens(Tokens):
    """Tokens with a bug: a receive *sets* the count to the arriving tokens.

    A process that already holds tokens when more arrive loses the ones it held, so the
    total can only go down: "some token has been lost" is then a stable predicate.

    >>> from snapshotlib import Network, Send

    >>> sim = Simulator(Network(["P1", "P2"]), app=OverwritingTokens(),
    ...                 initial={"P1": 2, "P2": 1})
    >>> sim.step(Send("P1", "P2", 2))
    >>> _ = sim.run()
    >>> sim.states
    {'P1': 0, 'P2': 2}
    """

    name = "overwriting-tokens"

    def on_receive(self, process: str, state: Any, src: str, payload: Any, send: SendFn) -> Any:
        return payload  # the bug: should be state + payload


def run_with_app(scenario: Scenario | str | Path, app: Application) -> Simulator:
    """Run a scenario's steps with another application (e.g. a buggy one).

    >>> sc = parse_scenario({"processes": ["P1", "P2"], "app": "tokens",
    ...     "initial": {"P1": 2, "P2": 1},
    ...     "steps": [{"do": "send", "from": "P1", "to": "P2", "payload": 2},
    ...               {"do": "run"}]})
    >>> run_with_app(sc, OverwritingTokens()).states
    {'P1': 0, 'P2': 2}
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    # Scenario.app names a built-in application; the simulator also takes an instance.
    return run_scenario(replace(scenario, app=cast(str, app)))


def _quantity(app: Application, n: int) -> str:
    if isinstance(app, Bank):
        return f"{n} unit{'' if n == 1 else 's'}"
    return f"{n} token{'' if n == 1 else 's'}"


def state_text(app: Application, state: Any) -> str:
    """A process state in words.

    >>> state_text(Requests(), ("P2", ("P3",)))
    "waiting for P2, keeps P3's request"
    >>> state_text(Tokens(), 1), state_text(Requests(), (None, ()))
    ('1 token', 'passive')
    """
    if isinstance(app, Requests):
        waiting, kept = state
        if waiting is None and not kept:
            return "passive"
        text = "passive" if waiting is None else f"waiting for {waiting}"
        if kept:
            text += ", keeps " + ", ".join(f"{p}'s request" for p in kept)
        return text
    if isinstance(app, Tokens):
        return _quantity(app, int(state))
    return str(app.describe(state))


def message_text(app: Application, label: str | None, payload: Any) -> str:
    """A message in words: its label and what it carries.

    >>> message_text(Tokens(), "c", 2), message_text(Requests(), "ask1", "request")
    ('c (2 tokens)', 'request ask1')
    """
    if isinstance(app, Tokens):
        amount = _quantity(app, app.message_amount(payload))
        return f"{label} ({amount})" if label else amount
    return f"{payload} {label}" if label else str(payload)


def messages_text(app: Application, msgs: Sequence[RecordedMessage]) -> str:
    return ", ".join(message_text(app, m.label, m.payload) for m in msgs) or "empty"


def snapshot_text(sim: Simulator, snapshot: str | GlobalSnapshot) -> str:
    """A snapshot as the initiator holds it: each process's state, then each channel's.

    With more than six channels, the empty ones are summed up in one line.
    """
    snap = sim.snapshot(snapshot) if isinstance(snapshot, str) else snapshot
    style = SnapshotStyle(
        process=lambda p, part: state_text(sim.app, part.state),
        channel=lambda msgs: messages_text(sim.app, msgs),
        quiet_over=6,
    )
    return snapshot_lines(sim, snap, style)


def without_channels(snapshot: GlobalSnapshot) -> GlobalSnapshot:
    """The same snapshot with every channel state thrown away (recorded as empty).

    What an initiator would see if processes reported only their own states.
    """
    return replace(snapshot, channels={name: () for name in snapshot.channels})


def _part_done_at(sim: Simulator, snapshot_id: str, process: str) -> int | None:
    """The trace index at which ``process`` had its marker on every input channel."""
    for e in sim.trace.events:
        if isinstance(e, PartDone) and e.snapshot_id == snapshot_id and e.process == process:
            return e.action
    return None


def collection_log(sim: Simulator, snapshot_id: str) -> str:
    """How snapshot ``snapshot_id`` came together at its initiator, action by action.

    Each process records its state (on its first marker, or when it initiates); when a
    marker has arrived on every one of its input channels its part is complete, and it
    sends that part (its state and the states of its input channels) to the initiator.

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "tokens",
    ...     "initial": {"P1": 1}, "steps": [{"do": "snapshot", "at": "P1"}, {"do": "run"}]}))
    >>> print(collection_log(sim, "s1"))
    action 0: P1 starts s1 and records its state: 1 token
    action 1: P2 records its state on the marker from P1: 0 tokens
    action 1: P2's part is complete; it sends it to P1: state 0 tokens, P1->P2 empty
    action 2: P1's part is complete; P1 is the initiator and keeps it: state 1 token, P2->P1 empty
    P1 has all 2 parts: snapshot s1 is complete
    """
    snap = sim.snapshot(snapshot_id)
    trace = sim.trace
    channels = sim.network.channels
    collector = snap.initiators[0]
    events: list[tuple[int, int, str]] = []
    for p, recorded in snap.processes.items():
        red = recorded.red_from
        state = state_text(sim.app, recorded.state)
        action = trace.actions[red]
        if action.kind == SNAPSHOT:
            events.append((red, 0, f"{p} starts {snapshot_id} and records its state: {state}"))
        else:
            src = channels[action.channel].src
            events.append((red, 0, f"{p} records its state on the marker from {src}: {state}"))
        done = _part_done_at(sim, snapshot_id, p)
        if done is None:
            continue
        part = ", ".join(
            [f"state {state}"]
            + [
                f"{c} {messages_text(sim.app, snap.channels[str(c)])}"
                for c in sim.network.inputs(p)
            ]
        )
        if p == collector:
            text = f"{p}'s part is complete; {p} is the initiator and keeps it: {part}"
        else:
            text = f"{p}'s part is complete; it sends it to {collector}: {part}"
        events.append((done, 1, text))
    lines = [f"action {t}: {text}" for t, _, text in sorted(events)]
    n = len(sim.network.processes)
    if snap.complete:
        lines.append(f"{collector} has all {n} parts: snapshot {snapshot_id} is complete")
    else:
        got = sum(1 for p in snap.processes if snap.part_done(p))
        lines.append(f"{collector} has {got} of {n} parts: snapshot {snapshot_id} is not complete")
    return "\n".join(lines)


def timeline(sim: Simulator, start: int = 0, stop: int | None = None) -> str:
    """Actions ``start`` to ``stop`` of a run in words, with the actor's state after each.

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "requests",
    ...     "steps": [{"do": "send", "from": "P1", "to": "P2", "label": "ask",
    ...                "payload": "request"}, {"do": "snapshot", "at": "P2"},
    ...               {"do": "run"}]}))
    >>> print(timeline(sim))
      0  P1 sends request ask to P2                     P1: waiting for P2
      1  P2 starts snapshot s1 and records its state
      2  P2 receives request ask from P1, sends reply   P2: passive
      3  P1 receives marker s1 from P2, records its state
      4  P1 receives reply from P2                      P1: passive
      5  P2 receives marker s1 from P1
    """
    trace = sim.trace
    channels = sim.network.channels
    app = sim.app
    stop = len(trace.actions) if stop is None else stop
    first_marker: set[tuple[str, str]] = set()
    for a in trace.actions[:start]:
        if a.kind == SNAPSHOT:
            first_marker.add((a.process, a.label or "s1"))
        elif a.kind == CONTROL:
            first_marker.add((a.process, trace.messages[a.message].tag or ""))
    sent_by: dict[int, list[int]] = {}
    for m, msg in enumerate(trace.messages):
        if msg.kind == APP:
            sent_by.setdefault(msg.sent_by, []).append(m)
    lines = []
    for t in range(start, stop):
        a = trace.actions[t]
        after = ""
        if a.kind == SNAPSHOT:
            what = f"{a.process} starts snapshot {a.label} and records its state"
            first_marker.add((a.process, a.label or "s1"))
        elif a.kind == CONTROL:
            tag = trace.messages[a.message].tag or ""
            what = f"{a.process} receives marker {tag} from {channels[a.channel].src}"
            if (a.process, tag) not in first_marker:
                first_marker.add((a.process, tag))
                what += ", records its state"
        else:
            carried = trace.messages[a.message] if a.message >= 0 else None
            if a.kind == SEND and carried is not None:
                what = f"{a.process} sends {message_text(app, carried.label, carried.payload)}"
                what += f" to {channels[a.channel].dst}"
            elif a.kind == RECEIVE and carried is not None:
                what = f"{a.process} receives {message_text(app, carried.label, carried.payload)}"
                what += f" from {channels[a.channel].src}"
                replies = [trace.messages[m] for m in sent_by.get(t, ()) if m != a.message]
                for r in replies:
                    what += f", sends {message_text(app, r.label, r.payload)}"
                    what += f" to {channels[r.channel].dst}" if len(replies) > 1 else ""
            else:
                what = f"{a.process}: internal event {a.label or ''}".rstrip()
            state = state_at(sim, t + 1).processes[a.process].state
            after = f"{a.process}: {state_text(app, state)}"
        lines.append(f"{t:3d}  {what:<45}  {after}".rstrip())
    return "\n".join(lines)


#: the answers :func:`check_modality` takes, weakest first
MODALITIES = ("never", "possibly", "definitely")


def no_token_held(state: GlobalState) -> bool:
    """No process holds a token: every token is in transit."""
    return all(tokens == 0 for tokens in state.processes.values())


def p1_and_p3_hold_none(state: GlobalState) -> bool:
    """P1 and P3 both hold no token (P2 may hold one or not)."""
    return bool(state.processes["P1"] == 0 and state.processes["P3"] == 0)


def cut_text(app: Application, state: GlobalState) -> str:
    """A cut's global state in words: its counts, each process's state, what is in transit.

    >>> from snapshotlib.checks.lattice import GlobalState
    >>> print(cut_text(Tokens(), GlobalState((1, 0), {"P1": 0, "P2": 1},
    ...     {"P1->P2": (RecordedMessage(0, "a", 1),), "P2->P1": ()})))
    cut 1 0: P1 0 tokens, P2 1 token; in transit: a (1 token) on P1->P2
    """
    held = ", ".join(f"{p} {state_text(app, s)}" for p, s in state.processes.items())
    moving = "; ".join(
        f"{messages_text(app, msgs)} on {name}" for name, msgs in state.channels.items() if msgs
    )
    counts = " ".join(map(str, state.cut))  # as the lattice figure labels it
    return f"cut {counts}: {held}; in transit: {moving or 'nothing'}"


def path_text(path: Sequence[Cut], marks: Mapping[str, Cut] | None = None) -> str:
    """A path through the lattice in one line, its cuts as counts, some of them named.

    >>> path_text([(0, 0), (1, 0), (1, 1)], {"S0": (1, 0)})
    '0 0 → 1 0 (S0) → 1 1'
    """
    names: dict[Cut, list[str]] = {}
    for name, cut in (marks or {}).items():
        names.setdefault(tuple(cut), []).append(name)
    return " → ".join(
        " ".join(map(str, c)) + (f" ({', '.join(names[c])})" if c in names else "") for c in path
    )


def modality(lattice: CutLattice, predicate: Predicate) -> str:
    """The strongest of :data:`MODALITIES` that is true of ``predicate`` in ``lattice``."""
    if lattice.definitely(predicate).holds:
        return "definitely"
    return "possibly" if lattice.possibly(predicate).holds else "never"

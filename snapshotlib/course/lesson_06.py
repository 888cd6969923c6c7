"""Lesson 06, stable predicates: what the initiator can decide from a snapshot.

The lesson evaluates three stable predicates on recorded snapshots (token
conservation, termination, deadlock; see :mod:`snapshotlib.checks.predicates`), shows
how each process's part reaches the initiator, what goes wrong when channel states are
ignored, and a buggy application that really loses tokens. It ends with the lattice of
a small run's consistent cuts (:mod:`snapshotlib.checks.lattice`), where the recorded
state lies between S0 and S1, and the modalities *possibly* and *definitely*. The
functions here print what the notebook shows as text, run a scenario under another
application, check on many random runs that the answers are stable, and check the
learner's answers (each checker returns a :class:`~snapshotlib.course.Feedback`).

>>> sim = run_scenario(parse_scenario({
...     "processes": ["P1", "P2"], "app": "tokens", "initial": {"P1": 3},
...     "steps": [{"do": "send", "from": "P1", "to": "P2", "label": "a", "payload": 2},
...               {"do": "snapshot", "at": "P2", "id": "s1"}, {"do": "run"}]}))
>>> print(snapshot_text(sim, "s1"))
snapshot s1, initiated by P2, complete
  P1: 1 token
  P2: 0 tokens
  P1->P2: a (2 tokens)
  P2->P1: empty
>>> conservation(sim, without_channels(sim.snapshot("s1"))).reason
'1 token recorded (1 in processes, 0 in transit) but 3 at the start: some lost'
>>> print(check_in_transit(sim, 2))
✓ 2 tokens in transit: right. The channels recorded a (2 tokens) on P1->P2.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from ..actions import Action, Send, StartSnapshot
from ..apps import Application, Bank, Requests, SendFn, Tokens
from ..checks.lattice import Cut, CutLattice, GlobalState, Predicate
from ..checks.predicates import PredicateResult, conservation, deadlock, termination
from ..formats.scenario import (
    Scenario,
    load_scenario,
    parse_scenario,  # noqa: F401  (for the examples)
    run_scenario,
)
from ..model import Network
from ..schedulers import RandomOrder
from ..simulator import Simulator
from ..snapshot import GlobalSnapshot, RecordedMessage, RecordedProcess
from ..trace import (
    APP,
    CONTROL,
    INTERNAL,
    RECEIVE,
    SEND,
    SNAPSHOT,
    PartDone,
    SnapshotComplete,
)
from .feedback import Feedback

__all__ = [
    "MODALITIES",
    "OverwritingTokens",
    "StabilitySweep",
    "check_deadlock",
    "check_in_transit",
    "check_modality",
    "check_termination",
    "collection_log",
    "cut_text",
    "message_text",
    "modality",
    "no_token_held",
    "p1_and_p3_hold_none",
    "path_text",
    "run_with_app",
    "snapshot_text",
    "stability_sweep",
    "state_at",
    "state_text",
    "timeline",
    "true_state",
    "without_channels",
]


# ------------------------------------------------------------ a buggy application


class OverwritingTokens(Tokens):
    """Tokens with a bug: a receive *sets* the count to the arriving tokens.

    A process that already holds tokens when more arrive loses the ones it held, so the
    total can only go down: "some token has been lost" is then a stable predicate.

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


# ---------------------------------------------------------------- as text


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


def _messages_text(app: Application, msgs: Sequence[RecordedMessage]) -> str:
    return ", ".join(message_text(app, m.label, m.payload) for m in msgs) or "empty"


def snapshot_text(sim: Simulator, snapshot: str | GlobalSnapshot) -> str:
    """A snapshot as the initiator holds it: each process's state, then each channel's.

    With more than six channels, the empty ones are summed up in one line.
    """
    snap = sim.snapshot(snapshot) if isinstance(snapshot, str) else snapshot
    status = "complete" if snap.complete else "in progress"
    if snap.initiators:
        lines = [f"snapshot {snap.id}, initiated by {', '.join(snap.initiators)}, {status}"]
    else:  # a true state made by state_at
        lines = [snap.id]
    for p in sim.network.processes:
        rec = snap.processes.get(p)
        lines.append(
            f"  {p}: {'not recorded yet' if rec is None else state_text(sim.app, rec.state)}"
        )
    quiet = []
    for name, msgs in snap.channels.items():
        pending = " (still recording)" if name in snap.pending_channels else ""
        if not msgs and not pending and len(snap.channels) > 6:
            quiet.append(name)
            continue
        lines.append(f"  {name}: {_messages_text(sim.app, msgs)}{pending}")
    if quiet:
        lines.append(f"  every other channel: empty ({len(quiet)})")
    return "\n".join(lines)


def without_channels(snapshot: GlobalSnapshot) -> GlobalSnapshot:
    """The same snapshot with every channel state thrown away (recorded as empty).

    What an initiator would see if processes reported only their own states.
    """
    return replace(snapshot, channels={name: () for name in snapshot.channels})


# ------------------------------------------------------- collected at the initiator


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
                f"{c} {_messages_text(sim.app, snap.channels[str(c)])}"
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


# ------------------------------------------------------------ the true state


def state_at(sim: Simulator, index: int) -> GlobalSnapshot:
    """The true global state just before trace action ``index`` (as a snapshot value).

    Only the simulator can see this: every process's state and every message in flight
    at one moment. Processes' states are rebuilt by running the application's handlers
    along the trace (their sends are already in the trace).

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "tokens",
    ...     "initial": {"P1": 1}, "steps": [{"do": "send", "from": "P1", "to": "P2",
    ...     "payload": 1}, {"do": "run"}]}))
    >>> print(snapshot_text(sim, state_at(sim, 1)))
    the true state before action 1
      P1: 0 tokens
      P2: 0 tokens
      P1->P2: 1 token
      P2->P1: empty
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


# ------------------------------------------------------------ stability, tested


@dataclass(frozen=True)
class StabilitySweep:
    """What :func:`stability_sweep` found, per predicate (``termination``, ``deadlock``).

    Attributes
    ----------
    runs, snapshots
        How many random runs, and how many snapshots were taken in them.
    said_yes
        Snapshots whose recorded state satisfies the predicate.
    yes_but_false_at_end
        Of those, how many were wrong: the true state when the snapshot completed did not
        satisfy it (the theory says none).
    true_at_start, no_but_true_at_start
        Snapshots begun when the predicate already held, and how many of them still
        said no (the theory says none).
    no_but_true_at_end
        Snapshots that said "not yet" although the predicate held by the time they
        completed: late, not wrong.
    pairs, flips
        Pairs (a snapshot that said yes, a snapshot begun after that answer was
        complete), and how many of those pairs had the later snapshot say no.
    """

    runs: int
    snapshots: int
    said_yes: Mapping[str, int] = field(default_factory=dict)
    yes_but_false_at_end: Mapping[str, int] = field(default_factory=dict)
    true_at_start: Mapping[str, int] = field(default_factory=dict)
    no_but_true_at_start: Mapping[str, int] = field(default_factory=dict)
    no_but_true_at_end: Mapping[str, int] = field(default_factory=dict)
    pairs: Mapping[str, int] = field(default_factory=dict)
    flips: Mapping[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"{self.runs} random runs, {self.snapshots} snapshots"]
        for name in ("termination", "deadlock"):
            lines += [
                f"{name}:",
                f"  said yes: {self.said_yes[name]}; "
                f"of these, false when the snapshot completed: {self.yes_but_false_at_end[name]}",
                f"  begun when it already held: {self.true_at_start[name]}; "
                f"of these, said no: {self.no_but_true_at_start[name]}",
                f"  said not yet, though it held by the time the snapshot completed: "
                f"{self.no_but_true_at_end[name]}",
                f"  a yes, then a no from a snapshot begun after the yes: "
                f"{self.flips[name]} of {self.pairs[name]} pairs",
            ]
        return "\n".join(lines)


_PREDICATES = {"termination": termination, "deadlock": deadlock}


def _truth(sim: Simulator) -> dict[str, bool]:
    """Each predicate on the true state now."""
    now = true_state(sim)
    return {name: f(sim, now).holds for name, f in _PREDICATES.items()}


class _SweepRun:
    """One run of the sweep: snapshots begun, and the truth when each began and ended."""

    def __init__(self, sim: Simulator, rng: random.Random) -> None:
        self.sim = sim
        self.rng = rng
        self.started: dict[str, int] = {}  # snapshot id -> trace index where it began
        self.finished: dict[str, int] = {}  # snapshot id -> trace length when complete
        self.at_start: dict[str, dict[str, bool]] = {}
        self.at_end: dict[str, dict[str, bool]] = {}

    def begin(self) -> None:
        sid = f"s{len(self.started) + 1}"
        self.at_start[sid] = _truth(self.sim)
        self.started[sid] = self.sim.time
        self.sim.step(StartSnapshot(self.rng.choice(self.sim.network.processes), sid))

    def step(self, action: Action) -> None:
        events = self.sim.trace.events
        seen = len(events)
        self.sim.step(action)
        for e in events[seen:]:
            if isinstance(e, SnapshotComplete) and e.snapshot_id not in self.finished:
                self.finished[e.snapshot_id] = self.sim.time
                self.at_end[e.snapshot_id] = _truth(self.sim)


def stability_sweep(runs: int = 200, processes: int = 4, seed: int = 6) -> StabilitySweep:
    """Test the two guarantees on many random runs of the ``requests`` application.

    In each run, every process asks a random other process with probability one half,
    all at the start (after that a process only reacts to messages, so termination is
    stable); messages are then delivered in a random order, with snapshots begun at
    random moments and one more after everything has settled. For each snapshot the
    verdict on its recorded state (up to four snapshots per run while messages are
    moving) is compared with the true state when it began and
    when it completed.

    >>> result = stability_sweep(runs=20, seed=1)
    >>> result.yes_but_false_at_end, result.flips
    ({'termination': 0, 'deadlock': 0}, {'termination': 0, 'deadlock': 0})
    """
    rng = random.Random(seed)
    names = [f"P{k}" for k in range(1, processes + 1)]
    counts: dict[str, dict[str, int]] = {
        key: dict.fromkeys(_PREDICATES, 0)
        for key in (
            "said_yes",
            "yes_but_false_at_end",
            "true_at_start",
            "no_but_true_at_start",
            "no_but_true_at_end",
            "pairs",
            "flips",
        )
    }
    total = 0
    for _ in range(runs):
        sim = Simulator(Network(names), app="requests")
        for p in names:
            if rng.random() < 0.5:
                sim.step(Send(p, rng.choice([q for q in names if q != p]), "request"))
        run = _SweepRun(sim, rng)
        scheduler = RandomOrder(rng.randrange(2**31))
        while True:
            if len(run.started) < 4 and rng.random() < 0.2:
                run.begin()
            action = scheduler.choose(sim)
            if action is None:
                break
            run.step(action)
        run.begin()  # one more once everything has been delivered
        while (action := scheduler.choose(sim)) is not None:
            run.step(action)
        started, finished, at_start, at_end = run.started, run.finished, run.at_start, run.at_end
        total += len(started)
        verdicts = {
            sid: {name: f(sim, sid).holds for name, f in _PREDICATES.items()} for sid in started
        }
        for name in _PREDICATES:
            for sid in started:
                yes = verdicts[sid][name]
                counts["said_yes"][name] += yes
                counts["yes_but_false_at_end"][name] += yes and not at_end[sid][name]
                counts["true_at_start"][name] += at_start[sid][name]
                counts["no_but_true_at_start"][name] += at_start[sid][name] and not yes
                counts["no_but_true_at_end"][name] += at_end[sid][name] and not yes
                if not yes:
                    continue
                for later in started:
                    if started[later] >= finished[sid]:
                        counts["pairs"][name] += 1
                        counts["flips"][name] += not verdicts[later][name]
    return StabilitySweep(runs, total, **counts)


# ---------------------------------------------------------------------- checkers


def _no_answer(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


def check_in_transit(sim: Simulator, answer: Any, snapshot_id: str = "s1") -> Feedback:
    """How much of the conserved quantity did the snapshot record in transit?

    The learner sees only the recorded process states and the total at the start.

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "bank",
    ...     "initial": {"P1": 10}, "steps": [{"do": "send", "from": "P1", "to": "P2",
    ...     "payload": 4}, {"do": "snapshot", "at": "P2"}, {"do": "run"}]}))
    >>> print(check_in_transit(sim, 6))  # doctest: +ELLIPSIS
    ✗ 6 is what the processes hold, not what is travelling. Hint: The total is conserved...
    """
    result = conservation(sim, snapshot_id)
    unit = "tokens" if not isinstance(sim.app, Bank) else "units"
    initial = result.details.get("initial", 0)
    held = result.details.get("processes", 0)
    moving = result.details.get("channels", 0)
    hint = (
        "The total is conserved: what the processes recorded plus what the channels "
        f"recorded is what there was at the start ({initial})."
    )
    if _no_answer(answer):
        return Feedback(False, "No answer yet.", hint)
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, f"Give a whole number of {unit}, not {answer!r}.", hint)
    if answer == moving:
        snap = sim.snapshot(snapshot_id)
        where = "; ".join(
            f"{_messages_text(sim.app, msgs)} on {name}"
            for name, msgs in snap.channels.items()
            if msgs
        )
        return Feedback(
            True, f"{moving} {unit} in transit: right. The channels recorded {where or 'nothing'}."
        )
    if answer == held and held != moving:
        return Feedback(
            False, f"{answer} is what the processes hold, not what is travelling.", hint
        )
    if answer == initial and initial != moving:
        return Feedback(False, f"{answer} is the total at the start.", hint)
    if answer == -moving:
        return Feedback(False, f"{answer}: mind the sign.", "Start minus what the processes hold.")
    return Feedback(False, f"{answer} {unit} is not it.", hint)


def _verdict_feedback(
    sim: Simulator,
    answer: Any,
    snapshot_id: str,
    name: str,
    result: PredicateResult,
    wrong_yes: str,
    wrong_no: str,
) -> Feedback:
    question = f"Will snapshot {snapshot_id} report {name}?"
    if _no_answer(answer):
        return Feedback(False, "No answer yet.", f"{question} Answer True or False.")
    if not isinstance(answer, bool):
        return Feedback(False, f"Answer True or False, not {answer!r}.")
    if answer != result.holds:
        return Feedback(
            False,
            f"Snapshot {snapshot_id} {'does not report' if answer else 'reports'} {name}.",
            wrong_yes if answer else wrong_no,
        )
    begun = next(
        i
        for i, a in enumerate(sim.trace.actions)
        if a.kind == SNAPSHOT and (a.label or "s1") == snapshot_id
    )
    at_start = _PREDICATES[name](sim, state_at(sim, begun)).holds
    if at_start:
        why = f"It already held when {snapshot_id} began, so the recorded state had to show it."
    elif result.holds:
        why = (
            f"It did not hold yet when {snapshot_id} began: it set in while the snapshot "
            "was being taken, and the recorded state lies between the start and the end."
        )
    else:
        why = f"It did not hold when {snapshot_id} began either."
    return Feedback(True, f"Right: {result.reason}. {why}")


def check_termination(sim: Simulator, answer: Any, snapshot_id: str) -> Feedback:
    """Will this snapshot report termination? ``answer`` is ``True`` or ``False``.

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "requests",
    ...     "steps": [{"do": "send", "from": "P1", "to": "P2", "payload": "request"},
    ...               {"do": "snapshot", "at": "P1"}, {"do": "run"}]}))
    >>> print(check_termination(sim, False, "s1"))  # doctest: +ELLIPSIS
    ✓ Right: P1 is still active. It did not hold when s1 began either.
    """
    return _verdict_feedback(
        sim,
        answer,
        snapshot_id,
        "termination",
        termination(sim, snapshot_id),
        "Look for a process that recorded its state while it was still waiting, or a "
        "channel whose recorded state holds a message.",
        "Each process records when its first marker arrives, not when the snapshot "
        "begins. By then, had its reply already arrived? And was anything recorded on "
        "a channel?",
    )


def check_deadlock(sim: Simulator, answer: Any, snapshot_id: str) -> Feedback:
    """Will this snapshot report a deadlock? ``answer`` is ``True`` or ``False``.

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "requests",
    ...     "steps": [{"do": "send", "from": "P1", "to": "P2", "payload": "request"},
    ...               {"do": "send", "from": "P2", "to": "P1", "payload": "request"},
    ...               {"do": "run"}, {"do": "snapshot", "at": "P1"}, {"do": "run"}]}))
    >>> print(check_deadlock(sim, True, "s1"))  # doctest: +ELLIPSIS
    ✓ Right: deadlock: P1 waits for P2 waits for P1. It already held when s1 began...
    """
    result = deadlock(sim, snapshot_id)
    return _verdict_feedback(
        sim,
        answer,
        snapshot_id,
        "deadlock",
        result,
        "The recorded states alone may form a cycle of waits, but look at the recorded "
        "channels too: is a message on its way to one of the waiting processes? It will "
        "wake that process up.",
        "Follow the 'waiting for' arrows between the recorded states. Does one come back "
        "to where it started, with no message recorded on the way to any of them?",
    )


# ------------------------------------------------ the lattice: possibly, definitely

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
        f"{_messages_text(app, msgs)} on {name}" for name, msgs in state.channels.items() if msgs
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


def _cuts(cuts: Sequence[Cut]) -> str:
    named = ["(" + ", ".join(map(str, c)) + ")" for c in cuts]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def _arrows(cuts: Sequence[Cut]) -> str:
    return " → ".join("(" + ", ".join(map(str, c)) + ")" for c in cuts)


def check_modality(
    lattice: CutLattice,
    answer: Any,
    predicate: Predicate = p1_and_p3_hold_none,
    name: str = "P1 and P3 both hold no token",
) -> Feedback:
    """Is ``predicate`` true ``"never"``, ``"possibly"`` or ``"definitely"`` in this run?

    The answer is the strongest that is true: *definitely* implies *possibly*. A wrong
    answer gets a hint at the reasoning, not the answer. Here two processes swap tokens,
    so for a moment both hold none, whatever the order of the events:

    >>> from snapshotlib.checks.lattice import cut_lattice
    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "tokens",
    ...     "initial": {"P1": 1, "P2": 1}, "steps": [
    ...     {"do": "send", "from": "P1", "to": "P2", "payload": 1},
    ...     {"do": "send", "from": "P2", "to": "P1", "payload": 1}, {"do": "run"}]}))
    >>> both_empty = lambda s: s.processes["P1"] == 0 and s.processes["P2"] == 0
    >>> print(check_modality(cut_lattice(sim), "definitely", both_empty, "both empty"))
    ... # doctest: +ELLIPSIS
    ✓ Right: definitely. 'both empty' holds at (1, 1), and every order of the events ...
    >>> print(check_modality(cut_lattice(sim), "possibly", both_empty, "both empty"))
    ... # doctest: +ELLIPSIS
    ✗ 'possibly' is not it. Hint: You found where it holds; now try to draw a path ...
    """
    options = f"{MODALITIES[0]!r}, {MODALITIES[1]!r} or {MODALITIES[2]!r}"
    find = (
        f"First find the nodes where '{name}': a node's counts tell you which events each "
        "process has taken, so what it holds. Look at every node, not only those on the "
        "run's own path."
    )
    if answer is None or answer is Ellipsis:
        return Feedback(False, "No answer yet.", f"Answer {options}. {find}")
    if not isinstance(answer, str) or answer.strip().lower() not in MODALITIES:
        return Feedback(False, f"Answer {options}, not {answer!r}.", find)
    answer = answer.strip().lower()
    where = lattice.holding(predicate)
    possibly, definitely = lattice.possibly(predicate), lattice.definitely(predicate)
    truth = "definitely" if definitely.holds else "possibly" if possibly.holds else "never"
    if answer == truth:
        if truth == "never":
            return Feedback(True, f"Right: '{name}' holds at none of the {len(lattice)} cuts.")
        if truth == "possibly":
            return Feedback(
                True,
                f"Right: possibly, not definitely. '{name}' holds at {_cuts(where)}, but "
                f"the order {_arrows(definitely.witness)} never passes through "
                f"{'it' if len(where) == 1 else 'them'}.",
            )
        edge = definitely.witness
        return Feedback(
            True,
            f"Right: definitely. '{name}' holds at {_cuts(where)}, and every order of the "
            "events (every path from the bottom to the top) passes through "
            f"{'' if len(edge) == 1 else 'one of '}{_cuts(edge)}.",
        )
    if answer == "never":
        hint = (
            f"{find} A cut where it holds need not be one the run passed through: every "
            "consistent cut is a state it could have passed through."
        )
    elif truth == "never":
        hint = (
            f"Check each node where you think it holds: is that cut consistent (in the "
            f"lattice at all)? {find}"
        )
    elif answer == "definitely":
        hint = (
            "'Definitely' needs every path from the bottom to the top to pass through a "
            "node where it holds. Try to draw one that does not, one event at a time; the "
            "run's own order is a good first try."
        )
    else:
        hint = (
            "You found where it holds; now try to draw a path from the bottom to the top "
            "that avoids all those nodes, one event at a time. Where does it get stuck? "
            "Think of which receive must come first, and what the processes hold just "
            "before it."
        )
    return Feedback(False, f"'{answer}' is not it.", hint)

"""Lesson 02, Chandy–Lamport step by step: text views of a run and the try-it checks.

The text views print what the explorer shows, as plain deterministic text (the
notebook compares it with its stored output): :func:`status` (who has recorded, what
is in flight, which channels are being recorded), :func:`snapshot_text` (the assembled
global snapshot), :func:`parts_done` (when each process finished its part) and, for
the recorded state that never occurred, :func:`states_table` and
:func:`reordering_text`.

The checks answer the lesson's try-it questions by asking the engine, never by
re-implementing the rules: each replays the learner's run on a copy of the simulator,
lets it go on, and compares. Wrong answers get a hint that names the rule involved;
the right answer, explained, is folded under *Show answer*.
:func:`expected_answers` gives one right answer per try-it, for the lesson's tests.

>>> from snapshotlib import Network, Simulator, Send, StartSnapshot
>>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 3, "P2": 0})
>>> sim.step(Send("P1", "P2", 1, label="x"))
>>> sim.step(StartSnapshot("P2", "s1"))
>>> print(check_channel_state(["x"], sim, "P1->P2"))
✗ The recorded state of P1->P2 is not settled yet: P1 has not recorded its state for s1.
>>> sim.step(Deliver(Channel("P2", "P1")))  # P1 records: x is ahead of its marker
>>> print(check_channel_state(["x"], sim, "P1->P2"))
✓ Right: P2 will record x on P1->P2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..actions import Deliver
from ..algorithms.chandy_lamport import ChandyLamport
from ..checks.commutation import ReorderedRun, check_commutation
from ..checks.predicates import conservation
from ..formats.scenario import EXAMPLES, load_scenario, run_scenario
from ..model import Channel
from ..simulator import Simulator
from ..trace import APP, CONTROL, INTERNAL, NOT_RECEIVED, SEND, SNAPSHOT, Trace
from .feedback import Feedback, is_blank, no_answer_yet

#: the example scenarios of the course (in a checkout of the repository)
SCENARIOS = EXAMPLES

__all__ = [
    "SCENARIOS",
    "Moment",
    "check_channel_state",
    "check_in_transit",
    "check_occurred",
    "check_recording_after_marker",
    "describe_action",
    "expected_answers",
    "moments",
    "occurrences",
    "parts_done",
    "recorded_moment",
    "reordering_text",
    "replay",
    "snapshot_text",
    "states_table",
    "status",
]


# ------------------------------------------------------------------ replaying
def replay(sim: Simulator, upto: int | None = None) -> Simulator:
    """An independent copy of a Chandy–Lamport run (its first ``upto`` actions).

    Everything is deterministic, so the copy has the same message ids, states and
    snapshots; the lesson's checks let the copy go on without touching ``sim``.
    """
    if not isinstance(sim.algorithm, ChandyLamport):
        raise ValueError(f"lesson 02 replays Chandy–Lamport runs, not {sim.algorithm.name}")
    return sim.fork(upto)


# ------------------------------------------------------------------ text views
def _message(trace: Trace, m: int, payload: bool = True) -> str:
    msg = trace.messages[m]
    if msg.kind != APP:
        return f"{msg.kind} {msg.tag}"
    name = trace.message_name(m)
    return f"{name}({msg.payload})" if payload and msg.payload is not None else name


def describe_action(sim: Simulator, index: int) -> str:
    """One action of the trace in words.

    >>> from snapshotlib import Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2"]))
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> describe_action(sim, 0)
    'P1 starts snapshot s1'
    """
    trace = sim.trace
    a = trace.actions[index]
    if a.kind == SNAPSHOT:
        return f"{a.process} starts snapshot {a.label}"
    if a.kind == INTERNAL:
        return f"{a.process}: internal event {trace.action_name(index)}"
    channel = sim.network.channels[a.channel]
    if a.kind == SEND:
        return f"{a.process} sends {_message(trace, a.message)} to {channel.dst}"
    if a.kind == CONTROL:
        return f"{a.process} accepts the {_message(trace, a.message)} from {channel.src}"
    return f"{a.process} receives {_message(trace, a.message)} from {channel.src}"


def _shown(described: Any) -> str:
    if isinstance(described, list):
        return ", ".join(described) or "(no events)"
    return str(described)


def _value(sim: Simulator, state: Any, events: Iterable[str]) -> str:
    return _shown(sim.app.describe(state, tuple(events)))


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def status(sim: Simulator, snapshot_id: str = "s1") -> str:
    """Where snapshot ``snapshot_id`` stands: processes, channels, what is in flight.

    >>> from snapshotlib import Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 2})
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> print(status(sim))
    after action 1: P1 starts snapshot s1
    process  colour  now  recorded  its input channels
    P1       red     2    2         recording P2->P1
    P2       white   0    -         -
    channel  in flight (head first)  recorded for s1
    P1->P2   marker s1               -
    P2->P1   -                       recording: nothing yet
    """
    trace = sim.trace
    snap = sim.snapshot(snapshot_id) if snapshot_id in sim.snapshot_ids() else None
    head = f"after action {sim.time}: {describe_action(sim, sim.time - 1)}" if sim.time else "start"
    rows = [["process", "colour", "now", "recorded", "its input channels"]]
    for p in sim.network.processes:
        now = _value(sim, sim.states[p], trace.labels_before(p, sim.time))
        part = snap.processes.get(p) if snap is not None else None
        if snap is None or part is None:
            rows.append([p, "white", now, "-", "-"])
            continue
        recorded = _value(sim, part.state, part.events)
        inputs = [str(sim.network.channels[i]) for i in sim.input_channels(p)]
        open_ = [name for name in inputs if not snap.closed(name)]
        done = "done: a marker on every input" if not open_ else "recording " + ", ".join(open_)
        rows.append([p, "red", now, recorded, done])
    lines = [head, *_table(rows)]
    rows = [["channel", "in flight (head first)", f"recorded for {snapshot_id}"]]
    for i, c in enumerate(sim.network.channels):
        flight = ", ".join(_message(trace, m) for m in sim.queues[i]) or "-"
        if snap is None or str(c) not in snap.channels:
            rec = "-"
        else:
            got = ", ".join(_message(trace, m) for m in snap.message_ids(str(c)))
            if snap.closed(str(c)):
                rec = f"closed: {got or 'empty'}"
            else:
                rec = f"recording: {got or 'nothing yet'}"
        rows.append([str(c), flight, rec])
    return "\n".join(lines + _table(rows))


def snapshot_text(sim: Simulator, snapshot_id: str = "s1") -> str:
    """The global snapshot as assembled from every process's part, with its totals."""
    snap = sim.snapshot(snapshot_id)
    verdict = "complete" if snap.complete else "in progress"
    who = ", ".join(snap.initiators)
    lines = [f"snapshot {snap.id}, started by {who}: {verdict}"]
    rows = []
    for p, rec in snap.processes.items():
        events = f"(events so far: {', '.join(rec.events)})" if rec.events else "(no events yet)"
        rows.append([f"  {p}", _value(sim, rec.state, rec.events), events])
    for name, msgs in snap.channels.items():
        shown = ", ".join(_message(sim.trace, m.id) for m in msgs) or "empty"
        rows.append([f"  {name}", shown, ""])
    lines += _table(rows)
    if sim.app.conserved and snap.complete:
        lines.append(f"  {conservation(sim, snap).reason}")
    return "\n".join(lines)


def parts_done(sim: Simulator, snapshot_id: str = "s1") -> str:
    """When each process finished its part: the action that brought its last marker."""
    snap = sim.snapshot(snapshot_id)
    finished = {}
    for p in sim.network.processes:
        inputs = sim.input_channels(p)
        if not snap.part_done(p):
            continue
        arrivals = [
            k
            for k, a in enumerate(sim.trace.actions)
            if a.kind == CONTROL
            and a.channel in inputs
            and sim.trace.messages[a.message].tag == snapshot_id
        ]
        finished[p] = max(arrivals) + 1 if arrivals else snap.red_from[p] + 1
    lines = [
        f"{p} finished its part at action {t}: {describe_action(sim, t - 1)}"
        for p, t in sorted(finished.items(), key=lambda item: item[1])
    ]
    waiting = [p for p in sim.network.processes if p not in finished]
    if waiting:
        lines.append(f"still waiting for markers: {', '.join(waiting)}")
    return "\n".join(lines)


# ---------------------------------------------- the recorded state and the run
@dataclass(frozen=True)
class Moment:
    """A global state: each process's state and the messages in each channel.

    ``time`` is the number of actions taken (``-1`` for a recorded state);
    ``channels`` holds message ids, so two messages with equal contents differ.
    """

    time: int
    what: str
    processes: tuple[tuple[str, Any], ...]
    channels: tuple[tuple[str, tuple[int, ...]], ...]

    def same_state(self, other: Moment) -> bool:
        return self.processes == other.processes and self.channels == other.channels


def _moment(sim: Simulator, what: str) -> Moment:
    trace = sim.trace
    procs = tuple(
        (p, sim.app.describe(sim.states[p], tuple(trace.labels_before(p, sim.time))))
        for p in sim.network.processes
    )
    chans = tuple(
        (str(c), tuple(m for m in sim.queues[i] if trace.messages[m].kind == APP))
        for i, c in enumerate(sim.network.channels)
    )
    return Moment(sim.time, what, procs, chans)


def moments(sim: Simulator) -> list[Moment]:
    """The global state at every moment of the run: at the start and after each action."""
    copy = replay(sim, 0)
    out = [_moment(copy, "start")]
    for i in range(sim.time):
        copy.step(sim.action(i))
        out.append(_moment(copy, describe_action(copy, i)))
    return out


def recorded_moment(sim: Simulator, snapshot_id: str = "s1") -> Moment:
    """The state snapshot ``snapshot_id`` recorded, as a :class:`Moment` (``time`` -1)."""
    snap = sim.snapshot(snapshot_id)
    procs = tuple(
        (p, sim.app.describe(snap.processes[p].state, snap.processes[p].events))
        for p in sim.network.processes
    )
    chans = tuple((name, tuple(m.id for m in msgs)) for name, msgs in snap.channels.items())
    return Moment(-1, f"recorded by {snapshot_id}", procs, chans)


def occurrences(sim: Simulator, snapshot_id: str = "s1") -> list[int]:
    """The moments (numbers of actions taken) at which the recorded state was the state."""
    recorded = recorded_moment(sim, snapshot_id)
    return [m.time for m in moments(sim) if m.same_state(recorded)]


def states_table(sim: Simulator, snapshot_id: str = "s1") -> str:
    """Every global state of the run, then the recorded one; equal ones are marked."""
    recorded = recorded_moment(sim, snapshot_id)
    header = ["moment", *(p for p, _ in recorded.processes), *(c for c, _ in recorded.channels)]
    rows = [header]

    def row(m: Moment) -> list[str]:
        label = m.what if m.time < 0 else f"{m.time:>2} {m.what}"
        same = " <- same" if m.time >= 0 and m.same_state(recorded) else ""
        procs = [_shown(v) for _, v in m.processes]
        chans = [", ".join(sim.trace.message_name(x) for x in ids) or "-" for _, ids in m.channels]
        return [label, *procs, *chans[:-1], chans[-1] + same]

    rows += [row(m) for m in moments(sim)]
    rows.append(row(recorded))
    found = occurrences(sim, snapshot_id)
    verdict = (
        f"the recorded state occurred after action(s) {', '.join(map(str, found))}"
        if found
        else "the recorded state occurred at no moment of the run"
    )
    return "\n".join([*_table(rows), verdict])


def _reordered(sim: Simulator, order: Iterable[int]) -> tuple[Simulator, list[Moment]]:
    """Run the application actions ``order`` (trace indices) afresh, in that order.

    The moments returned name messages by their ids in ``sim``, so they compare with
    :func:`recorded_moment`. The actions must form a legal run (each message received
    after it was sent, FIFO kept), as Dijkstra's reordering does.
    """
    run = ReorderedRun(sim)

    def moment(what: str) -> Moment:
        m = _moment(run.sim, what)
        chans = tuple((c, tuple(run.old_id[x] for x in ids)) for c, ids in m.channels)
        return Moment(m.time, what, m.processes, chans)

    out = [moment("start")]
    for i in order:
        problem = run.take(i)
        if problem is not None:
            raise ValueError(problem)
        out.append(moment(describe_action(sim, i)))
    return run.sim, out


def reordering_text(sim: Simulator, snapshot_id: str = "s1") -> str:
    """The run's actions coloured for ``snapshot_id``, then Dijkstra's reordering of them
    (all white actions first) with the global state after each action."""
    result = check_commutation(sim, snapshot_id)
    red = set(result.order[result.n_white :])
    colour = {i: ("red" if i in red else "white") for i in result.original}
    lines = [f"the run, application actions only, coloured for {snapshot_id}:"]
    lines += [f"  {describe_action(sim, i)}: {colour[i]}" for i in result.original]
    lines.append(f"inversions (a red action before a white one): {result.inversions}")
    if not result.holds:
        return "\n".join([*lines, f"no reordering: {result.reason}"])
    lines.append("the same actions, white ones first, and the state after each:")
    recorded = recorded_moment(sim, snapshot_id)
    _, states = _reordered(sim, result.order)
    final = _moment(sim, "")
    header = ["", "", *(p for p, _ in recorded.processes), *(c for c, _ in recorded.channels), ""]
    rows = [header]
    for k, m in enumerate(states):
        what = "start" if k == 0 else f"{m.what}"
        col = "" if k == 0 else colour[result.order[k - 1]]
        procs = [_shown(v) for _, v in m.processes]
        chans = [", ".join(sim.trace.message_name(x) for x in ids) or "-" for _, ids in m.channels]
        note = ""
        if m.same_state(recorded):
            note = f"<- {snapshot_id}'s recorded state"
        elif k == len(states) - 1 and m.same_state(final):
            note = "<- the run's final state"
        rows.append([f"{k:>2} {what}", col, *procs, *chans, note])
    lines += ["  " + r for r in _table(rows)]
    lines.append(f"Dijkstra's argument holds: {result.reason}")
    return "\n".join(lines)


# ------------------------------------------------------------------ the checks
def _names(answer: Any) -> list[str] | None:
    """A learner's list of names: one string, or any iterable of strings."""
    if answer is None or answer is Ellipsis:
        return None
    if isinstance(answer, str):
        answer = [answer]
    return [str(a).replace("→", "->").replace(" ", "") for a in answer]


def _why(sim: Simulator, snapshot_id: str, m: int) -> str:
    """Where message ``m`` stands with respect to snapshot ``snapshot_id``, in words."""
    trace = sim.trace
    red_from = sim.red_from(snapshot_id)
    msg = trace.messages[m]
    c = sim.network.channels[msg.channel]
    name = trace.message_name(m)
    src_red = red_from.get(c.src)
    if src_red is not None and msg.sent_by >= src_red:
        return (
            f"{name} was sent after {c.src} recorded for {snapshot_id}, so it travels behind "
            f"{c.src}'s {snapshot_id} marker: it is in no part of {snapshot_id}"
        )
    got = trace.received_by[m]
    dst_red = red_from.get(c.dst)
    if got != NOT_RECEIVED and (dst_red is None or got < dst_red):
        return (
            f"{name} arrived before {c.dst} recorded for {snapshot_id}, so {snapshot_id} "
            f"already counts it in {c.dst}'s recorded state"
        )
    return (
        f"{name} was sent before {c.src} recorded for {snapshot_id} and arrives after "
        f"{c.dst} did: for {snapshot_id} it was in transit"
    )


def check_recording_after_marker(answer: Any, sim: Simulator, channel: str) -> Feedback:
    """Which channels will the receiver be recording right after the marker at the head
    of ``channel`` arrives, if it is its first marker of that snapshot?

    Parameters
    ----------
    answer
        Channel names such as ``["P1->P2"]`` (``"P1→P2"`` is read the same).
    sim
        The run so far; it is not changed (the delivery happens on a copy).
    channel
        The channel whose head is the marker, e.g. ``"P3->P2"``.

    Examples
    --------
    >>> from snapshotlib import Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2", "P3"]))
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> print(check_recording_after_marker(["P3->P2"], sim, "P1->P2"))
    ✓ Right: right after its first s1 marker P2 is recording P3->P2; ...
    """
    c = Channel.parse(channel)
    copy = replay(sim)
    head = copy.in_flight(c)
    if not head or copy.trace.messages[head[0]].kind == APP:
        raise ValueError(f"the head of {c} is not a marker")
    snapshot_id = copy.trace.messages[head[0]].tag or "s1"
    if c.dst in copy.red_from(snapshot_id):
        raise ValueError(f"{c.dst} has already recorded for {snapshot_id}: not a first marker")
    copy.step(Deliver(c))
    pending = copy.snapshot(snapshot_id).pending_channels
    expected = [name for name in pending if Channel.parse(name).dst == c.dst]
    names = _names(answer)
    what = f"right after its first {snapshot_id} marker {c.dst} is recording"
    if names is None:
        return no_answer_yet(hint="List the channels by name, e.g. ['P2->P3'].")
    why = f"{what} {', '.join(expected) or 'nothing'}; {c} is closed at once, recorded empty."
    if sorted(set(names)) == sorted(expected):
        return Feedback(True, f"Right: {why}")
    reveal = f"{expected}: {why[0].upper()}{why[1:]}"
    known = {str(x) for x in copy.network.channels}
    shown = ", ".join(names) or "nothing"
    for name in names:
        if name not in known:
            return Feedback(
                False,
                f"{name!r} is not a channel of this network.",
                f"Write channels as 'SRC->DST'; this network has {', '.join(sorted(known))}.",
                reveal,
            )
    hint = ""
    if str(c) in names:
        hint = (
            f"{c} brought the marker: everything sent on it before the marker has already "
            f"arrived and is part of {c.dst}'s state, so it is recorded empty and closed."
        )
    elif any(Channel.parse(n).src == c.dst for n in names):
        hint = (
            f"A process records the channels that lead into it; on the channels that leave "
            f"{c.dst} it sends markers."
        )
    elif any(Channel.parse(n).dst != c.dst for n in names):
        hint = f"Only the channels that lead into {c.dst} matter here."
    else:
        hint = (
            f"{c.dst} starts recording every input channel except the one the marker came "
            f"on: which channels lead into {c.dst}?"
        )
    return Feedback(False, f"Not quite: {shown} is not what {c.dst} records.", hint, reveal)


def check_channel_state(
    answer: Any, sim: Simulator, channel: str, snapshot_id: str = "s1"
) -> Feedback:
    """What will snapshot ``snapshot_id`` record on ``channel``? (Message labels, in order.)

    The question is asked once both ends of ``channel`` have recorded, when the answer
    no longer depends on what happens next; the check runs a copy of ``sim`` to the end.

    Examples
    --------
    >>> from snapshotlib import Network, Simulator, Send, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P2": 1})
    >>> sim.step(Send("P2", "P1", 1, label="t"))
    >>> sim.step(StartSnapshot("P2", "s1"))
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> print(check_channel_state([], sim, "P2->P1"))
    ✗ Not quite: that is not what P1 will record on P2->P1. Hint: Something is missing. ...
    """
    c = Channel.parse(channel)
    red_from = sim.red_from(snapshot_id) if snapshot_id in sim.snapshot_ids() else {}
    for end in (c.src, c.dst):
        if end not in red_from:
            return Feedback(
                False,
                f"The recorded state of {c} is not settled yet: {end} has not recorded its "
                f"state for {snapshot_id}.",
            )
    copy = replay(sim)
    copy.run()
    trace = copy.trace
    msgs = copy.snapshot(snapshot_id).channels[str(c)]
    expected = [trace.message_name(m.id) for m in msgs]
    shown = ", ".join(expected) or "nothing"
    names = _names(answer)
    if names is None:
        return no_answer_yet(
            hint="Give the labels of the messages in order, e.g. ['u', 'v'], or []."
        )
    if names == expected:
        return Feedback(True, f"Right: {c.dst} will record {shown} on {c}.")
    sent = {
        trace.message_name(m): m
        for m, r in enumerate(trace.messages)
        if r.kind == APP and r.channel == copy.network.channel_index(c)
    }
    reveal = f"{expected}: {c.dst} will record {shown} on {c}. " + " ".join(
        _why(copy, snapshot_id, m) + "." for m in sent.values()
    )
    unknown = [n for n in names if n not in sent]
    if unknown:
        return Feedback(
            False,
            f"No message {unknown[0]!r} travels on {c}.",
            f"The messages sent on {c} are {', '.join(sent) or 'none'}; markers are never "
            "recorded.",
            reveal,
        )
    extra = [n for n in names if n not in expected]
    if extra:
        hint = _why(copy, snapshot_id, sent[extra[0]]) + "."
    elif any(n not in names for n in expected):
        hint = (
            f"Something is missing. Which messages on {c} were sent before {c.src} recorded "
            f"(so they travel ahead of its marker) and arrive after {c.dst} recorded?"
        )
    else:
        hint = "A channel's state is a sequence, in the order the messages were sent."
    return Feedback(False, f"Not quite: that is not what {c.dst} will record on {c}.", hint, reveal)


def check_in_transit(answer: Any, sim: Simulator, message: str) -> Feedback:
    """For which snapshots will ``message`` (a label) be recorded as in transit?

    The check runs a copy of ``sim`` until nothing is in flight and reads every
    snapshot's channel states.

    Examples
    --------
    >>> from snapshotlib import Network, Simulator, Send, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 1})
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> sim.step(Send("P1", "P2", 1, label="m"))
    >>> print(check_in_transit(["s1"], sim, "m"))
    ✗ Not quite: that is not the list of snapshots for m. Hint: m was sent after P1 ...
    """
    copy = replay(sim)
    copy.run()
    trace = copy.trace
    ids = [m for m, r in enumerate(trace.messages) if r.kind == APP and r.label == message]
    if not ids:
        raise ValueError(f"no message labelled {message!r} in this run")
    m = ids[0]
    snaps = copy.snapshots()
    expected = [
        s
        for s, snap in snaps.items()
        if any(x.id == m for xs in snap.channels.values() for x in xs)
    ]
    shown = ", ".join(expected) or "no snapshot"
    names = _names(answer)
    if names is None:
        return no_answer_yet(hint="Give snapshot ids, e.g. ['s1'].")
    if sorted(set(names)) == sorted(expected):
        return Feedback(True, f"Right: {message} is recorded in transit by {shown}.")
    reveal = f"{expected}: {message} is recorded in transit by {shown}. " + " ".join(
        _why(copy, s, m) + "." for s in snaps
    )
    unknown = [n for n in names if n not in snaps]
    if unknown:
        return Feedback(
            False,
            f"There is no snapshot {unknown[0]!r} in this run.",
            f"The snapshots are {', '.join(snaps)}.",
            reveal,
        )
    extra = [s for s in names if s not in expected]
    if extra:
        hint = _why(copy, extra[0], m) + "."
    else:
        hint = (
            f"Something is missing. For each snapshot, ask: was {message} sent before its "
            "sender recorded for it, and received after its receiver recorded for it?"
        )
    return Feedback(
        False, f"Not quite: that is not the list of snapshots for {message}.", hint, reveal
    )


def check_occurred(
    answer: Any, sim: Simulator, snapshot_id: str = "s1", hint: str = ""
) -> Feedback:
    """Did the state recorded by ``snapshot_id`` occur at some moment of the run?

    ``answer`` is ``True`` or ``False``; ``hint`` is shown when it is wrong (by default,
    how to find out).

    >>> from snapshotlib import Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 1})
    >>> sim.step(StartSnapshot("P1", "s1")); _ = sim.run()
    >>> print(check_occurred(True, sim))
    ✓ Right: the recorded state occurred after action(s) 0, 1, 2, 3.
    """
    if is_blank(answer):
        return no_answer_yet(hint="Answer True or False.")
    if not isinstance(answer, bool):
        return Feedback(False, f"{answer!r} is not True or False.", "Answer True or False.")
    found = occurrences(sim, snapshot_id)
    if found:
        why = f"the recorded state occurred after action(s) {', '.join(map(str, found))}."
    else:
        why = (
            "the recorded state occurred at no moment of the run: compare it with the state "
            "after each action, every process and every channel."
        )
    if answer == bool(found):
        return Feedback(True, f"Right: {why}")
    return Feedback(
        False,
        "Not quite.",
        hint or "Compare the recorded state with the state after each action of the run.",
        f"{bool(found)}: {why}",
    )


def expected_answers() -> dict[str, Any]:
    """One right answer for each try-it of the lesson, by the name of its answer variable.

    The lesson's tests check each against its checker and make sure no output of the
    stored notebook gives it away before the learner has answered.

    >>> expected_answers()["p1_p2_state"]
    ['x']
    """
    step_by_step = load_scenario(SCENARIOS / "02-step-by-step.json")
    two = run_scenario(load_scenario(SCENARIOS / "02-two-snapshots.json"))
    at9 = replay(run_scenario(step_by_step, until=9))
    full = run_scenario(step_by_step)
    return {
        "p2_recording": [
            name for name in at9.snapshot("s1").pending_channels if Channel.parse(name).dst == "P2"
        ],
        "p1_p2_state": [
            full.trace.message_name(m.id) for m in full.snapshot("s1").channels["P1->P2"]
        ],
        "m_in_transit_for": [
            s
            for s, snap in two.snapshots().items()
            if any(x.label == "m" for xs in snap.channels.values() for x in xs)
        ],
        "s1_occurred": bool(occurrences(full)),
    }

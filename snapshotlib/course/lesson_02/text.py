"""Lesson 02 in words: a run step by step, the assembled snapshot, when each part was done,
the moments it could have been. Built from runs of the engine and deterministic, so the
notebook can compare what it prints with its stored output.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...algorithms.chandy_lamport import ChandyLamport
from ...checks.commutation import ReorderedRun, check_commutation
from ...checks.predicates import conservation
from ...formats.scenario import EXAMPLES
from ...simulator import Simulator
from ...snapshot import RecordedProcess
from ...snapshot_text import SnapshotStyle
from ...snapshot_text import snapshot_text as snapshot_lines
from ...trace import APP, CONTROL, INTERNAL, SEND, SNAPSHOT, Trace

#: the example scenarios of the course (in a checkout of the repository)
SCENARIOS = EXAMPLES


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

    def part(p: str, rec: RecordedProcess) -> str:
        events = f"(events so far: {', '.join(rec.events)})" if rec.events else "(no events yet)"
        return f"{_value(sim, rec.state, rec.events)} {events}"

    style = SnapshotStyle(part, message=lambda m: _message(sim.trace, m.id))
    text = snapshot_lines(sim, snap, style)
    if sim.app.conserved and snap.complete:
        text += f"\n  {conservation(sim, snap).reason}"
    return text


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

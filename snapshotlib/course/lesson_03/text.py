"""Lesson 03 in words: the worked example narrated step by step, its snapshot, causal
histories and the token account. Built from runs of the engine and deterministic, so the
notebook can compare what it prints with its stored output.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from ...checks.causality import happens_before, vector_clocks
from ...checks.predicates import conservation
from ...colouring import turned_red
from ...formats.scenario import EXAMPLES, load_scenario, run_scenario
from ...model import Channel
from ...simulator import Simulator
from ...snapshot import RecordedMessage, RecordedProcess
from ...snapshot_text import SnapshotStyle
from ...snapshot_text import snapshot_text as snapshot_lines
from ...trace import (
    APP,
    APP_KINDS,
    CONTROL,
    INTERNAL,
    RECEIVE,
    SEND,
    SNAPSHOT,
    ControlSent,
    PartDone,
    RecordingClosed,
    RecordingStarted,
    SnapshotComplete,
    StateRecorded,
    TraceEvent,
)

#: the example scenarios of the course (package data)
SCENARIOS = EXAMPLES


def worked_example(name: str = "worked-example.json", until: int | None = None) -> Simulator:
    """The worked example, run to the end or for its first ``until`` steps
    (``03-worked-example-token.json``: with a token)."""
    return run_scenario(load_scenario(SCENARIOS / name), until=until)


def channel_name(channel: str | Channel) -> str:
    """``C21`` for the channel ``P2->P1`` (processes named ``P<n>``), else ``P2->P1``.

    >>> channel_name("P2->P1"), channel_name("a->b")
    ('C21', 'a->b')
    """
    text = str(channel)
    found = re.fullmatch(r"P(\d+)->P(\d+)", text)
    return f"C{found.group(1)}{found.group(2)}" if found else text


def _both_names(channel: str | Channel) -> str:
    short = channel_name(channel)
    return f"{short} ({channel})" if short != str(channel) else short


def _list(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "no events yet"


def describe_step(sim: Simulator, snapshot_id: str = "s1") -> str:
    """What the last action of ``sim`` did, and what the snapshot algorithm did with it.

    The line starts with the action's number, which is also the number of the scenario
    step (each scenario step is one action).

    >>> sim = worked_example()
    >>> sim.undo() and sim.undo() and sim.undo() and sim.undo()
    True
    >>> print(describe_step(sim))
    [13] P2→P1 delivers message H to P1 as event D. P1 is recording C21, so H goes into C21's state.
    """
    trace = sim.trace
    if not trace.actions:
        return "[0] nothing has happened yet"
    i = len(trace.actions) - 1
    a = trace.actions[i]
    snap = sim.snapshot(snapshot_id) if snapshot_id in sim.snapshot_ids() else None
    red_from = snap.red_from if snap is not None else {}
    net = sim.network
    head = f"[{i + 1}] "

    def colour(process: str) -> str:
        if turned_red(red_from, process, i):
            return f" {process} has already recorded, so this event is not in the snapshot."
        return f" {process} has not recorded yet: this event will be in its recorded state."

    if a.kind == INTERNAL:
        return f"{head}{a.process} does internal event {trace.action_name(i)}." + colour(a.process)
    if a.kind == SEND:
        ch = net.channels[a.channel]
        return (
            f"{head}{a.process} sends message {trace.message_name(a.message)} to {ch.dst} "
            f"on {channel_name(ch)} (event {trace.action_name(i)})." + colour(a.process)
        )
    if a.kind == RECEIVE:
        ch = net.channels[a.channel]
        name = trace.message_name(a.message)
        text = (
            f"{head}{ch.src}→{ch.dst} delivers message {name} to {a.process} "
            f"as event {trace.action_name(i)}."
        )
        if snap is not None and a.message in snap.message_ids(str(ch)):
            short = channel_name(ch)
            return text + f" {a.process} is recording {short}, so {name} goes into {short}'s state."
        return text + colour(a.process)
    if snap is None:
        return f"{head}{a.process}: {a.kind} (no snapshot {snapshot_id!r})"
    # what the algorithm did in this action, as the events it wrote to the trace say
    events = trace.events_at(i, snapshot_id)
    if a.kind == CONTROL and trace.messages[a.message].tag != snapshot_id:
        ch = net.channels[a.channel]
        return f"{head}{a.process} receives a marker of another snapshot on {channel_name(ch)}."
    turned = next((e for e in events if isinstance(e, StateRecorded)), None)
    if turned is not None:
        return head + _turns_red(sim, turned, events)
    closed = next((e for e in events if isinstance(e, RecordingClosed)), None)
    if a.kind == CONTROL and closed is not None:
        name = channel_name(net.channels[closed.channel])
        state = ", ".join(trace.message_name(m) for m in closed.messages) or "empty"
        text = (
            f"{head}A marker arrives at {a.process} on {name}, not its first: "
            f"{a.process} stops recording {name}, whose state is {state}."
        )
        return text + _progress(a.process, events)
    if a.kind == SNAPSHOT:  # a concurrent snapshot, not the one narrated
        return f"{head}{a.process} starts snapshot {a.label}, not {snapshot_id}."
    if a.kind == CONTROL:  # e.g. Lai–Yang: the channel closes once its white messages are in
        name = channel_name(net.channels[a.channel])
        return f"{head}A marker arrives at {a.process} on {name}, not its first: {name} stays open."
    return f"{head}{a.process}: {a.kind}"


@dataclass(frozen=True)
class Narration:
    """The commentary on some clicks of *Step*: one line per click.

    A notebook shows it as a table whose text wraps; elsewhere it is plain text, each
    line wrapped to 88 columns under its click number.
    """

    lines: tuple[tuple[int, str], ...]

    def __str__(self) -> str:
        return "\n".join(
            textwrap.fill(f"[{n}] {text}", width=88, subsequent_indent=" " * (len(str(n)) + 3))
            for n, text in self.lines
        )

    __repr__ = __str__

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td style='text-align:right;vertical-align:top'>{n}</td>"
            f"<td style='text-align:left'>{html.escape(text)}</td></tr>"
            for n, text in self.lines
        )
        return (
            "<table class='narration'><thead><tr><th>click</th>"
            f"<th style='text-align:left'>what happens</th></tr></thead><tbody>{rows}</tbody>"
            "</table>"
        )


def narrate(first: int, last: int | None = None, name: str = "worked-example.json") -> Narration:
    """The commentary on clicks ``first`` to ``last`` of *Step* (both included).

    It comes from a run of its own, so an explorer on the page is not touched.

    >>> print(narrate(4))
    [4] P1 starts snapshot s1: it records its state (A, B), sends a marker on C12 and C13
        and starts recording C21 and C31.
    """
    last = first if last is None else last
    lines = []
    for n in range(first, last + 1):
        text = describe_step(worked_example(name, until=n))
        lines.append((n, text.split("] ", 1)[1]))
    return Narration(tuple(lines))


def in_flight(sim: Simulator) -> str:
    """What travels on each channel now, the next to arrive first.

    >>> print(in_flight(worked_example(until=6)))  # doctest: +NORMALIZE_WHITESPACE
    C12 (P1->P2): B, marker
    C13 (P1->P3): nothing
    C21 (P2->P1): nothing
    C23 (P2->P3): nothing
    C31 (P3->P1): nothing
    C32 (P3->P2): I, marker
    """
    trace = sim.trace
    lines = []
    for i, c in enumerate(sim.network.channels):
        items = [
            trace.message_name(m) if trace.messages[m].kind == APP else "marker"
            for m in sim.queues[i]
        ]
        lines.append(f"{_both_names(c)}: {', '.join(items) or 'nothing'}")
    return "\n".join(lines)


def _turns_red(sim: Simulator, turned: StateRecorded, events: list[TraceEvent]) -> str:
    """A process recording its state, from the events of that action."""
    net, process, sid = sim.network, turned.process, turned.snapshot_id
    recorded = _list(sim.trace.labels_before(process, turned.action))
    if sim.app.name != "events":  # e.g. tokens: the state is more than the events
        state = sim.snapshot(sid).states[process]
        recorded += f"; state {sim.app.describe(state, ())}"
    outs = " and ".join(
        channel_name(net.channels[e.channel]) for e in events if isinstance(e, ControlSent)
    )
    recording = [
        channel_name(net.channels[e.channel]) for e in events if isinstance(e, RecordingStarted)
    ]
    if turned.via is None:
        text = f"{process} starts snapshot {sid}: it records its state ({recorded})"
    else:
        via = channel_name(net.channels[turned.via])
        text = (
            f"A marker arrives at {process} on {via}, its first: "
            f"{process} records its state ({recorded}), records {via} as empty"
        )
    text += f", sends a marker on {outs}"
    text += (
        f" and starts recording {' and '.join(recording)}."
        if recording
        else " and has no other channel to record."
    )
    return text + _progress(process, events)


def _progress(process: str, events: list[TraceEvent]) -> str:
    """What the action's events say of the process's part and the whole snapshot."""
    if any(isinstance(e, SnapshotComplete) for e in events):
        return f" {process} is done, and so is the whole snapshot."
    if any(isinstance(e, PartDone) and e.process == process for e in events):
        return f" {process} has heard a marker on every input channel: its part is done."
    return ""


#: the two parts of lesson 03's snapshot text, as the lecture notes name them
SECTIONS = (
    "recorded process states (events before recording):",
    "recorded channel states (messages in transit):",
)


def snapshot_text(sim: Simulator, snapshot_id: str = "s1") -> str:
    """The recorded snapshot as plain text: each process's events, each channel's messages.

    Deterministic (processes and channels in the network's order), so a notebook can
    compare it with its stored output.

    >>> print(snapshot_text(worked_example()))  # doctest: +NORMALIZE_WHITESPACE
    snapshot s1, initiated by P1: complete
    recorded process states (events before recording):
      P1: A, B
      P2: F, G, H
      P3: I
    recorded channel states (messages in transit):
      C12 (P1->P2): empty
      C13 (P1->P3): empty
      C21 (P2->P1): H (sent at H, received at D)
      C23 (P2->P3): empty
      C31 (P3->P1): empty
      C32 (P3->P2): empty
    """
    trace = sim.trace
    show_state = sim.app.name != "events"

    def part(p: str, recorded: RecordedProcess) -> str:
        text = ", ".join(recorded.events) or "(no events)"
        if show_state:
            text += f"; state {sim.app.describe(recorded.state, recorded.events)}"
        return text

    def message(m: RecordedMessage) -> str:
        got = trace.received_by[m.id]
        where = f"sent at {trace.action_name(trace.messages[m.id].sent_by)}"
        if got >= 0:
            where += f", received at {trace.action_name(got)}"
        if show_state:
            where += f"; payload {m.payload!r}"
        return f"{trace.message_name(m.id)} ({where})"

    style = SnapshotStyle(part, message, channel_name=_both_names)
    return snapshot_lines(sim, sim.snapshot(snapshot_id), style, SECTIONS)


def causal_history(sim: Simulator, label: str) -> list[str]:
    """The application events that happen before the event labelled ``label``, in trace order.

    >>> causal_history(worked_example(), "G")
    ['A', 'B', 'I', 'F']
    """
    trace = sim.trace
    target = next(
        (i for i, a in enumerate(trace.actions) if a.kind in APP_KINDS and a.label == label),
        None,
    )
    if target is None:
        raise ValueError(f"no event labelled {label!r}")
    clocks = vector_clocks(trace, sim.network.processes)
    return [
        trace.action_name(i)
        for i, a in enumerate(trace.actions)
        if a.kind in APP_KINDS and i != target and happens_before(clocks, i, target)
    ]


def token_account(sim: Simulator, snapshot_id: str = "s1") -> str:
    """Where the recorded tokens are: in processes, in channels, and the two totals.

    >>> print(token_account(worked_example("03-worked-example-token.json")))
    tokens in the recorded process states: P1 0, P2 0, P3 0 -> 0
    tokens in the recorded channel states: C21 (P2->P1) 1 (message H) -> 1
    without the channel states: 0 tokens: the token has vanished
    with the channel states: 1 token, as many as the system holds (1)
    """
    snap = sim.snapshot(snapshot_id)
    app = sim.app
    in_processes = {p: app.amount(r.state) or 0 for p, r in snap.processes.items()}
    carried = []
    for name, msgs in snap.channels.items():
        for m in msgs:
            amount = app.message_amount(m.payload)
            if amount:
                carried.append((name, amount, sim.trace.message_name(m.id)))
    held = sum(in_processes.values())
    moving = sum(a for _, a, _ in carried)
    total = conservation(sim, snap).details.get("initial", 0)
    lines = [
        "tokens in the recorded process states: "
        + ", ".join(f"{p} {n}" for p, n in in_processes.items())
        + f" -> {held}",
        "tokens in the recorded channel states: "
        + (", ".join(f"{_both_names(c)} {a} (message {m})" for c, a, m in carried) or "none")
        + f" -> {moving}",
    ]
    verdict = (
        "the token has vanished" if held < total else "all there" if held == total else "too many"
    )
    lines.append(f"without the channel states: {held} token{'s' * (held != 1)}: {verdict}")
    both = held + moving
    verdict = "as many as the system holds" if both == total else "not what the system holds"
    lines.append(f"with the channel states: {both} token{'s' * (both != 1)}, {verdict} ({total})")
    return "\n".join(lines)

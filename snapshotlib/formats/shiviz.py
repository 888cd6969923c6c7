r"""Export an execution as a ShiViz log file, to load in ShiViz's upload box as is.

ShiViz's upload reads the file's first line as its log-parsing regular expression
(adding ``^`` and ``$`` itself; it runs in multiline mode), the second line as the
delimiter between executions (an empty line: one execution) and the rest as the log.
So the file is :data:`SHIVIZ_REGEX`, an empty line, then one event per line: the host,
its vector clock as compact JSON, and what happened::

    (?<host>\S+) (?<clock>\{\S*\}) (?<event>.*)

    P1 {"P1":1} internal A
    P1 {"P1":2} send B to P2

ShiViz draws an arrow from an event to the first event of another host whose clock
takes in its entry, so each marker send is an event of its own (it increments the
sender's entry) and the marker's receipt merges the clock of that send, as a message
receipt merges its send's: the markers show as arrows next to the messages. (Vector
clocks cannot show a message or marker whose receiver already knew of a later event of
its sender, one that overtook it by another path: ShiViz draws no arrow for it.)

A host is written as it is and read back up to the first space, so process names with
whitespace are refused (:class:`ShivizError`); line breaks in labels become spaces.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..trace import APP, CONTROL, INTERNAL, NOT_RECEIVED, RECEIVE, SEND, SNAPSHOT

if TYPE_CHECKING:
    from ..simulator import Simulator

#: the log-parsing regular expression written on the first line (ShiViz's JavaScript
#: syntax; ShiViz's upload adds ``^`` and ``$`` around it)
SHIVIZ_REGEX = r"(?<host>\S+) (?<clock>\{\S*\}) (?<event>.*)"

#: what the second line says: no delimiter, the file holds one execution
NO_DELIMITER = ""

#: whitespace for JavaScript's ``\s`` (ShiViz runs in a browser) on top of Python's
_JS_SPACE = frozenset("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {
    chr(c) for c in range(0x2000, 0x200B)
}
#: characters that end a line for JavaScript's ``.`` and ``$``
_LINE_BREAKS = ("\r\n", "\n", "\r", "\u2028", "\u2029")


class ShivizError(ValueError):
    """The execution cannot be written as a ShiViz log (says which name and why)."""


@dataclass(frozen=True)
class ShivizEvent:
    """One line of the log: ``host`` did ``text``; ``clock`` omits zero entries."""

    host: str
    clock: tuple[tuple[str, int], ...]
    text: str

    def line(self) -> str:
        """The event as a log line, e.g. ``P1 {"P1":2} send B to P2``."""
        clock = json.dumps(dict(self.clock), separators=(",", ":"))
        return f"{self.host} {clock} {self.text}"


def shiviz_events(sim: Simulator) -> list[ShivizEvent]:
    """Every action of the trace as an event, and every message an action sends besides
    its own (the markers of a snapshot, a reply sent by a receive) as an event of its
    own right after the action: the first one to arrive first.

    Ordering an action's sends by arrival keeps a receiver from learning of a send
    through a faster one of the same action, after which ShiViz would draw no arrow.

    >>> from snapshotlib import Network, Simulator, Send
    >>> sim = Simulator(Network(["a", "b"]))
    >>> sim.step(Send("a", "b", label="hi")); _ = sim.run()
    >>> [e.line() for e in shiviz_events(sim)]
    ['a {"a":1} send hi to b', 'b {"a":1,"b":1} receive hi from a']
    """
    processes = sim.network.processes
    for p in processes:
        if any(c.isspace() or c in _JS_SPACE for c in p):
            raise ShivizError(
                f"process name {p!r} cannot be a ShiViz host: "
                "expected a name without spaces or other whitespace"
            )
    trace = sim.trace
    index = {p: k for k, p in enumerate(processes)}
    current = {p: [0] * len(processes) for p in processes}
    extra: dict[int, list[int]] = {}  # action -> messages it sent besides its own
    for mid, m in enumerate(trace.messages):
        if not (trace.actions[m.sent_by].kind == SEND and m.kind == APP):
            extra.setdefault(m.sent_by, []).append(mid)
    sent_clock: dict[int, list[int]] = {}  # message -> clock of the event that sent it
    events = []

    def event(host: str, text: str, merge: list[int] | None = None) -> list[int]:
        vc = current[host]
        if merge is not None:
            vc[:] = [max(x, y) for x, y in zip(vc, merge, strict=True)]
        vc[index[host]] += 1
        clock = tuple((p, v) for p, v in zip(processes, vc, strict=True) if v)
        events.append(ShivizEvent(host, clock, _one_line(text)))
        return list(vc)

    for i, a in enumerate(trace.actions):
        merge = sent_clock.get(a.message) if a.kind in (RECEIVE, CONTROL) else None
        vc = event(a.process, _describe(sim, i), merge)
        if a.kind == SEND:
            sent_clock[a.message] = vc
        arrival = trace.received_by
        for mid in sorted(extra.get(i, ()), key=lambda m: (arrival[m] == NOT_RECEIVED, arrival[m])):
            sent_clock[mid] = event(a.process, _send_text(sim, mid))
    return events


def to_shiviz(sim: Simulator) -> str:
    r"""The ShiViz file: the regex line, the (empty) delimiter line, one line per event.

    >>> from snapshotlib import Network, Simulator, Send
    >>> sim = Simulator(Network(["a", "b"]))
    >>> sim.step(Send("a", "b", label="hello")); _ = sim.run()
    >>> print(to_shiviz(sim), end="")
    (?<host>\S+) (?<clock>\{\S*\}) (?<event>.*)
    <BLANKLINE>
    a {"a":1} send hello to b
    b {"a":1,"b":1} receive hello from a
    """
    lines = [SHIVIZ_REGEX, NO_DELIMITER, *(e.line() for e in shiviz_events(sim))]
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    for brk in _LINE_BREAKS:
        text = text.replace(brk, " ")
    return text.strip()


def _control_name(kind: str, tag: str | None) -> str:
    return kind if tag is None else f"{kind} {tag}"


def _send_text(sim: Simulator, mid: int) -> str:
    m = sim.trace.messages[mid]
    what = sim.trace.message_name(mid) if m.kind == APP else _control_name(m.kind, m.tag)
    return f"send {what} to {sim.network.channels[m.channel].dst}"


def _describe(sim: Simulator, i: int) -> str:
    trace = sim.trace
    a = trace.actions[i]
    if a.kind == INTERNAL:
        return f"internal {trace.action_name(i)}"
    if a.kind == SEND:
        dst = sim.network.channels[a.channel].dst
        return f"send {trace.message_name(a.message)} to {dst}"
    if a.kind == RECEIVE:
        src = sim.network.channels[a.channel].src
        name = trace.message_name(a.message)
        own = f" ({a.label})" if a.label is not None and a.label != name else ""
        return f"receive {name} from {src}{own}"
    if a.kind == SNAPSHOT:
        return f"initiate snapshot {a.label}: record state"
    if a.kind == CONTROL:
        m = trace.messages[a.message]
        src = sim.network.channels[a.channel].src
        what = _control_name(m.kind, m.tag) if m.kind != APP else "control message"
        return f"receive {what} from {src}"
    return a.kind

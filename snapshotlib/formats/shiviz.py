"""Export an execution as a ShiViz log, so a run can also be explored in ShiViz.

ShiViz's default parser regex is ``(?<event>.*)\\n(?<host>\\S*) (?<clock>{.*})``: each
event is a line describing it followed by a line with the host and its vector clock
as JSON. Snapshot initiations and marker receipts are included as events (markers then
carry causality like messages), so the snapshot's progress is visible too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..checks.causality import vector_clocks
from ..trace import APP, CONTROL, INTERNAL, RECEIVE, SEND, SNAPSHOT

if TYPE_CHECKING:
    from ..simulator import Simulator

#: the ShiViz parser regex this output is written for (ShiViz's default)
SHIVIZ_REGEX = r"(?<event>.*)\n(?<host>\S*) (?<clock>{.*})"


def to_shiviz(sim: Simulator) -> str:
    """The whole trace as ShiViz log text (one event per two lines).

    >>> from snapshotlib import Network, Simulator, Send
    >>> sim = Simulator(Network(["a", "b"]))
    >>> sim.step(Send("a", "b", label="hello")); _ = sim.run()
    >>> print(to_shiviz(sim))
    send hello to b
    a {"a": 1}
    receive hello from a
    b {"a": 1, "b": 1}
    """
    trace = sim.trace
    processes = sim.network.processes
    clocks = vector_clocks(trace, processes, include_control=True)
    lines = []
    for i, a in enumerate(trace.actions):
        clock = clocks[i]
        assert clock is not None
        vc = {p: v for p, v in zip(processes, clock, strict=True) if v}
        lines.append(_describe(sim, i))
        lines.append(f"{a.process} {json.dumps(vc)}")
    return "\n".join(lines)


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
        return f"initiate snapshot {a.label}: record state, send markers"
    if a.kind == CONTROL:
        m = trace.messages[a.message]
        src = sim.network.channels[a.channel].src
        return f"{m.kind} {m.tag} from {src}" if m.kind != APP else f"control from {src}"
    return a.kind

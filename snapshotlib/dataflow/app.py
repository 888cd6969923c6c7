"""What the operators of a dataflow graph compute: the application the simulator runs.

States are immutable values, so a recorded state is just a reference: a source's read
offset (an int), a count's ``((key, count), ...)`` sorted by key, a sink's tuple of the
records it received, ``None`` for stateless maps and loops.

Sizes for the cost metrics follow the course's sizing example: a record in flight or
kept by a sink is ``record_bytes`` (200 by default), an offset 8 bytes, a count entry
16 bytes.
"""

from __future__ import annotations

import zlib
from typing import Any, NamedTuple

from ..apps import Application, SendFn
from .graph import Dataflow


class Record(NamedTuple):
    """A record flowing through the graph; ``origin`` (source, offset) names it for
    life, so a duplicate at the sink is the same origin twice."""

    origin: tuple[str, int]
    key: str
    hops: int = 0
    value: int = 0


def _slot(key: str, n: int) -> int:
    return zlib.crc32(key.encode()) % n


class DataflowApp(Application):
    """The operators of ``flow`` as an :class:`~snapshotlib.apps.Application`.

    A source reads one record per internal action; the other operators act when a
    record arrives. Each action sends at most one record per output channel.
    """

    name = "dataflow"

    def __init__(self, flow: Dataflow, record_bytes: int = 200) -> None:
        self.flow = flow
        self.record_bytes = record_bytes
        net = flow.network()
        self.kind = {op.name: op.kind for op in flow.operators}
        self.log = {op.name: op.records for op in flow.operators}
        self.outs = {p: [c.dst for c in net.outputs(p)] for p in net.processes}

    def initial_state(self, process: str, value: Any) -> Any:
        if value is not None:  # a restored state
            return value
        return {"source": 0, "count": (), "sink": ()}.get(self.kind[process])

    def remaining(self, process: str, state: Any) -> int:
        """Records a source has still to read (0 for other operators)."""
        if self.kind[process] != "source":
            return 0
        return len(self.log[process]) - int(state)

    def route(self, process: str, key: str) -> str | None:
        """The operator a record with ``key`` goes to from ``process`` (by key)."""
        outs = self.outs[process]
        return outs[_slot(key, len(outs))] if outs else None

    def next_hop(self, process: str, record: Record) -> str | None:
        """Where ``process`` sends ``record`` on (``None`` for a sink)."""
        kind = self.kind[process]
        if kind == "sink":
            return None
        if kind == "loop":
            return self.outs[process][0 if record.hops > 0 else 1]
        return self.route(process, record.key)

    def on_internal(self, process: str, state: Any, label: str | None, send: SendFn) -> Any:
        if self.kind[process] != "source" or self.remaining(process, state) <= 0:
            return state
        key, hops = self.log[process][state]
        send(self.route(process, key), Record((process, state), key, hops), f"{process}#{state}")
        return state + 1

    def on_receive(self, process: str, state: Any, src: str, payload: Any, send: SendFn) -> Any:
        record: Record = payload
        kind = self.kind[process]
        if kind == "sink":
            return (*state, record)
        dst = self.next_hop(process, record)
        if kind == "loop" and record.hops > 0:
            record = record._replace(hops=record.hops - 1)
        elif kind == "count":
            counts = dict(state)
            counts[record.key] = counts.get(record.key, 0) + 1
            state = tuple(sorted(counts.items()))
            record = record._replace(value=counts[record.key])
        send(dst, record, f"{record.origin[0]}#{record.origin[1]}")
        return state

    def describe(self, state: Any, events: tuple[str, ...] = ()) -> Any:
        if isinstance(state, tuple) and state and isinstance(state[0], Record):
            return [f"{r.origin[0]}#{r.origin[1]}" for r in state]
        if isinstance(state, tuple):
            return dict(state)
        return state

    def state_bytes(self, process: str, state: Any) -> int:
        """The size of a recorded operator state."""
        kind = self.kind[process]
        if kind == "source":
            return 8
        if kind == "count":
            return 16 * len(state)
        if kind == "sink":
            return self.record_bytes * len(state)
        return 0

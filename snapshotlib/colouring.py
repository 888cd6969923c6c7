"""Dijkstra's colouring (EWD 864a) of a recorded execution, and the snapshot state SSS.

Every machine is white until it records its state for a snapshot and red from then on;
each action has the colour of the machine performing it and each message the colour of
the action that sent it. The snapshot state SSS consists of each machine's state at its
transition from white to red and, for each channel, the white messages accepted from
it in red actions. Only application actions are coloured: markers belong to the
snapshot algorithm, not to the computation being observed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .trace import APP, APP_KINDS, NOT_RECEIVED, RECEIVE, Trace

if TYPE_CHECKING:
    from .simulator import Simulator

WHITE = "white"
RED = "red"


def turned_red(red_from: Mapping[str, int], process: str, action: int) -> bool:
    """Dijkstra's colour rule, the one place it is written: action ``action`` (a trace
    index) of ``process`` is red when the process recorded its state at or before it
    (``red_from[process]`` is its first red action); a message has its sender's colour."""
    turned = red_from.get(process)
    return turned is not None and action >= turned


@dataclass(frozen=True)
class Colouring:
    """Colours of one snapshot over a trace; ``red_from[p]`` is where ``p`` turned red."""

    snapshot_id: str
    trace: Trace
    red_from: Mapping[str, int]

    def is_red(self, action: int) -> bool:
        """Whether action ``action`` (a trace index) is red."""
        return turned_red(self.red_from, self.trace.actions[action].process, action)

    def action(self, action: int) -> str:
        return RED if self.is_red(action) else WHITE

    def message(self, message: int) -> str:
        """Colour of a message: that of the action that sent it."""
        return self.action(self.trace.messages[message].sent_by)

    def process(self, process: str, at: int | None = None) -> str:
        """Colour of ``process`` just before trace index ``at`` (default: now)."""
        turned = self.red_from.get(process)
        at = len(self.trace.actions) if at is None else at
        return RED if turned is not None and at > turned else WHITE

    def app_actions(self) -> list[tuple[int, bool]]:
        """``(index, is_red)`` for every application action, in trace order."""
        red_from = self.red_from
        out = []
        for i, a in enumerate(self.trace.actions):
            if a.kind in APP_KINDS:
                out.append((i, turned_red(red_from, a.process, i)))
        return out


def colouring(sim: Simulator, snapshot_id: str) -> Colouring:
    """The colouring that snapshot ``snapshot_id`` induces on ``sim``'s trace."""
    record = sim.algorithm.records[snapshot_id]
    return Colouring(snapshot_id, sim.trace, dict(record.red_from))


@dataclass(frozen=True)
class SnapshotState:
    """SSS as EWD 864a defines it.

    ``channels`` maps ``"SRC->DST"`` to the ids of the white messages accepted from it
    in red actions, in the order accepted. ``unsettled`` lists, per channel, white
    messages still in flight at the end of the trace: SSS for that channel is not yet
    determined (they will be accepted by red actions eventually).
    """

    states: Mapping[str, Any]
    channels: Mapping[str, tuple[int, ...]]
    unsettled: Mapping[str, tuple[int, ...]]


def snapshot_state(sim: Simulator, snapshot_id: str) -> SnapshotState:
    """Build SSS for ``snapshot_id`` from the colouring of the trace."""
    col = colouring(sim, snapshot_id)
    trace = sim.trace
    record = sim.algorithm.records[snapshot_id]
    names = [str(c) for c in sim.network.channels]
    channels: dict[str, list[int]] = {n: [] for n in names}
    unsettled: dict[str, list[int]] = {n: [] for n in names}
    for i, a in enumerate(trace.actions):
        if (
            a.kind == RECEIVE
            and col.is_red(i)
            and not col.is_red(trace.messages[a.message].sent_by)
        ):
            channels[names[a.channel]].append(a.message)
    for m, msg in enumerate(trace.messages):
        if msg.kind == APP and trace.received_by[m] == NOT_RECEIVED and not col.is_red(msg.sent_by):
            unsettled[names[msg.channel]].append(m)
    return SnapshotState(
        dict(record.states),
        {n: tuple(v) for n, v in channels.items()},
        {n: tuple(v) for n, v in unsettled.items() if v},
    )

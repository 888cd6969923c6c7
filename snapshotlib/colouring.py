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

#: where a message lies against a snapshot's cut (:meth:`Colouring.where`)
BEFORE = "before"
IN_TRANSIT = "in transit"
AFTER = "after"
BACKWARDS = "backwards"


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

    def where(self, message: int) -> str:
        """Where application message ``message`` lies against the cut: :data:`BEFORE`
        (sent and accepted white), :data:`IN_TRANSIT` (sent white, accepted red or not
        yet: it belongs to the channel's recorded state), :data:`AFTER` (sent red,
        accepted red or not yet), or :data:`BACKWARDS` (sent red, accepted white: the
        cut is inconsistent)."""
        trace = self.trace
        sent_red = self.is_red(trace.messages[message].sent_by)
        got = trace.received_by[message]
        accepted_red = got == NOT_RECEIVED or self.is_red(got)
        if sent_red:
            return AFTER if accepted_red else BACKWARDS
        return IN_TRANSIT if accepted_red else BEFORE

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
    return Colouring(snapshot_id, sim.trace, sim.red_from(snapshot_id))


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
    names = [str(c) for c in sim.network.channels]
    channels: dict[str, list[int]] = {n: [] for n in names}
    unsettled: dict[str, list[int]] = {n: [] for n in names}
    # messages in the order accepted: SSS lists a channel's messages as its receiver took them
    for a in trace.actions:
        if a.kind == RECEIVE and col.where(a.message) == IN_TRANSIT:
            channels[names[a.channel]].append(a.message)
    for m, msg in enumerate(trace.messages):
        if msg.kind == APP and trace.received_by[m] == NOT_RECEIVED and col.where(m) == IN_TRANSIT:
            unsettled[names[msg.channel]].append(m)
    return SnapshotState(
        sim.snapshot(snapshot_id).states,
        {n: tuple(v) for n, v in channels.items()},
        {n: tuple(v) for n, v in unsettled.items() if v},
    )

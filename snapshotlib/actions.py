"""The actions a learner, a script or a scheduler can take on a simulator.

They are small frozen values, so they can be listed, compared, stored in a history
and replayed (which is how :meth:`Simulator.undo` travels back in time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import Channel, Network
from .trace import CONTROL, INTERNAL, RECEIVE, SEND, SNAPSHOT, ActionRecord, Trace


@dataclass(frozen=True)
class Deliver:
    """Accept the next message or marker on ``channel``.

    On a FIFO channel that is the head; on a non-FIFO channel ``message`` (a message
    id, see :attr:`Simulator.in_flight`) picks which one. ``label`` names the receive
    event of an application message.
    """

    channel: Channel
    message: int | None = None
    label: str | None = None

    def __str__(self) -> str:
        which = "" if self.message is None else f" #{self.message}"
        return f"deliver {self.channel}{which}"


@dataclass(frozen=True)
class Internal:
    """An internal event at ``process``."""

    process: str
    label: str | None = None

    def __str__(self) -> str:
        return f"internal {self.label or ''} at {self.process}".replace("  ", " ")


@dataclass(frozen=True)
class Send:
    """``src`` sends ``payload`` to ``dst``; ``label`` names the send event."""

    src: str
    dst: str
    payload: Any = None
    label: str | None = None

    def __str__(self) -> str:
        return f"send {self.src}->{self.dst}"


@dataclass(frozen=True)
class StartSnapshot:
    """``process`` initiates snapshot ``snapshot_id`` (it records its state at once)."""

    process: str
    snapshot_id: str = "s1"

    def __str__(self) -> str:
        return f"snapshot {self.snapshot_id} at {self.process}"


Action = Deliver | Internal | Send | StartSnapshot


def action_of(record: ActionRecord, trace: Trace, network: Network) -> Action:
    """The action that took ``record``, an action of ``trace`` (a run on ``network``).

    Taking a run's actions in order on a new simulator of the same network, application,
    initial values and algorithm rebuilds its trace: a send carries its payload (read
    from ``trace``), and on a non-FIFO network a delivery names its message (message ids
    are the same in the rebuilt trace). See :meth:`Simulator.action`.
    """
    kind = record.kind
    if kind in (RECEIVE, CONTROL):
        channel = network.channels[record.channel]
        return Deliver(channel, None if network.fifo else record.message, record.label)
    if kind == INTERNAL:
        return Internal(record.process, record.label)
    if kind == SEND:
        dst = network.channels[record.channel].dst
        return Send(record.process, dst, trace.messages[record.message].payload, record.label)
    if kind == SNAPSHOT:
        return StartSnapshot(record.process, record.label or "s1")
    raise ValueError(f"a trace action of unknown kind {kind!r}")

"""The actions a learner, a script or a scheduler can take on a simulator.

They are small frozen values, so they can be listed, compared, stored in a history
and replayed (which is how :meth:`Simulator.undo` travels back in time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import Channel


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

"""What a snapshot algorithm may ask of whatever runs it: the host protocol.

An algorithm sees its processes only through a :class:`Host`. The
:class:`~snapshotlib.simulator.Simulator` is one host: it runs every process of a
network in one loop and keeps the trace. A real process running the same algorithm
(as the coming live lab's will) is another kind: it answers for its own process and
channels, sends control messages on its sockets and keeps its own buffers. So the
algorithms in this package ask only what the protocol below offers, never the
simulator's fields (tests/test_host.py holds them to it).

Every method is about one process or one channel, as a real process can answer it,
except where said: :meth:`Host.queued` reads what is buffered on a channel (a real
host answers for its own output buffers; an unaligned barrier overtakes them), and the
algorithms that need a global view (a clock snapshot closing channels, stop-the-world
waiting for the network to drain) read it for every channel, which only a simulator or a
coordinator with that view can answer.

Algorithms written for the simulator alone (the course's exercises) may use
:attr:`~snapshotlib.algorithms.base.SnapshotAlgorithm.sim` instead, the whole
simulator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..model import Network
    from ..trace import MessageRecord, TraceEvent


class Host(Protocol):
    """The calls an algorithm makes; :class:`~snapshotlib.simulator.Simulator`
    implements them (see the module docstring)."""

    @property
    def network(self) -> Network:
        """The processes and channels (channels are named by their index in it)."""

    @property
    def time(self) -> int:
        """Actions taken so far: the index the next action will have in the trace."""

    def input_channels(self, process: str) -> list[int]:
        """Channels leading to ``process``."""

    def output_channels(self, process: str) -> list[int]:
        """Channels leaving ``process``."""

    def state_of(self, process: str) -> Any:
        """``process``'s application state now (what a snapshot records)."""

    def message(self, message: int) -> MessageRecord:
        """What travels with message ``message``: its kind, channel, the action that sent
        it, its payload and its snapshot id (a control message's tag)."""

    def app_sent(self, channel: int) -> int:
        """Application messages sent on ``channel`` so far."""

    def queued(self, channel: int) -> Sequence[int]:
        """Messages sent on ``channel`` and not yet accepted, oldest first."""

    def emit(
        self,
        channel: int,
        sent_by: int,
        kind: str,
        tag: str | None,
        payload: Any = None,
        *,
        at: int | None = None,
    ) -> int:
        """Send a control message on ``channel`` in action ``sent_by`` (``at``: at that
        place in the channel's queue, overtaking what is behind it); returns its id."""

    def event(self, event: TraceEvent) -> None:
        """Tell the reader what happened (see :mod:`snapshotlib.trace`)."""

    def block(self, channel: int) -> None:
        """Hold back deliveries on ``channel``."""

    def unblock(self, channel: int) -> None:
        """Let deliveries on ``channel`` go on."""

    def pause(self, process: str) -> None:
        """Hold back ``process``'s own actions; deliveries to it go on."""

    def resume(self, process: str) -> None:
        """Let ``process`` act again."""

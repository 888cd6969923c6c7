"""The static model: processes, directed channels, and the network they form.

A :class:`Network` is validated once, when it is built, so that everything downstream
(simulator, algorithms, checks) can rely on it: every channel joins two distinct known
processes, no channel is listed twice, and the graph is strongly connected, which the
snapshot algorithm needs for a marker to reach every process (EWD 864a).

Examples
--------
>>> net = Network(["P1", "P2", "P3"], "ring")
>>> [str(c) for c in net.channels]
['P1->P2', 'P2->P3', 'P3->P1']
>>> Network(["P1", "P2"], [("P1", "P2")])
Traceback (most recent call last):
...
snapshotlib.model.NetworkError: the network is not strongly connected: P1 cannot be reached from P2
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ChannelSpec = str | Iterable[Sequence[str]]


class NetworkError(ValueError):
    """A network description that cannot be simulated, with the reason."""


@dataclass(frozen=True, order=True)
class Channel:
    """A uni-directional buffer from ``src`` to ``dst``."""

    src: str
    dst: str

    def __str__(self) -> str:
        return f"{self.src}->{self.dst}"

    @classmethod
    def parse(cls, name: str) -> Channel:
        """Read a channel written as ``"P1->P2"``.

        >>> Channel.parse("P1->P2")
        Channel(src='P1', dst='P2')
        """
        src, sep, dst = name.partition("->")
        if not sep or not src or not dst:
            raise NetworkError(f"channel {name!r} is not of the form 'SRC->DST'")
        return cls(src.strip(), dst.strip())


class Network:
    """Processes joined by directed channels.

    Parameters
    ----------
    processes
        Process names, in the order used for display and for deterministic iteration.
    channels
        ``"complete"`` (every ordered pair, the default), ``"ring"`` (``P[i] -> P[i+1]``,
        wrapping around), ``"bidirectional-ring"``, or an iterable of ``(src, dst)`` pairs.
    fifo
        Whether channels deliver in the order messages were sent (the snapshot algorithm
        relies on it). Non-FIFO channels let any in-flight message be delivered next.
    strongly_connected
        Require every process to reach every other (the default: a marker must reach
        every process). Dataflow graphs turn it off: their barriers start at every
        source, and :mod:`snapshotlib.dataflow` checks its own graphs.
    """

    __slots__ = ("_index", "_inputs", "_outputs", "channels", "fifo", "processes")

    def __init__(
        self,
        processes: Iterable[str],
        channels: ChannelSpec = "complete",
        fifo: bool = True,
        *,
        strongly_connected: bool = True,
    ) -> None:
        self.processes: tuple[str, ...] = _validated_processes(processes)
        self.fifo = bool(fifo)
        self.channels: tuple[Channel, ...] = _build_channels(self.processes, channels)
        self._index = {c: i for i, c in enumerate(self.channels)}
        self._inputs: dict[str, tuple[Channel, ...]] = {p: () for p in self.processes}
        self._outputs: dict[str, tuple[Channel, ...]] = {p: () for p in self.processes}
        for c in self.channels:
            self._outputs[c.src] += (c,)
            self._inputs[c.dst] += (c,)
        if strongly_connected:
            _require_strongly_connected(self)

    def inputs(self, process: str) -> tuple[Channel, ...]:
        """Channels that lead to ``process``."""
        return self._inputs[process]

    def outputs(self, process: str) -> tuple[Channel, ...]:
        """Channels that leave ``process``."""
        return self._outputs[process]

    def channel_index(self, channel: Channel) -> int:
        """Position of ``channel`` in :attr:`channels` (the simulator's queue number)."""
        try:
            return self._index[channel]
        except KeyError:
            raise NetworkError(f"there is no channel {channel}") from None

    def channel(self, src: str, dst: str) -> Channel:
        """The channel from ``src`` to ``dst``; a clear error if there is none."""
        c = Channel(src, dst)
        if c not in self._index:
            known = ", ".join(str(x) for x in self._outputs.get(src, ())) or "none"
            raise NetworkError(f"there is no channel {c} (channels from {src}: {known})")
        return c

    def __repr__(self) -> str:
        kind = "FIFO" if self.fifo else "non-FIFO"
        return f"Network({len(self.processes)} processes, {len(self.channels)} {kind} channels)"


def _validated_processes(processes: Iterable[str]) -> tuple[str, ...]:
    names = tuple(processes)
    if not names:
        raise NetworkError("a network needs at least one process")
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise NetworkError(f"process names must be non-empty strings, got {name!r}")
        if "->" in name:
            raise NetworkError(f"process name {name!r} may not contain '->'")
        if name in seen:
            raise NetworkError(f"process {name!r} is listed twice")
        seen.add(name)
    return names


def _build_channels(processes: tuple[str, ...], spec: ChannelSpec) -> tuple[Channel, ...]:
    if spec == "complete":
        return tuple(Channel(a, b) for a in processes for b in processes if a != b)
    if spec == "ring":
        n = len(processes)
        if n == 1:
            return ()
        pairs = [(processes[i], processes[(i + 1) % n]) for i in range(n)]
        return tuple(Channel(a, b) for a, b in dict.fromkeys(pairs))
    if spec == "bidirectional-ring":
        n = len(processes)
        pairs = [(processes[i], processes[(i + d) % n]) for i in range(n) for d in (1, -1)]
        return tuple(Channel(a, b) for a, b in dict.fromkeys(pairs) if a != b)
    if isinstance(spec, str):
        raise NetworkError(
            f"unknown channel layout {spec!r}: expected 'complete', 'ring', "
            "'bidirectional-ring' or a list of [src, dst] pairs"
        )
    known = set(processes)
    channels: list[Channel] = []
    seen: set[Channel] = set()
    for i, pair in enumerate(spec):
        if isinstance(pair, str) or len(pair) != 2:
            raise NetworkError(f"channel #{i + 1} is {pair!r}: expected a [src, dst] pair")
        src, dst = pair
        for end in (src, dst):
            if end not in known:
                raise NetworkError(f"channel #{i + 1} {src}->{dst}: unknown process {end!r}")
        if src == dst:
            raise NetworkError(f"channel #{i + 1} {src}->{dst} is a self-loop")
        c = Channel(src, dst)
        if c in seen:
            raise NetworkError(f"channel #{i + 1} {c} is listed twice")
        seen.add(c)
        channels.append(c)
    return tuple(channels)


def _reachable(start: str, edges: dict[str, list[str]]) -> set[str]:
    seen = {start}
    stack = [start]
    while stack:
        for nxt in edges[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _require_strongly_connected(net: Network) -> None:
    forward: dict[str, list[str]] = {p: [] for p in net.processes}
    backward: dict[str, list[str]] = {p: [] for p in net.processes}
    for c in net.channels:
        forward[c.src].append(c.dst)
        backward[c.dst].append(c.src)
    root = net.processes[0]
    for edges, direction in ((forward, "from"), (backward, "to")):
        seen = _reachable(root, edges)
        missing = [p for p in net.processes if p not in seen]
        if missing:
            if direction == "from":
                raise NetworkError(
                    "the network is not strongly connected: "
                    f"{missing[0]} cannot be reached from {root}"
                )
            raise NetworkError(
                f"the network is not strongly connected: {root} cannot be reached from {missing[0]}"
            )

"""What a live cluster is: its nodes and where they listen, its channels, its bank.

A :class:`ClusterSpec` is written once (by :class:`~snapshotlib.live.cluster.LiveCluster`
or ``snapshotlib live up``) and handed as JSON to the controller and to every node, so
they all agree on names, addresses and channels. Standard library only.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from ..model import Network, NetworkError
from ..named import NamedObjectError, split
from ..workloads import complete, max_extra_edges, random_strongly_connected, ring

#: the topologies ``--topology`` offers
TOPOLOGIES = ("complete", "ring", "random")
#: where markers travel: on the channel's own ordered stream, or (the system-design
#: text's literal design) as a ``SendMarker`` call on a connection of their own
MARKER_MODES = ("in-band", "out-of-band")


class SpecError(ValueError):
    """A cluster description that cannot run, naming the field."""


@dataclass(frozen=True)
class NodeSpec:
    """One node: its name and the address of its gRPC server."""

    id: str
    host: str
    port: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class ClusterSpec:
    """A whole cluster.

    Attributes
    ----------
    nodes
        The nodes, in the network's process order.
    channels
        Directed channels as ``(src, dst)`` pairs; each is one ordered gRPC stream.
    initial_money
        Money each node starts with; the total is what every snapshot must account for.
    rate
        Transfers each node starts per second (to a random neighbour, a random amount).
    markers
        ``"in-band"`` (markers on the channel's stream: FIFO holds) or ``"out-of-band"``.
    marker_delay_ms
        How long each marker is held up before it goes out, in milliseconds. In band,
        what is sent after it on its channel waits behind it (FIFO holds: a slow marker
        on a shared connection); out of band, data sent meanwhile overtakes it (a slow
        marker connection).
    controller
        The controller's base URL (``http://host:port``), where nodes report.
    heartbeat_ms
        How often each node tells the controller it is alive (and how much it buffers).
    heartbeat_timeout_ms
        A node not heard from for this long has left the cluster: the snapshots in
        progress fail (membership changed). Wall time, and generous: on a loaded machine
        a live node can be late by a second or more.
    ttl_ms
        Time-to-live of a snapshot: a node whose part is not complete this long after it
        recorded its state abandons it and reports the failure; the controller fails a
        snapshot still open this long after its trigger (a backstop for nodes that
        cannot report).
    state_keys, chunk_keys, key_bytes
        Each node's money is kept as ``state_keys`` accounts, checkpointed in chunks of
        ``chunk_keys`` accounts, each account's entry padded with ``key_bytes`` bytes
        (:mod:`~snapshotlib.live.keyed_state`; what incremental checkpoints save on).
    upload_jitter_ms
        A node waits a random 0..``upload_jitter_ms`` ms before writing its part (the
        text's jittered upload flush), so that nodes do not all write at once.
    log_segment_lines
        Actions per segment of a node's log: a full segment is compressed
        (:mod:`~snapshotlib.live.action_log`).
    seed
        Seed of the nodes' random transfers (node ``i`` uses ``seed + i``).
    algorithm, algorithm_path
        The snapshot algorithm every node runs, as ``MODULE:CLASS`` or
        ``/abs/FILE.py:CLASS`` (a learner's own class: :mod:`.algorithm_choice`), and
        the folder its module is imported from; ``""``: the engine's Chandy–Lamport.
    """

    nodes: tuple[NodeSpec, ...]
    channels: tuple[tuple[str, str], ...]
    initial_money: int = 1000
    rate: float = 50.0
    markers: str = "in-band"
    marker_delay_ms: int = 0
    controller: str = ""
    heartbeat_ms: int = 500
    heartbeat_timeout_ms: int = 5000
    ttl_ms: int = 30000
    state_keys: int = 1
    chunk_keys: int = 1
    key_bytes: int = 0
    upload_jitter_ms: int = 0
    log_segment_lines: int = 50_000
    seed: int = 0
    algorithm: str = ""
    algorithm_path: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ids = [n.id for n in self.nodes]
        if len(set(ids)) != len(ids):
            raise SpecError(f"nodes: names repeat in {ids}")
        if self.markers not in MARKER_MODES:
            raise SpecError(f"markers: {self.markers!r} is not one of {', '.join(MARKER_MODES)}")
        if isinstance(self.marker_delay_ms, bool) or not isinstance(self.marker_delay_ms, int):
            raise SpecError(f"marker_delay_ms: a whole number, got {self.marker_delay_ms!r}")
        if self.marker_delay_ms < 0:
            raise SpecError(f"marker_delay_ms: at least 0, got {self.marker_delay_ms}")
        for name in ("heartbeat_ms", "heartbeat_timeout_ms", "ttl_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SpecError(f"{name}: a whole number of milliseconds above 0, got {value!r}")
        for name, least in (
            ("state_keys", 1),
            ("chunk_keys", 1),
            ("key_bytes", 0),
            ("upload_jitter_ms", 0),
            ("log_segment_lines", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise SpecError(f"{name}: a whole number of at least {least}, got {value!r}")
        if self.heartbeat_timeout_ms <= self.heartbeat_ms:
            raise SpecError(
                f"heartbeat_timeout_ms: longer than heartbeat_ms ({self.heartbeat_ms}), "
                f"got {self.heartbeat_timeout_ms}"
            )
        if isinstance(self.initial_money, bool) or not isinstance(self.initial_money, int):
            raise SpecError(f"initial_money: a whole number, got {self.initial_money!r}")
        if self.initial_money < 0:
            raise SpecError(f"initial_money: at least 0, got {self.initial_money}")
        for name in ("algorithm", "algorithm_path"):
            if not isinstance(getattr(self, name), str):
                raise SpecError(f"{name}: a string, got {getattr(self, name)!r}")
        if self.algorithm:
            try:
                split(self.algorithm, "algorithm")
            except NamedObjectError as e:
                raise SpecError(str(e)) from None
        if not self.rate > 0:
            raise SpecError(f"rate: transfers per second above 0, got {self.rate!r}")
        try:
            self.network()
        except NetworkError as e:
            raise SpecError(f"channels: {e}") from None

    def network(self) -> Network:
        """The engine's network of this cluster (FIFO when markers travel in band)."""
        return Network(
            [n.id for n in self.nodes], list(self.channels), fifo=self.markers == "in-band"
        )

    def node(self, node_id: str) -> NodeSpec:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise SpecError(f"unknown node {node_id!r} (nodes: {', '.join(self.ids)})")

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes)

    @property
    def total_money(self) -> int:
        return self.initial_money * len(self.nodes)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> ClusterSpec:
        data = json.loads(text)
        nodes = tuple(NodeSpec(n["id"], n["host"], int(n["port"])) for n in data.pop("nodes"))
        channels = tuple((str(a), str(b)) for a, b in data.pop("channels"))
        return cls(nodes=nodes, channels=channels, **data)


def topology(kind: str, n: int, seed: int = 0) -> Network:
    """The network of ``n`` nodes named ``P1..Pn`` of a ``--topology`` kind."""
    if n < 2:
        raise SpecError(f"nodes: a cluster needs at least 2 nodes, got {n}")
    if kind == "complete":
        return complete(n)
    if kind == "ring":
        return ring(n)
    if kind == "random":
        return random_strongly_connected(n, extra_edges=min(n, max_extra_edges(n)), seed=seed)
    raise SpecError(f"topology: {kind!r} is not one of {', '.join(TOPOLOGIES)}")

"""Nodes in one process: :class:`NodeHost` objects joined by Python queues standing in
for the gRPC streams, each logging what a live node logs, so the same assembly and
checks as for a live cluster apply to their logs."""

from __future__ import annotations

import random
from collections import deque
from typing import Any

from snapshotlib.live.algorithm_choice import algorithm_class
from snapshotlib.live.host import NodeHost
from snapshotlib.live.parts import CheckedPart
from snapshotlib.live.spec import ClusterSpec, NodeSpec, topology
from snapshotlib.trace import MARKER


def cluster(
    kind: str, n: int, seed: int = 0, markers: str = "in-band", algorithm: str = ""
) -> ClusterSpec:
    net = topology(kind, n, seed)
    return ClusterSpec(
        nodes=tuple(NodeSpec(p, "127.0.0.1", 1) for p in net.processes),
        channels=tuple((c.src, c.dst) for c in net.channels),
        initial_money=100,
        markers=markers,
        algorithm=algorithm,
    )


class Nodes:
    """Every node of ``spec`` as a NodeHost running the spec's algorithm, logging as a
    live node does."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.spec = spec
        self.net = spec.network()
        self.ids = spec.ids
        self.clock = {p: [0] * len(self.ids) for p in self.ids}
        self.logs: dict[str, list[dict[str, Any]]] = {p: [] for p in self.ids}
        self.wire: dict[int, deque[tuple[str, Any, list[int]]]] = {
            i: deque() for i in range(len(self.net.channels))
        }
        self.seq = dict.fromkeys(range(len(self.net.channels)), 0)
        self.done: set[tuple[str, str]] = set()
        self.hosts = {p: self._host(p) for p in self.ids}

    def _host(self, p: str) -> NodeHost:
        def transmit(channel: int, message: int, kind: str, tag: str) -> None:
            self.wire[channel].append((kind, tag, list(self.clock[p])))

        algorithm = algorithm_class(self.spec)()
        return NodeHost(self.net, p, algorithm, 100, transmit, lambda event: None)

    def _tick(self, p: str, merge: list[int] | None = None) -> list[int]:
        clock = self.clock[p]
        for i, c in enumerate(merge or ()):
            clock[i] = max(clock[i], c)
        clock[self.ids.index(p)] += 1
        return list(clock)

    def send(self, p: str, channel: int, amount: int) -> None:
        action, _ = self.hosts[p].send(channel, amount)
        clock = self._tick(p)
        seq = self.seq[channel]
        self.seq[channel] += 1
        name = str(self.net.channels[channel])
        self.logs[p].append(
            {"i": action, "kind": "send", "ch": name, "seq": seq, "amount": amount, "clock": clock}
        )
        self.wire[channel].append(("app", (seq, amount), clock))

    def deliver(self, channel: int, position: int = 0) -> None:
        """Deliver the message at ``position`` on ``channel``'s wire (0: the oldest)."""
        kind, what, sent_clock = self.wire[channel][position]
        del self.wire[channel][position]
        p = self.net.channels[channel].dst
        host = self.hosts[p]
        name = str(self.net.channels[channel])
        clock = self._tick(p, sent_clock)
        if kind == "app":
            seq, amount = what
            action, _ = host.accept_transfer(channel, -1, amount)
            line = {"i": action, "kind": "receive", "ch": name, "seq": seq, "amount": amount}
            self.logs[p].append({**line, "clock": clock})
        else:
            self.logs[p].append(
                {"i": host.time, "kind": "marker", "ch": name, "snapshot": what, "clock": clock}
            )
            host.accept_control(channel, -1, MARKER, what)
            self._notice(p)

    def initiate(self, p: str, sid: str) -> None:
        clock = self._tick(p)
        self.logs[p].append(
            {"i": self.hosts[p].time, "kind": "initiate", "snapshot": sid, "clock": clock}
        )
        self.hosts[p].initiate(sid)
        self._notice(p)

    def _notice(self, p: str) -> None:
        """Parts done, read from the records as a live node does (a learner's class
        writes no events); a part done, the snapshot's markers are dropped there."""
        host = self.hosts[p]
        for sid, rec in host.algorithm.snapshot_records().items():
            if sid not in host.ignored and rec.part_done(p, host.input_channels(p)):
                self.done.add((sid, p))
                host.ignore(sid)  # as a node does: its later markers are dropped

    def part(self, p: str, sid: str) -> CheckedPart:
        """What node ``p`` recorded of ``sid``, as a part read back from storage holds it."""
        host = self.hosts[p]
        rec = host.algorithm.records[sid]
        channels = {}
        for ch in host.input_channels(p):
            channels[ch] = [host.messages[m].payload for m in rec.channels[ch]]
        return CheckedPart(sid, p, "", rec.states[p], channels, {})

    def run(self, rng: random.Random, steps: int, starts: dict[int, tuple[str, str]]) -> None:
        """``steps`` random actions; ``starts``: at step k, node p initiates sid."""
        for k in range(steps):
            if k in starts:
                self.initiate(*starts[k])
                continue
            busy = [ch for ch, q in self.wire.items() if q]
            if busy and rng.random() < 0.6:
                channel = rng.choice(busy)
                # out of band, a marker and the data do not keep their order
                overtake = not self.net.fifo and rng.random() < 0.5
                self.deliver(channel, rng.randrange(len(self.wire[channel])) if overtake else 0)
                continue
            p = rng.choice(self.ids)
            host = self.hosts[p]
            if host.balance > 0:
                self.send(p, rng.choice(host.output_channels(p)), rng.randint(1, host.balance))
        while any(self.wire.values()):  # drain: every marker arrives
            self.deliver(rng.choice([ch for ch, q in self.wire.items() if q]))

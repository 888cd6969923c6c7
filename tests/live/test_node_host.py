"""A node runs the engine's Chandy–Lamport through the host protocol, and its logs
assemble into a run the engine replays: in one process, without sockets.

The nodes here are :class:`NodeHost` objects joined by Python queues standing in for
the gRPC streams; a random schedule decides which node acts next. What they log is
what a live node logs, so the same assembly and checks as for a live cluster apply.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snapshotlib.algorithms.chandy_lamport import ChandyLamport
from snapshotlib.live.host import NodeHost
from snapshotlib.live.parts import CheckedPart
from snapshotlib.live.runlog import (
    RunLogError,
    assemble,
    causal_prefix,
    check_live_snapshot,
    replay,
)
from snapshotlib.live.spec import ClusterSpec, NodeSpec, SpecError, topology
from snapshotlib.trace import MARKER, PartDone


def cluster(kind: str, n: int, seed: int = 0, markers: str = "in-band") -> ClusterSpec:
    net = topology(kind, n, seed)
    return ClusterSpec(
        nodes=tuple(NodeSpec(p, "127.0.0.1", 1) for p in net.processes),
        channels=tuple((c.src, c.dst) for c in net.channels),
        initial_money=100,
        markers=markers,
    )


class Nodes:
    """Every node of ``spec`` as a NodeHost, logging as a live node does."""

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

        def on_event(event: Any) -> None:
            if isinstance(event, PartDone):
                self.done.add((event.snapshot_id, p))

        return NodeHost(self.net, p, ChandyLamport(), 100, transmit, on_event)

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

    def initiate(self, p: str, sid: str) -> None:
        clock = self._tick(p)
        self.logs[p].append(
            {"i": self.hosts[p].time, "kind": "initiate", "snapshot": sid, "clock": clock}
        )
        self.hosts[p].initiate(sid)

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


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["complete", "ring", "random"]),
    n=st.integers(2, 5),
    concurrent=st.integers(1, 3),
)
def test_what_the_nodes_record_is_what_the_engine_records_replaying_their_logs(
    seed: int, kind: str, n: int, concurrent: int
) -> None:
    spec = cluster(kind, n, seed)
    nodes = Nodes(spec)
    rng = random.Random(seed)
    starts = {
        rng.randrange(120): (rng.choice(spec.ids), f"s{k}") for k in range(concurrent)
    }  # a step taken twice keeps one snapshot: fewer, never a clash
    nodes.run(rng, 160, starts)
    sim = replay(spec, assemble(spec, causal_prefix(spec, nodes.logs)))
    for _, sid in starts.values():
        assert {(sid, p) for p in spec.ids} <= nodes.done, "every part is done after draining"
        parts = {p: nodes.part(p, sid) for p in spec.ids}
        check = check_live_snapshot(spec, parts, sim, sid)
        assert check.ok, check.reason
        assert check.same_as_engine and check.recorded_total == 100 * n


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 4), concurrent=st.integers(1, 3))
def test_out_of_band_the_engine_still_records_what_the_nodes_did_and_judges_it(
    seed: int, n: int, concurrent: int
) -> None:
    # Markers apart from the data: messages overtake each other, so snapshots may be
    # inconsistent; the replay must still take the very messages each node took.
    spec = cluster("complete", n, seed, markers="out-of-band")
    nodes = Nodes(spec)
    rng = random.Random(seed)
    starts = {rng.randrange(120): (rng.choice(spec.ids), f"s{k}") for k in range(concurrent)}
    nodes.run(rng, 160, starts)
    sim = replay(spec, assemble(spec, causal_prefix(spec, nodes.logs)))
    for _, sid in starts.values():
        check = check_live_snapshot(spec, {p: nodes.part(p, sid) for p in spec.ids}, sim, sid)
        assert check.same_as_engine, check.differences
        if check.verdict.ok:  # a consistent cut whose channels hold what crossed it
            assert check.recorded_total == 100 * n


def overtaken_snapshot(markers: str) -> tuple[ClusterSpec, Nodes]:
    """P1 records, then sends 10 to P2, which arrives before P1's marker does."""
    spec = cluster("complete", 2, markers=markers)
    nodes = Nodes(spec)
    net = spec.network()
    p1_p2 = net.channel_index(net.channel("P1", "P2"))
    nodes.initiate("P1", "s1")
    nodes.send("P1", p1_p2, 10)
    nodes.deliver(p1_p2, position=1)  # the transfer overtakes the marker
    nodes.deliver(p1_p2)  # then the marker: P2 records a balance with the 10 in it
    nodes.deliver(net.channel_index(net.channel("P2", "P1")))
    return spec, nodes


def test_a_transfer_that_overtakes_a_marker_makes_an_inconsistent_snapshot_the_check_names() -> (
    None
):
    spec, nodes = overtaken_snapshot("out-of-band")
    parts = {p: nodes.part(p, "s1") for p in spec.ids}
    assert parts["P2"].balance == 110  # the 10 counted at P2, and still at P1
    check = check_live_snapshot(spec, parts, replay(spec, assemble(spec, nodes.logs)), "s1")
    assert check.same_as_engine and not check.ok
    assert check.reason is not None
    assert "P1->P2#0" in check.reason and "received inside the cut but sent outside" in (
        check.reason
    )
    assert (check.recorded_total, check.expected_total) == (210, 200)


def test_the_same_logs_on_channels_said_to_be_fifo_are_refused() -> None:
    _, nodes = overtaken_snapshot("out-of-band")
    fifo = cluster("complete", 2)  # in band: the marker cannot have been overtaken
    with pytest.raises(RunLogError, match="P1->P2 delivered a marker where the node accepted"):
        replay(fifo, assemble(fifo, nodes.logs))


def test_an_out_of_band_delivery_of_nothing_in_flight_is_named() -> None:
    spec, nodes = overtaken_snapshot("out-of-band")
    nodes.logs["P2"][1]["snapshot"] = "s9"  # P2 says it took a marker nobody sent
    with pytest.raises(RunLogError, match="P2 accepted the marker of s9, which is not in flight"):
        assemble(spec, nodes.logs)
    del nodes.logs["P2"][1]["snapshot"]
    with pytest.raises(RunLogError, match=r"^P2's log, action 1: no 'snapshot'$"):
        assemble(spec, nodes.logs)
    nodes.logs["P2"][1]["kind"] = "teleport"
    with pytest.raises(RunLogError, match=r"^P2's log, action 1: unknown kind 'teleport'$"):
        assemble(spec, nodes.logs)


def test_a_node_first_hears_of_a_snapshot_from_its_first_marker() -> None:
    # Chandy-Lamport on one host starts a record for a marker of a snapshot it has not
    # seen (a live node learns of a snapshot that way); a discarded one stays ignored.
    spec = cluster("complete", 3)
    nodes = Nodes(spec)
    nodes.initiate("P1", "s1")
    nodes.deliver(spec.network().channel_index(spec.network().channel("P1", "P2")))
    p2 = nodes.hosts["P2"].algorithm
    assert "P2" in p2.records["s1"].red_from
    p2.discard("s1")
    p3_p2 = spec.network().channel_index(spec.network().channel("P3", "P2"))
    nodes.hosts["P2"].accept_control(p3_p2, -1, MARKER, "s1")
    assert "s1" not in p2.records


def test_logs_read_at_different_moments_are_cut_to_their_causal_prefix() -> None:
    spec = cluster("complete", 2)
    nodes = Nodes(spec)
    net = spec.network()
    p1_p2 = net.channel_index(net.channel("P1", "P2"))
    nodes.send("P1", p1_p2, 5)
    nodes.deliver(p1_p2)
    nodes.send("P2", net.channel_index(net.channel("P2", "P1")), 1)
    # P1's log was read before its send was written: P2's receive (and what follows) goes
    logs = {"P1": [], "P2": nodes.logs["P2"]}
    assert causal_prefix(spec, logs) == {"P1": [], "P2": []}
    whole = causal_prefix(spec, nodes.logs)
    assert [len(whole[p]) for p in spec.ids] == [1, 2]


def test_a_delivery_the_engine_cannot_match_is_named() -> None:
    spec = cluster("complete", 2)
    nodes = Nodes(spec)
    net = spec.network()
    p1_p2 = net.channel_index(net.channel("P1", "P2"))
    nodes.send("P1", p1_p2, 5)
    nodes.deliver(p1_p2)
    nodes.logs["P2"][0]["kind"] = "marker"  # a log that says a marker came, not the transfer
    nodes.logs["P2"][0].pop("seq")
    nodes.logs["P2"][0]["snapshot"] = "s1"
    with pytest.raises(RunLogError, match="P1->P2 delivered a app where the node accepted"):
        replay(spec, assemble(spec, nodes.logs))


def test_a_spec_is_refused_naming_the_field() -> None:
    node = NodeSpec("P1", "127.0.0.1", 1)
    with pytest.raises(SpecError, match=r"^markers: 'sideways' is not one of in-band, out-of"):
        ClusterSpec(nodes=(node, NodeSpec("P2", "h", 2)), channels=(), markers="sideways")
    with pytest.raises(SpecError, match=r"^marker_delay_ms: at least 0"):
        ClusterSpec(nodes=(node, NodeSpec("P2", "h", 2)), channels=(), markers="out-of-band",
                    marker_delay_ms=-1)  # fmt: skip
    with pytest.raises(SpecError, match=r"^marker_delay_ms: a whole number"):
        ClusterSpec(nodes=(node, NodeSpec("P2", "h", 2)), channels=(), markers="out-of-band",
                    marker_delay_ms=0.5)  # type: ignore[arg-type]  # fmt: skip
    with pytest.raises(SpecError, match=r"^nodes: names repeat"):
        ClusterSpec(nodes=(node, node), channels=())
    with pytest.raises(SpecError, match=r"^channels: "):
        ClusterSpec(nodes=(node, NodeSpec("P2", "h", 2)), channels=(("P1", "P2"),))
    with pytest.raises(SpecError, match=r"^rate: "):
        ClusterSpec(nodes=(node, NodeSpec("P2", "h", 2)), channels=(("P1", "P2"), ("P2", "P1")),
                    rate=0)  # fmt: skip
    with pytest.raises(SpecError, match=r"^topology: 'star'"):
        topology("star", 3)
    spec = cluster("ring", 3)
    assert ClusterSpec.from_json(spec.to_json()) == spec

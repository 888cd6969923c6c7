"""A node runs the engine's Chandy–Lamport through the host protocol, and its logs
assemble into a run the engine replays: in one process, without sockets.

The nodes here are in one process (:mod:`simulated_nodes`); a random schedule decides
which node acts next.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simulated_nodes import Nodes, cluster

from snapshotlib.live.runlog import (
    RunLogError,
    assemble,
    causal_prefix,
    check_live_snapshot,
    replay,
)
from snapshotlib.live.spec import ClusterSpec, NodeSpec, SpecError, topology
from snapshotlib.trace import MARKER


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

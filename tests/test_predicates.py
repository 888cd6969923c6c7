"""Stable predicates evaluated on recorded snapshots."""

from __future__ import annotations

from snapshotlib import Network, Send, Simulator, StartSnapshot
from snapshotlib.checks.predicates import conservation, deadlock, termination


def test_tokens_in_transit_count_towards_conservation() -> None:
    sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 3})
    sim.step(Send("P1", "P2", 2))
    sim.step(StartSnapshot("P2"))
    sim.run()
    result = conservation(sim, "s1")
    assert result.holds
    assert result.details == {"initial": 3, "processes": 1, "channels": 2}


def test_conservation_fails_when_a_recorded_token_is_dropped() -> None:
    sim = Simulator(Network(["P1", "P2"]), app="bank", initial={"P1": 3})
    sim.step(Send("P1", "P2", 2))
    sim.step(StartSnapshot("P2"))
    sim.run()
    sim.algorithm.records["s1"].channels[0].clear()  # lose the money in transit
    result = conservation(sim, "s1")
    assert not result.holds
    assert "some lost" in result.reason


def test_conservation_is_not_claimed_for_an_app_without_a_quantity() -> None:
    sim = Simulator(Network(["P1", "P2"]))
    sim.step(StartSnapshot("P1"))
    sim.run()
    assert not conservation(sim, "s1").holds


def test_termination_needs_passive_processes_and_empty_channels() -> None:
    sim = Simulator(Network(["P1", "P2"]), app="requests")
    sim.step(Send("P1", "P2", "request"))
    sim.step(StartSnapshot("P1", "early"))
    sim.run()
    assert not termination(sim, "early").holds  # the request or reply was in flight
    sim.step(StartSnapshot("P2", "late"))
    sim.run()
    assert termination(sim, "late").holds


def test_mutual_requests_deadlock_and_the_snapshot_detects_it() -> None:
    sim = Simulator(Network(["P1", "P2", "P3"]), app="requests")
    sim.step(Send("P1", "P2", "request"))
    sim.step(Send("P2", "P1", "request"))
    sim.run()
    sim.step(StartSnapshot("P3"))
    sim.run()
    result = deadlock(sim, "s1")
    assert result.holds
    assert result.details["cycle"] == ["P1", "P2"]


def test_a_reply_in_transit_is_not_a_deadlock() -> None:
    sim = Simulator(Network(["P1", "P2"]), app="requests")
    sim.step(Send("P1", "P2", "request"))
    sim.step(StartSnapshot("P1"))
    sim.run()
    snap = sim.snapshot("s1")
    assert snap.processes["P1"].state == ("P2", ())  # recorded while waiting ...
    assert [m.payload for m in snap.channels["P2->P1"]] == ["reply"]  # ... for this
    assert not deadlock(sim, "s1").holds

"""Chandy–Lamport's marker algorithm, rule by rule (Chandy and Lamport 1985; EWD 864a)."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshotlib import (
    ActionError,
    ChandyLamport,
    Channel,
    Deliver,
    Internal,
    Network,
    RandomOrder,
    Send,
    Simulator,
    StartSnapshot,
)
from snapshotlib.checks import check_commutation, check_snapshot
from snapshotlib.formats.scenario import load_scenario, run_scenario
from snapshotlib.trace import APP, MARKER

SCENARIOS = Path(__file__).resolve().parent.parent / "examples" / "scenarios"


def kinds(sim: Simulator, channel: str) -> list[tuple[str, str | None]]:
    """What is in flight on ``channel``: (kind, tag or label) per message, oldest first."""
    out = []
    for m in sim.in_flight(channel):
        rec = sim.trace.messages[m]
        out.append((rec.kind, rec.tag if rec.kind != APP else rec.label))
    return out


def deliver(sim: Simulator, channel: str, label: str | None = None) -> None:
    sim.step(Deliver(Channel.parse(channel), label=label))


def three(**initial) -> Simulator:
    return Simulator(Network(["P1", "P2", "P3"]), "tokens", initial)


def test_chandy_lamport_is_the_default_algorithm():
    assert isinstance(three().algorithm, ChandyLamport)


# ---------------------------------------------------------------- initiator


def test_initiator_records_its_state_at_once():
    sim = three(P1=5)
    sim.step(Send("P1", "P2", 2))
    sim.step(StartSnapshot("P1", "s1"))
    rec = sim.algorithm.records["s1"]
    assert rec.initiators == ["P1"]
    assert rec.states == {"P1": 3}
    assert rec.red_from == {"P1": 1}  # the snapshot action itself is P1's first red one


def test_initiator_sends_a_marker_on_every_output_channel():
    sim = three()
    sim.step(StartSnapshot("P2", "s1"))
    assert kinds(sim, "P2->P1") == [(MARKER, "s1")]
    assert kinds(sim, "P2->P3") == [(MARKER, "s1")]
    assert sim.in_flight("P1->P3") == [] and sim.in_flight("P3->P1") == []
    assert all(sim.trace.messages[m].sent_by == 0 for m in sim.in_flight())


def test_initiator_marker_goes_before_anything_it_sends_afterwards():
    sim = three(P1=2)
    sim.step(Send("P1", "P2", 1, label="before"))
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P1", "P2", 1, label="after"))
    assert kinds(sim, "P1->P2") == [(APP, "before"), (MARKER, "s1"), (APP, "after")]


def test_initiator_starts_recording_every_input_channel():
    sim = three()
    sim.step(StartSnapshot("P1", "s1"))
    snap = sim.snapshot("s1")
    assert set(snap.pending_channels) == {"P2->P1", "P3->P1"}
    assert snap.channels["P2->P1"] == () and snap.channels["P3->P1"] == ()
    assert snap.processes["P1"].done is False


# -------------------------------------------------------------- first marker


def test_first_marker_makes_a_process_record_its_state():
    sim = three(P2=4)
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P2", "P3", 1))
    deliver(sim, "P1->P2")
    rec = sim.algorithm.records["s1"]
    assert rec.states["P2"] == 3
    assert rec.red_from["P2"] == 2  # the action that accepted the marker
    assert sim.algorithm.records["s1"].initiators == ["P1"]


def test_first_marker_records_its_channel_as_empty_and_closed():
    sim = three(P1=1)
    sim.step(StartSnapshot("P1", "s1"))
    deliver(sim, "P1->P2")
    snap = sim.snapshot("s1")
    assert snap.channels["P1->P2"] == ()
    assert "P1->P2" not in snap.pending_channels
    assert "P3->P2" in snap.pending_channels


def test_first_marker_makes_the_process_send_markers_on_every_output():
    sim = three()
    sim.step(StartSnapshot("P1", "s1"))
    deliver(sim, "P1->P2")
    assert kinds(sim, "P2->P1") == [(MARKER, "s1")]
    assert kinds(sim, "P2->P3") == [(MARKER, "s1")]


# -------------------------------------------------------------- later marker


def test_later_marker_closes_the_channel_with_the_messages_received_in_between():
    sim = three(P2=3)
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P2", "P1", 1, label="x"))
    sim.step(Send("P2", "P1", 2, label="y"))
    deliver(sim, "P1->P2")  # P2 records after sending x and y: its marker comes after them
    sim.step(Send("P2", "P1", 0, label="z"))  # red: after P2's marker
    deliver(sim, "P2->P1")
    deliver(sim, "P2->P1")
    assert "P2->P1" in sim.snapshot("s1").pending_channels
    deliver(sim, "P2->P1")  # the marker
    deliver(sim, "P2->P1")  # z, after the marker
    snap = sim.snapshot("s1")
    assert [m.label for m in snap.channels["P2->P1"]] == ["x", "y"]
    assert [m.payload for m in snap.channels["P2->P1"]] == [1, 2]
    assert "P2->P1" not in snap.pending_channels


def test_messages_received_before_the_process_recorded_are_not_in_the_channel_state():
    sim = three(P2=1)
    sim.step(Send("P2", "P1", 1, label="early"))
    deliver(sim, "P2->P1")
    sim.step(StartSnapshot("P1", "s1"))
    sim.run()
    assert sim.snapshot("s1").channels["P2->P1"] == ()
    assert sim.snapshot("s1").processes["P1"].state == 1


def test_marker_before_message_excludes_it_from_channel_state():
    sim = three(P1=1)
    sim.step(StartSnapshot("P2", "s1"))
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P1", "P2", 1, label="late"))  # after P1's marker on P1->P2
    deliver(sim, "P1->P2")  # the marker closes P1->P2
    deliver(sim, "P1->P2", label="got")
    snap = sim.snapshot("s1")
    assert snap.channels["P1->P2"] == ()
    assert snap.processes["P1"].state == 1  # the token is still counted at P1


def test_message_before_marker_is_in_channel_state():
    sim = three(P1=1)
    sim.step(StartSnapshot("P2", "s1"))
    sim.step(Send("P1", "P2", 1, label="early"))
    sim.step(StartSnapshot("P1", "s1"))
    deliver(sim, "P1->P2")
    deliver(sim, "P1->P2")
    assert [m.label for m in sim.snapshot("s1").channels["P1->P2"]] == ["early"]


# ---------------------------------------------------------------- completion


def test_process_is_done_when_a_marker_has_arrived_on_every_input():
    sim = three()
    sim.step(StartSnapshot("P1", "s1"))
    deliver(sim, "P1->P3")  # P3 records; P3->P1 and P3->P2 get markers
    assert sim.snapshot("s1").processes["P3"].done is False  # P2->P3 still open
    deliver(sim, "P3->P1")
    assert sim.snapshot("s1").processes["P1"].done is False  # P2->P1 still open
    deliver(sim, "P1->P2")  # P2 records
    deliver(sim, "P2->P1")
    snap = sim.snapshot("s1")
    assert snap.processes["P1"].done is True
    assert snap.processes["P2"].done is False  # P3->P2 still open
    assert snap.complete is False
    deliver(sim, "P3->P2")
    deliver(sim, "P2->P3")
    snap = sim.snapshot("s1")
    assert all(r.done for r in snap.processes.values())
    assert snap.complete is True and snap.pending_channels == ()


def test_snapshot_is_not_complete_while_a_process_has_not_recorded():
    sim = three()
    sim.step(StartSnapshot("P1", "s1"))
    snap = sim.snapshot("s1")
    assert set(snap.processes) == {"P1"}
    assert snap.complete is False


def test_every_process_turns_red_once_and_every_channel_carries_exactly_one_marker():
    sim = Simulator(
        Network(list("abcde"), "bidirectional-ring"), "tokens", dict.fromkeys("abcde", 2)
    )
    for src, dst in [("a", "b"), ("c", "d"), ("e", "a"), ("b", "c")]:
        sim.step(Send(src, dst, 1))
    sim.step(StartSnapshot("c", "s1"))
    sim.run(RandomOrder(seed=11))
    markers = [m for m in sim.trace.messages if m.kind == MARKER]
    assert sorted(m.channel for m in markers) == list(range(len(sim.network.channels)))
    snap = sim.snapshot("s1")
    assert snap.complete and set(snap.processes) == set("abcde")


def test_snapshot_of_a_single_process_is_complete_at_once():
    sim = Simulator(Network(["solo"]), "tokens", {"solo": 3})
    sim.step(StartSnapshot("solo", "s1"))
    snap = sim.snapshot("s1")
    assert snap.complete and snap.processes["solo"].state == 3


# ------------------------------------------------ several initiators, several ids


def test_several_initiators_of_the_same_snapshot_each_record_spontaneously():
    sim = three(P1=2, P3=1)
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P3", "P1", 1, label="t"))
    sim.step(StartSnapshot("P3", "s1"))
    sim.run()
    snap = sim.snapshot("s1")
    assert snap.initiators == ("P1", "P3")
    assert snap.complete
    assert {p: r.state for p, r in snap.processes.items()} == {"P1": 2, "P2": 0, "P3": 0}
    # P1 was recording P3->P1 when t arrived ahead of P3's marker
    assert [m.label for m in snap.channels["P3->P1"]] == ["t"]
    assert check_snapshot(sim, "s1").ok


def test_an_initiator_that_already_got_the_marker_cannot_start_the_same_snapshot():
    sim = three()
    sim.step(StartSnapshot("P1", "s1"))
    deliver(sim, "P1->P2")
    with pytest.raises(ActionError, match=r"P2 has already recorded its state for s1"):
        sim.step(StartSnapshot("P2", "s1"))


def test_starting_the_same_snapshot_twice_at_one_process_is_an_error_that_changes_nothing():
    sim = three()
    sim.step(StartSnapshot("P1", "s1"))
    before = (list(sim.trace.actions), list(sim.trace.messages), sim.snapshots())
    with pytest.raises(
        ActionError, match=r"cannot start snapshot s1 at P1: P1 has already recorded"
    ):
        sim.step(StartSnapshot("P1", "s1"))
    assert (list(sim.trace.actions), list(sim.trace.messages), sim.snapshots()) == before


def test_concurrent_snapshots_are_told_apart_by_id():
    sim = three(P1=3, P2=3, P3=3)
    sim.step(StartSnapshot("P1", "a"))
    sim.step(Send("P2", "P1", 1, label="m"))
    sim.step(StartSnapshot("P2", "b"))
    assert kinds(sim, "P2->P1") == [(APP, "m"), (MARKER, "b")]
    sim.run()
    a, b = sim.snapshot("a"), sim.snapshot("b")
    assert a.complete and b.complete
    assert a.initiators == ("P1",) and b.initiators == ("P2",)
    # m was sent before P2 recorded in either snapshot, and accepted by P1 after it
    # recorded a but before it recorded b (P1 records b on b's marker, behind m)
    assert [x.label for x in a.channels["P2->P1"]] == ["m"]
    assert b.channels["P2->P1"] == ()
    assert a.processes["P1"].state == 3 and b.processes["P1"].state == 4
    assert [m.tag for m in sim.trace.messages if m.kind == MARKER].count("a") == 6
    assert [m.tag for m in sim.trace.messages if m.kind == MARKER].count("b") == 6
    assert check_snapshot(sim, "a").ok and check_snapshot(sim, "b").ok


def test_a_marker_of_one_snapshot_does_not_close_a_channel_of_another():
    sim = three()
    sim.step(StartSnapshot("P1", "a"))
    sim.step(StartSnapshot("P2", "b"))
    deliver(sim, "P2->P1")  # b's marker at P1: P1 records b; P2->P1 stays open for a
    assert "P2->P1" in sim.snapshot("a").pending_channels
    assert "P2->P1" not in sim.snapshot("b").pending_channels


def test_concurrent_snapshots_scenario_conserves_every_token_in_every_snapshot():
    sim = run_scenario(load_scenario(SCENARIOS / "concurrent-snapshots.json"))
    snaps = sim.snapshots()
    assert list(snaps) == ["s1", "s2", "s3"]
    assert snaps["s2"].initiators == ("P2", "P4")
    for sid, snap in snaps.items():
        assert snap.complete, sid
        held = sum(r.state for r in snap.processes.values())
        moving = sum(m.payload for msgs in snap.channels.values() for m in msgs)
        assert held + moving == 10, sid
        assert check_snapshot(sim, sid).ok, sid
        assert check_commutation(sim, sid).holds, sid


# ------------------------------------------------------------------- examples


def test_token_ring_snapshot_keeps_the_token_in_transit():
    sim = run_scenario(load_scenario(SCENARIOS / "token-ring.json"))
    snap = sim.snapshot("s1")
    assert snap.complete
    assert {p: r.state for p, r in snap.processes.items()} == {"P1": 0, "P2": 0, "P3": 0}
    assert [(m.label, m.payload) for m in snap.channels["P1->P2"]] == [("pass1", 1)]
    assert snap.channels["P2->P3"] == () and snap.channels["P3->P1"] == ()
    assert check_snapshot(sim, "s1").ok


def test_internal_actions_after_recording_are_not_in_the_recorded_events():
    sim = Simulator(Network(["P1", "P2"]))
    sim.step(Internal("P1", "A"))
    sim.step(StartSnapshot("P1"))
    sim.step(Internal("P1", "B"))
    sim.run()
    assert sim.snapshot("s1").processes["P1"].events == ("A",)
    assert sim.snapshot("s1").processes["P2"].events == ()

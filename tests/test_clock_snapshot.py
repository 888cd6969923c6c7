"""The naive clock-based snapshot: why markers are needed when clocks drift."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import assert_events_agree_with_records

from snapshotlib import (
    ActionError,
    Channel,
    ClockSnapshot,
    Deliver,
    Internal,
    Network,
    Send,
    Simulator,
    SnapshotError,
    StartSnapshot,
)
from snapshotlib.checks import check_commutation, check_snapshot
from snapshotlib.formats.scenario import load_scenario, parse_scenario, run_scenario

DRIFT = Path(__file__).resolve().parent.parent / "examples" / "scenarios" / "clock-drift.json"


def ping_pong(algorithm: ClockSnapshot) -> Simulator:
    """Two processes pass one token back and forth, with an internal event in between."""
    sim = Simulator(Network(["P1", "P2"]), "tokens", {"P1": 1}, algorithm=algorithm)
    sim.step(Send("P1", "P2", 1, label="go"))  # 0
    sim.step(Internal("P1", "a"))  # 1
    sim.step(Deliver(Channel("P1", "P2"), label="got-go"))  # 2
    sim.step(Send("P2", "P1", 1, label="back"))  # 3
    sim.step(Internal("P2", "b"))  # 4
    sim.step(Internal("P1", "c"))  # 5
    sim.step(Deliver(Channel("P2", "P1"), label="got-back"))  # 6
    sim.run()
    return sim


def test_the_local_clock_is_offset_plus_rate_times_global_time():
    alg = ClockSnapshot(5, rate={"P1": 0.5}, offset={"P1": 2, "P2": -1})
    assert alg.clock("P1", 10) == 7
    assert alg.clock("P2", 10) == 9
    assert alg.clock("P3", 10) == 10  # a process not mentioned keeps perfect time


def test_with_equal_clocks_each_process_records_at_its_first_action_at_or_after_the_time():
    sim = ping_pong(ClockSnapshot(3))
    rec = sim.algorithm.records["clock"]
    assert rec.red_from == {"P2": 3, "P1": 5}
    assert rec.states == {"P2": 1, "P1": 0}


def test_with_equal_clocks_the_recorded_cut_is_consistent():
    sim = ping_pong(ClockSnapshot(3))
    snap = sim.snapshot("clock")
    assert snap.complete
    result = check_snapshot(sim, "clock")
    assert result.ok, result.reason
    assert check_commutation(sim, "clock").holds


def test_with_equal_clocks_a_message_in_transit_is_recorded_on_its_channel():
    sim = ping_pong(ClockSnapshot(4))  # P2 records at 4, after sending back at 3
    snap = sim.snapshot("clock")
    assert [m.label for m in snap.channels["P2->P1"]] == ["back"]
    assert snap.processes["P1"].state + snap.processes["P2"].state == 0
    assert check_snapshot(sim, "clock").ok


def test_with_drift_the_same_run_records_an_inconsistent_cut_naming_the_message():
    # P2 keeps perfect time and records at 3, when it sends "back"; P1's clock is slow
    # (0.45 per tick: 2.7 at 6), so P1 accepts "back" at 6 while still white and only
    # records at the end of the run (3.15 at 7): "back" is received but never sent.
    sim = ping_pong(ClockSnapshot(3, rate={"P1": 0.45}))
    rec = sim.algorithm.records["clock"]
    assert rec.red_from["P2"] == 3 and rec.red_from["P1"] == 7  # at the end of the run
    result = check_snapshot(sim, "clock")
    assert result.ok is False
    back = next(i for i, m in enumerate(sim.trace.messages) if m.label == "back")
    assert result.witness == back
    assert "message back (sent by P2 at back, received by P1 at got-back)" in result.reason
    assert "received inside the cut but sent outside it" in result.reason


def test_clock_drift_example_records_an_inconsistent_cut_and_names_the_token():
    sim = run_scenario(load_scenario(DRIFT))
    snap = sim.snapshot("clock")
    assert snap.complete
    # the token is counted at P1 (recorded before sending it) and at P2 (after receiving)
    assert {p: r.state for p, r in snap.processes.items()} == {"P1": 1, "P2": 1}
    assert snap.processes["P2"].events == ("b1", "got-token", "b2")
    result = check_snapshot(sim, "clock")
    assert not result.ok
    assert sim.trace.messages[result.witness].label == "token"
    assert result.reason.startswith("message token (sent by P1 at token")
    dijkstra = check_commutation(sim, "clock")
    assert not dijkstra.holds and dijkstra.witness == result.witness


def test_clock_drift_example_without_drift_is_consistent():
    data = json.loads(DRIFT.read_text())
    del data["algorithm"]["rate"]
    sim = run_scenario(parse_scenario(data))
    assert check_snapshot(sim, "clock").ok


def test_an_offset_clock_records_earlier():
    sim = ping_pong(ClockSnapshot(3, offset={"P2": 2}))
    assert sim.algorithm.records["clock"].red_from["P2"] == 2  # its clock read 2+1 at 1


def test_a_process_idle_when_its_time_comes_records_at_the_end_of_the_run():
    sim = Simulator(Network(["P1", "P2"]), algorithm=ClockSnapshot(2))
    for label in "abc":
        sim.step(Internal("P1", label))
    sim.run()
    rec = sim.algorithm.records["clock"]
    assert rec.red_from == {"P1": 2, "P2": 3}
    assert sim.snapshot("clock").complete


def test_no_process_records_before_its_clock_reaches_the_time():
    sim = Simulator(Network(["P1", "P2"]), algorithm=ClockSnapshot(10))
    sim.step(Internal("P1", "a"))
    sim.run()
    assert sim.snapshot("clock").processes == {}
    assert not sim.snapshot("clock").complete


def test_a_clock_snapshot_cannot_be_started_by_a_process():
    sim = Simulator(Network(["P1", "P2"]), algorithm=ClockSnapshot(2))
    with pytest.raises(ActionError, match=r"clock snapshots cannot be started by a process"):
        sim.step(StartSnapshot("P1", "s1"))
    assert sim.time == 0


def test_the_snapshot_id_can_be_chosen():
    sim = Simulator(Network(["P1", "P2"]), algorithm=ClockSnapshot(0, snapshot_id="T0"))
    sim.run()
    assert list(sim.snapshots()) == ["T0"]


# -------------------------------------------------------------- validation


@pytest.mark.parametrize("rate", [0, -1.5])
def test_a_clock_rate_must_be_positive(rate):
    with pytest.raises(SnapshotError, match=rf"clock rate of P1 must be positive, got {rate}"):
        ClockSnapshot(3, rate={"P1": rate})


@pytest.mark.parametrize("what", ["rate", "offset"])
@pytest.mark.parametrize("value", ["fast", None, True])
def test_clock_rate_and_offset_must_be_numbers(what, value):
    with pytest.raises(SnapshotError, match=rf"clock {what} of P2 must be a number, got"):
        ClockSnapshot(3, **{what: {"P2": value}})


@pytest.mark.parametrize("value", ["3", None, True, [3]])
def test_the_recording_time_must_be_a_number(value):
    with pytest.raises(SnapshotError, match=r"must be a number"):
        ClockSnapshot(value)


@pytest.mark.parametrize("what", ["rate", "offset"])
def test_clock_drift_for_an_unknown_process_is_an_error_naming_it(what):
    alg = ClockSnapshot(3, **{what: {"P9": 1.0}})
    with pytest.raises(SnapshotError, match=r"clock drift given for unknown process 'P9'"):
        Simulator(Network(["P1", "P2"]), algorithm=alg)


def test_a_channel_stays_open_while_a_message_stamped_before_the_time_is_in_flight():
    sim = Simulator(Network(["P1", "P2"]), "tokens", {"P1": 1}, algorithm=ClockSnapshot(2))
    sim.step(Send("P1", "P2", 1, label="early"))  # stamped 0 < 2
    sim.step(Internal("P1", "x"))
    sim.step(Internal("P2", "y"))  # both clocks have passed 2 by now
    sim.algorithm.finish()
    rec = sim.algorithm.records["clock"]
    p1p2 = sim.network.channel_index(Channel("P1", "P2"))
    assert set(rec.red_from) == {"P1", "P2"}
    assert p1p2 not in rec.closed
    sim.run()
    assert p1p2 in rec.closed
    assert check_snapshot(sim, "clock").ok


@pytest.mark.parametrize("at", [0, 2, 4, 7, 100])
@pytest.mark.parametrize("rate", [None, {"P2": 0.5}, {"P1": 3.0}])
def test_the_clock_snapshots_events_say_what_it_recorded(at, rate):
    sim = ping_pong(ClockSnapshot(at, rate=rate))
    assert_events_agree_with_records(sim)
    # a receiver records its input channels from the moment it records its state
    rec = sim.algorithm.records["clock"]
    for i, c in enumerate(sim.network.channels):
        assert (i in rec.channels) == (c.dst in rec.red_from)

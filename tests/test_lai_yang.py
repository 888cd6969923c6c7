"""The non-FIFO fix: colour on every message (Lai and Yang 1987) and counting markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshotlib import Deliver, Network, Send, Simulator, StartSnapshot
from snapshotlib.algorithms.lai_yang import LaiYang
from snapshotlib.checks import check_commutation, check_snapshot
from snapshotlib.checks.predicates import conservation
from snapshotlib.course.lesson_05 import run_with
from snapshotlib.formats.scenario import load_scenario, run_scenario
from snapshotlib.workloads import random_execution, random_strongly_connected

SCENARIOS = Path(__file__).resolve().parent.parent / "examples" / "scenarios"


def two(**initial: int) -> tuple[Network, Simulator]:
    net = Network(["P1", "P2"], fifo=False)
    return net, Simulator(net, "tokens", initial, algorithm=LaiYang())


def newest(sim: Simulator, channel: str) -> int:
    return sim.in_flight(channel)[-1]


def test_a_white_process_records_before_it_accepts_a_red_message():
    net, sim = two(P1=2)
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P1", "P2", 1, label="late"))
    sim.step(Deliver(net.channel("P1", "P2"), newest(sim, "P1->P2"), label="r"))
    rec = sim.algorithm.records["s1"]
    assert rec.red_from["P2"] == sim.time - 1  # the receive itself is P2's first red action
    assert rec.states["P2"] == 0  # recorded before the token was added
    sim.run()
    assert check_snapshot(sim, "s1").ok and conservation(sim, "s1").holds


def test_a_channel_stays_open_until_every_white_message_on_it_has_arrived():
    net, sim = two(P1=2)
    sim.step(Send("P1", "P2", 1, label="early"))
    sim.step(StartSnapshot("P1", "s1"))
    marker = newest(sim, "P1->P2")
    assert sim.trace.messages[marker].payload == 1  # one white message sent before it
    sim.step(Deliver(net.channel("P1", "P2"), marker))
    snap = sim.snapshot("s1")
    assert "P1->P2" in snap.pending_channels  # the marker overtook the token: keep recording
    sim.run()
    snap = sim.snapshot("s1")
    assert snap.complete
    assert [m.label for m in snap.channels["P1->P2"]] == ["early"]
    assert check_snapshot(sim, "s1").ok and conservation(sim, "s1").holds


def test_it_fixes_both_hand_written_non_fifo_breaks():
    for name in ("non-fifo-breaks.json", "05-marker-overtakes-message.json"):
        scenario = load_scenario(SCENARIOS / name)
        assert not check_snapshot(run_scenario(scenario), "s1").ok  # Chandy–Lamport breaks
        sim = run_with(scenario, LaiYang())
        assert check_snapshot(sim, "s1").ok, name
        assert conservation(sim, "s1").holds, name


def test_it_gives_the_same_snapshot_as_chandy_lamport_on_the_fifo_worked_example():
    scenario = load_scenario(SCENARIOS / "worked-example.json")
    ours = run_with(scenario, LaiYang()).snapshot("s1")
    theirs = run_scenario(scenario).snapshot("s1")
    assert ours.processes == theirs.processes
    assert ours.channels == theirs.channels


@pytest.mark.parametrize("fifo", [False, True])
def test_every_random_run_gives_consistent_snapshots_on_which_dijkstra_holds(fifo):
    for seed in range(60):
        net = random_strongly_connected(4, extra_edges=seed % 5, seed=seed, fifo=fifo)
        sim = random_execution(
            net,
            seed=seed,
            n_actions=40,
            snapshots=2,
            initiators_per_snapshot=2,
            algorithm=LaiYang(),
        )
        for sid, snap in sim.snapshots().items():
            assert snap.complete, (seed, sid)
            assert check_snapshot(sim, sid).ok, (seed, sid, check_snapshot(sim, sid).reason)
            assert check_commutation(sim, sid, max_swaps=0).holds, (seed, sid)


def test_a_process_cannot_initiate_the_same_snapshot_twice():
    from snapshotlib import ActionError

    _, sim = two(P1=1)
    sim.step(StartSnapshot("P1", "s1"))
    with pytest.raises(ActionError, match="already recorded"):
        sim.step(StartSnapshot("P1", "s1"))


def test_undo_replays_the_algorithm_from_scratch():
    net, sim = two(P1=2)
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P1", "P2", 1))
    sim.step(Deliver(net.channel("P1", "P2"), newest(sim, "P1->P2")))
    sim.undo()
    assert "P2" not in sim.algorithm.records["s1"].red_from
    sim.redo()
    assert "P2" in sim.algorithm.records["s1"].red_from

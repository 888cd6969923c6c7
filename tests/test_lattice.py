"""The lattice of consistent cuts, and *possibly* / *definitely* over it.

Specifications on small hand-written runs, then properties on random small runs
(``workloads.random_execution``): the enumeration agrees with a brute force over every
combination of per-process prefixes, every Chandy–Lamport snapshot's cut is a node with
the recorded global state and lies between S0 and S1, and the two modalities agree with
a walk over every path from the bottom to the top.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from snapshotlib import Simulator
from snapshotlib.checks import check_commutation
from snapshotlib.checks.cut import check_frontier
from snapshotlib.checks.lattice import (
    MAX_CUTS,
    Cut,
    CutLattice,
    GlobalState,
    cut_at,
    cut_lattice,
    path_of,
    run_path,
    snapshot_cut,
    snapshot_window,
)
from snapshotlib.checks.predicates import conservation
from snapshotlib.formats.scenario import load_scenario, parse_scenario, run_scenario
from snapshotlib.trace import APP
from snapshotlib.workloads import random_execution, random_strongly_connected

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "examples" / "scenarios" / "06-tokens-lattice.json"
WORKED = ROOT / "examples" / "scenarios" / "worked-example.json"

PROPERTY = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def swap_run() -> Simulator:
    """P1 and P2 send each other their token; both are then in transit at once."""
    return run_scenario(
        parse_scenario(
            {
                "processes": ["P1", "P2"],
                "app": "tokens",
                "initial": {"P1": 1, "P2": 1},
                "steps": [
                    {"do": "send", "from": "P1", "to": "P2", "label": "a", "payload": 1},
                    {"do": "send", "from": "P2", "to": "P1", "label": "b", "payload": 1},
                    {"do": "run"},
                ],
            }
        )
    )


def all_paths(lattice: CutLattice) -> Iterator[tuple[Cut, ...]]:
    """Every path from the bottom to the top, by brute force."""

    def walk(path: list[Cut]) -> Iterator[tuple[Cut, ...]]:
        if path[-1] == lattice.top:
            yield tuple(path)
            return
        for nxt in lattice.successors(path[-1]):
            yield from walk([*path, nxt])

    yield from walk([lattice.bottom])


# ------------------------------------------------------------------ specifications


def test_two_crossing_messages_give_a_diamond_of_four_cuts_on_each_side() -> None:
    lattice = cut_lattice(swap_run())
    assert lattice.events == (("a", "receive#3"), ("b", "receive#2"))
    assert lattice.cuts == ((0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (2, 1), (2, 2))
    assert ((0, 0), (1, 0)) in lattice.edges and ((1, 1), (2, 1)) in lattice.edges
    assert (2, 0) not in lattice  # P1 cannot receive b before P2 sends it
    assert lattice.count_paths() == 4


def test_the_global_state_of_a_cut_has_its_senders_states_and_the_messages_in_transit() -> None:
    lattice = cut_lattice(swap_run())
    both_sent = lattice.state((1, 1))
    assert both_sent.processes == {"P1": 0, "P2": 0}
    assert [m.label for m in both_sent.channels["P1->P2"]] == ["a"]
    assert [m.label for m in both_sent.channels["P2->P1"]] == ["b"]
    assert all(not msgs for msgs in lattice.state(lattice.top).channels.values())
    with pytest.raises(KeyError, match=r"\(2, 0\) is not a consistent cut"):
        lattice.state((2, 0))


def test_a_global_state_can_be_checked_like_a_snapshot() -> None:
    sim = swap_run()
    lattice = cut_lattice(sim)
    for cut in lattice.cuts:
        assert conservation(sim, lattice.state(cut).as_snapshot()).holds, cut


def test_crossing_messages_leave_both_empty_handed_definitely() -> None:
    lattice = cut_lattice(swap_run())

    def both_empty(s: GlobalState) -> bool:
        return bool(s.processes["P1"] == 0 and s.processes["P2"] == 0)

    definitely = lattice.definitely(both_empty)
    assert definitely.holds and definitely.witness == ((1, 1),)
    assert "every path from (0, 0) to (2, 2) passes through one of (1, 1)" in definitely.reason
    possibly = lattice.possibly(both_empty)
    assert possibly.holds and possibly.witness[0] == (0, 0) and possibly.witness[-1] == (1, 1)


def test_a_predicate_the_run_avoided_is_possible_but_not_definite() -> None:
    lattice = cut_lattice(swap_run())

    def only_p1_holds(s: GlobalState) -> bool:
        return bool(s.processes["P1"] == 1 and s.processes["P2"] == 0)

    assert lattice.holding(only_p1_holds) == ((0, 1), (2, 1))
    assert lattice.possibly(only_p1_holds).holds
    definitely = lattice.definitely(only_p1_holds)
    assert not definitely.holds
    assert definitely.witness[0] == lattice.bottom and definitely.witness[-1] == lattice.top
    assert not any(only_p1_holds(lattice.state(c)) for c in definitely.witness)
    assert "avoids it" in definitely.reason


def test_a_predicate_that_never_holds_is_neither() -> None:
    lattice = cut_lattice(swap_run())
    never = lattice.possibly(lambda s: s.processes["P1"] == 5)
    assert not never.holds and never.witness == ()
    assert never.reason == "it holds at none of the 7 consistent cuts"
    assert not lattice.definitely(lambda s: s.processes["P1"] == 5).holds


def test_a_predicate_true_at_the_start_holds_definitely() -> None:
    lattice = cut_lattice(swap_run())
    result = lattice.definitely(lambda s: s.processes["P1"] == 1)
    assert result.holds and result.witness == (lattice.bottom,)


def test_too_many_cuts_are_refused_with_the_count() -> None:
    sim = random_execution(random_strongly_connected(4, seed=1), seed=3, n_actions=60)
    with pytest.raises(ValueError, match=r"more than 50 consistent cuts \(\d+ found"):
        cut_lattice(sim, max_cuts=50)
    assert MAX_CUTS >= 1000


def test_an_unfinished_snapshot_has_no_cut_yet() -> None:
    sim = run_scenario(load_scenario(WORKED), until=4)
    with pytest.raises(ValueError, match="not recorded"):
        snapshot_cut(sim, "s1")
    with pytest.raises(ValueError, match="not complete"):
        snapshot_window(sim, "s1")


def test_the_worked_example_s1_lies_between_the_states_when_it_began_and_ended() -> None:
    sim = run_scenario(load_scenario(WORKED))
    window = snapshot_window(sim, "s1")
    # S0: A, B and I done; SSS adds F, G, H of P2; S1: all of P1 but J not yet
    assert window.begin == (2, 0, 1)
    assert window.recorded == (2, 3, 1)
    assert window.end == (5, 3, 1)
    lattice = cut_lattice(sim)
    assert all(c in lattice for c in (window.begin, window.recorded, window.end))


def test_the_lesson_run_recorded_a_state_it_never_passed_through() -> None:
    sim = run_scenario(load_scenario(LESSON))
    lattice = cut_lattice(sim)
    window = snapshot_window(sim, "s1")
    assert len(lattice) == 20 and lattice.count_paths() == 44
    assert window.recorded == (1, 1, 1)
    assert window.recorded not in run_path(sim)
    assert window.begin in run_path(sim) and window.end in run_path(sim)
    nobody = lattice.holding(lambda s: all(v == 0 for v in s.processes.values()))
    assert nobody == (window.recorded,)  # the only state with every token in transit


# --------------------------------------------------------------------- properties


@st.composite
def small_runs(draw: Callable[..., Any], max_actions: int = 8) -> Simulator:
    """A random run of 2 or 3 processes, a few actions, one or two snapshots, drained."""
    n = draw(st.integers(2, 3))
    return random_execution(
        random_strongly_connected(n, draw(st.integers(0, n - 2)), draw(st.integers(0, 99))),
        seed=draw(st.integers(0, 2**32 - 1)),
        n_actions=draw(st.integers(0, max_actions)),
        snapshots=draw(st.integers(1, 2)),
        initiators_per_snapshot=draw(st.integers(1, n)),
        p_deliver=draw(st.sampled_from([0.2, 0.5])),
        p_send=draw(st.sampled_from([0.5, 1.0])),
        initial={f"P{i}": draw(st.integers(0, 2)) for i in range(1, n + 1)},
    )


@PROPERTY
@given(small_runs())
def test_the_enumeration_finds_exactly_the_consistent_prefixes(sim: Simulator) -> None:
    lattice = cut_lattice(sim)
    trace = sim.trace
    lengths = [len(trace.process_actions(p)) for p in sim.network.processes]
    brute = {
        cut
        for cut in itertools.product(*(range(n + 1) for n in lengths))
        if check_frontier(trace, dict(zip(sim.network.processes, cut, strict=True))).ok
    }
    assert set(lattice.cuts) == brute
    assert len(lattice.cuts) == len(brute)  # each once
    assert [sum(c) for c in lattice.cuts] == sorted(sum(c) for c in lattice.cuts)
    expected_edges = {
        (a, b)
        for a in brute
        for b in brute
        if sum(b) == sum(a) + 1 and all(y >= x for x, y in zip(a, b, strict=True))
    }
    assert set(lattice.edges) == expected_edges


@PROPERTY
@given(small_runs())
def test_the_bottom_is_the_initial_state_and_the_top_the_final_one(sim: Simulator) -> None:
    lattice = cut_lattice(sim)
    bottom, top = lattice.state(lattice.bottom), lattice.state(lattice.top)
    assert lattice.bottom == tuple(0 for _ in sim.network.processes)
    assert bottom.processes == {
        p: sim.app.initial_state(p, sim.initial.get(p)) for p in sim.network.processes
    }
    assert all(not msgs for msgs in bottom.channels.values())
    assert lattice.top == cut_at(sim, sim.time)
    assert top.processes == sim.states
    assert sorted(m.id for msgs in top.channels.values() for m in msgs) == sorted(
        m for m in sim.in_flight() if sim.trace.messages[m].kind == APP
    )
    assert all(a <= b for c in lattice.cuts for a, b in zip(lattice.bottom, c, strict=True))
    assert all(a <= b for c in lattice.cuts for a, b in zip(c, lattice.top, strict=True))


@PROPERTY
@given(small_runs())
def test_every_snapshot_records_a_node_between_s0_and_s1_with_its_global_state(
    sim: Simulator,
) -> None:
    lattice = cut_lattice(sim)
    path = run_path(sim)
    assert all(c in lattice for c in path)  # the run's own order is a path of the lattice
    for sid, snap in sim.snapshots().items():
        window = snapshot_window(sim, sid)
        assert window.recorded in lattice, sid
        assert window.begin in path and window.end in path  # real states of the run
        for lo, hi in ((window.begin, window.recorded), (window.recorded, window.end)):
            assert all(a <= b for a, b in zip(lo, hi, strict=True)), (sid, lo, hi)
        state = lattice.state(window.recorded)
        assert state.processes == {p: r.state for p, r in snap.processes.items()}
        assert {n: [m.id for m in msgs] for n, msgs in state.channels.items()} == {
            n: [m.id for m in msgs] for n, msgs in snap.channels.items()
        }


@PROPERTY
@given(small_runs())
def test_dijkstras_reordering_is_a_path_through_s0_sss_and_s1(sim: Simulator) -> None:
    lattice = cut_lattice(sim)
    for sid in sim.snapshots():
        reordered = path_of(sim, check_commutation(sim, sid).order)
        assert all(c in lattice for c in reordered), sid
        window = snapshot_window(sim, sid)
        where = [reordered.index(c) for c in (window.begin, window.recorded, window.end)]
        assert where == sorted(where), sid


@PROPERTY
@given(small_runs(max_actions=7), st.integers(0, 2**16), st.sampled_from([0.1, 0.3, 0.6]))
def test_possibly_and_definitely_agree_with_every_path(
    sim: Simulator, seed: int, density: float
) -> None:
    lattice = cut_lattice(sim)
    assume(lattice.count_paths() <= 3000)
    rng = random.Random(seed)
    chosen = {c for c in lattice.cuts if rng.random() < density}
    first, value = sim.network.processes[0], rng.choice([0, 1, 2])

    def member(s: GlobalState) -> bool:
        return s.cut in chosen

    def first_holds(s: GlobalState) -> bool:
        return bool(s.processes[first] == value)

    paths = list(all_paths(lattice))
    assert len(paths) == lattice.count_paths()
    assert {c for p in paths for c in p} == set(lattice.cuts)
    for predicate in (member, first_holds):
        where = set(lattice.holding(predicate))
        possibly, definitely = lattice.possibly(predicate), lattice.definitely(predicate)
        assert possibly.holds == bool(where)
        assert definitely.holds == all(any(c in where for c in p) for p in paths)
        if definitely.holds:
            assert possibly.holds  # definitely implies possibly
            assert set(definitely.witness) <= where
            assert all(any(c in definitely.witness for c in p) for p in paths)
        else:
            assert definitely.witness in paths and not where & set(definitely.witness)
        if possibly.holds:
            assert possibly.witness[0] == lattice.bottom and possibly.witness[-1] in where
            assert all(b in lattice.successors(a) for a, b in itertools.pairwise(possibly.witness))

"""Exhaustive search: every schedule of a small system, and the shortest counterexample.

The claims: the reduced searches (sleep sets, persistent sets, both) reach exactly the
quiescent states and verdicts the plain search reaches; a state's verdict is the one the
engine's own checks give on any run that reaches it; the first violation found is a
shortest one; the counterexample replays as a scenario file to the same failure.
"""

from __future__ import annotations

import inspect
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snapshotlib import Network, Simulator
from snapshotlib.algorithms import ChandyLamport, LaiYang, SnapshotAlgorithm
from snapshotlib.checks.verdict import snapshot_verdict
from snapshotlib.course.exhaustive import search_table, three_processes
from snapshotlib.formats.scenario import load_scenario, parse_scenario, run_scenario
from snapshotlib.formats.shiviz import to_shiviz
from snapshotlib.search import (
    Invariant,
    SnapshotPlan,
    System,
    each_sends,
    explore,
    search,
    system_of_scenario,
)

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


def three(fifo: bool, sends: int = 1, algorithm: Any = ChandyLamport) -> System:
    """Three processes, 2 tokens each, each sending ``sends``, one snapshot by anyone."""
    return three_processes(fifo, algorithm, sends)


def without_depth(states: dict[Any, frozenset[str]]) -> dict[Any, frozenset[str]]:
    """Quiescent states by key without its first part, the depth (which only a search
    with persistent sets puts there)."""
    return {key[1:]: failed for key, failed in states.items()}


# ------------------------------------------------------------ validation
systems = st.builds(
    dict,
    n=st.integers(2, 3),
    channels=st.sampled_from(["complete", "ring"]),
    fifo=st.booleans(),
    algorithm=st.sampled_from([ChandyLamport, LaiYang]),
    sends=st.integers(0, 2),
    initiators=st.sampled_from(["one", "all"]),
    at=st.integers(1, 3),
    app=st.sampled_from(["tokens", "events"]),
    seed=st.integers(0, 10**6),
)


def random_system(spec: dict[str, Any]) -> System:
    rng = random.Random(spec["seed"])
    procs = [f"P{i + 1}" for i in range(spec["n"])]
    net = Network(procs, spec["channels"], fifo=spec["fifo"])
    programs = each_sends(net, spec["app"], 0)
    budget = spec["sends"]  # sends in all, spread at random
    chosen: dict[str, list[Any]] = {p: [] for p in procs}
    for k in range(budget):
        p = rng.choice(procs)
        dst = rng.choice([c.dst for c in net.outputs(p)])
        payload = 1 if spec["app"] == "tokens" else None
        from snapshotlib import Send

        chosen[p].append(Send(p, dst, payload, f"m{k + 1}"))
    programs = {p: tuple(v) for p, v in chosen.items() if v}
    at = tuple(rng.sample(procs, min(spec["at"], len(procs))))
    return System(
        net,
        spec["app"],
        {p: 2 for p in procs} if spec["app"] == "tokens" else {},
        spec["algorithm"],
        programs=programs,
        snapshots=(SnapshotPlan("s1", at, spec["initiators"]),),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(systems)
def test_every_reduction_reaches_the_quiescent_states_and_verdicts_of_brute_force(
    spec: dict[str, Any],
) -> None:
    system = random_system(spec)
    plain = search(system, reduction=False, collect=True)
    assert plain.quiescent is not None and plain.quiescent
    for mode in ("sleep", "persistent", True):
        reduced = search(system, reduction=mode, collect=True)
        assert reduced.quiescent is not None
        assert without_depth(reduced.quiescent) == without_depth(plain.quiescent), mode
    sleep = search(system, reduction="sleep", collect=True)
    # sleep sets prune transitions, never states
    assert sleep.stats.distinct == plain.stats.distinct


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(systems)
def test_a_states_verdict_is_the_engines_verdict_on_a_run_that_reaches_it(
    spec: dict[str, Any],
) -> None:
    """Random runs through the search's own transitions: where a snapshot completes,
    the verdict the search keeps (from its audit) says what the engine's checks say."""
    system = random_system(spec)
    s = explore._Search(system, explore.BUILT_IN, False, None, False, None, True)
    rng = random.Random(spec["seed"])
    for _ in range(10):
        node = s.root
        while True:
            moves = s.moves(node)
            children = [c for m in moves if isinstance(c := s.child(node, m), explore._Node)]
            if not children:
                break
            node = rng.choice(children)
            if node.sim is None:  # made from a recorded effect: its run is replayed
                s.rebuild(node)
        for sid, failed in node.done:
            engine = snapshot_verdict(node.sim, sid)
            names = dict(failed)
            assert ("consistent" in names) == (not engine.cut.ok), (sid, names, engine.reason)
            assert ("dijkstra" in names) == (not engine.dijkstra.holds), (sid, names)
            if engine.conserved is not None:
                assert ("conservation" in names) == (not engine.conserved.holds)


# ---------------------------------------------------------------- verdicts
def test_chandy_lamport_holds_in_every_interleaving_on_fifo_channels() -> None:
    result = search(three(fifo=True))
    assert result.ok and result.exhaustive
    assert result.stats.quiescent > 0
    assert result.stats.distinct < search(three(fifo=True), reduction=False).stats.distinct


def test_non_fifo_channels_break_chandy_lamport_with_a_shortest_run() -> None:
    reduced = search(three(fifo=False))
    plain = search(three(fifo=False), reduction=False)
    assert not reduced.ok and not plain.ok
    assert reduced.violation is not None and plain.violation is not None
    assert reduced.violation.depth == plain.violation.depth
    assert reduced.violation.invariant == "consistent"
    # nothing shorter exists: a search bounded below it finds nothing
    bounded = System(**{**three(fifo=False).__dict__, "depth": plain.violation.depth - 1})
    assert search(bounded, reduction=False).ok


def test_a_shortest_counterexample_is_confirmed_after_a_search_with_persistent_sets() -> None:
    net = Network(["P1", "P2", "P3"], fifo=True)

    class RecordsLate(ChandyLamport):
        """Closes a channel on a later marker without recording what came on it."""

        def on_app_receive(self, channel: int, message: int) -> None:
            return None

    system = System(net, "tokens", {p: 3 for p in net.processes}, RecordsLate,
                    programs=each_sends(net, "tokens", 1),
                    snapshots=(SnapshotPlan("s1", ("P1",)),))  # fmt: skip
    assert RecordsLate.local_actions
    result = search(system, reduction="persistent")
    plain = search(system, reduction=False)
    assert result.violation is not None and plain.violation is not None
    assert result.shortest_confirmed
    assert result.violation.depth == plain.violation.depth


def test_lai_yang_survives_the_search_that_breaks_chandy_lamport() -> None:
    net = Network(["P1", "P2"], fifo=False)
    system = System(net, "tokens", {"P1": 2, "P2": 2}, LaiYang,
                    programs=each_sends(net, "tokens", 2),
                    snapshots=(SnapshotPlan("s1", net.processes),))  # fmt: skip
    assert search(system).ok
    broken = search(System(**{**system.__dict__, "algorithm": ChandyLamport}))
    assert broken.violation is not None


def test_every_example_scenario_that_should_hold_holds() -> None:
    for name in ("token-ring", "worked-example", "02-two-initiators", "06-bank-transfers"):
        result = search(system_of_scenario(load_scenario(SCENARIOS / f"{name}.json")))
        assert result.ok, (name, result.summary())


def test_the_marker_overtaking_a_message_is_found_as_written() -> None:
    result = search(
        system_of_scenario(load_scenario(SCENARIOS / "05-marker-overtakes-message.json"))
    )
    assert result.violation is not None
    assert "early" in result.violation.reason


def test_a_depth_bound_says_the_search_was_not_exhaustive() -> None:
    system = System(**{**three(fifo=True, sends=2).__dict__, "depth": 5})
    result = search(system)
    assert result.ok and not result.exhaustive
    assert result.stats.at_bound > 0
    assert "depth bound" in result.summary()


def test_a_search_stops_at_its_limit_of_states_and_says_so() -> None:
    # by default too: a learner's larger system must not fill a Binder session's memory
    assert inspect.signature(search).parameters["max_states"].default == explore.MAX_STATES
    result = search(three(fifo=True, sends=2), max_states=500)
    assert result.limited and result.ok and not result.exhaustive
    assert result.stats.distinct == 501
    assert result.summary().startswith("STOPPED after 500 states: no violation so far")
    assert search_table([("FIFO", result)]).rows[0][-1] == "holds as far as searched"
    whole = search(three(fifo=True), max_states=None)
    assert whole.exhaustive and not whole.limited


def test_a_state_waiting_to_be_expanded_holds_no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # what lets a search reach ten times the states in a Binder session's memory: the
    # runs alive at once are those along one path (each waiting state's run is replayed
    # when its turn comes) and the few that waiting states may keep, however many wait
    import gc

    held = 10
    monkeypatch.setattr(explore, "HELD_RUNS", held)
    gc.collect()
    before = sum(type(o) is Simulator and bool(o.__dict__) for o in gc.get_objects())

    rebuild = explore._Search.rebuild
    calls: list[int] = []
    waiting: list[int] = []  # states waiting, now and then (counting them is slow)
    holding: list[int] = []  # of them, those holding a run (the one expanded does)
    alive: list[int] = []  # runs alive at all

    def counting(self: Any, node: Any) -> Simulator:
        sim = rebuild(self, node)
        calls.append(1)
        if len(calls) % 20 == 0:
            nodes = [n for level in self.frontier for n, _ in level]
            waiting.append(len(nodes))
            holding.append(sum(n.sim is not None for n in nodes))
            runs = sum(type(o) is Simulator and bool(o.__dict__) for o in gc.get_objects())
            alive.append(runs - before)
        return sim

    monkeypatch.setattr(explore._Search, "rebuild", counting)
    result = search(three(fifo=True), max_states=None)
    assert result.ok and result.exhaustive
    depth = result.stats.depth
    assert max(waiting) > 10 * (depth + 2 + held), waiting
    assert max(holding) <= held + 1, holding  # and the one expanded
    assert max(alive) <= depth + 2 + held, alive  # and the path rebuilt, and the start


@pytest.mark.parametrize(
    "how",
    [
        {"fifo": True},
        {"fifo": False},  # a violation, found after replays
        {"fifo": True, "count_runs": True},
        {"fifo": False, "reduction": False, "collect": True},
        {"fifo": True, "depth": 6},
    ],
)
def test_replaying_every_waiting_state_finds_what_keeping_their_runs_finds(
    how: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    how = dict(how)
    system = three(fifo=how.pop("fifo"))
    if "depth" in how:
        system = System(**{**system.__dict__, "depth": how.pop("depth")})

    def outcome() -> tuple[Any, ...]:
        r = search(system, max_states=None, **how)
        v = r.violation
        return (r.stats.__dict__ | {"seconds": 0}, r.quiescent, v and (v.invariant, v.path))

    kept = outcome()
    monkeypatch.setattr(explore, "HELD_RUNS", 0)
    assert outcome() == kept


def test_every_run_a_waiting_state_kept_is_given_back() -> None:
    s = explore._Search(three(fifo=True, sends=2), explore.BUILT_IN, True, None, False, None)
    s.run()
    assert s.held == 0 and s.stats.distinct > explore.HELD_RUNS


@pytest.mark.parametrize("bad", [0, -1, 2.5, "100"])
def test_a_limit_of_states_that_is_not_a_whole_number_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_states: expected a whole number"):
        search(three(fifo=True), max_states=bad)


def test_a_snapshot_that_never_completes_is_a_violation_at_quiescence() -> None:
    class NeverCloses(ChandyLamport):
        def on_control(self, process: str, channel: int, message: int, action: int) -> None:
            rec = self.records[self.host.message(message).tag or ""]
            if process not in rec.red_from:
                super().on_control(process, channel, message, action)

    net = Network(["P1", "P2"])
    system = System(net, "tokens", {"P1": 1, "P2": 1}, NeverCloses,
                    snapshots=(SnapshotPlan("s1", ("P1",)),))  # fmt: skip
    result = search(system)
    assert result.violation is not None
    assert result.violation.invariant == "completes"
    assert "never completes" in result.violation.reason


def test_a_handler_that_raises_stops_the_run_and_is_reported() -> None:
    class Crashes(ChandyLamport):
        def on_control(self, process: str, channel: int, message: int, action: int) -> None:
            raise RuntimeError("boom")

    net = Network(["P1", "P2"])
    system = System(net, "events", {}, Crashes, snapshots=(SnapshotPlan("s1", ("P1",)),))
    result = search(system)
    assert result.violation is not None
    assert result.violation.invariant == "runs"
    assert "RuntimeError: boom" in result.violation.reason


def test_a_predicate_of_your_own_is_checked() -> None:
    def p1_keeps_its_tokens(sim: Simulator) -> bool | str:
        return sim.states["P1"] >= 2 or f"P1 holds {sim.states['P1']}"

    result = search(three(fifo=True), [Invariant("p1", p1_keeps_its_tokens, at="every")])
    assert result.violation is not None
    assert result.violation.reason.startswith("P1 holds")
    assert not result.stats.reduction  # a predicate of every state needs every state


def test_an_algorithm_without_local_actions_is_searched_without_reduction() -> None:
    class Mine(SnapshotAlgorithm):
        name = "mine"

        def start(self, process: str, snapshot_id: str, action: int) -> None:
            rec = self.records.get(snapshot_id) or self.new_record(snapshot_id)
            self.record_state(rec, process, action)

    net = Network(["P1", "P2"])
    system = System(net, "tokens", {"P1": 1, "P2": 1}, Mine,
                    snapshots=(SnapshotPlan("s1", ("P1", "P2"), "all"),))  # fmt: skip
    result = search(system, ["completes"])
    assert not result.stats.reduction
    assert result.violation is not None  # nobody closes a channel


# ------------------------------------------------------------ counterexample
def test_the_counterexample_replays_to_the_same_failure_everywhere(tmp_path: Path) -> None:
    result = search(three(fifo=False))
    data = result.counterexample()
    path = tmp_path / "cex.json"
    path.write_text(json.dumps(data))
    sim = run_scenario(load_scenario(path))
    verdict = snapshot_verdict(sim, "s1")
    # the cut is consistent as Dijkstra's argument says, the recorded channel is wrong
    assert verdict.dijkstra.holds and not verdict.cut.ok
    assert "missing from the recorded state" in (verdict.reason or "")
    assert to_shiviz(sim).count("\n") > len(data["steps"])
    assert parse_scenario(data).steps == result.scenario().steps


# ------------------------------------------------------------------- input
@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ({"sendz": 1}, "unknown field(s) sendz"),
        ({"sends": -1}, "search.sends' must be a whole number"),
        ({"sends": 1, "programs": []}, "give 'sends' or 'programs', not both"),
        (
            {"programs": [{"do": "deliver", "from": "P1", "to": "P2"}]},
            "the search makes the deliveries",
        ),
        ({"snapshots": [{"id": "s1", "at": ["P9"]}]}, "field 'at' must be"),
        ({"snapshots": [{"id": "s1", "initiators": "some"}]}, "field 'initiators'"),
        ({"snapshots": "s1"}, "'search.snapshots' must be a list"),
    ],
)
def test_a_bad_search_section_is_named(section: dict[str, Any], expected: str) -> None:
    from snapshotlib.formats.scenario import ScenarioError

    doc = {"processes": ["P1", "P2"], "app": "tokens", "steps": [], "search": section}
    with pytest.raises(ScenarioError, match=r"sc\.json") as e:
        system_of_scenario(parse_scenario(doc, source="sc.json"))
    assert expected in str(e.value)


def test_an_unknown_invariant_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="expected some of consistent"):
        search(three(fifo=True), ["consistant"])


def test_a_class_of_your_own_reaches_the_end_states_of_the_engines() -> None:
    """A copy of the engine's class that the search cannot recognise (so it is copied and
    keyed the generic way, with no reduction) ends in exactly the engine's snapshots."""
    from snapshotlib.course.exercises.searching import outcome

    class Mine(ChandyLamport):
        local_actions = False

    for fifo in (True, False):
        ends: dict[str, set[str]] = {}
        for cls in (ChandyLamport, Mine):
            seen: set[str] = set()

            def note(sim: Simulator, seen: set[str] = seen) -> None:
                seen.add(repr(outcome(sim)))

            system = System(**{**three(fifo=fifo).__dict__, "algorithm": cls})
            search(system, [Invariant("end", note)], reduction=False)
            ends[cls.__name__] = seen
        assert ends["Mine"] == ends["ChandyLamport"] and ends["Mine"]


def test_runs_are_counted_as_a_brute_force_walk_counts_them() -> None:
    net = Network(["P1", "P2"])
    system = System(net, "tokens", {"P1": 1, "P2": 1}, ChandyLamport,
                    programs=each_sends(net, "tokens", 1),
                    snapshots=(SnapshotPlan("s1", ("P1",)),))  # fmt: skip
    s = explore._Search(system, ("consistent",), False, None, False, None, True)

    def walk(node: explore._Node) -> int:
        if node.sim is None:  # made from a recorded effect: its run is replayed
            s.rebuild(node)
        kids = [k for m in s.moves(node) if isinstance(k := s.child(node, m), explore._Node)]
        return 1 if not kids else sum(walk(k) for k in kids)

    assert search(system, count_runs=True).stats.runs == walk(s.root) == 102


def test_an_exercise_report_that_is_not_a_search_report_is_said_to_be_so() -> None:
    """The exercises' reports come back from the learner's process, which may replace
    the code that makes them: a report of the wrong shape is a failure that says so,
    never a crash of the grader's comparison."""
    from snapshotlib.course.exercises.ex02 import PUBLIC_SEARCH, search_recipe
    from snapshotlib.course.exercises.searching import search_difference

    want = search_recipe(ChandyLamport, PUBLIC_SEARCH)
    assert search_difference(want, want, "the ring") is None
    forged = [
        [1, 2],
        {"ok": True, "exhaustive": True, "outcomes": 5},
        {**want, "states": "many"},
        {**want, "outcomes": [1]},
        {**want, "ok": False, "steps": ["z"]},
    ]
    for report in forged:
        said = search_difference(report, want, "the ring")
        assert said is not None and "not the search's report" in said, (report, said)
    # well formed, but with steps the search never writes: shown as they are
    odd = {**want, "ok": False, "invariant": "x", "reason": "y", "steps": [{"do": 5}]}
    said = search_difference(odd, want, "the ring")
    assert said is not None and "1. {'do': 5}" in said and "'x' breaks" in said
    # says all is well, with no outcome: not the engine's end states
    liar = {**want, "outcomes": []}
    said = search_difference(liar, want, "the ring")
    assert said is not None and "missing" in said

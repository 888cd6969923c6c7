"""Checks on recorded executions: causality, cuts, Dijkstra's colouring and commutation."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshotlib import (
    ChandyLamport,
    Channel,
    Deliver,
    Internal,
    Network,
    Send,
    Simulator,
    StartSnapshot,
)
from snapshotlib.checks import (
    check_commutation,
    check_frontier,
    check_snapshot,
    concurrent,
    count_inversions,
    happens_before,
    lamport_clocks,
    lamport_order,
    vector_clocks,
)
from snapshotlib.colouring import RED, WHITE, colouring, snapshot_state
from snapshotlib.formats.scenario import load_scenario, run_scenario
from snapshotlib.trace import APP, RECEIVE

SCENARIOS = Path(__file__).resolve().parent.parent / "examples" / "scenarios"


def scenario(name: str) -> Simulator:
    return run_scenario(load_scenario(SCENARIOS / f"{name}.json"))


def action_named(sim: Simulator, label: str) -> int:
    (index,) = [i for i, a in enumerate(sim.trace.actions) if a.label == label]
    return index


def message_named(sim: Simulator, label: str) -> int:
    (ident,) = [m for m, rec in enumerate(sim.trace.messages) if rec.label == label]
    return ident


# ------------------------------------------------------------------ causality


def hand_trace() -> Simulator:
    """a: x, send m1 to b | b: receive m1, send m2 to c | c: y, receive m2."""
    sim = Simulator(Network(["a", "b", "c"]))
    sim.step(Internal("a", "x"))  # 0
    sim.step(Send("a", "b", label="m1"))  # 1
    sim.step(Internal("c", "y"))  # 2
    sim.step(Deliver(Channel("a", "b"), label="r1"))  # 3
    sim.step(StartSnapshot("b", "s1"))  # 4: not an application action
    sim.step(Send("b", "c", label="m2"))  # 5
    sim.step(Deliver(Channel("b", "c")))  # 6: b's marker (control)
    sim.step(Deliver(Channel("b", "c"), label="r2"))  # 7
    return sim


def test_vector_clocks_count_the_events_of_each_process_known_at_each_action():
    clocks = vector_clocks(hand_trace().trace, ["a", "b", "c"])
    assert clocks == [
        (1, 0, 0),
        (2, 0, 0),
        (0, 0, 1),
        (2, 1, 0),
        None,
        (2, 2, 0),
        None,
        (2, 2, 2),
    ]


def test_vector_clocks_with_control_events_let_markers_carry_causality():
    clocks = vector_clocks(hand_trace().trace, ["a", "b", "c"], include_control=True)
    assert clocks[4] == (2, 2, 0)  # the snapshot start is b's second event
    assert clocks[5] == (2, 3, 0)
    assert clocks[6] == (2, 2, 2)  # c accepts the marker sent at b's second event
    assert clocks[7] == (2, 3, 3)  # then m2, sent at b's third
    assert happens_before(clocks, 4, 6)


def test_happens_before_follows_process_order_and_messages_transitively():
    clocks = vector_clocks(hand_trace().trace, ["a", "b", "c"])
    assert happens_before(clocks, 0, 1)  # process order
    assert happens_before(clocks, 1, 3)  # a message
    assert happens_before(clocks, 0, 7)  # a chain across three processes
    assert happens_before(clocks, 2, 7)
    assert not happens_before(clocks, 7, 0)
    assert not happens_before(clocks, 3, 3)


def test_concurrent_actions_are_those_ordered_neither_way():
    clocks = vector_clocks(hand_trace().trace, ["a", "b", "c"])
    assert concurrent(clocks, 0, 2) and concurrent(clocks, 2, 0)
    assert concurrent(clocks, 2, 5)
    assert not concurrent(clocks, 1, 3)
    assert not concurrent(clocks, 3, 3)


def test_lamport_clocks_count_one_past_the_larger_of_the_process_and_the_message():
    times = lamport_clocks(hand_trace().trace, ["a", "b", "c"])
    # a: 1, 2 (send m1); c: 1; b accepts m1 sent at 2: 3; b's snapshot start and the
    # marker are left out; b sends m2 at 4; c accepts it: max(1, 4) + 1
    assert times == [1, 2, 1, 3, None, 4, None, 5]


def test_lamport_clocks_with_control_events_count_the_start_and_the_marker():
    times = lamport_clocks(hand_trace().trace, ["a", "b", "c"], include_control=True)
    assert times == [1, 2, 1, 3, 4, 5, 5, 6]


def test_lamport_order_sorts_by_time_then_by_the_processes_order():
    trace = hand_trace().trace
    times = lamport_clocks(trace, ["a", "b", "c"])
    assert lamport_order(times, trace, ["a", "b", "c"]) == [0, 2, 1, 3, 5, 7]
    assert lamport_order(times, trace, ["c", "b", "a"]) == [2, 0, 1, 3, 5, 7]


def test_happens_before_refuses_actions_without_clocks():
    clocks = vector_clocks(hand_trace().trace, ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"two actions that have vector clocks"):
        happens_before(clocks, 4, 7)


def test_messages_sent_by_handlers_carry_the_clock_of_the_action_that_ran_the_handler():
    from snapshotlib import Application

    class Relay(Application):
        name = "relay"

        def on_receive(self, process, state, src, payload, send):
            if process == "b":
                send("c", payload)
            return state

    sim = Simulator(Network(["a", "b", "c"]), app=Relay())
    sim.step(Send("a", "b", "hi"))
    sim.run()
    clocks = vector_clocks(sim.trace, ["a", "b", "c"])
    assert clocks == [(1, 0, 0), (1, 1, 0), (1, 1, 1)]


# ----------------------------------------------------------------------- cuts


def test_frontier_that_includes_each_receive_with_its_send_is_consistent():
    trace = hand_trace().trace
    result = check_frontier(trace, {"a": 2, "b": 1, "c": 1})
    assert result.ok and result.witness is None


def test_empty_and_full_frontiers_are_consistent():
    trace = hand_trace().trace
    assert check_frontier(trace, {"a": 0, "b": 0, "c": 0}).ok
    assert check_frontier(trace, {"a": 2, "b": 2, "c": 2}).ok


def test_frontier_with_a_receive_but_not_its_send_is_inconsistent_and_names_the_message():
    sim = hand_trace()
    result = check_frontier(sim.trace, {"a": 2, "b": 1, "c": 2})
    assert not result.ok
    assert result.witness == message_named(sim, "m2")
    assert result.reason == (
        "message m2 (sent by b at m2, received by c at r2) is received inside the cut "
        "but sent outside it"
    )


def test_frontier_beyond_a_process_history_is_an_error():
    with pytest.raises(ValueError, match=r"frontier of a is 3, but a has 2 events"):
        check_frontier(hand_trace().trace, {"a": 3})


# --------------------------------------------------------- snapshot checks


def test_chandy_lamport_snapshots_of_the_examples_are_consistent_cuts():
    for name in ("worked-example", "token-ring", "concurrent-snapshots"):
        sim = scenario(name)
        for sid in sim.snapshots():
            result = check_snapshot(sim, sid)
            assert result.ok, (name, sid, result.reason)


def test_check_snapshot_detects_a_message_missing_from_a_channel_state():
    sim = scenario("token-ring")
    ch = sim.network.channel_index(Channel("P1", "P2"))
    sim.algorithm.records["s1"].channels[ch].clear()
    result = check_snapshot(sim, "s1")
    assert not result.ok
    assert result.witness == message_named(sim, "pass1")
    assert "message pass1 (sent by P1 at pass1, received by P2 at got1)" in result.reason
    assert "in transit across the cut but is missing from the recorded state of P1->P2" in (
        result.reason
    )


def test_check_snapshot_detects_a_message_extra_in_a_channel_state():
    sim = scenario("token-ring")
    ch = sim.network.channel_index(Channel("P2", "P3"))
    pass2 = message_named(sim, "pass2")
    sim.algorithm.records["s1"].channels[ch].append(pass2)
    result = check_snapshot(sim, "s1")
    assert not result.ok
    assert result.witness == pass2
    assert result.reason.endswith("is recorded on P2->P3 but was not in transit across the cut")
    assert "message pass2" in result.reason


def test_check_snapshot_detects_a_channel_state_out_of_order():
    sim = Simulator(Network(["P1", "P2"]), "tokens", {"P1": 3})
    sim.step(StartSnapshot("P2"))
    sim.step(Send("P1", "P2", 1, label="first"))
    sim.step(Send("P1", "P2", 2, label="second"))
    sim.run()
    ch = sim.network.channel_index(Channel("P1", "P2"))
    sim.algorithm.records["s1"].channels[ch].reverse()
    result = check_snapshot(sim, "s1")
    assert not result.ok
    assert "the recorded state of P1->P2 has its messages out of order" in result.reason


class ForgetfulChandyLamport(ChandyLamport):
    """A deliberately wrong variant: it never records the messages in transit."""

    name = "forgetful"

    def on_app_receive(self, channel, message):
        pass


def test_check_snapshot_catches_an_algorithm_that_forgets_channel_state():
    sim = Simulator(Network(["P1", "P2"]), "tokens", {"P2": 1}, algorithm=ForgetfulChandyLamport())
    sim.step(StartSnapshot("P1"))
    sim.step(Send("P2", "P1", 1, label="coin"))
    sim.run()
    assert sim.snapshot("s1").complete
    result = check_snapshot(sim, "s1")
    assert not result.ok
    assert result.witness == message_named(sim, "coin")
    assert "missing from the recorded state of P2->P1" in result.reason


def test_check_snapshot_reports_an_incomplete_snapshot():
    sim = Simulator(Network(["P1", "P2", "P3"]))
    sim.step(StartSnapshot("P1"))
    result = check_snapshot(sim, "s1")
    assert not result.ok
    assert result.reason == "the snapshot is not complete: P2, P3 not recorded"
    sim.step(Deliver(Channel("P1", "P2")))
    sim.step(Deliver(Channel("P1", "P3")))
    result = check_snapshot(sim, "s1")
    assert not result.ok
    assert result.reason == "the snapshot is not complete: channel P2->P1 is still recording"


# ------------------------------------------------------------------ colouring

WORKED_ACTION_COLOURS = {
    "A": WHITE,
    "B": WHITE,
    "I": WHITE,
    "C": RED,  # after P1 initiated
    "F": WHITE,  # P2 records only after H
    "G": WHITE,
    "H": WHITE,
    "D": RED,
    "E": RED,
    "J": RED,  # P3 recorded on P1's fast marker, before J
}


def test_worked_example_colours_every_application_action():
    sim = scenario("worked-example")
    col = colouring(sim, "s1")
    got = {sim.trace.actions[i].label: col.action(i) for i, _ in col.app_actions()}
    assert got == WORKED_ACTION_COLOURS
    assert [i for i, red in col.app_actions() if red] == [action_named(sim, x) for x in "CDEJ"]


def test_worked_example_colours_every_message_as_the_action_that_sent_it():
    sim = scenario("worked-example")
    col = colouring(sim, "s1")
    got = {rec.label: col.message(m) for m, rec in enumerate(sim.trace.messages) if rec.kind == APP}
    assert got == {"B": WHITE, "I": WHITE, "H": WHITE, "E": RED}


def test_worked_example_colours_every_process_white_then_red_once():
    sim = scenario("worked-example")
    col = colouring(sim, "s1")
    # the action index where each process turns red: P1 initiates after B (and I);
    # P3 on P1's fast marker; P2 on P3's marker, after H
    turned = {"P1": 3, "P3": 4, "P2": 10}
    assert dict(col.red_from) == turned
    for p, at in turned.items():
        assert [col.process(p, t) for t in range(len(sim.trace.actions) + 1)] == (
            [WHITE] * (at + 1) + [RED] * (len(sim.trace.actions) - at)
        ), p
        assert col.process(p) == RED


def test_a_snapshot_that_never_reaches_a_process_leaves_it_white():
    sim = Simulator(Network(["P1", "P2"]))
    sim.step(StartSnapshot("P1"))
    sim.step(Internal("P2", "w"))
    col = colouring(sim, "s1")
    assert col.process("P2") == WHITE
    assert col.action(1) == WHITE


# ------------------------------------------------------------------------ SSS


def test_worked_example_sss_channels_are_the_white_messages_accepted_in_red_actions():
    sim = scenario("worked-example")
    sss = snapshot_state(sim, "s1")
    h = message_named(sim, "H")
    assert sss.channels == {
        "P1->P2": (),  # B is white but accepted at G, a white action
        "P1->P3": (),  # E is accepted in red J, but E is red
        "P2->P1": (h,),  # H is white and accepted in red D
        "P2->P3": (),
        "P3->P1": (),
        "P3->P2": (),  # I is white but accepted at F, a white action
    }
    assert sss.unsettled == {}


def test_sss_channels_equal_the_channel_states_chandy_lamport_recorded():
    for name in ("worked-example", "token-ring", "concurrent-snapshots"):
        sim = scenario(name)
        for sid, snap in sim.snapshots().items():
            sss = snapshot_state(sim, sid)
            recorded = {c: tuple(m.id for m in msgs) for c, msgs in snap.channels.items()}
            assert sss.channels == recorded, (name, sid)


def _tokens_at(sim: Simulator, process: str, before: int) -> int:
    """Tokens of ``process`` just before trace index ``before``, recomputed from the trace."""
    tokens = sim.initial.get(process, 0)
    for a in sim.trace.actions[:before]:
        if a.process != process:
            continue
        if a.kind == "send":
            tokens -= sim.trace.messages[a.message].payload
        elif a.kind == RECEIVE:
            tokens += sim.trace.messages[a.message].payload
    return tokens


def test_sss_machine_states_are_the_states_at_the_transition_from_white_to_red():
    sim = scenario("concurrent-snapshots")
    for sid in ("s1", "s2", "s3"):
        sss = snapshot_state(sim, sid)
        col = colouring(sim, sid)
        expected = {p: _tokens_at(sim, p, col.red_from[p]) for p in sim.network.processes}
        assert dict(sss.states) == expected, sid


def test_sss_marks_white_messages_still_in_flight_as_unsettled():
    sim = Simulator(Network(["P1", "P2"]), "tokens", {"P1": 1})
    sim.step(Send("P1", "P2", 1, label="slow"))
    sim.step(StartSnapshot("P1"))
    sss = snapshot_state(sim, "s1")
    assert sss.unsettled == {"P1->P2": (message_named(sim, "slow"),)}
    assert sss.channels["P1->P2"] == ()


# ---------------------------------------------------------------- commutation


@pytest.mark.parametrize(
    ("reds", "expected"),
    [
        ([], 0),
        ([True], 0),
        ([False, True], 0),
        ([True, False], 1),
        ([True, True, False, False], 4),
        ([False, True, False, True, False], 3),
        ([True, False, True, False], 3),
    ],
)
def test_count_inversions_counts_red_before_white_pairs(reds, expected):
    assert count_inversions(reds) == expected


def _apply_swaps(sim: Simulator, snapshot_id: str, result) -> list[int]:
    """Apply the listed swaps to ``original``, checking each is one Dijkstra allows."""
    col = colouring(sim, snapshot_id)
    trace = sim.trace
    seq = list(result.original)
    for s in result.swaps:
        assert (seq[s.position], seq[s.position + 1]) == (s.red, s.white)
        assert col.is_red(s.red) and not col.is_red(s.white)
        assert trace.actions[s.red].process != trace.actions[s.white].process
        white = trace.actions[s.white]
        assert not (white.kind == RECEIVE and trace.messages[white.message].sent_by == s.red)
        assert s.legal
        seq[s.position], seq[s.position + 1] = seq[s.position + 1], seq[s.position]
    return seq


def test_worked_example_commutes_into_all_white_then_all_red():
    sim = scenario("worked-example")
    result = check_commutation(sim, "s1")
    assert result.holds and result.legal and result.state_matches
    assert result.witness is None
    name = sim.trace.action_name
    assert [name(i) for i in result.original] == list("ABICFGHDEJ")
    assert [name(i) for i in result.order] == list("ABIFGHCDEJ")
    assert result.n_white == 6
    assert result.inversions == 3  # C before F, G and H
    assert [(name(s.red), name(s.white)) for s in result.swaps] == [
        ("C", "F"),
        ("C", "G"),
        ("C", "H"),
    ]


@pytest.mark.parametrize(
    ("name", "sid"),
    [
        ("worked-example", "s1"),
        ("token-ring", "s1"),
        ("concurrent-snapshots", "s1"),
        ("concurrent-snapshots", "s2"),
        ("concurrent-snapshots", "s3"),
    ],
)
def test_listed_swaps_are_one_per_inversion_and_turn_original_into_order(name, sid):
    sim = scenario(name)
    result = check_commutation(sim, sid)
    assert result.holds, result.reason
    assert len(result.swaps) == result.inversions
    assert _apply_swaps(sim, sid, result) == list(result.order)
    col = colouring(sim, sid)
    reds = [col.is_red(i) for i in result.order]
    assert reds == sorted(reds)  # all white, then all red
    assert [i for i in result.order if not col.is_red(i)] == [
        i for i in result.original if not col.is_red(i)
    ]
    assert [i for i in result.order if col.is_red(i)] == [
        i for i in result.original if col.is_red(i)
    ]


def test_concurrent_snapshot_s2_needs_nine_swaps():
    result = check_commutation(scenario("concurrent-snapshots"), "s2")
    assert result.inversions == 9 and len(result.swaps) == 9


def test_swaps_are_not_listed_when_there_are_more_than_asked_for():
    sim = scenario("concurrent-snapshots")
    result = check_commutation(sim, "s2", max_swaps=3)
    assert result.swaps is None
    assert result.inversions == 9
    assert result.holds


def test_non_fifo_red_message_accepted_in_white_action_breaks_the_argument_and_is_named():
    sim = scenario("non-fifo-breaks")
    result = check_commutation(sim, "s1")
    late = message_named(sim, "late")
    assert not result.holds and not result.legal
    assert result.witness == late
    assert result.reason.startswith(
        "red message late (sent by P1 at late, after it turned red) is accepted in white "
        "action early-receive of P2"
    )
    last = result.swaps[-1]
    assert last.legal is False
    assert (last.red, last.white) == (action_named(sim, "late"), action_named(sim, "early-receive"))
    assert all(s.legal for s in result.swaps[:-1])


def test_non_fifo_breaks_example_is_an_inconsistent_cut_too():
    sim = scenario("non-fifo-breaks")
    result = check_snapshot(sim, "s1")
    assert not result.ok and result.witness == message_named(sim, "late")
    held = sum(r.state for r in sim.snapshot("s1").processes.values())
    assert held == 3  # three tokens recorded where there are two


def test_commutation_check_compares_the_intermediate_state_with_sss():
    sim = scenario("token-ring")
    sim.algorithm.records["s1"].states["P3"] = 99
    result = check_commutation(sim, "s1")
    assert not result.holds
    assert result.legal and not result.state_matches
    assert result.reason == (
        "the state of P3 between the white and red parts is 0, but SSS records 99"
    )


# ------------------------------------------------------------- the run's verdict


def test_the_verdict_of_a_right_run_holds_for_every_snapshot() -> None:
    from snapshotlib.checks import run_verdict

    verdict = run_verdict(scenario("concurrent-snapshots"))
    assert verdict.ok and verdict.reason is None
    assert len(verdict.snapshots) >= 2
    assert all(v.consistent and v.dijkstra.holds for v in verdict.snapshots)


def test_the_verdict_names_the_first_wrong_snapshot_and_what_is_wrong() -> None:
    from snapshotlib.checks import check_snapshot, run_verdict

    sim = scenario("non-fifo-breaks")
    verdict = run_verdict(sim)
    (wrong,) = [v for v in verdict.snapshots if not v.ok]
    assert not verdict.ok and not wrong.consistent
    assert (
        verdict.reason
        == f"{wrong.snapshot_id}: inconsistent: {check_snapshot(sim, wrong.snapshot_id).reason}"
    )


def test_the_verdict_counts_conservation_only_where_the_application_conserves() -> None:
    from snapshotlib.checks import snapshot_verdict

    tokens = scenario("token-ring")
    assert snapshot_verdict(tokens, next(iter(tokens.snapshots()))).conserved is not None
    events = scenario("worked-example")
    assert snapshot_verdict(events, next(iter(events.snapshots()))).conserved is None


def test_a_run_without_a_snapshot_has_no_verdict_to_trust() -> None:
    from snapshotlib.checks import run_verdict

    sim = Simulator(Network(["P1", "P2"]))
    assert not run_verdict(sim).ok
    assert run_verdict(sim).reason == "no snapshot was taken"

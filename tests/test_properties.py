"""Properties of Chandy–Lamport and Dijkstra's argument on random executions (hypothesis).

Random strongly connected networks of 2–6 processes, random schedules, one or several
initiators per snapshot and one or several concurrent snapshots (``workloads``). On FIFO
channels every snapshot must be right; on non-FIFO channels the search must find one
that is not. Every test is derandomized and uses no example database, so CI sees the
same examples on every run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from support import assert_events_agree_with_records, whole

from snapshotlib import Deliver, Internal, Network, Send, Simulator
from snapshotlib.checks import (
    check_commutation,
    check_snapshot,
    happens_before,
    lamport_clocks,
    lamport_order,
    vector_clocks,
)
from snapshotlib.checks.cut import check_cut
from snapshotlib.checks.predicates import conservation
from snapshotlib.colouring import BACKWARDS, IN_TRANSIT, colouring
from snapshotlib.trace import APP, INTERNAL, RECEIVE, SEND
from snapshotlib.workloads import (
    actions_of,
    max_extra_edges,
    random_execution,
    random_strongly_connected,
)

# One profile for every test here, independent of the global one: deterministic, no
# database, no deadline (the first example pays for imports).
PROPERTY = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SEARCH = settings(PROPERTY, max_examples=2000)


@dataclass(frozen=True)
class Run:
    """The parameters of one random execution; hypothesis shows these when a test fails."""

    n: int
    extra_edges: int
    graph_seed: int
    seed: int
    n_actions: int
    snapshots: int
    initiators: int
    p_deliver: float
    p_send: float
    tokens: tuple[int, ...]
    fifo: bool = True

    def network(self) -> Network:
        return random_strongly_connected(self.n, self.extra_edges, self.graph_seed, fifo=self.fifo)

    def initial(self) -> dict[str, int]:
        return {f"P{i + 1}": t for i, t in enumerate(self.tokens)}

    def build(self) -> Simulator:
        return random_execution(
            self.network(),
            seed=self.seed,
            n_actions=self.n_actions,
            initial=self.initial(),
            snapshots=self.snapshots,
            initiators_per_snapshot=self.initiators,
            p_deliver=self.p_deliver,
            p_send=self.p_send,
        )


@st.composite
def runs(draw: Callable[..., Any], fifo: bool = True, max_actions: int = 120) -> Run:
    n = draw(st.integers(2, 6))
    return Run(
        n=n,
        extra_edges=draw(st.integers(0, max_extra_edges(n))),
        graph_seed=draw(st.integers(0, 2**16)),
        seed=draw(st.integers(0, 2**32 - 1)),
        n_actions=draw(st.integers(0, max_actions)),
        snapshots=draw(st.integers(1, 3)),
        initiators=draw(st.integers(1, n)),
        p_deliver=draw(st.sampled_from([0.1, 0.3, 0.5, 0.8])),
        p_send=draw(st.sampled_from([0.3, 0.7, 1.0])),
        tokens=tuple(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))),
        fifo=fifo,
    )


# ------------------------------------------------------------------ Lamport clocks
@settings(PROPERTY, max_examples=100)
@given(runs(max_actions=60), st.booleans())
def test_lamport_clocks_keep_the_clock_condition_and_their_order_extends_happens_before(
    run: Run, control: bool
) -> None:
    sim = run.build()
    procs = sim.network.processes
    times = lamport_clocks(sim.trace, procs, include_control=control)
    clocks = vector_clocks(sim.trace, procs, include_control=control)
    order = lamport_order(times, sim.trace, procs)
    assert [t is None for t in times] == [c is None for c in clocks]
    place = {a: k for k, a in enumerate(order)}
    assert len(place) == sum(t is not None for t in times)  # each timed action once
    for a in place:
        for b in place:
            if happens_before(clocks, a, b):
                assert times[a] < times[b]  # the clock condition
                assert place[a] < place[b]  # the total order never contradicts it
    # (time, process) names each event once: the order is total and every process can
    # compute it
    stamps = {(times[a], sim.trace.actions[a].process) for a in place}
    assert len(stamps) == len(place)


# ---------------------------------------------------------------- FIFO: always right
@PROPERTY
@given(runs())
def test_every_chandy_lamport_snapshot_completes_as_a_consistent_cut(run: Run) -> None:
    sim = run.build()
    assert not sim.has_pending()
    assert len(sim.snapshots()) == run.snapshots
    for sid, snap in sim.snapshots().items():
        assert snap.complete and not snap.pending_channels, sid
        assert all(r.done for r in snap.processes.values()), sid
        result = check_snapshot(sim, sid)
        assert result.ok, result.reason


@PROPERTY
@given(runs())
def test_dijkstras_commutation_holds_with_one_swap_per_inversion(run: Run) -> None:
    sim = run.build()
    trace = sim.trace
    for sid in sim.snapshots():
        result = check_commutation(sim, sid)
        assert result.holds and result.legal and result.state_matches, result.reason
        assert sorted(result.order) == sorted(result.original)
        if result.swaps is None:
            continue
        assert len(result.swaps) == result.inversions
        # The swaps, applied in order, turn the recorded execution into the white-then-red
        # one; each exchanges a red action with the white action of another machine after it.
        red_from = sim.algorithm.records[sid].red_from
        order = list(result.original)
        for s in result.swaps:
            assert s.legal
            assert order[s.position : s.position + 2] == [s.red, s.white]
            red, white = trace.actions[s.red], trace.actions[s.white]
            assert red.process != white.process
            assert s.red >= red_from[red.process] and s.white < red_from[white.process]
            order[s.position : s.position + 2] = [s.white, s.red]
        assert tuple(order) == result.order


@PROPERTY
@given(runs())
def test_every_snapshot_conserves_tokens(run: Run) -> None:
    sim = run.build()
    total = sum(run.tokens)
    for sid, snap in sim.snapshots().items():
        in_processes = sum(r.state for r in snap.processes.values())
        in_channels = sum(m.payload for msgs in snap.channels.values() for m in msgs)
        assert in_processes + in_channels == total, sid
        assert conservation(sim, sid).holds
    assert sum(sim.states.values()) == total


@PROPERTY
@given(runs())
def test_white_then_red_replays_through_sss_to_the_runs_final_state(run: Run) -> None:
    """Dijkstra's equivalent computation, replayed independently of ``check_commutation``:
    every step must be enabled (``step`` refuses otherwise), the state between the white
    and red parts must be the recorded snapshot, and the end must be the run's end."""
    sim = run.build()
    trace = sim.trace
    channels = sim.network.channels
    for sid in sim.snapshots():
        result = check_commutation(sim, sid)
        snap = sim.snapshot(sid)
        replay = Simulator(sim.network, sim.app, sim.initial)
        new_id: dict[int, int] = {}
        for k, i in enumerate(result.order):
            if k == result.n_white:
                assert replay.states == {p: r.state for p, r in snap.processes.items()}
                in_flight = {
                    str(c): [new_id[m.id] for m in snap.channels[str(c)]] for c in channels
                }
                assert in_flight == {str(c): list(replay.queues[j]) for j, c in enumerate(channels)}
            a = trace.actions[i]
            if a.kind == INTERNAL:
                replay.step(Internal(a.process, a.label))
            elif a.kind == SEND:
                payload = trace.messages[a.message].payload
                replay.step(Send(a.process, channels[a.channel].dst, payload, a.label))
                new_id[a.message] = len(replay.trace.messages) - 1
            else:
                assert a.kind == RECEIVE
                replay.step(Deliver(channels[a.channel], new_id[a.message], a.label))
        assert replay.states == sim.states
        assert not replay.has_pending()


@PROPERTY
@given(runs())
def test_same_seed_gives_the_same_trace(run: Run) -> None:
    assert whole(run.build()) == whole(run.build())


@PROPERTY
@given(runs())
def test_random_execution_takes_only_enabled_actions(run: Run) -> None:
    """Replaying the generated trace through the checked ``step`` rebuilds it exactly."""
    sim = run.build()
    again = Simulator(sim.network, sim.app, sim.initial)
    for action in actions_of(sim):
        again.step(action)
    assert whole(again) == whole(sim)


@settings(PROPERTY, max_examples=100)
@given(runs(max_actions=40), st.floats(0, 1), st.integers(1, 8))
def test_undoing_the_last_k_actions_then_redoing_them_gives_back_the_same_run(
    run: Run, where: float, k: int
) -> None:
    # Stop part-way (a drained run ends in deliveries only): sends, internal events and
    # snapshot starts must also come back with their payloads and labels.
    script = actions_of(run.build())
    sim = Simulator(run.network(), "tokens", run.initial())
    for action in script[: round(where * len(script))]:
        sim.step(action)
    before = whole(sim)
    k = min(k, len(sim.trace.actions))
    for _ in range(k):
        assert sim.undo()
    assert list(sim.trace.actions) == before[0][: len(before[0]) - k]
    for _ in range(k):
        assert sim.redo()
    assert not sim.redo()
    assert whole(sim) == before


def test_the_workloads_really_have_concurrent_initiators_and_snapshots() -> None:
    """Guard against a generator that never exercises the hard cases."""
    net = random_strongly_connected(5, 4, seed=3)
    several = concurrent = 0
    for seed in range(20):
        sim = random_execution(net, seed=seed, n_actions=80, snapshots=3, initiators_per_snapshot=3)
        recs = sim.algorithm.records.values()
        several += any(len(r.initiators) > 1 for r in recs)
        # two snapshots overlap when one starts before the other has reached everyone
        spans = sorted((min(r.red_from.values()), max(r.red_from.values())) for r in recs)
        concurrent += any(b[0] < a[1] for a, b in pairwise(spans))
    assert several >= 10 and concurrent >= 5


# ------------------------------------------------- non-FIFO: the search finds a break
def in_transit(sim: Simulator, sid: str) -> tuple[set[int], set[int]]:
    """By definition, from where each process turned red: the messages in transit across
    the cut, and the orphans (received inside the cut but sent outside it)."""
    red_from = sim.algorithm.records[sid].red_from
    trace = sim.trace
    transit, orphans = set(), set()
    for m, msg in enumerate(trace.messages):
        if msg.kind != APP:
            continue
        c = sim.network.channels[msg.channel]
        sent_inside = msg.sent_by < red_from[c.src]
        got = trace.received_by[m]
        received_inside = 0 <= got < red_from[c.dst]
        if sent_inside and not received_inside:
            transit.add(m)
        if received_inside and not sent_inside:
            orphans.add(m)
    return transit, orphans


def broken_snapshots(sim: Simulator) -> list[str]:
    return [sid for sid in sim.snapshots() if not check_snapshot(sim, sid).ok]


def broken_commutations(sim: Simulator) -> list[str]:
    return [sid for sid in sim.snapshots() if not check_commutation(sim, sid).holds]


def test_non_fifo_channels_let_the_search_find_a_wrong_chandy_lamport_snapshot() -> None:
    run = find(runs(fifo=False), lambda r: bool(broken_snapshots(r.build())), settings=SEARCH)
    sim = run.build()
    sid = broken_snapshots(sim)[0]
    result = check_snapshot(sim, sid)
    assert result.witness is not None
    assert sim.trace.message_name(result.witness) in result.reason
    # It really is wrong: the witness is an orphan, or the recorded channel state is not
    # the set of messages in transit across the cut.
    transit, orphans = in_transit(sim, sid)
    recorded = {m.id for msgs in sim.snapshot(sid).channels.values() for m in msgs}
    assert result.witness in orphans | (transit ^ recorded)


def test_non_fifo_channels_let_the_search_find_a_red_message_accepted_in_a_white_action() -> None:
    run = find(runs(fifo=False), lambda r: bool(broken_commutations(r.build())), settings=SEARCH)
    sim = run.build()
    sid = broken_commutations(sim)[0]
    result = check_commutation(sim, sid)
    m = result.witness
    assert m is not None and not result.legal
    assert sim.trace.message_name(m) in result.reason
    # Dijkstra's sharp condition fails: sent by a red action, accepted by a white one.
    red_from = sim.algorithm.records[sid].red_from
    msg = sim.trace.messages[m]
    c = sim.network.channels[msg.channel]
    assert msg.sent_by >= red_from[c.src]
    assert sim.trace.received_by[m] < red_from[c.dst]
    assert m in in_transit(sim, sid)[1]
    # and the Chandy–Lamport snapshot of the same run is an inconsistent cut
    assert not check_snapshot(sim, sid).ok


# ------------------------------------------------- the trace's events tell the story
@PROPERTY
@given(runs())
def test_chandy_lamports_events_agree_with_what_it_recorded(run: Run) -> None:
    assert_events_agree_with_records(run.build())


@PROPERTY
@given(runs(fifo=False))
def test_lai_yangs_events_agree_with_what_it_recorded(run: Run) -> None:
    from snapshotlib.algorithms import LaiYang

    sim = random_execution(
        run.network(), seed=run.seed, n_actions=run.n_actions, initial=run.initial(),
        snapshots=run.snapshots, initiators_per_snapshot=run.initiators,
        p_deliver=run.p_deliver, p_send=run.p_send, algorithm=LaiYang,
    )  # fmt: skip
    assert_events_agree_with_records(sim)


# ------------------------------------------------- the read model says what was recorded
@PROPERTY
@given(runs())
def test_a_snapshots_read_model_agrees_with_its_colouring_and_the_trace(run: Run) -> None:
    sim = run.build()
    trace = sim.trace
    assert sim.snapshot_ids() == list(sim.snapshots())
    for sid in sim.snapshot_ids():
        snap, col = sim.snapshot(sid), colouring(sim, sid)
        assert snap.red_from == sim.red_from(sid) == dict(col.red_from)
        for p, part in snap.processes.items():
            assert part.events == tuple(trace.labels_before(p, part.red_from))
            assert snap.part_done(p) == part.done and snap.recorded(p)
        # on FIFO channels the recorded channel states are exactly the messages that
        # lie in transit across the cut, and none crosses it backwards
        for c in sim.network.channels:
            name = str(c)
            assert snap.closed(name)
            in_transit = [
                m
                for m in range(len(trace.messages))
                if trace.messages[m].kind == APP
                and trace.messages[m].channel == sim.network.channel_index(c)
                and col.where(m) == IN_TRANSIT
            ]
            assert sorted(snap.message_ids(name)) == in_transit, (sid, name)
        assert all(
            col.where(m) != BACKWARDS for m, msg in enumerate(trace.messages) if msg.kind == APP
        )


@PROPERTY
@given(runs(fifo=False))
def test_a_message_crosses_the_cut_backwards_exactly_when_the_cut_is_inconsistent(
    run: Run,
) -> None:
    sim = run.build()
    for sid in sim.snapshot_ids():
        col = colouring(sim, sid)
        backwards = [
            m
            for m, msg in enumerate(sim.trace.messages)
            if msg.kind == APP and col.where(m) == BACKWARDS
        ]
        assert (backwards == []) == check_cut(sim.trace, sim.red_from(sid)).ok, sid

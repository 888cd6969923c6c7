"""The simulator: atomic actions, enabling, the trace, schedulers and time travel."""

from __future__ import annotations

import pytest
from support import whole

from snapshotlib import (
    ActionError,
    AppError,
    Application,
    Channel,
    Deliver,
    FifoOrder,
    Internal,
    Manual,
    Network,
    RandomOrder,
    Scripted,
    Send,
    Simulator,
    SnapshotAlgorithm,
    StartSnapshot,
    make_app,
    make_scheduler,
)
from snapshotlib.trace import APP, MARKER, NOT_RECEIVED


def two(app="tokens", fifo=True, **initial):
    return Simulator(Network(["P1", "P2"], fifo=fifo), app=app, initial=initial)


# ----------------------------------------------------------- step and enabled


def test_step_takes_an_internal_action_and_records_it():
    sim = two(app="events")
    sim.step(Internal("P1", "A"))
    assert sim.time == 1
    a = sim.trace.actions[0]
    assert (a.kind, a.process, a.label, a.channel, a.message) == ("internal", "P1", "A", -1, -1)


def test_enabled_is_empty_when_nothing_is_in_flight():
    assert two().enabled() == []
    assert not two().has_pending()


def test_enabled_lists_one_delivery_per_non_empty_fifo_channel():
    sim = two(P1=3, P2=3)
    sim.step(Send("P1", "P2", 1))
    sim.step(Send("P1", "P2", 1))
    sim.step(Send("P2", "P1", 1))
    assert sim.enabled() == [Deliver(Channel("P1", "P2")), Deliver(Channel("P2", "P1"))]
    assert sim.has_pending()


def test_enabled_on_non_fifo_channels_lists_every_message_in_flight():
    sim = two(fifo=False, P1=3)
    sim.step(Send("P1", "P2", 1))
    sim.step(Send("P1", "P2", 2))
    ch = Channel("P1", "P2")
    assert sim.enabled() == [Deliver(ch, 0), Deliver(ch, 1)]


def test_step_rejects_delivery_on_an_empty_channel_listing_what_is_enabled():
    sim = two(P2=1)
    sim.step(Send("P2", "P1", 1))
    with pytest.raises(ActionError) as e:
        sim.step(Deliver(Channel("P1", "P2")))
    assert str(e.value) == (
        "cannot deliver P1->P2: channel P1->P2 is empty; enabled: deliver P2->P1"
    )


def test_step_rejection_says_when_nothing_at_all_is_enabled():
    with pytest.raises(ActionError, match=r"enabled: no deliveries \(all channels empty\)"):
        two().step(Deliver(Channel("P1", "P2")))


def test_rejected_step_changes_nothing():
    sim = two(P1=2)
    sim.step(Send("P1", "P2", 1))
    before = whole(sim)
    with pytest.raises(ActionError):
        sim.step(Deliver(Channel("P2", "P1")))
    assert whole(sim) == before


def test_fifo_channel_delivers_only_its_head():
    sim = two(P1=3)
    sim.step(Send("P1", "P2", 1, label="first"))
    sim.step(Send("P1", "P2", 2, label="second"))
    first, second = sim.in_flight("P1->P2")
    with pytest.raises(ActionError) as e:
        sim.step(Deliver(Channel("P1", "P2"), second))
    assert f"P1->P2 is FIFO and message #{first} is ahead of #{second}" in str(e.value)
    assert "enabled: deliver P1->P2" in str(e.value)
    sim.step(Deliver(Channel("P1", "P2")))
    assert sim.trace.actions[-1].message == first
    assert sim.states["P2"] == 1


def test_fifo_channel_accepts_naming_its_head_explicitly():
    sim = two(P1=3)
    sim.step(Send("P1", "P2", 1))
    head = sim.in_flight("P1->P2")[0]
    sim.step(Deliver(Channel("P1", "P2"), head))
    assert sim.trace.received_by[head] == 1


def test_non_fifo_channel_may_deliver_any_message_in_flight():
    sim = two(fifo=False, P1=3)
    sim.step(Send("P1", "P2", 1, label="older"))
    sim.step(Send("P1", "P2", 2, label="newer"))
    older, newer = sim.in_flight("P1->P2")
    sim.step(Deliver(Channel("P1", "P2"), newer, label="got-newer"))
    assert sim.in_flight("P1->P2") == [older]
    assert sim.states["P2"] == 2
    receive = sim.trace.actions[-1]
    assert (receive.kind, receive.label, receive.message) == ("receive", "got-newer", newer)


def test_non_fifo_delivery_without_a_message_takes_the_oldest():
    sim = two(fifo=False, P1=3)
    sim.step(Send("P1", "P2", 1))
    sim.step(Send("P1", "P2", 2))
    sim.step(Deliver(Channel("P1", "P2")))
    assert sim.states["P2"] == 1


def test_delivering_a_message_not_in_flight_on_the_channel_is_rejected():
    sim = two(fifo=False, P1=3, P2=1)
    sim.step(Send("P1", "P2", 1))
    sim.step(Send("P2", "P1", 1))
    other = sim.in_flight("P2->P1")[0]
    with pytest.raises(ActionError, match=rf"message #{other} is not in flight on P1->P2"):
        sim.step(Deliver(Channel("P1", "P2"), other))


def test_step_rejects_an_unknown_process_naming_the_known_ones():
    with pytest.raises(ActionError, match=r"unknown process 'P7' \(known: P1, P2\)"):
        two().step(Internal("P7"))
    with pytest.raises(ActionError, match=r"unknown process 'P7'"):
        two().step(StartSnapshot("P7"))


def test_step_rejects_a_send_without_a_channel_naming_where_it_could_send():
    sim = Simulator(Network(["a", "b", "c"], "ring"))
    with pytest.raises(ActionError, match=r"no channel a->c \(a can send to: b\)"):
        sim.step(Send("a", "c"))


def test_step_rejects_a_delivery_on_a_channel_that_does_not_exist():
    sim = Simulator(Network(["a", "b", "c"], "ring"))
    with pytest.raises(ActionError, match=r"there is no channel c->b"):
        sim.step(Deliver(Channel("c", "b")))


def test_step_rejects_what_is_not_an_action():
    with pytest.raises(ActionError, match=r"is not an action"):
        two().step("deliver P1->P2")  # type: ignore[arg-type]


def test_initial_value_for_an_unknown_process_is_an_error():
    with pytest.raises(ActionError, match=r"unknown process 'P9'"):
        Simulator(Network(["P1", "P2"]), "tokens", {"P9": 1})


# -------------------------------------------------------- sends and the app


def test_send_refused_by_the_app_changes_nothing():
    sim = two(P1=1)
    sim.step(Send("P1", "P2", 1))
    before = whole(sim)
    with pytest.raises(ActionError, match=r"P1 has 0 token\(s\) and cannot send 1"):
        sim.step(Send("P1", "P2", 1))
    assert whole(sim) == before


def test_send_with_a_payload_the_app_cannot_read_is_refused():
    sim = two(P1=1)
    with pytest.raises(ActionError, match=r"payload must be a whole number"):
        sim.step(Send("P1", "P2", -1))
    assert sim.time == 0 and sim.trace.messages == []


def test_send_moves_tokens_out_and_delivery_moves_them_in():
    sim = two(P1=5)
    sim.step(Send("P1", "P2", 3))
    assert sim.states == {"P1": 2, "P2": 0}
    sim.step(Deliver(Channel("P1", "P2")))
    assert sim.states == {"P1": 2, "P2": 3}


def test_bank_refuses_an_overdraft():
    sim = Simulator(Network(["A", "B"]), "bank", {"A": 10})
    with pytest.raises(ActionError, match=r"A has 10 unit of money\(s\) and cannot send 11"):
        sim.step(Send("A", "B", 11))
    sim.step(Send("A", "B", 10))
    assert sim.states["A"] == 0


class _Fanout(Application):
    """On an internal action, send to every neighbour named in the label."""

    name = "fanout"

    def initial_state(self, process, value):
        return 0

    def on_internal(self, process, state, label, send):
        for dst in (label or "").split(","):
            send(dst, f"{process}:{state}")
        return state + 1

    def on_receive(self, process, state, src, payload, send):
        return state


def test_handler_may_send_one_message_on_each_output_channel_in_one_action():
    sim = Simulator(Network(["a", "b", "c"]), app=_Fanout())
    sim.step(Internal("a", "b,c"))
    assert [(m.channel, m.payload, m.sent_by) for m in sim.trace.messages] == [
        (sim.network.channel_index(Channel("a", "b")), "a:0", 0),
        (sim.network.channel_index(Channel("a", "c")), "a:0", 0),
    ]
    assert sim.states["a"] == 1


def test_handler_sending_twice_on_one_channel_in_one_action_is_refused_and_changes_nothing():
    sim = Simulator(Network(["a", "b", "c"]), app=_Fanout())
    sim.step(Internal("a", "b"))
    before = whole(sim)
    with pytest.raises(ActionError, match=r"a already sent on a->b in this action"):
        sim.step(Internal("a", "c,b,b"))
    assert whole(sim) == before


def test_a_refused_action_keeps_the_redo_history():
    sim = Simulator(Network(["a", "b"]), app=_Fanout())
    sim.step(Internal("a", "b"))
    sim.undo()
    with pytest.raises(ActionError):
        sim.step(Internal("a", "b,b"))
    assert sim.redo() is True
    assert [m.payload for m in sim.trace.messages] == ["a:0"]


def test_handler_may_send_on_the_same_channel_again_in_a_later_action():
    sim = Simulator(Network(["a", "b"]), app=_Fanout())
    sim.step(Internal("a", "b"))
    sim.step(Internal("a", "b"))
    assert [m.payload for m in sim.trace.messages] == ["a:0", "a:1"]


def test_handler_sending_where_there_is_no_channel_is_refused():
    sim = Simulator(Network(["a", "b", "c"], "ring"), app=_Fanout())
    with pytest.raises(ActionError, match=r"cannot internal c at a: a has no channel to c"):
        sim.step(Internal("a", "c"))


# ------------------------------------------------------------------ the trace


def test_every_action_and_message_is_recorded_with_process_kind_label_channel_and_id():
    sim = two(P1=2)
    p1p2 = sim.network.channel_index(Channel("P1", "P2"))
    p2p1 = sim.network.channel_index(Channel("P2", "P1"))
    sim.step(Internal("P1", "A"))
    sim.step(Send("P1", "P2", 1, label="B"))
    sim.step(StartSnapshot("P2", "s1"))
    sim.step(Deliver(Channel("P1", "P2"), label="C"))
    sim.step(Deliver(Channel("P2", "P1")))
    assert [tuple(a) for a in sim.trace.actions] == [
        ("internal", "P1", "A", -1, -1),
        ("send", "P1", "B", p1p2, 0),
        ("snapshot", "P2", "s1", -1, -1),
        ("receive", "P2", "C", p1p2, 0),
        ("control", "P1", None, p2p1, 1),
    ]
    assert [tuple(m) for m in sim.trace.messages] == [
        # channel, sent_by (action index), kind, label, payload, tag
        (p1p2, 1, APP, "B", 1, None),
        (p2p1, 2, MARKER, None, None, "s1"),  # sent by the snapshot action of P2
        (p1p2, 4, MARKER, None, None, "s1"),  # sent when P1 accepted P2's marker
    ]
    assert sim.trace.received_by == [3, 4, NOT_RECEIVED]


def test_trace_names_actions_by_label_or_kind_and_position():
    sim = two(P1=1)
    sim.step(Send("P1", "P2", 1))
    sim.step(Deliver(Channel("P1", "P2"), label="got"))
    assert [sim.trace.action_name(i) for i in range(2)] == ["send#0", "got"]
    assert sim.trace.message_name(0) == "m0"


def test_trace_lists_each_process_application_actions_only():
    sim = two(app="events")
    sim.step(Internal("P1", "A"))
    sim.step(StartSnapshot("P1"))
    sim.step(Internal("P1", "B"))
    sim.step(Internal("P2", "X"))
    assert sim.trace.process_actions("P1") == [0, 2]
    assert sim.trace.labels_before("P1", 2) == ["A"]


# -------------------------------------------------------------------- run


def test_run_delivers_everything_in_flight_and_returns_the_number_of_steps():
    sim = two(P1=2)
    sim.step(Send("P1", "P2", 1))
    sim.step(Send("P1", "P2", 1))
    assert sim.run() == 2
    assert sim.states == {"P1": 0, "P2": 2}
    assert sim.enabled() == []


def test_run_stops_after_max_steps():
    sim = two(P1=2)
    sim.step(Send("P1", "P2", 1))
    sim.step(Send("P1", "P2", 1))
    assert sim.run(max_steps=1) == 1
    assert len(sim.in_flight()) == 1


def test_run_takes_only_enabled_steps_so_its_trace_replays_legally():
    sim = Simulator(Network(["a", "b", "c"]), "tokens", {"a": 3, "b": 3, "c": 3})
    for src, dst in [("a", "b"), ("b", "c"), ("c", "a"), ("a", "c")]:
        sim.step(Send(src, dst, 1))
    sim.step(StartSnapshot("b"))
    sim.run(RandomOrder(seed=3))
    assert all(r >= 0 for r in sim.trace.received_by)
    assert sum(sim.states.values()) == 9


# -------------------------------------------------------------- schedulers


def _random_run(seed):
    sim = Simulator(Network(["a", "b", "c"]), "tokens", {"a": 5, "b": 5, "c": 5})
    for src, dst in [("a", "b"), ("a", "c"), ("b", "c"), ("c", "a"), ("b", "a")]:
        sim.step(Send(src, dst, 1))
    sim.step(StartSnapshot("a", "s1"))
    sim.step(StartSnapshot("c", "s2"))
    sim.run(RandomOrder(seed))
    return whole(sim)


def test_same_seed_gives_the_same_trace():
    assert _random_run(7) == _random_run(7)


def test_different_seeds_give_different_interleavings():
    assert any(_random_run(seed)[0] != _random_run(0)[0] for seed in range(1, 10))


def test_manual_scheduler_takes_the_pushed_actions_in_order_then_stops():
    sim = two(app="events")
    manual = Manual()
    manual.push(Internal("P2", "x"))
    manual.push(Send("P2", "P1", label="y"))
    assert sim.run(manual) == 2
    assert [a.label for a in sim.trace.actions] == ["x", "y"]
    assert sim.in_flight("P2->P1") == [0]
    manual.push(Deliver(Channel("P2", "P1"), label="z"))
    assert sim.run(manual) == 1
    assert sim.run(manual) == 0


def test_manual_scheduler_rejects_a_pushed_action_that_is_not_enabled():
    manual = Manual()
    manual.push(Deliver(Channel("P1", "P2")))
    with pytest.raises(ActionError, match=r"channel P1->P2 is empty"):
        two().run(manual)


def test_scripted_scheduler_plays_its_list_then_stops():
    sim = two(P1=1)
    script = Scripted([Send("P1", "P2", 1), StartSnapshot("P1"), Deliver(Channel("P1", "P2"))])
    assert sim.run(script) == 3
    assert sim.states == {"P1": 0, "P2": 1}
    assert sim.in_flight() != []  # the markers are still in flight: the script is over


def test_fifo_order_delivers_the_oldest_message_in_flight_first():
    sim = Simulator(Network(["a", "b", "c"]), "tokens", {"a": 1, "b": 1, "c": 1})
    sim.step(Send("c", "a", 1, label="first"))
    sim.step(Send("a", "b", 1, label="second"))
    sim.step(Send("b", "c", 1, label="third"))
    sim.run(FifoOrder())
    received = [sim.trace.messages[a.message].label for a in sim.trace.actions[3:]]
    assert received == ["first", "second", "third"]


def test_fifo_order_on_non_fifo_channels_still_takes_the_oldest():
    sim = two(fifo=False, P1=2)
    sim.step(Send("P1", "P2", 1, label="old"))
    sim.step(Send("P1", "P2", 1, label="new"))
    action = FifoOrder().choose(sim)
    assert action == Deliver(Channel("P1", "P2"), 0)


def test_random_order_only_picks_enabled_deliveries():
    sim = two(fifo=False, P1=3)
    for _ in range(3):
        sim.step(Send("P1", "P2", 1))
    rnd = RandomOrder(seed=1)
    for _ in range(3):
        action = rnd.choose(sim)
        assert action in sim.enabled()
        sim.step(action)
    assert rnd.choose(sim) is None


def test_make_scheduler_by_name():
    assert isinstance(make_scheduler("fifo-order"), FifoOrder)
    rnd = make_scheduler("random", seed=5)
    assert isinstance(rnd, RandomOrder) and rnd.seed == 5
    with pytest.raises(ValueError, match=r"unknown scheduler 'lifo'"):
        make_scheduler("lifo")


# ------------------------------------------------------------- time travel


def test_undo_restores_exactly_each_earlier_trace_and_state():
    sim = Simulator(Network(["P1", "P2", "P3"]), "tokens", {"P1": 3, "P2": 1})
    script = [
        Send("P1", "P2", 2, label="a"),
        Internal("P3", "b"),
        StartSnapshot("P2", "s1"),
        Deliver(Channel("P1", "P2"), label="c"),
        Send("P2", "P3", 3, label="d"),
        Deliver(Channel("P2", "P1")),
        Deliver(Channel("P2", "P3")),
    ]
    history = [whole(sim)]
    for action in script:
        sim.step(action)
        history.append(whole(sim))
    for earlier in reversed(history[:-1]):
        assert sim.undo() is True
        assert whole(sim) == earlier
    assert sim.undo() is False


def test_undo_past_a_snapshot_start_forgets_the_snapshot():
    sim = two(P1=2)
    sim.step(Send("P1", "P2", 1))
    before = whole(sim)
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Deliver(Channel("P1", "P2")))
    sim.step(Deliver(Channel("P1", "P2")))  # the marker: P2 records
    assert sim.snapshot("s1").complete is False
    sim.undo()
    sim.undo()
    sim.undo()
    assert whole(sim) == before
    assert sim.snapshots() == {}
    assert sim.in_flight("P1->P2") == [0]


def test_redo_takes_the_undone_actions_again_exactly():
    sim = two(P1=3)
    script = [
        Send("P1", "P2", 2, label="x"),
        StartSnapshot("P1", "s1"),
        Send("P1", "P2", 1, label="y"),
        Deliver(Channel("P1", "P2"), label="got-x"),
        Deliver(Channel("P1", "P2")),
    ]
    for action in script:
        sim.step(action)
    after = whole(sim)
    history = []
    while sim.undo():
        history.append(whole(sim))
    for earlier in reversed(history[:-1]):
        assert sim.redo() is True
        assert whole(sim) == earlier
    assert sim.redo() is True
    assert whole(sim) == after
    assert sim.redo() is False


def test_a_new_step_after_undo_discards_the_redo_history():
    sim = two(app="events")
    sim.step(Internal("P1", "A"))
    sim.undo()
    sim.step(Internal("P2", "B"))
    assert sim.redo() is False
    assert [a.label for a in sim.trace.actions] == ["B"]


def test_undo_replays_actions_whose_handlers_sent_messages():
    sim = Simulator(Network(["a", "b", "c"]), app=_Fanout())
    sim.step(Internal("a", "b,c"))
    sim.step(Deliver(Channel("a", "b")))
    before = whole(sim)
    sim.step(Internal("a", "b"))
    sim.undo()
    assert whole(sim) == before


# ------------------------------------------------- your own application


class Gossip(Application):
    """Written the documented way (see apps.py): a rumour spreads around a ring.

    The state is whether a process has heard the rumour; a process that hears it for
    the first time passes it on to its successor.
    """

    name = "gossip"

    def initial_state(self, process, value):
        return bool(value)

    def on_internal(self, process, state, label, send):
        if label == "tell" and state:
            send(self.successor[process], "rumour")
        return state

    def on_receive(self, process, state, src, payload, send):
        if not state:
            send(self.successor[process], payload)
        return True

    def __init__(self, ring):
        self.successor = {p: ring[(k + 1) % len(ring)] for k, p in enumerate(ring)}


def test_a_custom_application_runs_under_the_simulator_and_snapshots():
    ring = ["a", "b", "c", "d"]
    sim = Simulator(Network(ring, "ring"), app=Gossip(ring), initial={"a": True})
    sim.step(Internal("a", "tell"))
    sim.step(Deliver(Channel("a", "b")))
    sim.step(StartSnapshot("c", "s1"))
    sim.run()
    assert sim.states == dict.fromkeys(ring, True)
    snap = sim.snapshot("s1")
    assert snap.complete
    assert {p: r.state for p, r in snap.processes.items()} == {
        "a": True,
        "b": True,
        "c": False,
        "d": False,
    }
    # b passed the rumour on before c recorded, and c accepted it after: in transit
    assert [m.payload for m in snap.channels["b->c"]] == ["rumour"]
    # messages sent by handlers are attributed to the action that ran the handler
    assert sim.trace.messages[1].sent_by == 1


def test_make_app_accepts_a_name_or_an_instance_and_names_the_choices():
    assert make_app("bank").name == "bank"
    mine = Gossip(["a"])
    assert make_app(mine) is mine
    with pytest.raises(AppError, match=r"unknown app 'chess': expected one of events, tokens"):
        make_app("chess")


def test_tokens_refuse_a_negative_or_non_integer_initial_count():
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(AppError, match=r"initial tokens of P1 must be a whole number"):
            Simulator(Network(["P1", "P2"]), "tokens", {"P1": bad})


class _Buggy(Application):
    """A learner's handler that sends and then crashes."""

    def on_internal(self, process, state, label, send):
        send("b", "hello")
        raise ZeroDivisionError("oops")


def test_a_handler_that_crashes_half_way_leaves_nothing_behind_and_its_error_surfaces():
    sim = Simulator(Network(["a", "b"]), app=_Buggy())
    with pytest.raises(ZeroDivisionError):
        sim.step(Internal("a"))
    assert sim.trace.actions == [] and sim.trace.messages == []
    assert sim.enabled() == []


def test_an_algorithm_that_overrides_on_app_receive_hears_every_channel_by_default():
    heard = []

    class Listener(SnapshotAlgorithm):
        def on_app_receive(self, channel, message):
            heard.append(message)

    sim = Simulator(Network(["a", "b"]), algorithm=Listener())
    sim.step(Send("a", "b"))
    sim.step(Send("b", "a"))
    sim.run()
    assert sorted(heard) == [0, 1]


# ------------------------------------------------------- one algorithm per run


def test_an_algorithm_instance_holds_one_run_and_a_class_makes_one_per_run():
    from snapshotlib.algorithms import ChandyLamport, SnapshotError

    network = Network(["P1", "P2"])
    marker_algorithm = ChandyLamport()
    first = Simulator(network, algorithm=marker_algorithm)
    first.step(StartSnapshot("P1", "s1"))
    first.run()
    # a second run of the same instance would empty the first's records: refused
    with pytest.raises(SnapshotError, match="already runs in another simulator"):
        Simulator(network, algorithm=marker_algorithm)
    assert first.snapshot("s1").complete
    a, b = Simulator(network, algorithm=ChandyLamport), Simulator(network, algorithm=ChandyLamport)
    assert isinstance(a.algorithm, ChandyLamport) and a.algorithm is not b.algorithm
    with pytest.raises(TypeError, match="not a SnapshotAlgorithm"):
        Simulator(network, algorithm=lambda: "chandy-lamport")  # type: ignore[arg-type,return-value]


def test_fork_copies_a_run_or_its_beginning_and_leaves_it_alone():
    from snapshotlib.algorithms import ClockSnapshot
    from snapshotlib.workloads import random_execution, ring

    sim = random_execution(ring(3), seed=3, n_actions=20)
    whole_copy = sim.fork()
    assert whole_copy.trace.actions == sim.trace.actions
    assert whole_copy.states == sim.states and whole_copy.snapshots() == sim.snapshots()
    start = sim.fork(5)
    assert start.trace.actions == sim.trace.actions[:5]
    start.run()
    assert len(sim.trace.actions) == len(whole_copy.trace.actions)  # the original is untouched
    drifting = Simulator(Network(["P1", "P2"]), algorithm=ClockSnapshot(3, rate={"P2": 0.5}))
    drifting.step(Internal("P1", "A"))
    clone = drifting.fork()
    assert clone.algorithm is not drifting.algorithm and clone.algorithm.rate == {"P2": 0.5}


def test_each_trace_action_is_the_action_that_took_it():
    from snapshotlib.workloads import random_execution, ring

    for fifo in (True, False):
        sim = random_execution(ring(3, fifo=fifo), seed=8, n_actions=25)
        again = Simulator(sim.network, sim.app, sim.initial)
        for i in range(sim.time):
            again.step(sim.action(i))
        assert again.trace.actions == sim.trace.actions
        assert again.trace.messages == sim.trace.messages


# ----------------------------------------------------------- reading the snapshots
def test_the_snapshots_are_read_by_id_in_the_order_they_were_started():
    sim = two(P1=2)
    assert sim.snapshot_ids() == []
    sim.step(StartSnapshot("P2", "b"))
    sim.step(StartSnapshot("P1", "a"))
    assert sim.snapshot_ids() == ["b", "a"]
    assert list(sim.snapshots()) == ["b", "a"]


def test_an_unknown_snapshot_is_a_key_error_naming_the_ones_started():
    sim = two(P1=2)
    sim.step(StartSnapshot("P1", "s1"))
    for read in (sim.snapshot, sim.red_from):
        with pytest.raises(KeyError, match=r"no snapshot 'x' \(started: s1\)"):
            read("x")


def test_a_snapshot_in_progress_says_who_recorded_what_and_which_recordings_are_open():
    sim = two(P1=2)
    sim.step(Send("P1", "P2", 1, label="m"))
    sim.step(StartSnapshot("P1", "s1"))
    snap = sim.snapshot("s1")
    assert snap.red_from == sim.red_from("s1") == {"P1": 1}
    assert snap.states == {"P1": 1}
    assert snap.recorded("P1") and not snap.recorded("P2")
    # P1 records P2->P1 until P2's marker comes: its part is not done
    assert not snap.part_done("P1") and not snap.part_done("P2")
    assert not snap.closed("P2->P1") and snap.message_ids("P2->P1") == ()
    assert not snap.closed("P1->P2")  # not even begun: P2 has not recorded
    assert snap.processes["P1"].events == ("m",)
    sim.run()
    snap = sim.snapshot("s1")
    assert snap.complete and snap.part_done("P1") and snap.part_done("P2")
    assert snap.closed("P1->P2") and snap.closed("P2->P1")
    assert snap.message_ids("P1->P2") == ()  # m arrived before the marker: not in transit


def test_the_recorded_count_is_the_number_of_messages_in_the_snapshots_channel_states():
    sim = Simulator(Network(["P1", "P2", "P3"]), "tokens", {"P1": 3, "P2": 3})
    sim.step(Send("P2", "P1", 1, label="a"))
    sim.step(Send("P2", "P1", 1, label="b"))
    sim.step(StartSnapshot("P1", "s1"))
    assert sim.recorded_count("s1") == 0
    sim.run()
    snap = sim.snapshot("s1")
    assert sim.recorded_count("s1") == sum(map(len, snap.channels.values())) == 2

"""The controller's membership view, on its own (no processes): who is up, who left,
and a stall of the controller's own that is not taken for the nodes' silence.

Times are the caller's (plain numbers here), so nothing waits."""

from __future__ import annotations

from snapshotlib.live.membership import DOWN, UNKNOWN, UP, Membership


def beat(node: str, incarnation: str = "a", **more: object) -> dict[str, object]:
    return {"node_id": node, "incarnation": incarnation, **more}


def test_a_node_silent_past_the_timeout_leaves_and_a_new_incarnation_joins() -> None:
    view = Membership(("P1", "P2"), timeout_s=2.0)
    assert view.health() == {"P1": UNKNOWN, "P2": UNKNOWN}
    assert view.beat(beat("P1"), now=0.0) == []  # a first heartbeat is no change
    assert view.beat(beat("P2"), now=0.0) == []
    for t in (0.5, 1.0, 1.5, 2.0):  # the monitor looks often; P2 goes on beating
        view.beat(beat("P2"), now=t)
        assert view.expire(t) == []
    assert view.expire(2.1) == ["P1 left (no heartbeat for 2.1 s)"]
    assert view.health() == {"P1": DOWN, "P2": UP}
    assert view.beat(beat("P1", "b"), now=2.2) == ["P1 joined (restarted)"]
    assert view.beat(beat("P2", leaving=True), now=2.2) == ["P2 left (it is stopping)"]


def test_a_stall_of_the_controller_is_not_counted_as_the_nodes_silence() -> None:
    view = Membership(("P1", "P2"), timeout_s=2.0, stall_s=0.5)
    view.beat(beat("P1"), now=0.0)
    view.beat(beat("P2"), now=0.0)
    assert view.expire(0.1) == []
    # the controller hears nothing for 5 s because it did not run (its heartbeats queue
    # up unread): waking, it does not let everyone go
    assert view.expire(5.1) == []
    assert view.health() == {"P1": UP, "P2": UP}
    # the queued heartbeat of P2 is read; P1 is really gone, and is found out once it
    # has been silent for the timeout: 0.1 s before the stall, 0.5 s of it (stall_s:
    # a late look is not a stall) and 1.7 s after
    view.beat(beat("P2"), now=5.15)
    for t in (5.2, 5.6, 6.0, 6.4):
        view.beat(beat("P2"), now=t)
        assert view.expire(t) == []
    assert view.expire(6.8) == ["P1 left (no heartbeat for 2.3 s)"]
    assert view.health() == {"P1": DOWN, "P2": UP}


def test_silence_before_a_stall_still_counts() -> None:
    view = Membership(("P1",), timeout_s=2.0, stall_s=0.5)
    view.beat(beat("P1"), now=0.0)
    for t in (0.4, 0.8, 1.2):
        assert view.expire(t) == []
    # 1.2 s silent when the controller stalls for 10 s: 0.5 s of the stall counts
    assert view.expire(11.2) == []
    assert view.expire(11.5) == []
    assert view.expire(11.9) == ["P1 left (no heartbeat for 2.4 s)"]


def test_a_controller_late_at_every_look_still_finds_a_silent_node_out() -> None:
    # an overloaded machine: the monitor looks every 0.7 s instead of every 0.1 s, so
    # every gap is longer than stall_s; each look still counts 0.5 s of silence
    view = Membership(("P1",), timeout_s=2.0, stall_s=0.5)
    view.beat(beat("P1"), now=0.0)
    looks = [round(0.7 * k, 1) for k in range(1, 20)]
    left_at = next(t for t in looks if view.expire(t))
    assert left_at <= 4.0, left_at  # found out, within a few more looks
    assert view.health() == {"P1": DOWN}

"""The recovery line of a run's checkpoints: the latest consistent cut made of them,
found by rollback propagation; checked against every combination of checkpoints."""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_properties import PROPERTY, Run, runs

from snapshotlib import Network, Send, Simulator
from snapshotlib.checks import (
    check_frontier,
    domino_effect,
    forced_checkpoints,
    recovery_line,
    rollback_propagation,
)
from snapshotlib.trace import Trace


def brute_force(trace: Trace, checkpoints: dict[str, list[int]]) -> dict[str, int]:
    """Every choice of one checkpoint per process; of the consistent ones, the one that
    holds each of the others (which must exist)."""
    procs = sorted(checkpoints)
    choices = [sorted({0, *checkpoints[p]}) for p in procs]
    consistent = [
        dict(zip(procs, combo, strict=True))
        for combo in itertools.product(*choices)
        if check_frontier(trace, dict(zip(procs, combo, strict=True))).ok
    ]
    top = {p: max(c[p] for c in consistent) for p in procs}
    assert top in consistent  # consistent cuts are closed under the later of two
    return top


def random_checkpoints(sim: Simulator, seed: int, first: int) -> dict[str, list[int]]:
    """Up to three checkpoints per process, at random among its event counts from
    ``first`` (0 puts the initial state among them) to its last event."""
    rng = random.Random(seed)
    out = {}
    for p in sim.network.processes:
        counts = range(first, len(sim.trace.process_actions(p)) + 1)
        out[p] = sorted(rng.sample(counts, min(len(counts), rng.randint(0, 3))))
    return out


@PROPERTY
@given(runs(max_actions=50), st.integers(0, 2**32 - 1))
def test_rollback_propagation_finds_the_latest_consistent_cut_of_checkpoints(
    run: Run, seed: int
) -> None:
    sim = run.build()
    trace = sim.trace
    checkpoints = random_checkpoints(sim, seed, first=0)
    line, steps = rollback_propagation(trace, checkpoints)
    assert line == brute_force(trace, checkpoints)
    assert check_frontier(trace, line).ok
    # each rollback undoes one orphan and only ever goes back
    assert len(steps) == len({(s.process, s.to) for s in steps})


@PROPERTY
@given(runs())
def test_a_chandy_lamport_snapshot_is_a_recovery_line_by_itself(run: Run) -> None:
    sim = run.build()
    trace = sim.trace
    ends = {p: len(trace.process_actions(p)) for p in sim.network.processes}
    for sid in sim.snapshot_ids():
        red_from = sim.red_from(sid)
        cut = {p: sum(1 for i in trace.process_actions(p) if i < red_from[p]) for p in ends}
        assert recovery_line(trace, {p: [cut[p]] for p in ends}) == cut
        # with each process's last event checkpointed too, the line is no earlier
        line = recovery_line(trace, {p: [cut[p], ends[p]] for p in ends})
        assert all(line[p] >= cut[p] for p in ends)


def numbered(trace: Trace, own: dict[str, list[int]]) -> dict[str, list[tuple[int, int]]]:
    """Each process's checkpoints (own and forced) with their numbers, worked out again
    from the protocol's rule: a process's own checkpoint takes its latest number plus
    one; a forced one (or its own, if it took one there) takes the message's number."""
    forced = forced_checkpoints(trace, own)
    out: dict[str, list[tuple[int, int]]] = {}
    for p, ks in own.items():
        marks = sorted({0, *ks, *forced[p]})
        out[p] = [(k, 0) for k in marks]
    current = dict.fromkeys(own, 0)
    done = dict.fromkeys(own, 0)
    on_message: dict[int, int] = {}
    for i, a in trace.app_actions():
        p = a.process
        k = done[p]
        if k > 0 and k in own[p]:
            current[p] += 1
        if a.kind == "receive" and on_message.get(a.message, 0) > current[p]:
            # at 0 the initial state is the checkpoint: it takes the number
            assert k == 0 or k in own[p] or k in forced[p], "a forced checkpoint is missing"
            current[p] = on_message[a.message]
        elif k in forced[p]:
            raise AssertionError(f"{p} was forced at {k} without a reason")
        # every message this action sent (a send, or a reply sent while handling a
        # receive) carries the number the process has after the action
        for m, msg in enumerate(trace.messages):
            if msg.sent_by == i and msg.kind == "app":
                on_message[m] = current[p]
        out[p] = [(c, current[p] if c == k else n) for c, n in out[p]]
        done[p] += 1
    return out


@PROPERTY
@given(runs(max_actions=50), st.integers(0, 2**32 - 1))
def test_communication_induced_checkpoints_leave_no_domino_effect(run: Run, seed: int) -> None:
    sim = run.build()
    trace = sim.trace
    own = random_checkpoints(sim, seed, first=1)
    marks = numbered(trace, own)
    top = min(max(n for _, n in ms) for ms in marks.values())
    line = recovery_line(trace, {p: [k for k, _ in ms] for p, ms in marks.items()})
    for n in range(top + 1):
        cut = {p: min(k for k, m in ms if m >= n) for p, ms in marks.items()}
        assert check_frontier(trace, cut).ok, (n, cut)
        assert all(line[p] >= cut[p] for p in cut)


def test_a_forced_checkpoint_stops_the_dominoes() -> None:
    trace = ping_pong(3).trace
    own = {"P1": [2, 4, 6], "P2": [1, 3, 5]}
    # each receive brings a number one higher than the receiver's: P1 is forced before
    # each of its receives; P2's first receive comes before P1 has a checkpoint to count
    forced = forced_checkpoints(trace, own)
    assert forced == {"P1": (1, 3, 5), "P2": (2, 4)}
    with_forced = {p: [*own[p], *forced[p]] for p in own}
    assert recovery_line(trace, with_forced) == {"P1": 5, "P2": 5}
    assert domino_effect(trace, own) and not domino_effect(trace, with_forced)


def ping_pong(rounds: int) -> Simulator:
    """P1 and P2 send each other one message after another: P1's events are send,
    receive, send, receive...; P2's receive, send, receive, send..."""
    sim = Simulator(Network(["P1", "P2"]))
    for _ in range(rounds):
        sim.step(Send("P1", "P2"))
        sim.run()
        sim.step(Send("P2", "P1"))
        sim.run()
    return sim


def test_uncoordinated_checkpoints_can_roll_everything_back_to_the_start() -> None:
    trace = ping_pong(3).trace
    # each process checkpoints after every receive: each checkpoint remembers a message
    # the other sent after its own last checkpoint, so each rollback forces the next
    p1, p2 = [2, 4, 6], [1, 3, 5]
    line, steps = rollback_propagation(trace, {"P1": p1, "P2": p2})
    assert line == {"P1": 0, "P2": 0}
    assert domino_effect(trace, {"P1": p1, "P2": p2})
    assert [s.process for s in steps] == ["P1", "P2"] * 3
    assert [s.to for s in steps] == [4, 3, 2, 1, 0, 0]
    # a checkpoint of P1 right after its first send stops the dominoes there
    assert recovery_line(trace, {"P1": [1, *p1], "P2": p2}) == {"P1": 1, "P2": 1}
    assert not domino_effect(trace, {"P1": [1, *p1], "P2": p2})
    # no checkpoint at all is no domino effect: there was nothing to lose
    assert not domino_effect(trace, {})


@pytest.mark.parametrize(
    ("checkpoints", "says"),
    [
        ({"P9": [1]}, "checkpoints of 'P9': the run has no such process"),
        ({"P1": [99]}, "checkpoints of P1: 99 is not a number of events from 0 to"),
        ({"P1": [-1]}, "-1 is not a number of events"),
        ({"P1": [1.5]}, "1.5 is not a number of events"),
        ({"P1": [True]}, "True is not a number of events"),
    ],
)
def test_checkpoints_the_run_cannot_have_are_refused(checkpoints: Any, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        recovery_line(ping_pong(1).trace, checkpoints)


def requests_back_and_forth(rounds: int) -> Simulator:
    """P1 and P2 take turns asking each other (the "requests" application): the one
    asked replies while it handles the request, so the reply is sent by a receive."""
    from snapshotlib.formats.scenario import parse_scenario, run_scenario

    steps = []
    for _ in range(rounds):
        for asker, asked in (("P1", "P2"), ("P2", "P1")):
            steps += [
                {"do": "send", "from": asker, "to": asked, "payload": "request"},
                {"do": "deliver", "from": asker, "to": asked},  # the reply is sent here
                {"do": "deliver", "from": asked, "to": asker},
            ]
    return run_scenario(
        parse_scenario({"processes": ["P1", "P2"], "app": "requests", "steps": steps})
    )


def test_a_reply_sent_while_handling_a_receive_carries_the_number_too() -> None:
    sim = requests_back_and_forth(3)
    trace = sim.trace
    # P1's events: request sent, reply got, request got (and answered), and again;
    # P2's: request got (and answered), request sent, reply got, and again. Checkpoints
    # right after each reply got fall like dominoes; only the replies, sent by
    # receives, carry the numbers that force checkpoints to stop them
    own = {"P1": [2, 5, 8], "P2": [3, 6, 9]}
    assert domino_effect(trace, own)
    forced = forced_checkpoints(trace, own)
    assert any(forced.values())
    both = {p: [*own[p], *forced[p]] for p in own}
    assert not domino_effect(trace, both)
    marks = numbered(trace, own)
    top = min(max(n for _, n in ms) for ms in marks.values())
    for n in range(top + 1):
        cut = {p: min(k for k, m in ms if m >= n) for p, ms in marks.items()}
        assert check_frontier(trace, cut).ok, (n, cut)

"""Dijkstra's commutation argument (EWD 864a), checked on a recorded execution.

The claim: if no red message is accepted in a white action, the execution is
equivalent to the one made of all white actions in their original order followed by all
red actions in their original order, and the state between the two parts is SSS.

This module checks the claim rather than assuming it. It colours the trace, counts the
inversions (pairs of a red action before a white one), lists for small executions the
adjacent swaps that sort it (each a red action and the white action after it, of
different machines, the first not sending what the second accepts), and then *replays*
the reordered computation through a fresh simulator: every receive must find its
message already sent (and at the head of a FIFO channel), and the state after the
white part must equal SSS. Everything is linear in the number of actions apart from
the listing of swaps, which is only made when there are at most ``max_swaps``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..algorithms.base import SnapshotAlgorithm
from ..colouring import colouring, snapshot_state
from ..simulator import Simulator
from ..trace import APP, INTERNAL, RECEIVE, SEND, Trace


@dataclass(frozen=True)
class Swap:
    """Exchange of the adjacent actions at ``position`` and ``position + 1``.

    ``red`` and ``white`` are trace indices; ``legal`` is ``False`` when ``red`` sent a
    message that ``white`` accepts, so the two do not commute.
    """

    position: int
    red: int
    white: int
    legal: bool = True


@dataclass(frozen=True)
class CommutationResult:
    """The outcome of :func:`check_commutation`.

    ``holds`` is the whole claim; ``reason`` says why not in one line, naming the
    offending message (``witness``, a message id) when a red message is accepted in a
    white action. ``original`` and ``order`` are the application actions (trace
    indices) before and after reordering; ``swaps`` is ``None`` when there are too
    many to list.
    """

    holds: bool
    reason: str
    inversions: int
    original: tuple[int, ...]
    order: tuple[int, ...]
    n_white: int
    swaps: tuple[Swap, ...] | None
    witness: int | None = None
    legal: bool = True
    state_matches: bool = True
    mismatches: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "holds": self.holds,
            "reason": self.reason,
            "inversions": self.inversions,
            "witness": self.witness,
            "legal": self.legal,
            "state_matches": self.state_matches,
        }


def count_inversions(reds: list[bool]) -> int:
    """Pairs ``i < j`` with ``reds[i]`` and not ``reds[j]``, in one pass.

    >>> count_inversions([True, False, True, False])
    3
    """
    seen_red = 0
    total = 0
    for red in reds:
        if red:
            seen_red += 1
        else:
            total += seen_red
    return total


def swap_sequence(trace: Trace, order: list[int], reds: list[bool], limit: int) -> list[Swap]:
    """The adjacent swaps that move every white action before every red one.

    Insertion sort: each white action, left to right, moves left past the red actions
    before it. Stops at the first swap that is not legal (a red send and the white
    receive of that message), which is included with ``legal=False``.
    """
    seq = list(order)
    red = dict(zip(order, reds, strict=True))
    swaps: list[Swap] = []
    messages = trace.messages
    for j in range(len(seq)):
        if red[seq[j]]:
            continue
        k = j
        while k > 0 and red[seq[k - 1]]:
            r, w = seq[k - 1], seq[k]
            wa = trace.actions[w]
            legal = not (wa.kind == RECEIVE and messages[wa.message].sent_by == r)
            swaps.append(Swap(k - 1, r, w, legal))
            if not legal or len(swaps) >= limit:
                return swaps
            seq[k - 1], seq[k] = w, r
            k -= 1
    return swaps


def check_commutation(sim: Simulator, snapshot_id: str, max_swaps: int = 2000) -> CommutationResult:
    """Check Dijkstra's argument for snapshot ``snapshot_id`` on ``sim``'s trace."""
    trace = sim.trace
    col = colouring(sim, snapshot_id)
    coloured = col.app_actions()
    original = [i for i, _ in coloured]
    reds = [r for _, r in coloured]
    whites = [i for i, r in coloured if not r]
    order = whites + [i for i, r in coloured if r]
    inversions = count_inversions(reds)
    swaps = (
        tuple(swap_sequence(trace, original, reds, max_swaps + 1))
        if inversions <= max_swaps
        else None
    )
    base = dict(
        inversions=inversions,
        original=tuple(original),
        order=tuple(order),
        n_white=len(whites),
        swaps=swaps,
    )

    witness = _red_message_in_white_action(trace, col.is_red)
    if witness is not None:
        m, acceptor = witness
        msg = trace.messages[m]
        sender = trace.actions[msg.sent_by]
        return CommutationResult(
            False,
            f"red message {trace.message_name(m)} (sent by {sender.process} at "
            f"{trace.action_name(msg.sent_by)}, after it turned red) is accepted in white "
            f"action {trace.action_name(acceptor)} of {trace.actions[acceptor].process}: "
            "its sender turned red before its acceptor, so the transitions cannot be "
            "made simultaneous",
            witness=m,
            legal=False,
            state_matches=False,
            **base,  # type: ignore[arg-type]
        )

    problems = _replay(sim, snapshot_id, order, len(whites))
    if problems:
        legal = not problems[0].startswith("illegal")
        return CommutationResult(
            False,
            problems[0],
            legal=legal,
            state_matches=False,
            mismatches=tuple(problems),
            **base,  # type: ignore[arg-type]
        )
    return CommutationResult(
        True,
        f"{inversions} inversion(s) removed by swaps; all white actions then all red ones "
        "form a legal execution whose intermediate state is SSS",
        **base,  # type: ignore[arg-type]
    )


def _red_message_in_white_action(trace: Trace, is_red: Any) -> tuple[int, int] | None:
    for i, a in enumerate(trace.actions):
        if a.kind == RECEIVE and not is_red(i) and is_red(trace.messages[a.message].sent_by):
            return a.message, i
    return None


class _Observer(SnapshotAlgorithm):
    """No snapshot: the replay only re-executes the application."""

    name = "replay"


class ReorderedRun:
    """A run's application actions taken afresh, in an order of one's choosing, on a new
    simulator of the same network, application and initial values (no snapshot).

    :meth:`take` takes one action of the original trace, or says why it cannot be taken
    now; :attr:`new_id` and :attr:`old_id` map the original run's message ids to the
    replay's and back.
    """

    def __init__(self, sim: Simulator) -> None:
        self.source = sim
        self.sim = Simulator(sim.network, sim.app, sim.initial, algorithm=_Observer)
        self.new_id: dict[int, int] = {}
        self.old_id: dict[int, int] = {}
        self._sent: dict[int, list[int]] = {}
        for m, msg in enumerate(sim.trace.messages):
            if msg.kind == APP:
                self._sent.setdefault(msg.sent_by, []).append(m)

    def take(self, i: int) -> str | None:
        """Take action ``i`` of the original run; a one-line reason if it is illegal here
        (its message not sent yet, or behind another on a FIFO channel), else ``None``."""
        trace, replay = self.source.trace, self.sim
        a = trace.actions[i]
        before = len(replay.trace.messages)
        if a.kind == INTERNAL:
            replay.internal(a.process, a.label)
        elif a.kind == SEND:
            replay.send(a.process, a.channel, trace.messages[a.message].payload, a.label)
        elif a.kind == RECEIVE:
            target = self.new_id.get(a.message)
            q = replay.queues[a.channel]
            fifo = replay.network.fifo
            if target is None:
                return (
                    f"illegal: {trace.action_name(i)} of {a.process} would accept message "
                    f"{trace.message_name(a.message)} before it is sent"
                )
            if fifo and q[0] != target:
                return (
                    f"illegal: {trace.action_name(i)} of {a.process} would accept message "
                    f"{trace.message_name(a.message)} while an earlier message is ahead of it "
                    f"on FIFO channel {replay.network.channels[a.channel]}"
                )
            replay.deliver(a.channel, 0 if fifo else q.index(target), a.label)
        originals = self._sent.get(i, [])
        fresh = range(before, len(replay.trace.messages))
        if len(originals) != len(fresh):
            return f"the application is not deterministic: {trace.action_name(i)} sent differently"
        for old, new in zip(originals, fresh, strict=True):
            self.new_id[old] = new
            self.old_id[new] = old
        return None


def _replay(sim: Simulator, snapshot_id: str, order: list[int], n_white: int) -> list[str]:
    """Run ``order`` through a fresh simulator; the problems found (empty when none)."""
    trace = sim.trace
    run = ReorderedRun(sim)
    sss = snapshot_state(sim, snapshot_id)
    names = [str(c) for c in sim.network.channels]
    problems: list[str] = []
    for step, i in enumerate(order):
        if step == n_white:
            problems += _compare_with_sss(run.sim, sss, run.new_id, names, trace)
            if problems:
                return problems
        problem = run.take(i)
        if problem is not None:
            return [problem]
    if n_white == len(order):
        problems += _compare_with_sss(run.sim, sss, run.new_id, names, trace)
    for p, state in sim.states.items():
        if run.sim.states[p] != state:
            problems.append(
                f"final state of {p} differs after reordering: {run.sim.states[p]!r} != {state!r}"
            )
    return problems


def _compare_with_sss(
    replay: Simulator,
    sss: Any,
    new_id: Mapping[int, int],
    names: list[str],
    trace: Trace,
) -> list[str]:
    problems = []
    fifo = replay.network.fifo
    for p, state in sss.states.items():
        if replay.states[p] != state:
            problems.append(
                f"the state of {p} between the white and red parts is {replay.states[p]!r}, "
                f"but SSS records {state!r}"
            )
    for k, name in enumerate(names):
        expected = [new_id.get(m) for m in sss.channels[name] + sss.unsettled.get(name, ())]
        actual = [m for m in replay.queues[k] if replay.trace.messages[m].kind == APP]
        if actual != expected and (fifo or sorted(actual) != sorted(expected, key=_none_last)):
            problems.append(
                f"channel {name} between the white and red parts holds "
                f"{[replay.trace.message_name(m) for m in actual]}, but SSS records "
                f"{[trace.message_name(m) for m in sss.channels[name]]}"
            )
    return problems


def _none_last(m: int | None) -> float:
    return float("inf") if m is None else m


def arrangement(result: CommutationResult, done: int) -> list[int]:
    """The application actions (trace indices) after the first ``done`` listed swaps.

    >>> r = CommutationResult(True, "", 1, (0, 1), (1, 0), 1, (Swap(0, 0, 1),))
    >>> arrangement(r, 0), arrangement(r, 1)
    ([0, 1], [1, 0])
    """
    if result.swaps is None:
        raise ValueError("this execution has too many inversions for its swaps to be listed")
    seq = list(result.original)
    for swap in result.swaps[:done]:
        if not swap.legal:
            break
        p = swap.position
        seq[p], seq[p + 1] = seq[p + 1], seq[p]
    return seq

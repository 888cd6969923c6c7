"""Consistent cuts, and whether a recorded snapshot is one.

A cut takes a prefix of every process's history. It is consistent when every message
received inside the cut was also sent inside it (no message from the future). A
snapshot is right when its process states form a consistent cut and each channel's
recorded state is exactly the messages sent inside the cut and not received inside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..trace import APP, RECEIVE, Trace

if TYPE_CHECKING:
    from ..simulator import Simulator


@dataclass(frozen=True)
class CutResult:
    """``ok`` and a one-line ``reason``; ``witness`` is the offending message id."""

    ok: bool
    reason: str
    witness: int | None = None
    details: Mapping[str, object] = field(default_factory=dict)


def cut_limits(trace: Trace, frontier: Mapping[str, int]) -> dict[str, int]:
    """Turn a frontier (number of events per process) into trace-index limits.

    An action of ``p`` is inside the cut when its index is below ``limit[p]``.
    """
    limits = {}
    for p, n in frontier.items():
        mine = trace.process_actions(p)
        if n < 0 or n > len(mine):
            raise ValueError(f"frontier of {p} is {n}, but {p} has {len(mine)} events")
        limits[p] = mine[n] if n < len(mine) else len(trace.actions)
    return limits


def describe_message(trace: Trace, m: int) -> str:
    msg = trace.messages[m]
    send = trace.actions[msg.sent_by]
    recv_at = trace.received_by[m]
    where = f"sent by {send.process} at {trace.action_name(msg.sent_by)}"
    if recv_at >= 0:
        where += f", received by {trace.actions[recv_at].process} at {trace.action_name(recv_at)}"
    return f"message {trace.message_name(m)} ({where})"


def check_cut(trace: Trace, limits: Mapping[str, int]) -> CutResult:
    """Is the cut given by trace-index ``limits`` per process consistent?

    Processes missing from ``limits`` are taken whole (the cut includes all they did).
    """
    end = len(trace.actions)
    messages = trace.messages
    for i, a in enumerate(trace.actions):
        if a.kind != RECEIVE or i >= limits.get(a.process, end):
            continue
        sent_by = messages[a.message].sent_by
        sender = trace.actions[sent_by].process
        if sent_by >= limits.get(sender, end):
            return CutResult(
                False,
                f"{describe_message(trace, a.message)} is received inside the cut "
                f"but sent outside it",
                a.message,
            )
    return CutResult(True, "every message received inside the cut was sent inside it")


def check_frontier(trace: Trace, frontier: Mapping[str, int]) -> CutResult:
    """:func:`check_cut` for a frontier given as a number of events per process."""
    return check_cut(trace, cut_limits(trace, frontier))


def check_snapshot(sim: Simulator, snapshot_id: str) -> CutResult:
    """Is snapshot ``snapshot_id`` a consistent cut with the right channel states?"""
    trace = sim.trace
    snap = sim.snapshot(snapshot_id)
    missing = [p for p in sim.network.processes if not snap.recorded(p)]
    if missing:
        return CutResult(False, f"the snapshot is not complete: {', '.join(missing)} not recorded")
    limits = snap.red_from
    cut = check_cut(trace, limits)
    if not cut.ok:
        return cut
    channels = sim.network.channels
    expected: dict[int, list[int]] = {i: [] for i in range(len(channels))}
    for m, msg in enumerate(trace.messages):
        if msg.kind != APP or msg.sent_by >= limits[channels[msg.channel].src]:
            continue
        got = trace.received_by[m]
        if got < 0 or got >= limits[channels[msg.channel].dst]:
            expected[msg.channel].append(m)
    for i, c in enumerate(channels):
        recorded = list(snap.message_ids(str(c)))
        if not snap.closed(str(c)):
            return CutResult(False, f"the snapshot is not complete: channel {c} is still recording")
        want = expected[i]
        if recorded == want or (not sim.network.fifo and sorted(recorded) == want):
            continue
        extra = [m for m in recorded if m not in want]
        if extra:
            return CutResult(
                False,
                f"{describe_message(trace, extra[0])} is recorded on {c} "
                "but was not in transit across the cut",
                extra[0],
            )
        lost = [m for m in want if m not in recorded]
        if lost:
            return CutResult(
                False,
                f"{describe_message(trace, lost[0])} was in transit across the cut "
                f"but is missing from the recorded state of {c}",
                lost[0],
            )
        return CutResult(
            False, f"the recorded state of {c} has its messages out of order", recorded[0]
        )
    return CutResult(
        True, "a consistent cut, and every channel holds exactly the messages in transit"
    )

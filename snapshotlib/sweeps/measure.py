"""What one finished execution says about one of its snapshots: checks and metrics.

:func:`checks` asks the course's checks (:mod:`snapshotlib.checks`) and works on any
run, a sweep's or a recorded trace's; :func:`metrics` needs the ticks of a
:class:`~snapshotlib.sweeps.runner.TickRun`.

Restore
-------
Restoring a snapshot restarts every process from its recorded state and replays each
channel's recorded messages. An application message is then delivered once for each
of: it was accepted inside the cut (its effect is in the receiver's recorded state); it
is replayed from a channel's recorded state; it was sent outside the cut (the sender,
replaying deterministically from its recorded state, sends it again). Exactly once is
right; more are *duplicates after restore*, none is a *lost* message. A snapshot that
is a consistent cut with exact channel states has neither.

>>> from snapshotlib.workloads import random_execution, ring
>>> sim = random_execution(ring(3), seed=4, n_actions=30)
>>> row = checks(sim, "s1")
>>> row["consistent"], row["dijkstra_holds"], row["conserved"], row["duplicates_after_restore"]
(True, True, True, 0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..checks.cut import check_cut
from ..checks.verdict import snapshot_verdict
from ..simulator import Simulator
from ..snapshot import GlobalSnapshot
from ..trace import APP


def checks(sim: Simulator, snapshot_id: str) -> dict[str, Any]:
    """The check columns (:data:`~snapshotlib.sweeps.params.CHECKS`) and ``reason``.

    ``reason`` is the first failed check's one-line reason, ``None`` when all hold;
    ``conserved`` is ``None`` for an application that conserves nothing.
    """
    snap = sim.snapshot(snapshot_id)
    verdict = snapshot_verdict(sim, snapshot_id)
    cut_ok = verdict.consistent or check_cut(sim.trace, snap.red_from).ok
    duplicates, lost = restore_counts(sim, snap)
    conserved = verdict.conserved
    return {
        "complete": snap.complete,
        "consistent": verdict.consistent,
        "consistent_cut": cut_ok,
        "dijkstra_holds": verdict.dijkstra.holds,
        "conserved": None if conserved is None else conserved.holds,
        "duplicates_after_restore": duplicates,
        "lost_after_restore": lost,
        "reason": verdict.reason,
    }


def restore_counts(sim: Simulator, snap: GlobalSnapshot) -> tuple[int, int]:
    """``(duplicates, lost)`` application messages after restoring ``snap`` (module doc)."""
    trace = sim.trace
    end = len(trace.actions)
    red_from = snap.red_from
    limit = {p: red_from.get(p, end) for p in sim.network.processes}
    channels = sim.network.channels
    replayed = {m.id for msgs in snap.channels.values() for m in msgs}
    received_by = trace.received_by
    duplicates = lost = 0
    for m, msg in enumerate(trace.messages):
        if msg.kind != APP:
            continue
        c = channels[msg.channel]
        got = received_by[m]
        times = (0 <= got < limit[c.dst]) + (m in replayed) + (msg.sent_by >= limit[c.src])
        if times == 0:
            lost += 1
        else:
            duplicates += times - 1
    return duplicates, lost


def metrics(
    sim: Simulator, snapshot_id: str, tick_of: Callable[[int], int], message_bytes: int
) -> dict[str, Any]:
    """Latency, recorded messages and bytes, peak recording buffer, and traffic counts.

    ``latency`` is in ticks, from the first process recording to the last action the
    snapshot waited for (the last recording, marker or recorded message); ``None`` when
    the snapshot is incomplete. ``peak_buffered`` is the most recorded messages held at
    once: a channel's recorded messages are held from their arrival until its recording
    closes (its marker arrives, or its last recorded message for algorithms that close
    channels without one).
    """
    snap = sim.snapshot(snapshot_id)
    trace = sim.trace
    received_by = trace.received_by
    index = {str(c): i for i, c in enumerate(sim.network.channels)}
    closes: dict[int, int] = {}  # channel -> receipt of this snapshot's marker on it
    markers = 0
    for m, msg in enumerate(trace.messages):
        if msg.kind != APP:
            markers += 1
            if msg.tag == snapshot_id and received_by[m] >= 0:
                closes[msg.channel] = max(closes.get(msg.channel, -1), received_by[m])
    recorded = 0
    red_from = snap.red_from
    last = max(red_from.values(), default=0)
    events: list[tuple[int, int]] = []  # (action, +1 per arrival / -n when a channel closes)
    for name, msgs in snap.channels.items():
        if not msgs:
            continue
        recorded += len(msgs)
        arrivals = [received_by[m.id] for m in msgs]
        close = max(closes.get(index[name], -1), *arrivals)
        events += [(a, 1) for a in arrivals]
        events.append((close, -len(msgs)))
        last = max(last, close)
    if closes:
        last = max(last, *closes.values())
    held = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], -e[1])):  # arrivals first
        held += delta
        peak = max(peak, held)
    latency = None
    if snap.complete:
        latency = tick_of(last) - tick_of(min(red_from.values()))
    return {
        "latency": latency,
        "recorded_messages": recorded,
        "recorded_bytes": recorded * message_bytes,
        "peak_buffered": peak,
        "messages": len(trace.messages) - markers,
        "markers": markers,
        "actions": len(trace.actions),
    }

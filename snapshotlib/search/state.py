"""What makes two runs the same state for the search, and what a run's history must keep.

A search state is a run's *configuration*: every process's application state, every
channel's contents, what is blocked or paused, the algorithm's records and recordings,
and how far each program and snapshot plan has got. Messages are named by what they
carry (kind, label, payload, snapshot id) and, for application messages, by their
colour for each snapshot (sent after the sender recorded, or before), never by their ids
in one run's trace: two runs that sent the same messages in a different order reach the
same state.

The configuration alone does not decide whether a snapshot, once complete, is right:
that depends on messages already accepted. So each state also carries an **audit** per
unfinished snapshot, kept up to date action by action: whether a red message was
accepted in a white action (the premise of Dijkstra's argument broken), and, per
channel, the messages sent before the sender recorded and accepted after the receiver
did (what the channel's recorded state must hold). When a snapshot completes, the audit
gives its verdict (:func:`verdict_at_completion`), which the state keeps instead. Two
runs with the same key therefore have the same future and the same verdicts, which is
what lets the search expand each state once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from ..algorithms.base import SnapshotRecord
from ..algorithms.state import freeze
from ..simulator import Simulator
from ..trace import APP, RECEIVE, MessageRecord

_NEVER = 1 << 62  # red_from of a process that has not recorded

Content = tuple[Any, ...]
#: per snapshot id: (the first red message accepted in a white action, or None;
#: per channel index, the white messages accepted by a red receiver, in order)
Audit = Mapping[str, tuple[Content | None, Mapping[int, tuple[Content, ...]]]]


def reds(sim: Simulator) -> list[tuple[str, SnapshotRecord]]:
    """The run's snapshot records, by id."""
    return sorted(sim.algorithm.snapshot_records().items())


def content(msg: MessageRecord, src: str, records: list[tuple[str, SnapshotRecord]]) -> Content:
    """What message ``msg`` is, whatever its id: kind, label, payload, snapshot id, and
    for an application message the snapshots it is red for (sent after its sender
    recorded). That is fixed when it is sent: a sender that records later does so after
    the message, so the message stays white for that snapshot."""
    if msg.kind == APP:
        sent = msg.sent_by
        red = tuple(sid for sid, rec in records if sent >= rec.red_from.get(src, _NEVER))
        return (APP, msg.label, freeze(msg.payload), red)
    return (msg.kind, msg.label, freeze(msg.payload), msg.tag)


def channel_names(
    sim: Simulator, channel: int, records: list[tuple[str, SnapshotRecord]]
) -> tuple[Content, ...]:
    """The contents of what is in flight on ``channel``, in order."""
    messages = sim.trace.messages
    src = sim.network.channels[channel].src
    return tuple(content(messages[m], src, records) for m in sim.queues[channel])


def _messages_key(
    sim: Simulator, channel: int, ids: Sequence[int], records: list[tuple[str, SnapshotRecord]]
) -> Hashable:
    """Messages of ``channel`` by content: in order on a FIFO network, as a multiset on a
    non-FIFO one (where the order they arrived in means nothing)."""
    if not ids:
        return ()
    messages = sim.trace.messages
    src = sim.network.channels[channel].src
    named = tuple(content(messages[m], src, records) for m in ids)
    if sim.network.fifo or len(named) == 1:
        return named
    return frozenset(Counter(named).items())


def _record_key(
    rec: SnapshotRecord, sim: Simulator, records: list[tuple[str, SnapshotRecord]]
) -> Hashable:
    return (
        rec.id,
        frozenset(rec.initiators),
        frozenset((p, freeze(s)) for p, s in rec.states.items()),
        frozenset((ch, _messages_key(sim, ch, msgs, records)) for ch, msgs in rec.channels.items()),
        frozenset(rec.closed),
    )


def algorithm_key(sim: Simulator, records: list[tuple[str, SnapshotRecord]]) -> Hashable:
    """The algorithm's state: its records, and what its
    :meth:`~snapshotlib.algorithms.base.SnapshotAlgorithm.state_key` says of the rest,
    messages named by content (:class:`Names`)."""
    recs = tuple(_record_key(rec, sim, records) for _, rec in records)
    return (recs, sim.algorithm.state_key(Names(sim, records)))


class Names:
    """A run's messages named by what they are (see
    :class:`~snapshotlib.algorithms.state.MessageNames`): by :func:`content`, with the
    colours of ``records``."""

    __slots__ = ("records", "sim")

    def __init__(self, sim: Simulator, records: list[tuple[str, SnapshotRecord]]) -> None:
        self.sim = sim
        self.records = records

    def message(self, message: int) -> Hashable:
        msg = self.sim.trace.messages[message]
        src = self.sim.network.channels[msg.channel].src
        return (msg.channel, content(msg, src, self.records))

    def channel(self, channel: int, messages: Sequence[int]) -> Hashable:
        return _messages_key(self.sim, channel, messages, self.records)

    def every_message(self) -> Hashable:
        return tuple(
            (m.kind, m.label, freeze(m.payload), m.tag, m.channel) for m in self.sim.trace.messages
        )


def update_audit(
    audit: Audit,
    sim: Simulator,
    records: list[tuple[str, SnapshotRecord]],
    since: int,
    done: frozenset[str],
) -> Audit:
    """``audit`` after the actions of ``sim``'s trace from index ``since`` on (snapshots in
    ``done`` already have their verdict and need no audit)."""
    actions = sim.trace.actions
    messages = sim.trace.messages
    channels = sim.network.channels
    new: dict[str, Any] | None = None
    for i in range(since, len(actions)):
        a = actions[i]
        if a.kind != RECEIVE:
            continue
        msg = messages[a.message]
        src = channels[msg.channel].src
        for sid, rec in records:
            if sid in done:
                continue
            rf = rec.red_from
            sent_red = msg.sent_by >= rf.get(src, _NEVER)
            got_red = i >= rf.get(a.process, _NEVER)
            if sent_red == got_red:
                continue
            if new is None:
                new = dict(audit)
            orphan, expected = new.get(sid, (None, {}))
            item = content(msg, src, [(sid, rec)])  # its colour for this snapshot only
            if sent_red:
                new[sid] = (orphan or item, expected)
            else:
                changed = dict(expected)
                changed[msg.channel] = (*changed.get(msg.channel, ()), item)
                new[sid] = (orphan, changed)
    return audit if new is None else new


def audit_key(audit: Audit, fifo: bool) -> Hashable:
    """The audit, hashable; on non-FIFO channels the order messages arrived in does not
    matter (a channel's state is then a multiset)."""
    if fifo:
        return frozenset(
            (sid, orphan, frozenset(expected.items())) for sid, (orphan, expected) in audit.items()
        )
    return frozenset(
        (
            sid,
            orphan,
            frozenset((ch, frozenset(Counter(got).items())) for ch, got in expected.items()),
        )
        for sid, (orphan, expected) in audit.items()
    )


def verdict_at_completion(
    sim: Simulator, sid: str, rec: SnapshotRecord, audit: Audit
) -> dict[str, str]:
    """The snapshot invariants that fail for complete snapshot ``sid``, each with a short
    reason (the engine's checks name the messages, on the counterexample)."""
    failed: dict[str, str] = {}
    orphan, expected = audit.get(sid, (None, {}))
    only = [(sid, rec)]  # colours for this snapshot only, as the audit keeps them
    messages = sim.trace.messages
    channels = sim.network.channels
    if orphan is not None:
        reason = (
            f"message {orphan[1] or 'unlabelled'} was sent after its sender recorded "
            "but accepted before its receiver did"
        )
        failed["consistent"] = reason
        failed["dijkstra"] = "a red message is accepted in a white action: " + reason
    else:
        for ch, c in enumerate(channels):
            rf_src = rec.red_from.get(c.src, _NEVER)
            in_flight = tuple(
                content(messages[m], c.src, only)
                for m in sim.queues[ch]
                if messages[m].kind == APP and messages[m].sent_by < rf_src
            )
            want = (*expected.get(ch, ()), *in_flight)
            got = tuple(content(messages[m], c.src, only) for m in rec.channels.get(ch, ()))
            fifo = sim.network.fifo
            same = got == want if fifo else Counter(got) == Counter(want)
            if not same:
                if not fifo:  # a multiset: name it in an order that does not depend on the run
                    got, want = tuple(sorted(got, key=repr)), tuple(sorted(want, key=repr))
                reason = (
                    f"channel {c} recorded {_labels(got)}, but what crossed the cut in "
                    f"transit on it was {_labels(want)}"
                )
                failed["consistent"] = reason
                break
    app = sim.app
    if app.conserved is not None:
        initial = sum(
            app.amount(app.initial_state(p, sim.initial.get(p))) or 0 for p in sim.network.processes
        )
        recorded = sum(app.amount(s) or 0 for s in rec.states.values()) + sum(
            app.message_amount(messages[m].payload) for msgs in rec.channels.values() for m in msgs
        )
        if recorded != initial:
            failed["conservation"] = f"{recorded} {app.conserved} recorded of {initial}"
    return failed


def _labels(contents: tuple[Content, ...]) -> str:
    return "[" + ", ".join(str(c[1]) for c in contents) + "]"

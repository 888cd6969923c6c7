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
from collections.abc import Hashable, Mapping
from typing import Any

from ..algorithms.base import SnapshotAlgorithm, SnapshotRecord
from ..algorithms.chandy_lamport import ChandyLamport
from ..algorithms.lai_yang import LaiYang
from ..simulator import Simulator
from ..trace import APP, RECEIVE, MessageRecord

_NEVER = 1 << 62  # red_from of a process that has not recorded

Content = tuple[Any, ...]
#: per snapshot id: (the first red message accepted in a white action, or None;
#: per channel index, the white messages accepted by a red receiver, in order)
Audit = Mapping[str, tuple[Content | None, Mapping[int, tuple[Content, ...]]]]


def freeze(value: Any, _depth: int = 0) -> Hashable:
    """A hashable stand-in for ``value`` that is equal exactly when the values are (lists
    become tuples, dicts and sets frozen); an object it cannot read becomes itself
    (compared by identity: never merged with another state, which is safe)."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if _depth > 20:
        return _Opaque(value)
    d = _depth + 1
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, *(freeze(v, d) for v in value))
    if isinstance(value, dict):
        return ("dict", frozenset((freeze(k, d), freeze(v, d)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(freeze(v, d) for v in value))
    try:
        hash(value)
    except TypeError:
        fields = getattr(value, "__dict__", None)
        if fields is None:
            return _Opaque(value)
        return (type(value).__qualname__, freeze(fields, d))
    return value  # type: ignore[no-any-return]


class _Opaque:
    """Something :func:`freeze` cannot read: equal only to itself."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def reds(sim: Simulator) -> list[tuple[str, SnapshotRecord]]:
    """The run's snapshot records, by id."""
    return sorted(sim.algorithm.records.items())


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
    sim: Simulator, channel: int, ids: list[int], records: list[tuple[str, SnapshotRecord]]
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
    """The algorithm's state, its messages named by content.

    Chandy–Lamport's state is its records and which channels record which snapshot;
    Lai–Yang's its records, the messages each channel delivered and the counts its
    markers carried. For any other algorithm, the attributes the engine's base classes
    and the exercises' skeletons use are read by meaning (which channels record which
    snapshot; messages by content); any other attribute is read as it is, and as it may
    hold message ids, the key then also holds every message the run sent, in id order,
    which keeps such ids meaningful (fewer states merge; none wrongly).
    """
    algorithm = sim.algorithm
    recs = tuple(_record_key(rec, sim, records) for _, rec in records)
    if type(algorithm) is ChandyLamport:
        recording = frozenset(
            (ch, sid) for ch, rec in enumerate(algorithm._recording) for sid in rec
        )
        return (recs, recording, frozenset(algorithm._discarded), frozenset(algorithm._abandoned))
    if type(algorithm) is LaiYang:
        arrived = tuple(
            _messages_key(sim, ch, ids, records) for ch, ids in enumerate(algorithm._arrived)
        )
        expected = frozenset(
            (sid, frozenset(counts.items())) for sid, counts in algorithm._expected.items()
        )
        return (recs, arrived, expected)
    known: list[Hashable] = []
    unknown: dict[str, Any] = {}
    for name, value in vars(algorithm).items():
        if name in ("_host", "records", "listening"):
            continue
        if name in _RECORDING_LISTS and _is_recording_list(value):
            # per channel, snapshot id -> the record's list for that channel: which
            # channels record which snapshot (the lists are the records' own)
            known.append((name, frozenset((ch, sid) for ch, d in enumerate(value) for sid in d)))
        elif name in _ID_LISTS and isinstance(value, dict):
            known.append(
                (name, frozenset((sid, _named(sim, ids, records)) for sid, ids in value.items()))
            )
        elif name in _NO_IDS:
            known.append((name, freeze(value)))
        else:
            unknown[name] = value
    if not unknown:
        return (recs, tuple(known))
    table = tuple(
        (m.kind, m.label, freeze(m.payload), m.tag, m.channel) for m in sim.trace.messages
    )
    return (recs, tuple(known), freeze(unknown), table)


#: attributes read by meaning, whatever the class (the engine's base classes and the
#: exercises' skeletons use these names): per channel, snapshot id -> a record's list
_RECORDING_LISTS = frozenset({"_recording", "recording", "_logging"})
#: snapshot id -> message ids
_ID_LISTS = frozenset({"crossed", "dropped"})
#: hold no message ids: channel numbers, processes, counters
_NO_IDS = frozenset({"arrived", "back", "regular", "_markers_seen", "_discarded", "_abandoned"})


def _named(sim: Simulator, ids: Any, records: list[tuple[str, SnapshotRecord]]) -> Hashable:
    """Messages of any channels, in order, each by its channel and content."""
    messages = sim.trace.messages
    channels = sim.network.channels
    return tuple(
        (messages[m].channel, content(messages[m], channels[messages[m].channel].src, records))
        for m in ids
    )


def _is_recording_list(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(d, dict) and all(isinstance(v, list) for v in d.values()) for d in value
    )


def fast_key(algorithm: SnapshotAlgorithm) -> bool:
    """Whether :func:`algorithm_key` changes only when the algorithm writes a trace event
    or records an accepted message (so the search may keep it between such steps)."""
    return type(algorithm) in (ChandyLamport, LaiYang)


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

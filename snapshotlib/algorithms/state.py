"""What an algorithm's run state is: the contract exhaustive search keys states by.

Two runs are the same search state only if their algorithms will do the same from now
on. An algorithm says what its state is through
:meth:`~snapshotlib.algorithms.base.SnapshotAlgorithm.state_key`, a hashable value built
from its attributes. The catch is message ids: an id is a position in one run's trace,
so two runs that sent the same messages in another order give them other ids. A key
must therefore name messages by what they are, which :class:`MessageNames` does.

The default key (:func:`fields_key`) reads every attribute a run set. An attribute the
class declares in ``state_fields`` is read by what it holds (:data:`PLAIN`,
:data:`RECORDING`, :data:`CHANNEL_MESSAGES`, :data:`MESSAGES`, :data:`RECORD`). Any
other attribute is read as it is, whatever its name. As it may hold message ids, the key
then also holds every message the run sent, in id order, which keeps those ids
meaningful: such runs merge less often, but never wrongly. So a class that declares
nothing is searched correctly; declaring lets more runs merge.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from .base import SnapshotAlgorithm

#: holds no message ids (channel numbers, processes, counts, parameters)
PLAIN = "plain"
#: per channel (a list indexed by channel): snapshot id -> the ids of the messages
#: recorded on that channel for that snapshot
RECORDING = "recording"
#: per channel (a list indexed by channel): ids of messages that came on that channel
CHANNEL_MESSAGES = "channel messages"
#: a dict (any keys without message ids) whose values are lists of message ids of any
#: channels, or one such list
MESSAGES = "messages"
#: one of :attr:`~snapshotlib.algorithms.base.SnapshotAlgorithm.records`' own records
#: (already part of the key), or None
RECORD = "record"

KINDS = frozenset({PLAIN, RECORDING, CHANNEL_MESSAGES, MESSAGES, RECORD})

#: the base class's own attributes: the records are keyed by the search itself, the
#: host and the channels listened to follow from the run
BASE_FIELDS = frozenset({"_host", "records", "listening"})


class MessageNames(Protocol):
    """Messages named by what they are, whatever their ids in one run."""

    def message(self, message: int) -> Hashable:
        """What message ``message`` is: its channel, kind, label, payload, snapshot id
        and colours."""

    def channel(self, channel: int, messages: Sequence[int]) -> Hashable:
        """Messages that came on ``channel``: in order on a FIFO network, as a multiset
        on a non-FIFO one."""

    def every_message(self) -> Hashable:
        """Every message the run sent, in id order: makes raw ids in a key meaningful."""


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


@functools.lru_cache(maxsize=256)  # asked at every state a search keys
def declared_fields(cls: type) -> Mapping[str, str]:
    """``state_fields`` of ``cls`` and of every class it inherits from (a subclass's
    declaration adds to its bases'); a kind that is not one of :data:`KINDS` is a
    mistake in the class, said at once."""
    fields: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        declared = vars(klass).get("state_fields", {})
        if not isinstance(declared, Mapping):
            raise TypeError(
                f"{klass.__qualname__}.state_fields: a dict of attribute name -> kind, "
                f"got {type(declared).__name__}"
            )
        for name, kind in declared.items():
            if kind not in KINDS:
                raise TypeError(
                    f"{klass.__qualname__}.state_fields[{name!r}]: {kind!r} is not one of "
                    f"{', '.join(sorted(KINDS))}"
                )
            fields[name] = kind
    return MappingProxyType(fields)


def fields_key(algorithm: SnapshotAlgorithm, names: MessageNames) -> Hashable:
    """The default :meth:`~snapshotlib.algorithms.base.SnapshotAlgorithm.state_key` (see
    the module docstring)."""
    declared = declared_fields(cast("type", type(algorithm)))
    records = algorithm.records
    known: list[Hashable] = []
    unknown: list[tuple[str, Any]] = []
    for name, value in sorted(vars(algorithm).items()):
        if name in BASE_FIELDS:
            continue
        kind = declared.get(name)
        if kind is None:
            if _own_recording(value, records):  # read by shape, whatever its name
                known.append((name, _recording_key(value, records, names)))
            else:
                unknown.append((name, value))
        elif kind == PLAIN:
            known.append((name, freeze(value)))
        elif kind == RECORDING:
            known.append((name, _recording_key(value, records, names)))
        elif kind == CHANNEL_MESSAGES:
            known.append((name, tuple(names.channel(ch, ids) for ch, ids in enumerate(value))))
        elif kind == MESSAGES:
            known.append((name, _id_lists_key(value, names)))
        else:  # RECORD
            known.append((name, None if value is None else value.id))
    if not unknown:
        return tuple(known)
    return (tuple(known), freeze(unknown), names.every_message())


def _recording_key(
    value: Sequence[Mapping[str, Sequence[int]]],
    records: Mapping[str, Any],
    names: MessageNames,
) -> Hashable:
    """Which channels record which snapshot; the messages too, unless they are the
    record's own list (then the record's key holds them already)."""
    out = []
    for ch, recording in enumerate(value):
        for sid, ids in recording.items():
            rec = records.get(sid)
            own = rec is not None and rec.channels.get(ch) is ids
            out.append((ch, sid, None if own else names.channel(ch, ids)))
    return frozenset(out)


def _own_recording(value: Any, records: Mapping[str, Any]) -> bool:
    """Whether ``value`` is, per channel, snapshot id -> a record's own list for that
    channel (the engine's and the exercises' recording tables): then it says only which
    channels record which snapshot."""
    if not isinstance(value, list) or not value:
        return False
    for ch, recording in enumerate(value):
        if not isinstance(recording, dict):
            return False
        for sid, ids in recording.items():
            rec = records.get(sid) if isinstance(sid, str) else None
            if rec is None or rec.channels.get(ch) is not ids:
                return False
    return True


def _id_lists_key(value: Any, names: MessageNames) -> Hashable:
    if isinstance(value, dict):
        return frozenset(
            (freeze(k), tuple(names.message(m) for m in ids)) for k, ids in value.items()
        )
    return tuple(names.message(m) for m in value)


#: the kinds that hold one entry per channel: split by process, with the channel's
#: receiver (:func:`split_fields`)
PER_CHANNEL = frozenset({RECORDING, CHANNEL_MESSAGES})


def split_fields(
    algorithm: SnapshotAlgorithm, names: MessageNames, inputs: Sequence[Sequence[int]]
) -> tuple[tuple[Hashable, ...], Hashable] | None:
    """The default :meth:`~snapshotlib.algorithms.base.SnapshotAlgorithm.state_parts`:
    what :func:`fields_key` reads, split by process (``inputs``: each process's input
    channels). A per-channel attribute (``RECORDING``, ``CHANNEL_MESSAGES``) goes with
    each channel's receiver; every other declared attribute to the part of no process.
    ``None`` when an attribute is undeclared: its owner cannot be told."""
    declared = declared_fields(cast("type", type(algorithm)))
    records = algorithm.records
    per_channel = []
    shared: list[Hashable] = []
    for name, value in sorted(vars(algorithm).items()):
        if name in BASE_FIELDS:
            continue
        kind = declared.get(name)
        if kind is None:
            return None
        if kind in PER_CHANNEL:
            per_channel.append((name, kind, value))
        elif kind == MESSAGES:
            shared.append((name, _id_lists_key(value, names)))
        elif kind == RECORD:
            shared.append((name, None if value is None else value.id))
        else:
            shared.append((name, freeze(value)))
    parts = []
    for ins in inputs:
        mine: list[Hashable] = []
        for name, kind, value in per_channel:
            if kind == RECORDING:  # channel -> {snapshot id: messages recorded}
                rows = []
                for ch in ins:
                    for sid, ids in value[ch].items():
                        rec = records.get(sid)
                        own = rec is not None and rec.channels.get(ch) is ids
                        rows.append((ch, sid, None if own else names.channel(ch, ids)))
                mine.append((name, frozenset(rows)))
            else:
                mine.append((name, tuple(names.channel(ch, value[ch]) for ch in ins)))
        parts.append(tuple(mine))
    return tuple(parts), tuple(shared)

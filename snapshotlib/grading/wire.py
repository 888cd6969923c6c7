"""Plain data across the boundary between a submission's sandbox and the trusted grader.

The grader never unpickles anything a submission produced: answers, arguments and
results cross as JSON. Tuples, sets, dictionaries with keys other than strings and the
engine's :class:`~snapshotlib.trace.Trace` are tagged so that they come back as what they
were; anything else is refused with :class:`WireError`, naming what it was.

>>> roundtrip({"P1": 2, "pair": ("a", "b"), "seen": {3, 1}})
{'P1': 2, 'pair': ('a', 'b'), 'seen': {1, 3}}
>>> roundtrip(object())  # doctest: +ELLIPSIS
Traceback (most recent call last):
snapshotlib.grading.wire.WireError: 'object' is not plain data (give numbers, ...)
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..trace import EVENT_TYPES, ActionRecord, MessageRecord, Trace

#: the trace's typed events, by the name they cross the wire with
_EVENTS: dict[str, Any] = {kind.__name__: kind for kind in EVENT_TYPES}

#: the largest message either side accepts (a submission may try to flood the grader)
MAX_BYTES = 32 * 1024 * 1024
_DEPTH = 60


class WireError(ValueError):
    """A value that cannot cross as plain data, or data that is not a well-formed value."""


def encode(value: Any, _depth: int = 0) -> Any:
    """``value`` as JSON-able data (see the module's docstring for what is accepted)."""
    if _depth > _DEPTH:
        raise WireError("the value is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else {"$int": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    d = _depth + 1
    if isinstance(value, list):
        return [encode(v, d) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"$tuple": [encode(v, d) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = [encode(v, d) for v in value]
        tag = "$set" if isinstance(value, set) else "$frozenset"
        return {tag: sorted(items, key=lambda x: json.dumps(x, sort_keys=True))}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not any(k.startswith("$") for k in value):
            return {k: encode(v, d) for k, v in value.items()}
        return {"$dict": [[encode(k, d), encode(v, d)] for k, v in value.items()]}
    if isinstance(value, Trace):
        return {"$trace": {
            "actions": [list(a) for a in value.actions],
            "messages": [[*m[:4], encode(m.payload, d), m.tag] for m in value.messages],
            "received_by": list(value.received_by),
            "events": [[type(e).__name__, *encode(tuple(e), d)["$tuple"]] for e in value.events],
        }}  # fmt: skip
    if getattr(value, "shape", None) == () and callable(getattr(value, "item", None)):
        return encode(value.item(), d)  # a NumPy scalar: the number it holds
    raise WireError(
        f"{type(value).__name__!r} is not plain data "
        "(give numbers, strings, lists, tuples, sets or dicts)"
    )


def decode(data: Any, _depth: int = 0) -> Any:
    """The value :func:`encode` made ``data`` from; :class:`WireError` if malformed."""
    if _depth > _DEPTH:
        raise WireError("the data is nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    d = _depth + 1
    if isinstance(data, list):
        return [decode(v, d) for v in data]
    if not isinstance(data, dict):
        raise WireError(f"unexpected {type(data).__name__} in the data")
    if len(data) == 1:
        ((tag, body),) = data.items()
        try:
            if tag == "$int":
                return int(body)
            if tag == "$float":
                return float(body)
            if tag == "$tuple":
                return tuple(decode(v, d) for v in body)
            if tag == "$set":
                return {decode(v, d) for v in body}
            if tag == "$frozenset":
                return frozenset(decode(v, d) for v in body)
            if tag == "$dict":
                return {decode(k, d): decode(v, d) for k, v in body}
            if tag == "$trace":
                return _trace(body, d)
        except (TypeError, ValueError) as e:
            raise WireError(f"malformed {tag} in the data: {e}") from None
    return {k: decode(v, d) for k, v in data.items()}


def _trace(body: Any, depth: int) -> Trace:
    trace = Trace()
    for kind, process, label, channel, message in body["actions"]:
        trace.actions.append(
            ActionRecord(str(kind), str(process), label, int(channel), int(message))
        )
    for channel, sent_by, kind, label, payload, tag in body["messages"]:
        trace.messages.append(
            MessageRecord(int(channel), int(sent_by), str(kind), label, decode(payload, depth), tag)
        )
    trace.received_by.extend(int(r) for r in body["received_by"])
    for name, *fields in body.get("events", []):
        kind = _EVENTS.get(name)
        if kind is None:
            raise ValueError(f"unknown trace event {name!r}")
        trace.events.append(kind(*(decode(f, depth) for f in fields)))
    return trace


def dumps(value: Any) -> str:
    """``value`` encoded as one line of JSON."""
    return json.dumps(encode(value), separators=(",", ":"), allow_nan=False)


def loads(text: str | bytes) -> Any:
    """The value in a line :func:`dumps` wrote; :class:`WireError` if it is not one."""
    if len(text) > MAX_BYTES:
        raise WireError(f"more than {MAX_BYTES // 2**20} MiB of data")
    try:
        return decode(json.loads(text))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise WireError(f"not JSON: {e}") from None


def roundtrip(value: Any) -> Any:
    """``value`` as the other side of the boundary sees it."""
    return loads(dumps(value))

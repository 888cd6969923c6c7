"""A node's part of a snapshot, as read back from storage and checked.

A node writes its part (:meth:`~snapshotlib.live.node.Node.part`): its recorded balance,
the amounts it recorded on each input channel, and its accounts' chunk table. Two
readers must not trust those bytes: the controller, which reads every part when a
snapshot completes and writes each one's SHA-256, balance and in-flight money into the
manifest, and a node preparing a restore, which refuses a part whose bytes differ from
what the manifest says. Both read a part here, so both refuse the same things with the
same words: which node's part, where, which field, and what was expected.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ..model import Network


class PartError(ValueError):
    """A part that is not what its snapshot needs (the message names part and field)."""


@dataclass(frozen=True)
class CheckedPart:
    """A part whose bytes parsed and whose fields hold what a part must."""

    snapshot_id: str
    node_id: str
    sha256: str
    balance: int
    #: input channel index -> the amounts recorded on it, in order
    channels: dict[int, list[int]]
    #: the accounts' chunk table, as stored (read by :mod:`.keyed_state`)
    state: dict[str, Any]

    @property
    def in_flight(self) -> int:
        """The money the part recorded on its input channels."""
        return sum(sum(amounts) for amounts in self.channels.values())

    @property
    def total(self) -> int:
        return self.balance + self.in_flight


def digest(data: bytes) -> str:
    """The SHA-256 of a part's bytes, as a manifest records it."""
    return hashlib.sha256(data).hexdigest()


def check_part(
    data: bytes, uri: str, *, snapshot_id: str, node_id: str, network: Network
) -> CheckedPart:
    """``data`` (read from ``uri``) as ``node_id``'s part of ``snapshot_id``;
    :class:`PartError` naming what is wrong."""
    where = f"{node_id}'s part of {snapshot_id} ({uri})"
    try:
        part = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise PartError(f"{where}: not JSON ({e})") from None
    if not isinstance(part, dict):
        raise PartError(f"{where}: a JSON object expected, got {type(part).__name__}")

    def field(name: str, kind: type, what: str) -> Any:
        value = part.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise PartError(f"{where}: {name}: {what} expected, got {_shown(value)}")
        return value

    for name, expected in (("snapshot_id", snapshot_id), ("node_id", node_id)):
        if field(name, str, "a string") != expected:
            raise PartError(f"{where}: {name}: {expected!r} expected, got {part[name]!r}")
    balance = field("balance", int, "a whole number at least 0")
    if balance < 0:
        raise PartError(f"{where}: balance: a whole number at least 0 expected, got {balance}")
    recorded = field("channels", dict, "an object of input channel -> amounts")
    inputs = {str(c): network.channel_index(c) for c in network.inputs(node_id)}
    channels: dict[int, list[int]] = {}
    for name, amounts in recorded.items():
        if name not in inputs:
            raise PartError(
                f"{where}: channels: {name!r} is not a channel into {node_id} "
                f"(its inputs: {', '.join(inputs) or 'none'})"
            )
        if not isinstance(amounts, list) or not all(
            isinstance(a, int) and not isinstance(a, bool) and a > 0 for a in amounts
        ):
            raise PartError(
                f"{where}: channels: {name}: a list of amounts above 0 expected, "
                f"got {_shown(amounts)}"
            )
        channels[inputs[name]] = list(amounts)
    missing = [name for name in inputs if name not in recorded]
    if missing:
        raise PartError(f"{where}: channels: no recorded state of {', '.join(missing)}")
    state = field("state", dict, "the accounts' chunk table (an object)")
    return CheckedPart(snapshot_id, node_id, digest(data), balance, channels, state)


def check_stored_part(
    data: bytes, uri: str, recorded_sha256: str, *, snapshot_id: str, node_id: str,
    network: Network,
) -> CheckedPart:  # fmt: skip
    """``data`` as :func:`check_part` reads it, once its SHA-256 is the one the manifest
    recorded (``recorded_sha256``): bytes changed since are refused as that, whatever
    they hold."""
    sha256 = digest(data)
    if sha256 != recorded_sha256:
        raise PartError(
            f"{node_id}'s part of {snapshot_id} ({uri}): its bytes changed since the snapshot "
            f"completed (SHA-256 {sha256[:16]}..., the manifest's {recorded_sha256[:16]}...)"
        )
    return check_part(data, uri, snapshot_id=snapshot_id, node_id=node_id, network=network)


def check_stored_manifest(data: bytes, uri: str, recorded_sha256: str | None) -> None:
    """A manifest's bytes (read from ``uri``) against the SHA-256 the registry kept when
    its snapshot completed; :class:`PartError` when there is none or they differ."""
    if not recorded_sha256:
        raise PartError(
            f"manifest {uri}: the registry holds no SHA-256 of it (a snapshot completed "
            "before the controller kept one); it cannot be checked: take a new snapshot"
        )
    if digest(data) != recorded_sha256:
        raise PartError(f"manifest {uri}: its bytes changed since the snapshot completed")


def _shown(value: Any) -> str:
    text = json.dumps(value) if value is not None else "nothing"
    return text if len(text) <= 40 else text[:37] + "..."

"""Writing a node's part of a snapshot: its accounts as chunks, then the part itself.

A full snapshot writes every chunk of the accounts; an incremental one only the chunks
that differ from its base's and refers to the base's (or the base's base's) for the
rest (:mod:`.keyed_state`). The part, listing the chunks, is written last and written
once: a marker reusing an old snapshot's id (forged, or a node gone wrong) cannot
replace what was recorded then.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .keyed_state import Entry, changed, chunk_name, chunks, table_to_json
from .spec import ClusterSpec
from .storage import StorageLocation, write_durable


@dataclass(frozen=True)
class Target:
    """Where a snapshot's parts go and how: a node learns it from the controller (its
    initiator) or from the first marker."""

    storage_uri: str
    snapshot_type: str = "full"
    #: the completed snapshot an incremental one writes only the changes from
    base: str = ""


async def write_part(
    spec: ClusterSpec,
    me: str,
    part: dict[str, Any],
    entries: Mapping[str, Entry],
    target: Target,
    base: Mapping[int, tuple[str, str]],
    location: StorageLocation,
) -> tuple[str, int, dict[int, tuple[str, str]]]:
    """Write node ``me``'s ``part`` (its accounts ``entries`` as chunks first, only
    those not in ``base``'s chunk table) as ``target`` says, at ``location`` (its
    storage URI, parsed and checked by the node): the part's URI, the bytes written,
    and the part's chunk table (index -> (SHA-256, URI)).
    :class:`~snapshotlib.live.storage.StorageError` when a write fails."""
    pieces = chunks(entries, spec.chunk_keys, spec.key_bytes)
    # unchanged since the base: referred to, where the base (or its base) wrote it
    table = {i: kept for i, kept in base.items() if i < len(pieces)}
    written = 0
    for piece in changed(pieces, base):
        name = chunk_name(me, piece.index, piece.sha256)
        uri = await asyncio.to_thread(write_durable, location, name, piece.data)
        table[piece.index] = (piece.sha256, uri)
        written += len(piece.data)
    part["state"] = {
        "snapshot_type": target.snapshot_type,
        "base_snapshot_id": target.base if base else "",
        "keys": spec.state_keys,
        "chunk_keys": spec.chunk_keys,
        "state_bytes": sum(len(p.data) for p in pieces),
        **table_to_json(table),
    }
    data = json.dumps(part, indent=1).encode()
    name = f"{part['snapshot_id']}.{me}.json"
    uri = await asyncio.to_thread(write_durable, location, name, data, once=True)
    return uri, written + len(data), table

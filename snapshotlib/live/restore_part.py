"""A node's first phase of a restore: fetch its part and check it, changing nothing.

The controller restores a snapshot in two phases. First every node fetches its part
and checks it against the manifest (its SHA-256; its snapshot and node; its recorded
channels; its accounts, chunk by chunk, against their hashes and the balance), and says
what it would hold. Only when every node is ready does the controller ask them to
switch epoch. A part that fails any check is refused here, while every node still runs
as it was.
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass

from ..model import Network
from .keyed_state import ChunkError, KeyedState, merge_chunks, table_from_json
from .parts import CheckedPart, PartError, check_stored_part
from .storage import StorageError, read
from .storage_policy import MAX_OBJECT_URI_CHARS, StoragePolicy

#: a SHA-256 as a manifest writes it
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class RestoreError(ValueError):
    """A restore this node cannot do (a missing or foreign part, a bad folder)."""


@dataclass(frozen=True)
class PreparedRestore:
    """A checked part, ready to be switched to in ``epoch``."""

    epoch: int
    part_uri: str
    part: CheckedPart
    state: KeyedState
    #: the part's chunk table (index -> (SHA-256, URI)), for incrementals built on it
    table: dict[int, tuple[str, str]]


async def prepare_restore(
    network: Network,
    me: str,
    rng: random.Random,
    *,
    snapshot_id: str,
    part_uri: str,
    part_sha256: str,
    epoch: int,
    policy: StoragePolicy | None = None,
) -> PreparedRestore:
    """Node ``me``'s part of ``snapshot_id`` at ``part_uri``, read and checked (see the
    module docstring); :class:`RestoreError` naming the part and what is wrong. With a
    ``policy``, the part and its chunks are read only where the cluster stores
    (:mod:`.storage_policy`): a restore call names the part's URI."""
    if not SHA256.match(part_sha256):
        raise RestoreError(
            f"part_sha256: the part's SHA-256 from the manifest (64 hex digits) expected, "
            f"got {part_sha256!r}"
        )
    where = f"{me}'s part of {snapshot_id} ({part_uri})"
    try:
        if policy is not None:
            policy.check(part_uri, "part_uri", MAX_OBJECT_URI_CHARS)
        data = await asyncio.to_thread(read, part_uri)
    except (OSError, StorageError) as e:
        raise RestoreError(f"{where}: cannot be read ({e})") from None
    try:
        part = check_stored_part(
            data, part_uri, part_sha256, snapshot_id=snapshot_id, node_id=me, network=network
        )
    except PartError as e:
        raise RestoreError(str(e)) from None
    state, table = await _read_state(part, rng, where, policy)
    return PreparedRestore(epoch, part_uri, part, state, table)


async def _read_state(
    part: CheckedPart, rng: random.Random, where: str, policy: StoragePolicy | None
) -> tuple[KeyedState, dict[int, tuple[str, str]]]:
    """The accounts a part's chunks hold (wherever an incremental chain put them),
    checked against their hashes and the part's balance."""
    try:
        table = table_from_json(part.node_id, part.state)
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise RestoreError(f"{where}: state: not a chunk table ({type(e).__name__}: {e})") from None
    listed = [(sha, uri) for _, (sha, uri) in sorted(table.items())]
    try:
        if policy is not None:
            for _, uri in listed:
                policy.check(uri, "chunk URI", MAX_OBJECT_URI_CHARS)
        datas = await asyncio.gather(*(asyncio.to_thread(read, uri) for _, uri in listed))
    except (OSError, StorageError) as e:
        raise RestoreError(f"{where}: a chunk cannot be read ({e})") from None
    try:
        entries = merge_chunks(
            (uri, sha, data) for (sha, uri), data in zip(listed, datas, strict=True)
        )
    except ChunkError as e:
        raise RestoreError(f"{where}: chunk {e}") from None
    state = KeyedState.from_entries(entries, rng)
    if state.total != part.balance:
        raise RestoreError(
            f"{where}: state: the chunks hold {state.total}, the part's balance is {part.balance}"
        )
    return state, table

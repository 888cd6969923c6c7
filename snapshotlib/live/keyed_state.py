"""A node's money kept as keyed accounts, checkpointed in chunks: what incremental
checkpoints need.

The engine sees one number per node, its balance; a live node keeps that balance split
over ``keys`` accounts (as a key-value store such as RocksDB keeps its state), each with
a version that grows when it changes. A transfer out takes the money from one account
(or the richest ones), a transfer in goes to one account: a checkpoint interval changes
only the accounts its transfers touched.

A checkpoint writes the accounts as *chunks* of ``chunk_keys`` consecutive keys (as
RocksDB writes SST files), each named by the SHA-256 of its bytes. A *full* checkpoint
writes every chunk; an *incremental* one only the chunks whose bytes differ from those
of a base checkpoint, and refers to the base's for the rest, so a chain of incrementals
refers back through earlier checkpoints' chunks, and restoring reads exactly the state
recorded (:func:`merge_chunks` checks every chunk against its hash). ``key_bytes`` pads
each account's entry, to stand for state larger than a number. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: an account's entry in a checkpoint: (balance, version)
Entry = tuple[int, int]


class ChunkError(ValueError):
    """A chunk that does not hold what its checkpoint says (naming it)."""


def key_name(index: int) -> str:
    return f"k{index:05d}"


class KeyedState:
    """``keys`` accounts holding ``balance`` between them (split evenly at the start)."""

    def __init__(self, keys: int, balance: int, rng: random.Random) -> None:
        if keys < 1:
            raise ValueError(f"keys: at least 1, got {keys}")
        share, rest = divmod(balance, keys)
        self.balances = {key_name(i): share + (1 if i < rest else 0) for i in range(keys)}
        self.versions = dict.fromkeys(self.balances, 0)
        self.rng = rng

    @classmethod
    def from_entries(cls, entries: Mapping[str, Entry], rng: random.Random) -> KeyedState:
        state = cls(1, 0, rng)
        state.balances = {k: int(b) for k, (b, _) in sorted(entries.items())}
        state.versions = {k: int(v) for k, (_, v) in sorted(entries.items())}
        return state

    @property
    def total(self) -> int:
        return sum(self.balances.values())

    def debit(self, amount: int) -> None:
        """Take ``amount`` out: from one random account that holds it, else from the
        richest accounts in turn."""
        if not 0 < amount <= self.total:
            raise ValueError(f"the accounts hold {self.total} and cannot give {amount}")
        keys = list(self.balances)
        key = keys[self.rng.randrange(len(keys))]
        if self.balances[key] >= amount:
            self._change(key, -amount)
            return
        for key in sorted(keys, key=lambda k: -self.balances[k]):
            take = min(amount, self.balances[key])
            if take:
                self._change(key, -take)
                amount -= take
            if not amount:
                return

    def credit(self, amount: int) -> None:
        """Put ``amount`` into one random account."""
        keys = list(self.balances)
        self._change(keys[self.rng.randrange(len(keys))], amount)

    def entries(self) -> dict[str, Entry]:
        """A copy of every account's (balance, version): what a checkpoint records."""
        return {k: (b, self.versions[k]) for k, b in self.balances.items()}

    def _change(self, key: str, delta: int) -> None:
        self.balances[key] += delta
        self.versions[key] += 1


@dataclass(frozen=True)
class Chunk:
    """``chunk_keys`` consecutive accounts, as written: ``data`` and its SHA-256."""

    index: int
    data: bytes
    sha256: str


def chunks(entries: Mapping[str, Entry], chunk_keys: int, key_bytes: int = 0) -> list[Chunk]:
    """``entries`` as chunks of ``chunk_keys`` keys each (in key order), each entry
    padded with ``key_bytes`` bytes."""
    pad = "." * key_bytes
    keys = sorted(entries)
    out = []
    for index, start in enumerate(range(0, len(keys), chunk_keys)):
        part = {k: [entries[k][0], entries[k][1], pad] for k in keys[start : start + chunk_keys]}
        data = json.dumps(part, separators=(",", ":"), sort_keys=True).encode()
        out.append(Chunk(index, data, hashlib.sha256(data).hexdigest()))
    return out


def chunk_name(node: str, index: int, sha256: str) -> str:
    """The object a node's chunk is written as: named by its place and its hash."""
    return f"{node}.chunk-{index:04d}.{sha256[:16]}.json"


def table_to_json(table: Mapping[int, tuple[str, str]]) -> dict[str, list[Any]]:
    """A checkpoint's chunks (index -> (SHA-256, URI)) as a part stores them, compactly:
    the folders once, then per chunk in index order its folder's number and hash (the
    object's name follows from them, :func:`chunk_name`)."""
    folders: list[str] = []
    listed = []
    for index in sorted(table):
        sha256, uri = table[index]
        folder = uri.rpartition("/")[0] + "/"
        if folder not in folders:
            folders.append(folder)
        listed.append([folders.index(folder), sha256])
    return {"folders": folders, "chunks": listed}


def table_from_json(node: str, stored: Mapping[str, Any]) -> dict[int, tuple[str, str]]:
    """The chunks (index -> (SHA-256, URI)) of a part's ``state``, read back."""
    folders = [str(f) for f in stored["folders"]]
    return {
        index: (str(sha), folders[int(f)] + chunk_name(node, index, str(sha)))
        for index, (f, sha) in enumerate(stored["chunks"])
    }


def changed(pieces: Iterable[Chunk], base: Mapping[int, tuple[str, str]]) -> list[Chunk]:
    """The chunks a checkpoint on ``base`` (chunk index -> (SHA-256, URI) of the base
    checkpoint; empty for a full one) must write: those whose bytes the base lacks."""
    return [p for p in pieces if p.index not in base or base[p.index][0] != p.sha256]


def merge_chunks(pieces: Iterable[tuple[str, str, bytes]]) -> dict[str, Entry]:
    """The accounts held by chunks given as (name, expected SHA-256, bytes);
    :class:`ChunkError` naming a chunk whose bytes do not match its hash or do not
    parse, or a key held twice."""
    entries: dict[str, Entry] = {}
    for name, sha256, data in pieces:
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ChunkError(f"{name}: its bytes do not match its SHA-256 {sha256[:16]}...")
        try:
            part = json.loads(data)
            held = {str(k): (int(v[0]), int(v[1])) for k, v in part.items()}
        except (ValueError, TypeError, AttributeError, IndexError, KeyError) as e:
            raise ChunkError(f"{name}: not a chunk of accounts ({e})") from None
        twice = set(held) & set(entries)
        if twice:
            raise ChunkError(f"{name}: holds {sorted(twice)[0]}, held by another chunk too")
        entries.update(held)
    return entries

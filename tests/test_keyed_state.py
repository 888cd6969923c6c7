"""Incremental checkpoints of keyed state (snapshotlib.live.keyed_state): a chain of
incrementals restores exactly what was recorded, writes only what changed, and a
corrupted chunk is named."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snapshotlib.live.keyed_state import (
    ChunkError,
    KeyedState,
    changed,
    chunks,
    merge_chunks,
)

#: one step of a run: a transfer out or in (amount), or a checkpoint (full or not)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("out"), st.integers(1, 60)),
        st.tuples(st.just("in"), st.integers(1, 60)),
        st.tuples(st.just("checkpoint"), st.booleans()),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(
    steps=steps,
    keys=st.integers(1, 12),
    chunk_keys=st.integers(1, 5),
    key_bytes=st.integers(0, 20),
    seed=st.integers(0, 10**6),
)
def test_a_chain_of_incrementals_restores_exactly_what_each_checkpoint_recorded(
    steps: list[tuple[str, object]], keys: int, chunk_keys: int, key_bytes: int, seed: int
) -> None:
    state = KeyedState(keys, 500, random.Random(seed))
    store: dict[str, bytes] = {}  # uri -> bytes, as storage keeps them
    base: dict[int, tuple[str, str]] = {}
    taken: list[tuple[dict[str, tuple[int, int]], dict[int, tuple[str, str]]]] = []
    for kind, value in steps:
        if kind == "out" and isinstance(value, int) and value <= state.total:
            state.debit(value)
        elif kind == "in" and isinstance(value, int):
            state.credit(value)
        elif kind == "checkpoint":
            full = bool(value)
            entries = state.entries()
            pieces = chunks(entries, chunk_keys, key_bytes)
            on = {} if full else base
            table = {i: kept for i, kept in on.items()}
            to_write = changed(pieces, on)
            for piece in to_write:
                uri = f"mem://c{len(store)}"
                store[uri] = piece.data
                table[piece.index] = (piece.sha256, uri)
            if full:
                assert len(to_write) == len(pieces)
            # unchanged chunks are referred to, not written again
            assert {p.index for p in to_write} == {
                p.index for p in pieces if on.get(p.index, ("",))[0] != p.sha256
            }
            taken.append((entries, table))
            base = table
        assert state.total == sum(state.balances.values()) and min(state.balances.values()) >= 0
    for entries, table in taken:
        restored = merge_chunks((uri, sha, store[uri]) for sha, uri in table.values())
        assert restored == entries
        again = KeyedState.from_entries(restored, random.Random(0))
        assert again.entries() == entries


def test_an_incremental_writes_only_the_chunks_whose_accounts_changed() -> None:
    state = KeyedState(100, 10_000, random.Random(1))
    before = chunks(state.entries(), 1, 50)
    base = {p.index: (p.sha256, f"mem://{p.index}") for p in before}
    for _ in range(5):  # five accounts change
        state.credit(3)
    touched = {k for k, v in state.versions.items() if v}
    after = chunks(state.entries(), 1, 50)
    written = changed(after, base)
    assert len(written) == len(touched) <= 5
    assert sum(len(p.data) for p in written) < sum(len(p.data) for p in after) / 10


def test_the_money_is_split_evenly_and_a_debit_may_take_from_several_accounts() -> None:
    state = KeyedState(3, 10, random.Random(0))
    assert sorted(state.balances.values()) == [3, 3, 4]
    state.debit(9)  # no account holds 9: the richest give in turn
    assert state.total == 1
    with pytest.raises(ValueError, match="hold 1 and cannot give 2"):
        state.debit(2)


def test_a_corrupted_or_foreign_chunk_is_named() -> None:
    pieces = chunks(KeyedState(4, 100, random.Random(0)).entries(), 2)
    good = [(f"c{p.index}", p.sha256, p.data) for p in pieces]
    with pytest.raises(ChunkError, match="c1: its bytes do not match its SHA-256"):
        merge_chunks([good[0], ("c1", good[1][1], good[1][2].replace(b"25", b"26"))])
    with pytest.raises(ChunkError, match="held by another chunk too"):
        merge_chunks([good[0], ("again", good[0][1], good[0][2])])
    with pytest.raises(ChunkError, match="not a chunk of accounts"):
        import hashlib

        merge_chunks([("odd", hashlib.sha256(b"[1]").hexdigest(), b"[1]")])

"""Retained checkpoints (``live up --retain N``): after a snapshot completes, every
snapshot older than the N newest COMPLETED ones goes, with its manifest, parts, the
chunks no retained snapshot refers to, and its registry rows; chunks an incremental
retained snapshot still refers to stay; nothing goes while a snapshot is open or a
retained part cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the controller needs fastapi (the live extra)")
pytest.importorskip("httpx", reason="FastAPI's test client needs httpx (the dev extra)")

from live_support import part_bytes
from test_controller import Lab, running

from snapshotlib.live.keyed_state import chunk_name, table_to_json
from snapshotlib.live.registry import Registry
from snapshotlib.live.storage import parse_storage_uri, write_durable


def snapshot_with_chunks(lab: Lab, chunks: dict[str, str]) -> str:
    """A snapshot whose every node's part lists one chunk: ``chunks[node]`` names the
    chunk's content (the same name: the same chunk, as an incremental refers to it)."""
    sid = lab.started("P1")
    location = parse_storage_uri(lab.storage_uri)
    for node in lab.spec.ids:
        content = chunks[node].encode()
        sha = f"{abs(hash(content)):064x}"[-64:]
        uri = write_durable(location, chunk_name(node, 0, sha), content)
        state = table_to_json({0: (sha, uri)})
        data = part_bytes(lab.spec, sid, node, state=state)
        part = write_durable(location, f"{sid}.{node}.json", data)
        answer = lab.post(sid, {"node_id": node, "part_uri": part, "size_bytes": 1, "ok": True})
        assert answer.status_code == 200, answer.text
    assert lab.get(sid)["status"] == "COMPLETED"
    return sid


def stored(lab: Lab) -> set[str]:
    return set(lab.files())


def registered(lab: Lab) -> list[str]:
    registry = Registry(lab.db_url)
    try:
        return [r["snapshot_id"] for r in registry.list()]
    finally:
        registry.close()


def chunks_of(lab: Lab, sid: str) -> set[str]:
    names = set()
    for node in lab.spec.ids:
        state: dict[str, Any] = json.loads((lab.storage / f"{sid}.{node}.json").read_text())[
            "state"
        ]
        names |= {f"{chunk_name(node, 0, sha)}" for _, sha in state["chunks"]}
    return names


def test_the_last_n_completed_snapshots_are_kept_with_every_chunk_they_refer_to(
    tmp_path: Path,
) -> None:
    with running(tmp_path, retain=2) as lab:
        first = snapshot_with_chunks(lab, {"P1": "a", "P2": "b", "P3": "c"})
        failed = lab.started("P1")
        lab.report(failed, "P2", ok=False)
        second = snapshot_with_chunks(lab, {"P1": "a", "P2": "d", "P3": "e"})
        assert registered(lab) == [first, failed, second]  # two completed: nothing goes
        third = snapshot_with_chunks(lab, {"P1": "a", "P2": "d", "P3": "f"})
        # the first goes (and the failed one older than the kept), the chunk "a" stays:
        # the retained snapshots still refer to it, as an incremental would
        assert registered(lab) == [second, third]
        kept = {f"{s}.json" for s in (second, third)}
        kept |= {f"{s}.{n}.json" for s in (second, third) for n in lab.spec.ids}
        kept |= chunks_of(lab, second) | chunks_of(lab, third)
        assert stored(lab) == kept
        assert lab.client.get(f"/v1/snapshots/{first}").status_code == 404
        # the kept ones restore as before
        registry = Registry(lab.db_url)
        assert registry.manifest_sha256(third) is not None
        registry.close()


def test_nothing_is_pruned_while_a_snapshot_is_open(tmp_path: Path) -> None:
    with running(tmp_path, retain=1) as lab:
        first = snapshot_with_chunks(lab, {"P1": "a", "P2": "b", "P3": "c"})
        second = lab.started("P2")  # open while the third completes
        third = snapshot_with_chunks(lab, {"P1": "x", "P2": "y", "P3": "z"})
        assert registered(lab) == [first, second, third]
        lab.report(second, "P1", ok=False)  # the open one fails: the next completion prunes
        fourth = snapshot_with_chunks(lab, {"P1": "x", "P2": "y", "P3": "w"})
        assert registered(lab) == [fourth]


def test_a_retained_part_that_cannot_be_read_stops_the_pruning(tmp_path: Path) -> None:
    with running(tmp_path, retain=2) as lab:
        first = snapshot_with_chunks(lab, {"P1": "a", "P2": "b", "P3": "c"})
        second = snapshot_with_chunks(lab, {"P1": "a", "P2": "d", "P3": "e"})
        # a part of the second, which the third would retain, is gone: what it refers
        # to is unknown, so nothing may go (the first's chunk "a" may be its)
        (lab.storage / f"{second}.P1.json").unlink()
        files = stored(lab)
        third = snapshot_with_chunks(lab, {"P1": "f", "P2": "g", "P3": "h"})
        assert registered(lab) == [first, second, third]
        assert files <= stored(lab)


def test_retain_must_keep_at_least_one(tmp_path: Path) -> None:
    with (
        pytest.raises(ValueError, match="retain: at least 1 completed snapshot to keep, got 0"),
        running(tmp_path, retain=0),
    ):
        pass

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
from test_controller import FakeNodes, Lab, ready, running, wait_for

from snapshotlib.live.keyed_state import chunk_name, table_to_json
from snapshotlib.live.registry import DONE, PREPARING, SWITCHING, Registry
from snapshotlib.live.retention import prune
from snapshotlib.live.storage import parse_storage_uri, write_durable


def snapshot_with_chunks(lab: Lab, chunks: dict[str, str], chunk_folder: Path | None = None) -> str:
    """A snapshot whose every node's part lists one chunk: ``chunks[node]`` names the
    chunk's content (the same name: the same chunk, as an incremental refers to it);
    P1's chunk in ``chunk_folder`` if given."""
    sid = lab.started("P1")
    location = parse_storage_uri(lab.storage_uri)
    for node in lab.spec.ids:
        content = chunks[node].encode()
        sha = f"{abs(hash(content)):064x}"[-64:]
        where = location
        if chunk_folder is not None and node == "P1":
            where = parse_storage_uri(chunk_folder.as_uri() + "/")
        uri = write_durable(where, chunk_name(node, 0, sha), content)
        state = table_to_json({0: (sha, uri)})
        data = part_bytes(lab.spec, sid, node, state=state)
        part = write_durable(location, f"{sid}.{node}.json", data)
        answer = lab.post(sid, {"node_id": node, "part_uri": part, "size_bytes": 1, "ok": True})
        assert answer.status_code == 200, answer.text
    assert lab.get(sid)["status"] == "COMPLETED"
    return sid


def pruned(lab: Lab, times: int) -> None:
    """Wait until the controller has pruned ``times`` times (after each completion, in
    the background)."""
    wait_for(lambda: lab.client.app.state.controller.service.prunings >= times)  # type: ignore[attr-defined]


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
    with running(tmp_path, retain=2, **FakeNodes().kw()) as lab:
        first = snapshot_with_chunks(lab, {"P1": "a", "P2": "b", "P3": "c"})
        failed = lab.started("P1")
        lab.report(failed, "P2", ok=False)
        second = snapshot_with_chunks(lab, {"P1": "a", "P2": "d", "P3": "e"})
        pruned(lab, 2)
        assert registered(lab) == [first, failed, second]  # two completed: nothing goes
        service = lab.client.app.state.controller.service  # type: ignore[attr-defined]
        wait_for(lambda: failed in service.cleanups)  # what the nodes freed, kept ...
        third = snapshot_with_chunks(lab, {"P1": "a", "P2": "d", "P3": "f"})
        pruned(lab, 3)
        # the first goes (and the failed one older than the kept), the chunk "a" stays:
        # the retained snapshots still refer to it, as an incremental would
        assert registered(lab) == [second, third]
        assert failed not in service.cleanups  # ... until its snapshot is pruned
        kept = {f"{s}.json" for s in (second, third)}
        kept |= {f"{s}.{n}.json" for s in (second, third) for n in lab.spec.ids}
        kept |= chunks_of(lab, second) | chunks_of(lab, third)
        assert stored(lab) == kept
        assert lab.client.get(f"/v1/snapshots/{first}").status_code == 404
        # the kept ones restore as before
        ready(lab)
        for sid in (second, third):
            answer = lab.client.post(f"/v1/snapshots/{sid}/restore")
            assert answer.status_code == 200, answer.text


def test_nothing_is_pruned_while_a_snapshot_is_open(tmp_path: Path) -> None:
    with running(tmp_path, retain=1) as lab:
        first = snapshot_with_chunks(lab, {"P1": "a", "P2": "b", "P3": "c"})
        second = lab.started("P2")  # open while the third completes
        third = snapshot_with_chunks(lab, {"P1": "x", "P2": "y", "P3": "z"})
        pruned(lab, 2)
        assert registered(lab) == [first, second, third]
        lab.report(second, "P1", ok=False)  # the open one fails: the next completion prunes
        fourth = snapshot_with_chunks(lab, {"P1": "x", "P2": "y", "P3": "w"})
        pruned(lab, 3)
        assert registered(lab) == [fourth]


def test_nothing_is_pruned_while_a_restore_is_unfinished(tmp_path: Path) -> None:
    # (a controller refuses triggers while a restore is unfinished, so no completion
    # prunes then; the pruning checks all the same, as does the registry)
    with running(tmp_path) as lab:
        first = snapshot_with_chunks(lab, {"P1": "a", "P2": "b", "P3": "c"})
        second = snapshot_with_chunks(lab, {"P1": "x", "P2": "y", "P3": "z"})
    registry = Registry(f"sqlite:///{tmp_path / 'registry.db'}")
    try:
        epoch = registry.begin_restore(first, "abc", started_at="2026-11-29T00:00:00Z")
        registry.set_restore(epoch, SWITCHING, only_from=(PREPARING,))
        assert prune(registry, 1).snapshots == []
        assert registry.forget(first) is False
        assert [r["snapshot_id"] for r in registry.list()] == [first, second]
        registry.set_restore(epoch, DONE, only_from=(SWITCHING,))
        assert prune(registry, 1).snapshots == [first]
        assert [r["snapshot_id"] for r in registry.list()] == [second]
        assert [r["status"] for r in registry.restores()] == [DONE]  # history kept
    finally:
        registry.close()


def test_a_retained_part_that_cannot_be_read_stops_the_pruning(tmp_path: Path) -> None:
    with running(tmp_path, retain=2) as lab:
        first = snapshot_with_chunks(lab, {"P1": "a", "P2": "b", "P3": "c"})
        second = snapshot_with_chunks(lab, {"P1": "a", "P2": "d", "P3": "e"})
        pruned(lab, 2)
        # a part of the second, which the third would retain, is gone: what it refers
        # to is unknown, so nothing may go (the first's chunk "a" may be its)
        (lab.storage / f"{second}.P1.json").unlink()
        files = stored(lab)
        third = snapshot_with_chunks(lab, {"P1": "f", "P2": "g", "P3": "h"})
        pruned(lab, 3)
        assert registered(lab) == [first, second, third]
        assert files <= stored(lab)


def test_pruning_deletes_nothing_outside_the_folders_snapshots_were_stored_in(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "another-clusters-chunks"
    with running(tmp_path, retain=1) as lab:
        # a part may name any folder for its chunks: pruning does not follow it there
        snapshot_with_chunks(lab, {"P1": "a", "P2": "b", "P3": "c"}, chunk_folder=elsewhere)
        second = snapshot_with_chunks(lab, {"P1": "x", "P2": "y", "P3": "z"})
        pruned(lab, 2)
        assert registered(lab) == [second]
        assert len(list(elsewhere.iterdir())) == 1


def test_retain_must_keep_at_least_one(tmp_path: Path) -> None:
    with (
        pytest.raises(ValueError, match="retain: at least 1 completed snapshot to keep, got 0"),
        running(tmp_path, retain=0),
    ):
        pass

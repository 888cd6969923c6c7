"""``LiveCluster.check`` reads a snapshot's parts as a restore reads them: the bytes whose
SHA-256 the manifest records, each field checked, the manifest's total against the
parts'. Anything else is refused with the manifest or the part named, never judged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from snapshotlib.live.cluster import LiveClusterError, stored_parts
from snapshotlib.live.parts import digest
from snapshotlib.live.spec import ClusterSpec, NodeSpec

SID = "snap-0001-aaaaa"


def two_nodes() -> ClusterSpec:
    return ClusterSpec(
        nodes=(NodeSpec("P1", "127.0.0.1", 1), NodeSpec("P2", "127.0.0.1", 2)),
        channels=(("P1", "P2"), ("P2", "P1")),
        initial_money=100,
    )


def stored(tmp_path: Path, edit: Any = None) -> dict[str, Any]:
    """A completed snapshot's parts and manifest in ``tmp_path``; its status, as the
    controller answers it. ``edit(name, data)`` may change a part's bytes after the
    manifest recorded them, and the manifest's before the registry recorded them (a
    manifest written so)."""
    recorded = {"P1": (90, {"P2->P1": []}), "P2": (100, {"P1->P2": [10]})}
    entries = []
    for node, (balance, channels) in recorded.items():
        part = {"snapshot_id": SID, "node_id": node, "balance": balance, "channels": channels,
                "state": {"chunks": []}, "done_clock": [1, 1], "log_folder": "epoch-1"}  # fmt: skip
        data = json.dumps(part).encode()
        path = tmp_path / f"{node}.json"
        path.write_bytes(edit(node, data) if edit else data)
        entries.append({"node_id": node, "part_uri": path.as_uri(), "sha256": digest(data)})
    manifest = json.dumps({"snapshot_id": SID, "parts": entries, "recorded_total": 200}).encode()
    path = tmp_path / "manifest.json"
    manifest = edit("manifest", manifest) if edit else manifest
    path.write_bytes(manifest)
    return {
        "status": "COMPLETED",
        "checkpoint_manifest_uri": path.as_uri(),
        "checkpoint_manifest_sha256": digest(manifest),
    }


def test_the_parts_are_read_checked_and_kept_as_stored(tmp_path: Path) -> None:
    checked, raw = stored_parts(two_nodes(), SID, stored(tmp_path))
    assert {n: p.total for n, p in checked.items()} == {"P1": 90, "P2": 110}
    assert raw["P2"]["log_folder"] == "epoch-1"


def test_a_part_edited_after_completion_is_refused_naming_it(tmp_path: Path) -> None:
    def more_money(name: str, data: bytes) -> bytes:
        return data.replace(b'"balance": 90', b'"balance": 95') if name == "P1" else data

    with pytest.raises(LiveClusterError, match=r"P1's part of snap-0001-aaaaa .*SHA-256"):
        stored_parts(two_nodes(), SID, stored(tmp_path, more_money))


def test_a_manifest_whose_total_is_not_its_parts_is_refused(tmp_path: Path) -> None:
    def other_total(name: str, data: bytes) -> bytes:
        return data.replace(b'"recorded_total": 200', b'"recorded_total": 210')

    with pytest.raises(LiveClusterError, match="recorded_total says 210, its parts hold 200"):
        stored_parts(two_nodes(), SID, stored(tmp_path, other_total))


def test_a_manifest_without_a_node_or_unreadable_is_refused(tmp_path: Path) -> None:
    def without_p2(name: str, data: bytes) -> bytes:
        if name != "manifest":
            return data
        manifest = json.loads(data)
        manifest["parts"] = manifest["parts"][:1]
        return json.dumps(manifest).encode()

    with pytest.raises(LiveClusterError, match="no part of P2"):
        stored_parts(two_nodes(), SID, stored(tmp_path, without_p2))
    (tmp_path / "broken").mkdir()
    status = stored(tmp_path / "broken", lambda name, data: b"{" if name == "manifest" else data)
    with pytest.raises(LiveClusterError, match=r"manifest .*cannot be read"):
        stored_parts(two_nodes(), SID, status)
    (tmp_path / "broken" / "manifest.json").unlink()
    with pytest.raises(LiveClusterError, match=r"manifest .*cannot be read"):
        stored_parts(two_nodes(), SID, status)


def test_a_part_without_a_whole_done_clock_or_a_manifest_without_its_hash_is_refused(
    tmp_path: Path,
) -> None:
    def clock_of_floats(name: str, data: bytes) -> bytes:
        return data.replace(b'"done_clock": [1, 1]', b'"done_clock": [1.5, 1]')

    def edit_and_rehash(edit: Any) -> Any:  # the manifest records the edited bytes
        def edited(name: str, data: bytes) -> bytes:
            if name != "manifest":
                return data
            manifest = json.loads(data)
            for entry in manifest["parts"]:
                path = Path(entry["part_uri"].removeprefix("file://"))
                entry["sha256"] = digest(path.read_bytes())
            return json.dumps(manifest).encode()

        return lambda name, data: edited(name, edit(name, data))

    with pytest.raises(LiveClusterError, match=r"P1's part .*done_clock: a list of 2 whole"):
        stored_parts(two_nodes(), SID, stored(tmp_path, edit_and_rehash(clock_of_floats)))

    def without_hash(name: str, data: bytes) -> bytes:
        return data.replace(b'"sha256"', b'"sha"') if name == "manifest" else data

    (tmp_path / "nohash").mkdir()
    with pytest.raises(LiveClusterError, match="no SHA-256 of P1's part"):
        stored_parts(two_nodes(), SID, stored(tmp_path / "nohash", without_hash))


def test_a_manifest_rewritten_after_completion_or_without_the_registrys_hash_is_refused(
    tmp_path: Path,
) -> None:
    status = stored(tmp_path)
    manifest = tmp_path / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b"200", b"210"))
    with pytest.raises(LiveClusterError, match=r"manifest .*its bytes changed since the snapshot"):
        stored_parts(two_nodes(), SID, status)
    (tmp_path / "old").mkdir()
    status = {**stored(tmp_path / "old"), "checkpoint_manifest_sha256": None}
    with pytest.raises(LiveClusterError, match="the registry holds no SHA-256 of it"):
        stored_parts(two_nodes(), SID, status)

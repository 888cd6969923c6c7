"""A node's two phases of a restore, in-process: preparing checks the part against the
manifest's hash and the part's own chunks and changes nothing; switching uses the
prepared part, and a repeated switch (a controller finishing a restore after its own
restart) is answered as the first.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from live_support import require_live, run_async

require_live()

from snapshotlib.live.action_log import read_segments  # noqa: E402
from snapshotlib.live.keyed_state import KeyedState, chunk_name, chunks, table_to_json  # noqa: E402
from snapshotlib.live.node import Node  # noqa: E402
from snapshotlib.live.parts import digest  # noqa: E402
from snapshotlib.live.restore_part import RestoreError, prepare_restore  # noqa: E402
from snapshotlib.live.spec import ClusterSpec, NodeSpec, topology  # noqa: E402
from snapshotlib.live.storage import parse_storage_uri, write_durable  # noqa: E402
from snapshotlib.live.storage_policy import StoragePolicy  # noqa: E402

SPEC = ClusterSpec(
    nodes=tuple(NodeSpec(f"P{i}", "127.0.0.1", 1) for i in (1, 2, 3)),
    channels=tuple((c.src, c.dst) for c in topology("complete", 3).channels),
    state_keys=8,
    chunk_keys=4,
)
SID = "snap-0001-abcde"


def write_part(
    folder: Path,
    *,
    balance: int = 990,
    in_chunks: int | None = None,
    in_flight: tuple[int, ...] = (4, 6),
    **change: Any,
) -> tuple[str, str]:
    """P1's part, as a node writes it (its accounts in chunks beside it, holding
    ``in_chunks``, by default ``balance``), with ``change`` applied: its URI and SHA-256
    (the manifest's)."""
    location = parse_storage_uri(folder.as_uri() + "/")
    held = balance if in_chunks is None else in_chunks
    state = KeyedState(SPEC.state_keys, held, random.Random(0))
    table = {}
    for piece in chunks(state.entries(), SPEC.chunk_keys):
        uri = write_durable(location, chunk_name("P1", piece.index, piece.sha256), piece.data)
        table[piece.index] = (piece.sha256, uri)
    part = {
        "snapshot_id": SID,
        "node_id": "P1",
        "balance": balance,
        "channels": {"P2->P1": list(in_flight), "P3->P1": []},
        "state": table_to_json(table),
        **change,
    }
    data = json.dumps(part).encode()
    return write_durable(location, f"{SID}.P1.json", data), digest(data)


def prepare(uri: str, sha256: str, epoch: int = 1, policy: StoragePolicy | None = None) -> Any:
    return run_async(
        prepare_restore(
            SPEC.network(),
            "P1",
            random.Random(1),
            snapshot_id=SID,
            part_uri=uri,
            part_sha256=sha256,
            epoch=epoch,
            policy=policy,
        )
    )


def test_a_prepared_part_holds_the_recorded_balance_and_channels(tmp_path: Path) -> None:
    uri, sha256 = write_part(tmp_path)
    prepared = prepare(uri, sha256)
    assert (prepared.part.balance, prepared.part.in_flight) == (990, 10)
    assert prepared.state.total == 990 and prepared.epoch == 1


def flip_a_chunk(folder: Path) -> None:
    chunk = next(folder.glob("P1.chunk-0001.*"))
    data = chunk.read_bytes()
    chunk.unlink()  # written once: a writer with the folder's rights replaces it
    chunk.write_bytes(data.replace(b"[", b"[1", 1))


@pytest.mark.parametrize(
    ("part", "manifest_sha256", "expected"),
    [
        ({}, "0" * 64, "its bytes changed since the snapshot completed"),
        ({}, "abc", "part_sha256: the part's SHA-256 from the manifest"),
        ({"in_chunks": 980}, None, "state: the chunks hold 980, the part's balance is 990"),
        ({"node_id": "P2"}, None, "node_id: 'P1' expected, got 'P2'"),
        ({"in_flight": (4, -6)}, None, "P2->P1: a list of amounts above 0 expected"),
        ({"channels": {"P2->P1": [4]}}, None, "channels: no recorded state of P3->P1"),
        ({"state": {"chunks": [[3, "ab"]], "folders": []}}, None, "state: not a chunk table"),
        ({"balance": True}, None, "balance: a whole number at least 0 expected, got true"),
    ],
)
def test_a_part_that_is_not_what_the_manifest_says_is_refused_naming_it(
    tmp_path: Path, part: dict[str, Any], manifest_sha256: str | None, expected: str
) -> None:
    uri, sha256 = write_part(tmp_path, **part)
    with pytest.raises(RestoreError) as refused:
        prepare(uri, manifest_sha256 or sha256)
    said = str(refused.value)
    assert expected in said
    if not said.startswith("part_sha256"):
        assert said.startswith(f"P1's part of {SID} ({uri}): ")


def test_a_chunk_changed_or_a_part_gone_is_refused_naming_it(tmp_path: Path) -> None:
    uri, sha256 = write_part(tmp_path)
    flip_a_chunk(tmp_path)
    with pytest.raises(RestoreError, match=r"chunk .*P1\.chunk-0001\..*do not match its SHA-256"):
        prepare(uri, sha256)
    gone = (tmp_path / "gone.json").as_uri()
    with pytest.raises(RestoreError, match=rf"P1's part of {SID} \({gone}\): cannot be read"):
        prepare(gone, sha256)


def test_preparing_changes_nothing_and_a_repeated_switch_is_answered_as_the_first(
    tmp_path: Path,
) -> None:
    uri, sha256 = write_part(tmp_path / "parts")
    logs = tmp_path / "logs" / "run-1"

    async def phases() -> None:
        node = Node(SPEC, "P1", logs)
        prepared = await node.prepare_restore(SID, uri, sha256, 1)
        assert prepared.part.total == 1000
        # nothing changed yet: the epoch, the money, the bank
        assert (node.epoch, node.host.balance, node.held) == (0, 1000, False)
        first = await node.restore(SID, uri, sha256, 1, "epoch-001-abc")
        assert first == (1000, 2)  # 990 and the two amounts recorded in flight
        assert (node.epoch, node.held, node.state.total) == (1, True, 1000)
        again = await node.restore(SID, uri, sha256, 1, "epoch-001-abc")
        assert again == first
        log = [row for _, _, row in read_segments(tmp_path / "logs" / "epoch-001-abc", "P1")]
        assert [json.loads(line)["kind"] for line in log] == ["restore", "reinject", "reinject"]
        # an older epoch, or a foreign folder, is refused
        with pytest.raises(RestoreError, match="epoch: above P1's 1 expected, got 1"):
            await node.restore(SID, uri, "f" * 64, 1, "epoch-001-abc")
        with pytest.raises(RestoreError, match="log_folder: one plain folder name"):
            await node.restore(SID, uri, sha256, 2, "../etc")
        node.log.close()

    run_async(phases())


def test_a_part_whose_chunks_lie_outside_the_storage_root_is_refused_unread(
    tmp_path: Path,
) -> None:
    """A restore names its part's URI, and the part names its chunks': with the
    cluster's storage policy, the node reads neither outside the storage root."""
    uri, sha256 = write_part(tmp_path / "elsewhere")  # the part and its chunks
    inside = tmp_path / "root" / "snaps"
    inside.mkdir(parents=True)
    copied = inside / Path(uri).name
    copied.write_bytes((tmp_path / "elsewhere" / copied.name).read_bytes())

    def prepare_under(root: Path) -> Any:
        return prepare(
            copied.as_uri(), sha256, policy=StoragePolicy.around(str(root), inside.as_uri() + "/")
        )

    with pytest.raises(RestoreError) as refused:
        prepare_under(tmp_path / "root")
    assert str(refused.value).startswith(
        f"P1's part of {SID} ({copied.as_uri()}): a chunk cannot be read (chunk URI: a "
        "file:// URI must be in the cluster's storage root"
    )
    assert prepare_under(tmp_path).part.balance == 990  # a root holding both: read

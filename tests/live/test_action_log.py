"""A node's action log is rotated into segments, full ones compressed, and read back
whole and in order: what a check replays is every action the node logged, however the
log was cut, and whichever name a segment has at the moment it is read.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snapshotlib.live.action_log import ActionLog, compress, read_segments, segment_name
from snapshotlib.live.runlog import RunLogError, read_logs
from snapshotlib.live.spec import ClusterSpec, NodeSpec


def spec() -> ClusterSpec:
    return ClusterSpec(
        nodes=(NodeSpec("P1", "127.0.0.1", 1), NodeSpec("P2", "127.0.0.1", 2)),
        channels=(("P1", "P2"), ("P2", "P1")),
    )


def action(i: int) -> str:
    line = {"i": i, "kind": "send", "ch": "P1->P2", "seq": i, "amount": 1, "clock": [i + 1, 0]}
    return json.dumps(line) + "\n"


def write(folder: Path, node: str, count: int, segment_lines: int) -> None:
    log = ActionLog(folder, node, segment_lines=segment_lines)
    for i in range(count):
        log.write(action(i))
    log.close()


def test_full_segments_are_compressed_and_the_newest_stays_plain(tmp_path: Path) -> None:
    write(tmp_path, "P1", 23, segment_lines=5)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "P1.000000000.jsonl.gz",
        "P1.000000005.jsonl.gz",
        "P1.000000010.jsonl.gz",
        "P1.000000015.jsonl.gz",
        "P1.000000020.jsonl",
    ]
    with gzip.open(tmp_path / "P1.000000005.jsonl.gz", "rt") as segment:
        assert [json.loads(row)["i"] for row in segment] == [5, 6, 7, 8, 9]


@settings(max_examples=30, deadline=None)
@given(count=st.integers(0, 60), segment_lines=st.integers(1, 25))
def test_every_action_reads_back_in_order_however_the_log_was_cut(
    tmp_path_factory: pytest.TempPathFactory, count: int, segment_lines: int
) -> None:
    folder = tmp_path_factory.mktemp("logs")
    write(folder, "P1", count, segment_lines)
    write(folder, "P2", count // 2, segment_lines + 1)
    assert [row for _, _, row in read_segments(folder, "P1")] == [action(i) for i in range(count)]
    logs = read_logs(spec(), folder)
    assert [line["i"] for line in logs["P1"]] == list(range(count))
    assert [line["i"] for line in logs["P2"]] == list(range(count // 2))
    upto = {"P1": count // 3, "P2": 0}
    assert [line["i"] for line in read_logs(spec(), folder, upto)["P1"]] == list(range(count // 3))


def test_a_segment_caught_while_it_is_compressed_is_read_once(tmp_path: Path) -> None:
    write(tmp_path, "P1", 12, segment_lines=4)
    # the moment between the compressed file's rename and the plain one's removal
    packed = tmp_path / segment_name("P1", 4, compressed=True)
    plain = tmp_path / segment_name("P1", 4)
    with gzip.open(packed, "rb") as source, plain.open("wb") as target:
        shutil.copyfileobj(source, target)
    # and a half-written compressed file, never a segment's name
    (tmp_path / "P1.000000008.jsonl.gz.part").write_bytes(b"\x1f\x8b")
    assert [line["i"] for line in read_logs(spec(), tmp_path)["P1"]] == list(range(12))


def test_compress_replaces_a_segment_by_its_compressed_copy(tmp_path: Path) -> None:
    plain = tmp_path / segment_name("P1", 0)
    plain.write_text(action(0) + action(1))
    compress(plain)
    assert not plain.exists()
    assert [row for _, _, row in read_segments(tmp_path, "P1")] == [action(0), action(1)]


def test_a_bad_line_or_a_lost_segment_is_named(tmp_path: Path) -> None:
    write(tmp_path, "P1", 9, segment_lines=3)
    packed = tmp_path / segment_name("P1", 3, compressed=True)
    with gzip.open(packed, "wt") as segment:
        segment.write(action(3) + "not json\n" + action(5))
    with pytest.raises(RunLogError, match=r"P1\.000000003\.jsonl\.gz, line 2: not a JSON"):
        read_logs(spec(), tmp_path)
    packed.unlink()  # a gap: the actions after it are not the ones expected
    with pytest.raises(RunLogError, match=r"P1\.000000006\.jsonl, line 1: expected action 3"):
        read_logs(spec(), tmp_path)


def test_a_log_that_keeps_nothing_writes_nothing(tmp_path: Path) -> None:
    log = ActionLog(None, "P1", segment_lines=2)
    for i in range(5):
        log.write(action(i))
    log.flush()
    log.close()
    assert log.written == 0
    assert not list(tmp_path.iterdir())


def test_a_compression_that_fails_leaves_the_segment_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / segment_name("P1", 0)
    plain.write_text(action(0) + action(1))

    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shutil, "copyfileobj", disk_full)
    compress(plain)  # logged, not raised: the node goes on
    assert sorted(p.name for p in tmp_path.iterdir()) == [plain.name]
    assert [row for _, _, row in read_segments(tmp_path, "P1")] == [action(0), action(1)]


def test_a_log_begun_again_in_its_folder_does_not_read_an_earlier_one_as_its_sequel(
    tmp_path: Path,
) -> None:
    write(tmp_path, "P1", 11, segment_lines=3)
    write(tmp_path, "P1", 4, segment_lines=3)  # a node switched to the same epoch again
    assert [line["i"] for line in read_logs(spec(), tmp_path)["P1"]] == [0, 1, 2, 3]


def test_any_node_name_reads_back_only_its_own_segments(tmp_path: Path) -> None:
    write(tmp_path, "n.1", 5, segment_lines=2)
    write(tmp_path, "n", 3, segment_lines=2)
    assert len(list(read_segments(tmp_path, "n.1"))) == 5
    assert len(list(read_segments(tmp_path, "n"))) == 3


def test_a_line_without_a_whole_clock_or_a_damaged_segment_is_named(tmp_path: Path) -> None:
    write(tmp_path, "P1", 12, segment_lines=4)
    newest = tmp_path / segment_name("P1", 8)
    lines = newest.read_text().splitlines(keepends=True)
    newest.write_text(lines[0] + json.dumps({"i": 9, "kind": "send", "clock": [1]}) + "\n")
    with pytest.raises(RunLogError, match=rf"{newest}, line 2: a kind and a clock of 2 whole"):
        read_logs(spec(), tmp_path)
    (tmp_path / segment_name("P1", 4, compressed=True)).write_bytes(b"\x1f\x8b\x08\x00broken")
    with pytest.raises(RunLogError, match=r"P1\.000000004\.jsonl\.gz: cannot be read"):
        read_logs(spec(), tmp_path)

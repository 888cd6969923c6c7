"""A snapshot's part and manifest are written once: a second write of the same name,
however it comes (a marker reusing an old snapshot's id, a node gone wrong), is refused
and leaves what was recorded as it was, on every kind of storage."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# the S3 server's fixtures (a real S3-compatible server, and a new bucket on it)
from test_storage_s3 import aws_env, bucket, server  # noqa: F401

from snapshotlib.live.storage import (
    AlreadyWritten,
    StorageLocation,
    parse_storage_uri,
    read,
    write_durable,
)
from snapshotlib.live.throttled_store import ThrottledStore


@pytest.fixture(params=["file", "http", "s3"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StorageLocation]:
    if request.param == "file":
        yield parse_storage_uri((tmp_path / "snaps").as_uri() + "/")
    elif request.param == "http":
        with ThrottledStore(tmp_path / "objects", max_rate=100, write_ms=0) as store:
            yield parse_storage_uri(store.uri + "snaps/")
    else:
        aws_env = request.getfixturevalue("aws_env")
        bucket = request.getfixturevalue("bucket")
        assert aws_env is not None
        yield parse_storage_uri(f"s3://{bucket}/snaps/")


def test_an_object_written_once_is_never_replaced(location: StorageLocation) -> None:
    name = "snap-0001-abcde.P1.json"
    uri = write_durable(location, name, b"recorded", once=True)
    with pytest.raises(AlreadyWritten, match=f"{name}: already written, and written once"):
        write_durable(location, name, b"forged", once=True)
    assert read(uri) == b"recorded"
    # the same bytes again (a retried PUT, a writer started again) are taken as written
    assert write_durable(location, name, b"recorded", once=True) == uri
    # what is not written once (a content-addressed chunk) may be written again
    chunk = write_durable(location, "P1.chunk-0.ab12.bin", b"same", once=False)
    assert write_durable(location, "P1.chunk-0.ab12.bin", b"same") == chunk


def test_a_refused_file_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    location = parse_storage_uri((tmp_path / "snaps").as_uri() + "/")
    write_durable(location, "m.json", b"one", once=True)
    with pytest.raises(AlreadyWritten):
        write_durable(location, "m.json", b"two", once=True)
    assert sorted(p.name for p in (tmp_path / "snaps").iterdir()) == ["m.json"]


def test_where_the_file_system_has_no_links_a_file_is_still_written_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(*args: object) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    location = parse_storage_uri((tmp_path / "snaps").as_uri() + "/")
    uri = write_durable(location, "m.json", b"one", once=True)
    with pytest.raises(AlreadyWritten):
        write_durable(location, "m.json", b"two", once=True)
    assert read(uri) == b"one"
    assert sorted(p.name for p in (tmp_path / "snaps").iterdir()) == ["m.json"]

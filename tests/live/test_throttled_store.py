"""The lab's http:// storage and the store that pushes back ("503 Slow Down" beyond K
writes in flight): writes are tried again with a growing random backoff, and a write
still refused after the last try fails naming the object."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from snapshotlib.live import storage
from snapshotlib.live.storage import StorageError, parse_storage_uri, read, write_durable
from snapshotlib.live.throttled_store import ThrottledStore


def test_objects_written_over_http_read_back_whole(tmp_path: Path) -> None:
    with ThrottledStore(tmp_path / "objects", max_in_flight=2, write_ms=0) as store:
        location = parse_storage_uri(store.uri + "runs/one/")
        data = bytes(range(256)) * 3
        uri = write_durable(location, "snap-0001-abcde.P1.json", data)
        assert uri == store.uri + "runs/one/snap-0001-abcde.P1.json"
        assert read(uri) == data
        assert (
            tmp_path / "objects" / "runs" / "one" / "snap-0001-abcde.P1.json"
        ).read_bytes() == data
        assert store.stats()["written"] == 1 and store.stats()["read"] == 1


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("http://127.0.0.1/x/", "needs host:port"),
        ("http://127.0.0.1:80x/", "needs host:port"),
        ("http://127.0.0.1:9000/x/?a=1", "no user, query or fragment"),
        ("http://me@127.0.0.1:9000/", "no user, query or fragment"),
        ("http://127.0.0.1:9000/a b/", "holds only names"),
        ("http://127.0.0.1:9000/a/../b/", "holds only names"),
    ],
)
def test_a_bad_http_storage_uri_is_named(uri: str, expected: str) -> None:
    with pytest.raises(StorageError, match=expected):
        parse_storage_uri(uri)


def test_a_slow_down_is_tried_again_until_a_slot_frees(tmp_path: Path) -> None:
    with ThrottledStore(tmp_path, max_in_flight=1, write_ms=300) as store:
        location = parse_storage_uri(store.uri)
        errors: list[BaseException] = []

        def write(name: str) -> None:
            try:
                write_durable(location, name, b"x" * 10)
            except BaseException as e:
                errors.append(e)

        # two writers, one slot: one of them is slowed down, waits, and gets through
        threads = [threading.Thread(target=write, args=(f"o{i}",)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = store.stats()
    assert errors == [] or all("503 Slow Down" in str(e) for e in errors)
    assert stats["most_in_flight"] == 1
    assert stats["slowed_down"] >= 1
    assert stats["written"] + len(errors) == 2


def test_a_write_refused_every_time_fails_naming_the_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storage, "HTTP_BACKOFF_S", 0.001)
    with ThrottledStore(tmp_path, max_in_flight=1, write_ms=0) as store:
        store.begin_write()  # the one slot stays taken
        with pytest.raises(StorageError, match=r"o1: could not write: 503 Slow Down after 5 tries"):
            write_durable(parse_storage_uri(store.uri), "o1", b"data")
        assert store.stats()["slowed_down"] == 5
        assert not (tmp_path / "o1").exists()


def test_the_store_refuses_a_path_that_is_not_a_key_and_says_what_is_missing(
    tmp_path: Path,
) -> None:
    with ThrottledStore(tmp_path) as store:
        put = urllib.request.Request(store.uri + "a/%2e%2e/b", b"x", method="PUT")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(put, timeout=10)
        assert refused.value.code == 400
        with pytest.raises(StorageError, match="could not read"):
            read(store.uri + "missing.json")

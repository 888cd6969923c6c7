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
    with ThrottledStore(tmp_path / "objects", max_rate=100, write_ms=0) as store:
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


def test_writes_beyond_the_rate_of_a_prefix_are_slowed_down_and_tried_again(
    tmp_path: Path,
) -> None:
    with ThrottledStore(tmp_path, max_rate=2, write_ms=0) as store:
        location = parse_storage_uri(store.uri)
        errors: list[BaseException] = []

        def write(name: str) -> None:
            try:
                write_durable(location, name, b"x" * 10)
            except BaseException as e:
                errors.append(e)

        # four writers at once under one prefix, a burst of two: two are slowed down,
        # wait for the bucket to refill (2 a second) and get through, or fail saying so
        threads = [threading.Thread(target=write, args=(f"o{i}",)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = store.stats()
    assert errors == [] or all("503 Slow Down" in str(e) for e in errors)
    assert stats["slowed_down"] >= 2
    assert stats["written"] + len(errors) == 4


def test_the_rate_is_per_prefix_so_keys_spread_over_prefixes_get_more() -> None:
    store = ThrottledStore(".", max_rate=2, write_ms=0)  # never started: the bookkeeping
    try:
        assert [store.begin_write("a/o1"), store.begin_write("a/o2")] == [True, True]
        assert store.begin_write("a/o3") is False  # prefix a/ used its burst
        assert [store.begin_write("b/o1"), store.begin_write("b/o2")] == [True, True]
        assert store.begin_write("o1") and store.begin_write("o2")  # the root is a prefix
        assert store.stats()["slowed_down"] == 1
    finally:
        store.stop()


def test_a_burst_smaller_than_the_rate_limits_writes_at_once_however_quiet_the_prefix() -> None:
    now = [100.0]
    store = ThrottledStore(".", max_rate=4, write_ms=0, burst=2, clock=lambda: now[0])
    try:
        assert store.begin_write("a/o0") and store.begin_write("a/o1")
        assert not store.begin_write("a/o2")
        now[0] += 60  # a long quiet spell still lets only the burst through at once
        assert store.begin_write("a/p0") and store.begin_write("a/p1")
        assert not store.begin_write("a/p2")
        now[0] += 0.25  # the rate still refills: a token every quarter of a second
        assert store.begin_write("a/p3") and not store.begin_write("a/p4")
    finally:
        store.stop()


def test_a_prefix_gets_its_rate_back_as_time_passes() -> None:
    now = [100.0]
    store = ThrottledStore(".", max_rate=4, write_ms=0, clock=lambda: now[0])
    try:
        assert all(store.begin_write(f"a/o{i}") for i in range(4))
        assert not store.begin_write("a/o4")
        now[0] += 0.25  # a quarter of a second: one token back
        assert store.begin_write("a/o5") and not store.begin_write("a/o6")
        now[0] += 10  # the bucket holds a burst at most, however long the pause
        assert all(store.begin_write(f"a/p{i}") for i in range(4))
        assert not store.begin_write("a/p4")
    finally:
        store.stop()


def test_a_write_refused_every_time_fails_naming_the_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storage, "HTTP_BACKOFF_S", 0.001)
    stopped = lambda: 100.0  # noqa: E731  time stands still: no token comes back
    with ThrottledStore(tmp_path, max_rate=1, write_ms=0, clock=stopped) as store:
        store.begin_write("o0")  # the one token of the root prefix is taken
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

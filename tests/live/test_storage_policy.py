"""A trigger's target_storage_uri may only point where the cluster's owner allowed at
``live up``: under its storage root, or at the servers and buckets listed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from snapshotlib.live.storage import StorageError
from snapshotlib.live.storage_policy import MAX_URI_CHARS, StoragePolicy


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "cluster"
    (folder / "checkpoints").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (folder / "link-out").symlink_to(tmp_path / "outside")
    return folder


def policy(root: Path, **kw: tuple[str, ...]) -> StoragePolicy:
    return StoragePolicy.around(str(root), (root / "checkpoints").as_uri() + "/", **kw)


def test_a_target_in_the_root_is_taken(root: Path) -> None:
    allowed = policy(root)
    assert allowed.check((root / "checkpoints" / "run-2").as_uri() + "/").path == str(
        root / "checkpoints" / "run-2"
    )
    assert allowed.check(root.as_uri() + "/").path == str(root)


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("file:///etc/", "must be in the cluster's storage root"),
        ("{root}/../outside/", "'..' is not allowed"),
        ("{root}/checkpoints/../checkpoints/", "'..' is not allowed"),  # even back inside
        ("{root}/%2e%2e/outside/", "'..' is not allowed"),  # spelt as an escape
        ("{root}/link-out/", "must be in the cluster's storage root"),  # a symbolic link out
        ("http://169.254.169.254:80/latest/", "only on the endpoints allowed .*none"),
        ("file:///" + "a" * MAX_URI_CHARS + "/", f"at most {MAX_URI_CHARS} characters"),
        ("checkpoints/relative", "expected"),
    ],
)
def test_a_target_elsewhere_is_refused_saying_what_is_allowed(
    root: Path, target: str, said: str
) -> None:
    uri = target.replace("{root}", root.as_uri())
    with pytest.raises(StorageError, match=f"target_storage_uri: .*{said}"):
        policy(root).check(uri)


def test_servers_are_allowed_only_when_listed_and_the_default_storages_always() -> None:
    listed = StoragePolicy.around("/srv", "http://127.0.0.1:9000/snaps/", ("10.0.0.5:80",))
    assert listed.check("http://10.0.0.5:80/other/").bucket == "10.0.0.5:80"
    assert listed.check("http://127.0.0.1:9000/more/").bucket == "127.0.0.1:9000"
    with pytest.raises(StorageError, match=r"allowed at `live up --allow-endpoint` \(10.0.0.5"):
        listed.check("http://127.0.0.1:9001/snaps/")


@pytest.mark.skipif(importlib.util.find_spec("boto3") is None, reason="s3:// needs boto3")
def test_buckets_are_allowed_only_when_listed() -> None:
    listed = StoragePolicy.around("/srv", "s3://snaps/run/", buckets=("archive",))
    assert listed.check("s3://archive/x/").bucket == "archive"
    assert listed.check("s3://snaps/other/").bucket == "snaps"
    with pytest.raises(StorageError, match=r"--allow-bucket` \(archive, snaps\)"):
        listed.check("s3://someone-elses/x/")


def test_a_default_storage_outside_the_root_is_a_mistake_said_at_start(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="outside the storage root"):
        StoragePolicy.around(str(tmp_path / "a"), (tmp_path / "b").as_uri() + "/")

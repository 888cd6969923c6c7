"""``s3://`` checkpoint storage, against a real S3-compatible server on 127.0.0.1.

The server is SeaweedFS (``weed server -s3``, see :mod:`s3_server`), started once for
this module; boto3 is pointed at it through the standard AWS environment variables, as
a user would point it at theirs. Checked here: which ``s3://`` URIs are accepted and how
they are normalised, writing and reading objects, the errors of a missing bucket, bad
credentials and a stopped server, the controller's use of an ``s3://`` target (parts
inside it only, the manifest written there), and a live cluster of real processes
whose snapshot is stored in S3 and checked by the engine.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_support import alive, part_bytes, require_live
from s3_server import S3Server, require_s3

require_live()

from fastapi.testclient import TestClient  # noqa: E402

from snapshotlib.live import LiveCluster  # noqa: E402
from snapshotlib.live.controller import create_app  # noqa: E402
from snapshotlib.live.spec import ClusterSpec, NodeSpec, topology  # noqa: E402
from snapshotlib.live.storage import (  # noqa: E402
    StorageError,
    StorageLocation,
    parse_storage_uri,
    read,
    write_durable,
)

#: AWS settings that would take precedence over, or add to, the test server's
OTHER_AWS = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """One S3 server for the module's tests; stopped (and checked gone) at the end."""
    weed = require_s3()
    with S3Server(tmp_path_factory.mktemp("s3"), weed) as running:
        yield running


@pytest.fixture
def aws_env(server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """This process's AWS environment (inherited by the processes it starts) pointing
    at the test server."""
    for name in OTHER_AWS:
        monkeypatch.delenv(name, raising=False)
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    return server


@pytest.fixture
def bucket(server: S3Server) -> str:
    """A new, empty bucket."""
    name = "snaps-" + secrets.token_hex(4)
    server.client().create_bucket(Bucket=name)
    return name


def keys(server: S3Server, bucket: str) -> list[str]:
    """Every key in ``bucket``, as the server lists them."""
    listing = server.client().list_objects_v2(Bucket=bucket)
    return sorted(o["Key"] for o in listing.get("Contents", []))


# ------------------------------------------------------------------ the URIs
@pytest.mark.parametrize(
    ("uri", "bucket", "prefix", "canonical"),
    [
        ("s3://snaps/", "snaps", "", "s3://snaps/"),
        ("s3://snaps", "snaps", "", "s3://snaps/"),
        ("s3://snaps/run/", "snaps", "run", "s3://snaps/run/"),
        ("s3://snaps/run", "snaps", "run", "s3://snaps/run/"),
        ("S3://my.snaps-2/a//b///c/", "my.snaps-2", "a/b/c", "s3://my.snaps-2/a/b/c/"),
        ("s3://abc/Run_1/x(2)/v1.5/", "abc", "Run_1/x(2)/v1.5", "s3://abc/Run_1/x(2)/v1.5/"),
        ("s3://" + "a" * 63 + "/p/", "a" * 63, "p", "s3://" + "a" * 63 + "/p/"),
    ],
)
def test_s3_uris_name_a_bucket_and_a_normalised_prefix(
    uri: str, bucket: str, prefix: str, canonical: str
) -> None:
    require_s3()
    location = parse_storage_uri(uri)
    assert location == StorageLocation("s3", prefix, bucket)
    assert location.uri == canonical
    assert parse_storage_uri(location.uri) == location
    assert location.object_uri("snap-0001-a1b2c.P1.json") == canonical + "snap-0001-a1b2c.P1.json"


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("s3:///run/", "names a bucket"),
        ("s3://", "names a bucket"),
        ("s3://ab/run/", "3 to 63 characters"),
        ("s3://" + "a" * 64 + "/run/", "3 to 63 characters"),
        ("s3://My-Snaps/run/", "lowercase letters"),
        ("s3://my_snaps/run/", "lowercase letters"),
        ("s3://-snaps/run/", "begin and end"),
        ("s3://snaps./run/", "begin and end"),
        ("s3://my..snaps/run/", "two periods"),
        ("s3://192.168.1.10/run/", "IP address"),
        ("s3://xn--snaps/run/", "'xn--', which S3 reserves"),
        ("s3://snaps-s3alias/run/", "'-s3alias', which S3 reserves"),
        ("s3://127.0.0.1:9000/snaps/", "not a host, port or user"),
        ("s3://key@snaps/run/", "not a host, port or user"),
        ("s3://snaps/run/?versionId=1", "no query or fragment"),
        ("s3://snaps/run?", "no query or fragment"),
        ("s3://snaps/run/#part", "no query or fragment"),
        ("s3://snaps/a/../b/", "no '.' or '..' parts"),
        ("s3://snaps/a/./b/", "no '.' or '..' parts"),
        ("s3://snaps/my%20run/", "only letters, digits"),
        ("s3://snaps/my run/", "only letters, digits"),
        ("s3://snaps/" + "p" * 1024 + "/", "longer than"),
    ],
)
def test_bad_s3_uris_are_refused_naming_the_field_and_the_rule(uri: str, why: str) -> None:
    # checked before boto3 is looked for: these need no S3 installed
    with pytest.raises(StorageError, match=r"^target_storage_uri: ") as refused:
        parse_storage_uri(uri)
    assert why in str(refused.value)


def test_without_boto3_s3_uris_are_refused_naming_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # as if it were not installed
    with pytest.raises(StorageError, match=r"^target_storage_uri: ") as refused:
        parse_storage_uri("s3://snaps/run/")
    assert "not available" in str(refused.value)
    assert "pip install 'snapshotlib[live]'" in str(refused.value)
    # nor is a location made without parsing a URI written to
    with pytest.raises(StorageError, match=r"snapshotlib\[live\]"):
        write_durable(StorageLocation("s3", "run", "snaps"), "part.json", b"data")


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "..x", "a b", "a%2fb", "a?b", "é.json"])
def test_s3_object_names_are_plain_and_need_no_escaping(name: str) -> None:
    require_s3()
    location = parse_storage_uri("s3://snaps/run/")
    with pytest.raises(StorageError, match=r"^name: "):
        location.object_uri(name)


# ----------------------------------------------------------- objects in S3
def test_an_object_is_written_whole_then_read_back(aws_env: S3Server, bucket: str) -> None:
    location = parse_storage_uri(f"s3://{bucket}/run/1/")
    first = bytes(range(256)) * 1000  # every byte value, a quarter of a megabyte
    uri = write_durable(location, "part.json", first)
    assert uri == f"s3://{bucket}/run/1/part.json"
    assert read(uri) == first
    assert write_durable(location, "part.json", b"second") == uri
    assert read(uri) == b"second"
    # one PUT per write: no temporary objects, nothing outside the prefix
    assert keys(aws_env, bucket) == ["run/1/part.json"]


def test_a_missing_bucket_or_object_is_a_storage_error_naming_the_uri(
    aws_env: S3Server, bucket: str
) -> None:
    missing = "missing-" + secrets.token_hex(4)
    uri = f"s3://{missing}/run/part.json"
    with pytest.raises(StorageError, match=rf"^{re.escape(uri)}: could not write: NoSuchBucket"):
        write_durable(parse_storage_uri(f"s3://{missing}/run/"), "part.json", b"data")
    gone = f"s3://{bucket}/run/gone.json"
    with pytest.raises(StorageError, match=rf"^{re.escape(gone)}: could not read: NoSuchKey"):
        read(gone)
    with pytest.raises(StorageError, match=r"^uri: .*names a bucket"):
        read("s3:///run/part.json")


@pytest.mark.parametrize(
    ("variable", "value", "code"),
    [
        ("AWS_SECRET_ACCESS_KEY", "not-the-secret", "SignatureDoesNotMatch"),
        ("AWS_ACCESS_KEY_ID", "nobody", "InvalidAccessKeyId"),
    ],
)
def test_bad_credentials_are_a_storage_error_naming_the_uri(
    aws_env: S3Server,
    bucket: str,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    code: str,
) -> None:
    monkeypatch.setenv(variable, value)
    uri = f"s3://{bucket}/run/part.json"
    with pytest.raises(StorageError, match=rf"^{re.escape(uri)}: could not write: {code}"):
        write_durable(parse_storage_uri(f"s3://{bucket}/run/"), "part.json", b"data")
    assert keys(aws_env, bucket) == []


def test_a_stopped_server_is_a_storage_error_naming_the_uri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weed = require_s3()
    with S3Server(tmp_path, weed) as own:
        for name, value in own.env().items():
            monkeypatch.setenv(name, value)
        for name in OTHER_AWS:
            monkeypatch.delenv(name, raising=False)
        own.client().create_bucket(Bucket="snaps")
        location = parse_storage_uri("s3://snaps/run/")
        assert read(write_durable(location, "before.json", b"up")) == b"up"
        pid = own.pid
        assert pid is not None and alive(pid)
    assert not alive(pid), "the server has stopped"
    uri = "s3://snaps/run/after.json"
    with pytest.raises(StorageError, match=rf"^{re.escape(uri)}: could not write: .*connect"):
        write_durable(location, "after.json", b"down")
    with pytest.raises(StorageError, match="could not read"):
        read("s3://snaps/run/before.json")


def test_one_client_serves_every_thread_of_a_process(aws_env: S3Server, bucket: str) -> None:
    from snapshotlib.live import s3

    assert s3.client() is s3.client()
    location = parse_storage_uri(f"s3://{bucket}/many/")
    errors: list[BaseException] = []
    clients: list[Any] = []

    def write(k: int) -> None:
        try:
            clients.append(s3.client())
            write_durable(location, f"p{k}.json", str(k).encode())
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert len(clients) == 8 and all(c is clients[0] for c in clients)
    assert keys(aws_env, bucket) == sorted(f"many/p{k}.json" for k in range(8))
    assert [read(f"s3://{bucket}/many/p{k}.json") for k in range(8)] == [
        str(k).encode() for k in range(8)
    ]


# ------------------------------------------------------------- the controller
def make_spec(n: int = 3) -> ClusterSpec:
    return ClusterSpec(
        nodes=tuple(NodeSpec(f"P{i}", "127.0.0.1", i) for i in range(1, n + 1)),
        channels=tuple((c.src, c.dst) for c in topology("complete", n).channels),
    )


class Controller:
    """A controller (FastAPI's test client) whose default storage is ``storage_uri``;
    node starts are recorded, not sent."""

    def __init__(self, tmp: Path, storage_uri: str) -> None:
        self.spec = make_spec()
        self.started: list[tuple[str, str, str]] = []

        async def initiate(node: NodeSpec, snapshot_id: str, uri: str, *kind: str) -> None:
            self.started.append((node.id, snapshot_id, uri))

        app = create_app(self.spec, f"sqlite:///{tmp / 'registry.db'}", storage_uri, initiate)
        self.client = TestClient(app)

    def trigger(self, **body: Any) -> str:
        answer = self.client.post(
            "/v1/snapshots/trigger",
            json={"initiated_by_node_id": "P1", "snapshot_type": "full", **body},
        )
        assert answer.status_code == 202, answer.text
        return str(answer.json()["snapshot_id"])

    def get(self, snapshot_id: str) -> dict[str, Any]:
        answer = self.client.get(f"/v1/snapshots/{snapshot_id}")
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def report(self, snapshot_id: str, node: str, part_uri: str, size: int = 1) -> Any:
        return self.client.post(
            f"/internal/v1/snapshots/{snapshot_id}/parts",
            json={"node_id": node, "part_uri": part_uri, "size_bytes": size, "ok": True},
        )


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[Controller]:
    require_s3()
    lab = Controller(tmp_path, "s3://default-snaps/run/")
    with lab.client:
        yield lab


def test_the_controller_takes_an_s3_target_and_writes_the_manifest_there_last(
    aws_env: S3Server, bucket: str, controller: Controller
) -> None:
    sid = controller.trigger(target_storage_uri=f"s3://{bucket}//live/run")
    target = f"s3://{bucket}/live/run/"
    assert controller.get(sid)["target_storage_uri"] == target
    assert controller.started == [("P1", sid, target)]
    location = parse_storage_uri(target)
    reported = []
    for node in controller.spec.ids:
        data = part_bytes(controller.spec, sid, node)
        part_uri = write_durable(location, f"{sid}.{node}.json", data)
        reported.append(part_uri)
        assert keys(aws_env, bucket).count(f"live/run/{sid}.json") == 0  # not before the last
        answer = controller.report(sid, node, part_uri, size=len(data))
        assert answer.status_code == 200, answer.text
    status = controller.get(sid)
    assert status["status"] == "COMPLETED", status
    assert status["checkpoint_manifest_uri"] == f"{target}{sid}.json"
    manifest = json.loads(read(status["checkpoint_manifest_uri"]))
    assert [p["part_uri"] for p in manifest["parts"]] == reported
    assert [json.loads(read(uri))["node_id"] for uri in reported] == list(controller.spec.ids)
    assert keys(aws_env, bucket) == sorted(
        [f"live/run/{sid}.json"] + [f"live/run/{sid}.{n}.json" for n in controller.spec.ids]
    )


@pytest.mark.parametrize(
    "part_uri",
    [
        "s3://other-snaps/run/{sid}.P1.json",  # another bucket
        "s3://default-snaps/other/{sid}.P1.json",  # another prefix
        "s3://default-snaps/{sid}.P1.json",  # the bucket's top, above the prefix
        "s3://default-snaps/run/sub/{sid}.P1.json",  # a "folder" inside the prefix
        "s3://default-snaps/run/../{sid}.P1.json",
        "s3://default-snaps/run/%2e%2e/{sid}.P1.json",
        "s3://default-snaps/runs/{sid}.P1.json",  # the prefix's name, longer
        "s3://default-snaps/run//{sid}.P1.json",
        "S3://default-snaps/run/{sid}.P1.json",
        "s3://default-snaps/run/",
        "file:///tmp/run/{sid}.P1.json",
    ],
)
def test_the_controller_refuses_an_s3_part_outside_the_snapshot_s_storage(
    controller: Controller, part_uri: str
) -> None:
    sid = controller.trigger()
    answer = controller.report(sid, "P1", part_uri.format(sid=sid))
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("part_uri: a file directly in")
    assert "s3://default-snaps/run/" in answer.json()["detail"]
    status = controller.get(sid)
    assert (status["status"], status["nodes_completed"]) == ("INITIATED", 0)
    # the same name directly in the prefix is taken
    inside = controller.report(sid, "P1", f"s3://default-snaps/run/{sid}.P1.json")
    assert inside.status_code == 200, inside.text


def test_a_store_that_cannot_be_reached_fails_the_snapshot_naming_the_uri(
    aws_env: S3Server, controller: Controller
) -> None:
    missing = "missing-" + secrets.token_hex(4)
    sid = controller.trigger(target_storage_uri=f"s3://{missing}/run/")
    for node in controller.spec.ids:
        answer = controller.report(sid, node, f"s3://{missing}/run/{sid}.{node}.json")
        assert answer.status_code == 200, answer.text
    status = controller.get(sid)
    assert status["status"] == "FAILED"
    assert status["checkpoint_manifest_uri"] is None
    # the controller reads each part back before it writes the manifest: the first part
    # it cannot read fails the snapshot
    part = f"s3://{missing}/run/{sid}.P1.json"
    assert status["error"].startswith(f"part: P1's part of {sid}: {part}: could not read: ")


# ------------------------------------------------------- a live cluster on S3
def test_a_live_cluster_checkpoints_to_s3_and_its_snapshot_checks(
    aws_env: S3Server, bucket: str, tmp_path: Path
) -> None:
    missing = "missing-" + secrets.token_hex(4)
    storage = f"s3://{bucket}/run/"
    # the missing bucket allowed at start, so that the nodes try it
    with LiveCluster(
        3, rate=50.0, storage=storage, workdir=tmp_path, allow_buckets=(missing,)
    ) as c:
        pids = c.pids
        sid = c.trigger()
        answer = c.wait(sid)
        assert answer["status"] == "COMPLETED", answer
        assert answer["checkpoint_manifest_uri"] == f"s3://{bucket}/run/{sid}.json"
        check = c.check(sid)
        assert check.ok, check.reason
        assert check.recorded_total == check.expected_total == 3 * 1000
        # the nodes' writes fail where the bucket does not exist, and say so
        failed = c.wait(c.trigger("P2", storage=f"s3://{missing}/run/"))
    assert failed["status"] == "FAILED"
    assert "NoSuchBucket" in failed["error"] and f"s3://{missing}/run/" in failed["error"]
    # the manifest, each node's part, and the chunk of accounts each part refers to
    written = keys(aws_env, bucket)
    chunks = [k for k in written if re.fullmatch(r"run/P[123]\.chunk-0000\.[0-9a-f]{16}\.json", k)]
    assert sorted(k[4:6] for k in chunks) == ["P1", "P2", "P3"]
    assert sorted(set(written) - set(chunks)) == sorted(
        [f"run/{sid}.json"] + [f"run/{sid}.P{i}.json" for i in (1, 2, 3)]
    )
    assert not (tmp_path / "checkpoints").exists(), "nothing was written to the default"
    assert not any(alive(pid) for pid in pids.values()), "every process has exited"

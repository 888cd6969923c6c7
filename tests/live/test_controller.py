"""The controller's REST API, its registry and its storage, without any node process.

The nodes are played by the tests: a fake ``initiate`` records whom the controller asked
to start a snapshot, and the tests write parts and report them as a node would. What is
specified here: a snapshot is COMPLETED only once every node's part is in and its
manifest is written; bad requests are refused with a message naming the field and leave
the registry as it was; the registry outlives the controller; concurrent reports
complete a snapshot exactly once.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import itertools
import json
import re
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from live_support import part_bytes

pytest.importorskip("fastapi", reason="the controller needs fastapi (the live extra)")
pytest.importorskip("httpx", reason="FastAPI's test client needs httpx (the dev extra)")
pytest.importorskip("sqlalchemy", reason="the registry needs sqlalchemy (the live extra)")

from fastapi.testclient import TestClient
from sqlalchemy import update

from snapshotlib.live import snapshot_service
from snapshotlib.live.controller import create_app
from snapshotlib.live.node_calls import NodeRefused
from snapshotlib.live.registry import (
    FINAL,
    STATUSES,
    AlreadyRegistered,
    Registry,
    RegistryError,
    manifests_table,
)
from snapshotlib.live.restore import RestorePart
from snapshotlib.live.spec import ClusterSpec, NodeSpec, topology
from snapshotlib.live.storage import (
    StorageError,
    StorageLocation,
    parse_storage_uri,
    read,
    write_durable,
)

ID = re.compile(r"^snap-(\d{4})-[0-9a-f]{5}$")
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def number(snapshot_id: str) -> int:
    """The running number in a snapshot id (and check the id's form)."""
    match = ID.match(snapshot_id)
    assert match, snapshot_id
    return int(match.group(1))


def make_spec(n: int = 3) -> ClusterSpec:
    return ClusterSpec(
        nodes=tuple(NodeSpec(f"P{i}", "127.0.0.1", i) for i in range(1, n + 1)),
        channels=tuple((c.src, c.dst) for c in topology("complete", n).channels),
    )


@dataclass
class FakeInitiate:
    """Stands for the gRPC call: records each call, and raises ``fail`` if set."""

    calls: list[tuple[NodeSpec, str, str]] = field(default_factory=list)
    fail: Exception | None = None
    delay_s: float = 0.0

    async def __call__(
        self, node: NodeSpec, snapshot_id: str, storage_uri: str, *kind: str
    ) -> None:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        self.calls.append((node, snapshot_id, storage_uri))
        if self.fail is not None:
            raise self.fail


@dataclass
class Lab:
    """A controller on a fresh registry file and storage directory."""

    tmp: Path
    spec: ClusterSpec
    initiate: FakeInitiate
    db_url: str
    storage_uri: str
    client: TestClient

    @property
    def storage(self) -> Path:
        return self.tmp / "snaps"

    def trigger(self, node: str = "P3", **body: Any) -> Any:
        return self.client.post(
            "/v1/snapshots/trigger",
            json={"initiated_by_node_id": node, "snapshot_type": "full", **body},
        )

    def started(self, node: str = "P3", **body: Any) -> str:
        answer = self.trigger(node, **body)
        assert answer.status_code == 202, answer.text
        return str(answer.json()["snapshot_id"])

    def part(
        self, snapshot_id: str, node: str, *, ok: bool = True, size: int = 0
    ) -> dict[str, Any]:
        """Write ``node``'s part of the snapshot, as the node would; its report, saying it
        wrote ``size`` bytes."""
        if not ok:
            return {
                "node_id": node,
                "part_uri": "",
                "size_bytes": 0,
                "ok": False,
                "error": f"{node}: disk full",
            }
        target = self.get(snapshot_id)["target_storage_uri"]
        data = part_bytes(self.spec, snapshot_id, node)
        data += b" " * (size - len(data))  # at least size bytes, as it said
        uri = write_durable(parse_storage_uri(target), f"{snapshot_id}.{node}.json", data)
        return {"node_id": node, "part_uri": uri, "size_bytes": size, "ok": True, "error": None}

    def post(self, snapshot_id: str, report: dict[str, Any]) -> Any:
        return self.client.post(f"/internal/v1/snapshots/{snapshot_id}/parts", json=report)

    def report(self, snapshot_id: str, node: str, *, ok: bool = True, size: int = 0) -> Any:
        """Write ``node``'s part and report it."""
        return self.post(snapshot_id, self.part(snapshot_id, node, ok=ok, size=size))

    def get(self, snapshot_id: str) -> dict[str, Any]:
        answer = self.client.get(f"/v1/snapshots/{snapshot_id}")
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def registry_state(self) -> tuple[Any, ...]:
        """Everything in the registry, read through a registry of its own."""
        registry = Registry(self.db_url)
        try:
            rows = registry.list()
            return tuple((r, registry.parts(r["snapshot_id"])) for r in rows)
        finally:
            registry.close()

    def files(self) -> list[str]:
        if not self.storage.exists():
            return []
        return sorted(str(p.relative_to(self.storage)) for p in self.storage.rglob("*"))


@contextmanager
def running(
    tmp: Path,
    spec: ClusterSpec | None = None,
    initiate: FakeInitiate | None = None,
    registry_url: str | None = None,
    **kw: Any,
) -> Iterator[Lab]:
    """A controller on the registry (a file in ``tmp`` unless ``registry_url`` is given)
    and storage directory in ``tmp``, running.

    Opening it again on the same ``tmp`` and registry is a controller restart.
    """
    spec = spec or make_spec()
    initiate = initiate or FakeInitiate()
    db_url = registry_url or f"sqlite:///{tmp / 'registry.db'}"
    storage_uri = (tmp / "snaps").as_uri() + "/"
    app = create_app(spec, db_url, storage_uri, initiate=initiate, **kw)
    with TestClient(app) as client:
        yield Lab(tmp, spec, initiate, db_url, storage_uri, client)


@pytest.fixture
def registry_url(tmp_path: Path) -> str:
    """The registry the tests that take it run on: here SQLite; test_registry_postgres.py
    runs them again on PostgreSQL by defining a fixture of this name of its own."""
    return f"sqlite:///{tmp_path / 'registry.db'}"


@pytest.fixture
def lab(tmp_path: Path, registry_url: str) -> Iterator[Lab]:
    with running(tmp_path, registry_url=registry_url) as lab:
        yield lab


def complete(lab: Lab, snapshot_id: str, size: int = 10) -> dict[str, Any]:
    for node in lab.spec.ids:
        answer = lab.report(snapshot_id, node, size=size)
        assert answer.status_code == 200, answer.text
    return lab.get(snapshot_id)


# -------------------------------------------------------------------- trigger
def test_trigger_answers_202_with_the_text_s_fields_and_asks_the_initiator(lab: Lab) -> None:
    answer = lab.trigger("P3", target_storage_uri=lab.storage_uri)
    assert answer.status_code == 202
    body = answer.json()
    assert set(body) == {"snapshot_id", "status", "initiated_at", "estimated_completion_ms"}
    assert ID.match(body["snapshot_id"])
    assert body["snapshot_id"].startswith("snap-0001-")
    assert body["status"] == "INITIATED"
    assert ISO_Z.match(body["initiated_at"])
    assert body["estimated_completion_ms"] == 1000  # nothing completed yet
    assert lab.initiate.calls == [(lab.spec.node("P3"), body["snapshot_id"], lab.storage_uri)]

    got = lab.get(body["snapshot_id"])
    assert got["status"] == "INITIATED"
    assert got["initiated_by_node_id"] == "P3"
    assert got["snapshot_type"] == "full"
    assert got["initiated_at"] == body["initiated_at"]
    assert got["nodes_completed"] == 0
    assert got["checkpoint_manifest_uri"] is None
    assert got["duration_ms"] is None


def test_omitted_target_storage_uri_is_the_controller_s_default_and_uris_are_normalised(
    lab: Lab, tmp_path: Path
) -> None:
    default = lab.started("P1")
    assert lab.get(default)["target_storage_uri"] == lab.storage_uri
    other = lab.started(
        "P2", snapshot_type="incremental", target_storage_uri=f"file://{tmp_path}/b"
    )
    assert lab.get(other)["target_storage_uri"] == f"file://{tmp_path}/b/"
    assert lab.get(other)["snapshot_type"] == "incremental"
    assert lab.initiate.calls[1][2] == f"file://{tmp_path}/b/"
    assert [number(s) for s in (default, other)] == [1, 2]


# ------------------------------------------------------------------ completion
def test_parts_from_every_node_complete_the_snapshot_with_its_manifest(lab: Lab) -> None:
    sid = lab.started("P3")
    time.sleep(0.02)  # a duration above zero

    first = lab.report(sid, "P1", size=200)
    assert first.status_code == 200
    assert first.json() == {
        "snapshot_id": sid,
        "node_id": "P1",
        "recorded": True,
        "status": "IN_PROGRESS",
        "error": None,
    }
    assert lab.get(sid)["nodes_completed"] == 1
    assert lab.report(sid, "P2", size=300).json()["status"] == "IN_PROGRESS"
    assert not (lab.storage / f"{sid}.json").exists()
    last = lab.report(sid, "P3", size=400)
    assert last.json()["status"] == "COMPLETED"

    got = lab.get(sid)
    assert got["status"] == "COMPLETED"
    assert got["nodes_completed"] == 3
    assert got["nodes_failed"] == 0
    assert got["total_size_bytes"] == 900
    assert isinstance(got["duration_ms"], int) and got["duration_ms"] >= 20
    assert ISO_Z.match(got["completed_at"])
    assert got["error"] is None

    manifest_path = lab.storage / f"{sid}.json"
    assert got["checkpoint_manifest_uri"] == manifest_path.as_uri()
    # the manifest's bytes as they were at completion, for whoever checks the snapshot
    assert (
        got["checkpoint_manifest_sha256"] == hashlib.sha256(manifest_path.read_bytes()).hexdigest()
    )
    assert lab.client.get("/v1/snapshots").json()["snapshots"][-1] == got
    manifest = json.loads(read(got["checkpoint_manifest_uri"]))
    assert manifest["snapshot_id"] == sid
    assert manifest["snapshot_type"] == "full"
    assert manifest["initiated_by_node_id"] == "P3"
    assert manifest["initiated_at"] == got["initiated_at"]
    assert manifest["total_size_bytes"] == 900
    assert manifest["total_money"] == lab.spec.total_money == 3000
    assert [(p["node_id"], p["size_bytes"]) for p in manifest["parts"]] == [
        ("P1", 200),
        ("P2", 300),
        ("P3", 400),
    ]
    # each part read back and checked: its hash, and the money it holds
    for part in manifest["parts"]:
        data = read(part["part_uri"])
        assert len(data) == part["size_bytes"]
        assert part["sha256"] == hashlib.sha256(data).hexdigest()
        assert (part["balance"], part["in_flight"]) == (1000, 0)
    assert manifest["recorded_total"] == 3000
    # no temporary files left beside the parts and the manifest
    assert lab.files() == sorted([f"{sid}.json"] + [f"{sid}.P{i}.json" for i in (1, 2, 3)])


def test_a_node_reporting_twice_keeps_its_first_report(lab: Lab) -> None:
    sid = lab.started()
    lab.report(sid, "P1", size=10)
    again = lab.report(sid, "P1", size=99)
    assert again.status_code == 200
    assert again.json()["recorded"] is False
    got = complete(lab, sid)
    assert got["status"] == "COMPLETED"
    manifest = json.loads(read(got["checkpoint_manifest_uri"]))
    part_uri = (lab.storage / f"{sid}.P1.json").as_uri()
    assert manifest["parts"][0] == {
        "node_id": "P1",
        "part_uri": part_uri,
        "size_bytes": 10,
        "sha256": hashlib.sha256(read(part_uri)).hexdigest(),
        "balance": 1000,
        "in_flight": 0,
    }
    # a report after completion changes nothing
    before = lab.registry_state()
    assert lab.report(sid, "P2", size=5).json()["status"] == "COMPLETED"
    assert lab.registry_state() == before


def test_a_manifest_already_there_is_never_replaced(tmp_path: Path) -> None:
    # a manifest is written once: one already under the snapshot's name (another's,
    # forged) fails the snapshot instead of being overwritten
    with running(tmp_path) as lab:
        sid = lab.started()
        lab.storage.mkdir(parents=True, exist_ok=True)
        (lab.storage / f"{sid}.json").write_bytes(b"not this snapshot's")
        for node in lab.spec.ids:
            assert lab.report(sid, node).status_code == 200
        status = lab.get(sid)
        assert status["status"] == "FAILED" and status["checkpoint_manifest_uri"] is None
        assert "already written, and written once" in status["error"]
        assert (lab.storage / f"{sid}.json").read_bytes() == b"not this snapshot's"


@pytest.mark.parametrize(
    "failure",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        StorageError("file:///snaps/x.json: could not write: No space left on device"),
    ],
    ids=["os-error", "storage-error"],
)
def test_no_manifest_no_completion(
    lab: Lab, monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    def broken(location: StorageLocation, name: str, data: bytes, *, once: bool = False) -> str:
        raise failure

    monkeypatch.setattr(snapshot_service, "write_durable", broken)
    sid = lab.started()
    lab.report(sid, "P1")
    lab.report(sid, "P2")
    last = lab.report(sid, "P3")
    assert last.status_code == 200
    assert last.json()["status"] == "FAILED"
    assert "manifest" in last.json()["error"]
    assert "No space left on device" in last.json()["error"]

    got = lab.get(sid)
    assert got["status"] == "FAILED"
    assert (got["checkpoint_manifest_uri"], got["checkpoint_manifest_sha256"]) == (None, None)
    assert got["error"].startswith("manifest: ")
    assert "No space left on device" in got["error"]
    assert not (lab.storage / f"{sid}.json").exists()
    assert lab.client.get("/v1/snapshots", params={"status": "COMPLETED"}).json() == {
        "snapshots": []
    }


def test_every_completed_snapshot_has_its_manifest(lab: Lab) -> None:
    sids = [lab.started(node) for node in ("P1", "P2", "P3")]
    for sid in sids:
        complete(lab, sid, size=7)
    listed = lab.client.get("/v1/snapshots", params={"status": "COMPLETED"}).json()["snapshots"]
    assert [s["snapshot_id"] for s in listed] == sids
    for snapshot in listed:
        manifest = json.loads(read(snapshot["checkpoint_manifest_uri"]))
        assert manifest["snapshot_id"] == snapshot["snapshot_id"]
        assert len(manifest["parts"]) == len(lab.spec.ids)


def test_a_failed_part_fails_the_snapshot_without_a_manifest(lab: Lab) -> None:
    sid = lab.started()
    lab.report(sid, "P1", size=5)
    failed = lab.report(sid, "P2", ok=False)
    assert failed.status_code == 200
    assert failed.json()["status"] == "FAILED"

    got = lab.get(sid)
    assert got["status"] == "FAILED"
    assert got["nodes_failed"] == 1
    assert got["nodes_completed"] == 1
    assert "P2: disk full" in got["error"]
    assert "P2: P2:" not in got["error"]
    assert got["checkpoint_manifest_uri"] is None

    # the last node's part still arrives: kept and counted, still FAILED, no manifest
    late = lab.report(sid, "P3", size=5)
    assert late.json()["status"] == "FAILED"
    got = lab.get(sid)
    assert (got["status"], got["nodes_completed"], got["nodes_failed"]) == ("FAILED", 2, 1)
    assert not (lab.storage / f"{sid}.json").exists()


def test_an_unreachable_initiator_answers_503_and_fails_the_snapshot(
    tmp_path: Path, registry_url: str
) -> None:
    unreachable = FakeInitiate(fail=ConnectionRefusedError("connection refused"))
    with running(tmp_path, initiate=unreachable, registry_url=registry_url) as lab:
        answer = lab.trigger("P2")
        assert answer.status_code == 503
        detail = answer.json()["detail"]
        assert "P2" in detail and "127.0.0.1:2" in detail and "connection refused" in detail
        [(node, sid, _)] = unreachable.calls
        assert node.id == "P2"
        got = lab.get(sid)
        assert got["status"] == "FAILED"
        assert "connection refused" in got["error"]
        failed = lab.client.get("/v1/snapshots", params={"status": "FAILED"}).json()
        assert [s["snapshot_id"] for s in failed["snapshots"]] == [sid]


def test_the_estimate_is_the_median_duration_of_recent_completed_snapshots(lab: Lab) -> None:
    durations = []
    for pause in (0.0, 0.03, 0.06):
        sid = lab.started()
        time.sleep(pause)
        durations.append(complete(lab, sid)["duration_ms"])
        answer = lab.trigger()
        assert answer.json()["estimated_completion_ms"] == int(statistics.median(durations))
        lab.report(answer.json()["snapshot_id"], "P1", ok=False)  # out of the estimate


# ---------------------------------------------------------------- bad requests
NODES = "P1, P2, P3"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"initiated_by_node_id": "P9"}, ["initiated_by_node_id", "'P9'", NODES]),
        ({"initiated_by_node_id": ""}, ["initiated_by_node_id", NODES]),
        ({"initiated_by_node_id": 3}, ["initiated_by_node_id: must be a valid string, got 3"]),
        (
            {"snapshot_type": "partial"},
            ["snapshot_type: must be 'full' or 'incremental', got 'partial'"],
        ),
        ({"snapshot_type": None}, ["snapshot_type: must be 'full' or 'incremental', got null"]),
        ({"target_storage_uri": "snaps/dir/"}, ["target_storage_uri", "no scheme", "file:///"]),
        ({"target_storage_uri": "file://snaps/dir/"}, ["target_storage_uri", "'snaps'"]),
        ({"target_storage_uri": "file:snaps/dir"}, ["target_storage_uri", "absolute"]),
        # an http:// object store needs its port
        ({"target_storage_uri": "http://example.com/snaps/"}, ["target_storage_uri", "host:port"]),
        ({"target_storage_uri": "ftp://example.com/snaps/"}, ["target_storage_uri", "'ftp://'"]),
        ({"target_storage_uri": "s3://Bucket/prefix/"}, ["target_storage_uri", "lowercase"]),
        ({"target_storage_uri": "s3:///prefix/"}, ["target_storage_uri", "bucket"]),
        ({"target_storage_uri": ""}, ["target_storage_uri", "file:///"]),
        ({"target_storage_uri": "file:///tmp/snaps?x=1"}, ["target_storage_uri", "query"]),
        ({"target_storage_uri": "file://[::1/x"}, ["target_storage_uri"]),
        ({"target_storage_uri": ["file:///tmp/"]}, ["target_storage_uri", "string"]),
        ({"priority": "high"}, ["priority: not a field", "initiated_by_node_id, snapshot_type"]),
    ],
)
def test_a_bad_trigger_names_the_field_and_changes_nothing(
    lab: Lab, body: dict[str, Any], named: list[str]
) -> None:
    before = lab.registry_state()
    answer = lab.client.post(
        "/v1/snapshots/trigger",
        json={"initiated_by_node_id": "P1", "snapshot_type": "full", **body},
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert isinstance(detail, str)
    for text in named:
        assert text in detail
    assert lab.registry_state() == before
    assert lab.initiate.calls == []
    assert lab.files() == []


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ({"initiated_by_node_id": "P1"}, "snapshot_type: required"),
        ([], "body: must be a JSON object, got a list"),
        ("full", "body: must be a JSON object"),
        (None, "body: required: a JSON object with initiated_by_node_id, snapshot_type"),
        (b"{not json", "body: not valid JSON"),
    ],
    ids=["missing-field", "list", "string", "no-body", "not-json"],
)
def test_a_malformed_trigger_body_is_refused_in_words(lab: Lab, content: Any, named: str) -> None:
    if isinstance(content, bytes):
        answer = lab.client.post(
            "/v1/snapshots/trigger", content=content, headers={"content-type": "application/json"}
        )
    elif content is None:
        answer = lab.client.post("/v1/snapshots/trigger")
    else:
        answer = lab.client.post("/v1/snapshots/trigger", json=content)
    assert answer.status_code == 422
    assert named in answer.json()["detail"]
    assert lab.registry_state() == ()


@pytest.mark.parametrize(
    ("change", "code", "named"),
    [
        ({"node_id": "P9"}, 422, ["node_id: unknown node 'P9'", NODES]),
        ({"node_id": 1}, 422, ["node_id"]),
        ({"size_bytes": -1}, 422, ["size_bytes", "greater than or equal to 0"]),
        ({"size_bytes": "12"}, 422, ["size_bytes", "integer"]),
        ({"size_bytes": 1.5}, 422, ["size_bytes"]),
        ({"ok": "yes"}, 422, ["ok", "boolean"]),
        ({"ok": None}, 422, ["ok"]),
        ({"part_uri": ""}, 422, ["part_uri", "required when ok is true"]),
        # a report naming a file outside the snapshot's storage (which a check would read)
        ({"part_uri": "file:///etc/passwd"}, 422, ["part_uri: a file directly in", "/etc/passwd"]),
        ({"part_uri": "file:///x/p1.json"}, 422, ["part_uri: a file directly in"]),
        ({"checksum": "abc"}, 422, ["checksum: not a field", "node_id, part_uri"]),
    ],
)
def test_a_bad_part_report_names_the_field_and_changes_nothing(
    lab: Lab, change: dict[str, Any], code: int, named: list[str]
) -> None:
    sid = lab.started()
    before = lab.registry_state()
    body = {"node_id": "P1", "part_uri": "file:///x/p1.json", "size_bytes": 1, "ok": True}
    answer = lab.client.post(f"/internal/v1/snapshots/{sid}/parts", json={**body, **change})
    assert answer.status_code == code, answer.text
    for text in named:
        assert text in answer.json()["detail"]
    assert lab.registry_state() == before
    assert lab.get(sid)["status"] == "INITIATED"


@pytest.mark.parametrize("tail", ["../outside.json", "sub/p1.json", "%2e%2e/outside.json", ""])
def test_a_part_outside_its_snapshot_s_storage_is_refused(lab: Lab, tail: str) -> None:
    # an attacker on the network reporting a "part" anywhere the check would then read
    sid = lab.started()
    base = lab.get(sid)["target_storage_uri"]
    before = lab.registry_state()
    report = {"node_id": "P1", "part_uri": base + tail, "size_bytes": 1, "ok": True}
    answer = lab.post(sid, report)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("part_uri: a file directly in")
    assert lab.registry_state() == before


def test_a_missing_ok_is_required(lab: Lab) -> None:
    sid = lab.started()
    answer = lab.client.post(f"/internal/v1/snapshots/{sid}/parts", json={"node_id": "P1"})
    assert answer.status_code == 422
    assert answer.json()["detail"] == "ok: required"


def test_unknown_snapshots_are_404_naming_the_id(lab: Lab) -> None:
    lab.started()
    before = lab.registry_state()
    for answer in (
        lab.client.get("/v1/snapshots/snap-0042-abcde"),
        lab.client.post(
            "/internal/v1/snapshots/snap-0042-abcde/parts",
            json={"node_id": "P1", "part_uri": "file:///x", "size_bytes": 1, "ok": True},
        ),
    ):
        assert answer.status_code == 404
        assert answer.json()["detail"].startswith("snapshot_id: no snapshot 'snap-0042-abcde'")
    assert lab.registry_state() == before


def test_an_unknown_status_filter_names_the_allowed_ones(lab: Lab) -> None:
    answer = lab.client.get("/v1/snapshots", params={"status": "DONE"})
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert detail.startswith("status: ")
    assert "'DONE'" in detail
    for status in STATUSES:
        assert f"'{status}'" in detail


def test_a_bad_default_storage_uri_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=r"^storage_uri \(the default target_storage_uri\): "):
        create_app(make_spec(), f"sqlite:///{tmp_path / 'r.db'}", "snaps/", initiate=FakeInitiate())


def test_unknown_routes_and_methods_answer_json(lab: Lab) -> None:
    assert lab.client.get("/v2/nothing").json() == {"detail": "Not Found"}
    assert lab.client.delete("/v1/snapshots/snap-0001-abcde").status_code == 405


# ------------------------------------------------------------ listing, cluster
def test_the_list_is_oldest_first_and_filters_by_status(lab: Lab) -> None:
    done = lab.started("P1")
    complete(lab, done)
    failed = lab.started("P2")
    lab.report(failed, "P3", ok=False)
    running_ = lab.started("P3")
    lab.report(running_, "P1")
    waiting = lab.started("P1")

    every = lab.client.get("/v1/snapshots").json()["snapshots"]
    assert [s["snapshot_id"] for s in every] == [done, failed, running_, waiting]
    by_status = {
        status: [
            s["snapshot_id"]
            for s in lab.client.get("/v1/snapshots", params={"status": status}).json()["snapshots"]
        ]
        for status in STATUSES
    }
    assert by_status == {
        "INITIATED": [waiting],
        "IN_PROGRESS": [running_],
        "COMPLETED": [done],
        "FAILED": [failed],
    }


def test_the_cluster_view(tmp_path: Path) -> None:
    async def health() -> dict[str, str]:
        return {"P1": "up", "P2": "down"}

    with running(tmp_path, health=health) as lab:
        view = lab.client.get("/v1/cluster").json()
    # no heartbeat was heard: epoch, buffers and when last heard are not known
    unheard = dict.fromkeys(
        (
            "epoch",
            "buffered_messages",
            "buffered_bytes",
            "heard_ms_ago",
            "balance",
            "open_snapshots",
        )
    )
    assert view["nodes"] == [
        {"id": "P1", "address": "127.0.0.1:1", "health": "up", **unheard},
        {"id": "P2", "address": "127.0.0.1:2", "health": "down", **unheard},
        {"id": "P3", "address": "127.0.0.1:3", "health": "unknown", **unheard},
    ]
    assert sorted(view["channels"]) == sorted(
        f"P{a}->P{b}" for a in (1, 2, 3) for b in (1, 2, 3) if a != b
    )
    assert view["rate"] == 50.0
    assert view["markers"] == "in-band"
    assert view["total_money"] == 3000


def test_without_a_health_probe_every_node_is_unknown(lab: Lab) -> None:
    nodes = lab.client.get("/v1/cluster").json()["nodes"]
    assert {n["health"] for n in nodes} == {"unknown"}


def test_the_openapi_docs_are_served(lab: Lab) -> None:
    assert lab.client.get("/docs").status_code == 200
    paths = lab.client.get("/openapi.json").json()["paths"]
    assert {"/v1/snapshots/trigger", "/v1/snapshots/{snapshot_id}", "/v1/cluster"} <= set(paths)


# ------------------------------------------------------------------ restarts
def test_the_registry_survives_a_controller_restart(tmp_path: Path, registry_url: str) -> None:
    with running(tmp_path, registry_url=registry_url) as first:
        done = first.started("P1")
        complete(first, done)
        pending = first.started("P2")
        first.report(pending, "P1", size=4)
        before = first.registry_state()

    with running(tmp_path, registry_url=registry_url) as second:
        assert second.registry_state()[0] == before[0]  # the completed one, untouched
        assert second.get(done)["status"] == "COMPLETED"
        # a snapshot open when the controller stopped is resolved when one starts: what
        # the nodes reported meanwhile went nowhere, so it failed, saying so
        resolved = second.get(pending)
        assert resolved["status"] == "FAILED"
        assert "controller stopped while it was in progress" in resolved["error"]
        assert second.client.app.state.controller.orphans == [pending]  # type: ignore[attr-defined]
        # late reports are kept, the status stays
        assert second.report(pending, "P2", size=4).json()["status"] == "FAILED"
        # ids keep counting, and new snapshots complete
        fresh = second.started("P3")
        assert fresh.startswith("snap-0003-")
        complete(second, fresh)
        assert second.get(fresh)["status"] == "COMPLETED"


# ---------------------------------------------------------------- concurrency
def test_concurrent_triggers_and_reports_complete_each_snapshot_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry_url: str
) -> None:
    manifests: dict[str, int] = {}
    counting = threading.Lock()

    def counted(location: StorageLocation, name: str, data: bytes, *, once: bool = False) -> str:
        with counting:
            manifests[name] = manifests.get(name, 0) + 1
        return write_durable(location, name, data, once=once)

    monkeypatch.setattr(snapshot_service, "write_durable", counted)
    spec = make_spec(5)
    with running(tmp_path, spec, FakeInitiate(delay_s=0.01), registry_url) as lab:
        sids: list[str] = []

        def trigger(node: str) -> None:
            sid = lab.started(node)
            with counting:
                sids.append(sid)

        run_together([partial(trigger, n) for n in spec.ids])
        assert len(set(sids)) == 5
        assert sorted(number(s) for s in sids) == [1, 2, 3, 4, 5]

        # every node reports its part of every snapshot three times, all at once; the
        # registry is slowed down so that reports overlap between recording a part and
        # finding all parts in: without the lock, two reports would both write a manifest
        reports = [(s, lab.part(s, n, size=3)) for s in sids for n in spec.ids]
        slow_parts = Registry.parts

        def parts(registry: Registry, snapshot_id: str) -> list[dict[str, Any]]:
            time.sleep(0.02)
            return slow_parts(registry, snapshot_id)

        monkeypatch.setattr(Registry, "parts", parts)
        answers: list[Any] = []

        def report(sid: str, body: dict[str, Any]) -> None:
            answer = lab.post(sid, body)
            with counting:
                answers.append(answer)

        run_together([partial(report, s, body) for s, body in reports for _ in range(3)])
        assert {a.status_code for a in answers} == {200}
        # each node's part is recorded once per snapshot; the other reports are repeats
        firsts = [a.json() for a in answers if a.json()["recorded"]]
        assert sorted((a["snapshot_id"], a["node_id"]) for a in firsts) == sorted(
            (s, n) for s in sids for n in spec.ids
        )
        assert manifests == {f"{sid}.json": 1 for sid in sids}
        for sid in sids:
            got = lab.get(sid)
            assert got["status"] == "COMPLETED"
            assert got["nodes_completed"] == 5
            assert got["total_size_bytes"] == 15


def run_together(jobs: list[Callable[[], object]]) -> None:
    """Run each job in a thread of its own, all released at the same moment."""
    start = threading.Barrier(len(jobs))
    errors: list[BaseException] = []

    def one(job: Callable[[], object]) -> None:
        start.wait()
        try:
            job()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=one, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors


# ------------------------------------------------------- storage and registry
@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///tmp/snaps/", "/tmp/snaps"),
        ("file:///tmp/snaps", "/tmp/snaps"),
        ("file://localhost/tmp/snaps/", "/tmp/snaps"),
        ("file:///tmp/my%20snaps/", "/tmp/my snaps"),
        ("FILE:///tmp/a/../snaps", "/tmp/snaps"),
    ],
)
def test_file_uris_name_absolute_directories(uri: str, path: str) -> None:
    location = parse_storage_uri(uri)
    assert location.path == path
    assert location.uri == Path(path).as_uri() + "/"
    assert parse_storage_uri(location.uri) == location


@pytest.mark.parametrize(
    "uri",
    ["", "   ", "snaps", "/tmp/snaps", "file:snaps", "file://snaps/", "ftp://h/x/", "s3://b/p/"],
)
def test_other_uris_are_refused_naming_the_field(uri: str) -> None:
    with pytest.raises(StorageError, match=r"^target_storage_uri: "):
        parse_storage_uri(uri)


def test_write_durable_writes_whole_files_and_refuses_paths(tmp_path: Path) -> None:
    location = parse_storage_uri((tmp_path / "a" / "b").as_uri())
    uri = write_durable(location, "p.json", b"first")
    assert uri == (tmp_path / "a" / "b" / "p.json").as_uri()
    assert write_durable(location, "p.json", b"second") == uri
    assert read(uri) == b"second"
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["p.json"]
    for name in ("", ".", "..", "../p.json", "a/b", "x..y"):
        with pytest.raises(StorageError, match=r"^name: "):
            write_durable(location, name, b"")
    with pytest.raises(StorageError, match="could not read"):
        read((tmp_path / "missing").as_uri())


def test_write_durable_reports_os_errors_as_storage_errors(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    location = parse_storage_uri((tmp_path / "file" / "dir").as_uri())
    with pytest.raises(StorageError, match="could not write"):
        write_durable(location, "p.json", b"data")


def test_the_registry_keeps_first_reports_and_first_finishers(registry_url: str) -> None:
    registry = Registry(registry_url)
    try:
        assert registry.next_number() == 1
        registry.create(
            "snap-0001-aaaaa",
            number=1,
            snapshot_type="full",
            initiated_by_node_id="P1",
            target_storage_uri="file:///tmp/",
            initiated_at="2026-05-23T08:12:00Z",
            started_ns=1,
        )
        assert registry.next_number() == 2
        with pytest.raises(RegistryError, match="already registered"):
            registry.create(
                "snap-0001-bbbbb",
                number=1,
                snapshot_type="full",
                initiated_by_node_id="P1",
                target_storage_uri="file:///tmp/",
                initiated_at="2026-05-23T08:12:00Z",
                started_ns=1,
            )
        part = {"part_uri": "file:///tmp/p", "ok": True, "error": None, "reported_at": "now"}
        assert registry.record_part("snap-0001-aaaaa", "P1", size_bytes=1, **part)
        assert not registry.record_part("snap-0001-aaaaa", "P1", size_bytes=2, **part)
        assert [p["size_bytes"] for p in registry.parts("snap-0001-aaaaa")] == [1]
        with pytest.raises(KeyError):
            registry.record_part("snap-0009-zzzzz", "P1", size_bytes=1, **part)
        assert registry.finish("snap-0001-aaaaa", "FAILED", error="first")
        assert not registry.finish("snap-0001-aaaaa", "COMPLETED")
        assert (registry.get("snap-0001-aaaaa") or {}).get("status") == "FAILED"
        assert registry.list("FAILED")[0]["error"] == "first"
        with pytest.raises(RegistryError, match=r"^status: "):
            registry.list("DONE")
        with pytest.raises(RegistryError, match=r"^status: "):
            registry.finish("snap-0001-aaaaa", "IN_PROGRESS")
        with pytest.raises(RegistryError, match=r"^fields: "):
            registry.update("snap-0001-aaaaa", colour="red")
        assert set(FINAL) < set(STATUSES)
    finally:
        registry.close()


def test_a_bad_registry_url_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match=r"^registry_url: "):
        Registry("not a url")
    with pytest.raises(RegistryError, match=r"^registry_url: cannot open"):
        Registry(f"sqlite:///{tmp_path / 'missing-dir' / 'r.db'}")


def test_a_number_another_controller_took_meanwhile_is_read_anew(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert lab.started("P1").startswith("snap-0001-")
    create_next = Registry.create_next
    raced = iter([True])  # the first draw loses a race with another controller's process

    def racing(self: Registry, make_id: Any, **fields: Any) -> dict[str, Any]:
        if next(raced, False):
            raise AlreadyRegistered("snapshot_id: number 2 is already registered")
        return create_next(self, make_id, **fields)

    monkeypatch.setattr(Registry, "create_next", racing)
    assert lab.started("P2").startswith("snap-0002-")


def test_two_controllers_on_one_registry_give_every_trigger_its_own_number(
    tmp_path: Path, registry_url: str
) -> None:
    with (
        running(tmp_path / "a", registry_url=registry_url) as a,
        running(tmp_path / "b", registry_url=registry_url) as b,
    ):
        ids: list[str] = []
        keep = threading.Lock()

        def trigger(controller: Lab) -> None:
            for _ in range(10):
                sid = controller.started("P1")
                with keep:
                    ids.append(sid)

        threads = [threading.Thread(target=trigger, args=(c,)) for c in (a, b, a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        numbers = sorted(int(sid.split("-")[1]) for sid in ids)
        assert numbers == list(range(1, 41))


# ------------------------------------------------- failures: membership, cleanup, restore
@dataclass
class FakeNodes:
    """Stands for the cleanup, restore, resume and crash calls: records them in order."""

    calls: list[tuple[Any, ...]] = field(default_factory=list)
    fail_restore: str | None = None
    refuse_prepare: str | None = None
    #: what a node's prepare says its part holds, where it differs from the manifest
    holds: dict[str, dict[str, int]] = field(default_factory=dict)
    #: nodes that do not answer the switch (the second phase), or the resume after it
    unreachable_switch: set[str] = field(default_factory=set)
    unreachable_resume: set[str] = field(default_factory=set)
    #: nodes restarted (holding nothing) after they switched
    restarted: set[str] = field(default_factory=set)
    restore_delay_s: float = 0.0

    async def cleanup(self, node: NodeSpec, snapshot_id: str, reason: str) -> dict[str, Any]:
        self.calls.append(("cleanup", node.id, snapshot_id, reason))
        return {"abandoned": True, "freed_messages": 3, "freed_bytes": 12}

    async def prepare(self, node: NodeSpec, part: RestorePart, epoch: int) -> dict[str, Any]:
        self.calls.append(("prepare", node.id, part.snapshot_id, part.uri, epoch))
        await asyncio.sleep(self.restore_delay_s)
        if node.id == self.refuse_prepare:
            raise NodeRefused(f"{node.id}'s part of {part.snapshot_id}: its bytes changed")
        if node.id == self.fail_restore:
            # as rpc.py says a call that gets no answer (NodeUnreachable needs grpc)
            raise RuntimeError(f"node {node.id} at {node.address}: Deadline Exceeded")
        return {"balance": part.balance, "in_flight": part.in_flight, **self.holds.get(node.id, {})}

    async def restore(
        self, node: NodeSpec, part: RestorePart, epoch: int, folder: str
    ) -> dict[str, Any]:
        self.calls.append(("restore", node.id, part.snapshot_id, part.uri, epoch, folder))
        if node.id in self.unreachable_switch:
            raise RuntimeError("unreachable")
        return {"balance": part.balance + part.in_flight, "reinjected": 0}

    async def resume(self, node: NodeSpec, epoch: int) -> None:
        self.calls.append(("resume", node.id, epoch))
        if node.id in self.unreachable_resume:
            raise RuntimeError("unreachable")
        if node.id in self.restarted:
            raise NodeRefused(f"epoch: {node.id} is in epoch -1, not {epoch}")

    async def crash(self, node: NodeSpec) -> None:
        self.calls.append(("crash", node.id))
        if node.id == "P3":
            raise RuntimeError("unreachable")

    def kw(self) -> dict[str, Any]:
        return {
            "cleanup": self.cleanup,
            "prepare": self.prepare,
            "restore": self.restore,
            "resume": self.resume,
            "crash": self.crash,
        }


def beat(node: str, incarnation: str = "1", **fields: Any) -> dict[str, Any]:
    return {
        "node_id": node,
        "incarnation": incarnation,
        "epoch": 0,
        "balance": 1000,
        "buffered_messages": 0,
        "buffered_bytes": 0,
        **fields,
    }


def wait_for(condition: Callable[[], bool]) -> None:
    """The controller's monitor works every 0.1 s: wait for it (a far backstop)."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the monitor did not act"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (beat("P9"), "node_id: unknown node 'P9'"),
        ({**beat("P1"), "buffered_bytes": -1}, "buffered_bytes: must be greater than or equal"),
        ({**beat("P1"), "rss": 5}, "rss: not a field of this request (fields: node_id"),
        ({"node_id": "P1"}, "incarnation: required"),
        ({**beat("P1"), "epoch": 2**62}, "epoch: must be less than or equal to"),
        ({**beat("P1"), "epoch": "1"}, "epoch: must be a valid integer"),
    ],
)
def test_a_bad_heartbeat_is_refused_naming_the_field(
    lab: Lab, body: dict[str, Any], expected: str
) -> None:
    answer = lab.client.post("/internal/v1/heartbeats", json=body)
    assert answer.status_code == 422
    assert expected in answer.json()["detail"]
    assert {n["health"] for n in lab.client.get("/v1/cluster").json()["nodes"]} == {"unknown"}


def test_only_an_epoch_a_restore_gave_is_taken_from_a_heartbeat(tmp_path: Path) -> None:
    """A forged heartbeat from a far epoch would push every later restore above it, and
    leave the nodes that really run "behind" it: the controller assigns epochs, so a
    heartbeat may name only one the restore log holds."""
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        forged = lab.client.post("/internal/v1/heartbeats", json=beat("P1", epoch=2**53))
        assert forged.status_code == 409
        assert forged.json()["detail"] == (
            f"epoch: P1 says it is in epoch {2**53}, but no restore of this cluster gave an "
            "epoch above 0"
        )
        assert {n["health"] for n in lab.client.get("/v1/cluster").json()["nodes"]} == {"unknown"}
        for n in ("P1", "P2", "P3"):
            assert lab.client.post("/internal/v1/heartbeats", json=beat(n)).status_code == 200
        complete(lab, lab.started("P1"))
        assert lab.client.post("/v1/snapshots/latest/restore").json()["epoch"] == 1
        assert lab.client.post("/internal/v1/heartbeats", json=beat("P2", epoch=1)).json() == {
            "changes": []
        }
        ahead = lab.client.post("/internal/v1/heartbeats", json=beat("P2", epoch=2))
        assert ahead.status_code == 409 and "gave an epoch above 1" in ahead.text
        # the next restore follows the log, not what a caller claimed
        assert lab.client.post("/v1/snapshots/latest/restore").json()["epoch"] == 2


def test_a_node_leaving_or_joining_fails_the_open_snapshots_and_blocks_triggers(
    tmp_path: Path,
) -> None:
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        for n in ("P1", "P2", "P3"):
            assert lab.client.post("/internal/v1/heartbeats", json=beat(n)).json() == {
                "changes": []
            }
        sid = lab.started("P1")
        gone = lab.client.post("/internal/v1/heartbeats", json=beat("P2", leaving=True))
        assert gone.json() == {"changes": ["P2 left (it is stopping)"]}
        failed = lab.get(sid)
        assert failed["status"] == "FAILED"
        assert failed["error"] == "membership changed: P2 left (it is stopping)"
        refused = lab.trigger("P1")
        assert refused.status_code == 409
        assert "P2 is down (it stopped)" in refused.json()["detail"]
        # the nodes not known down are asked to clean up, with the reason
        wait_for(lambda: any(c[0] == "cleanup" for c in nodes.calls))
        wait_for(lambda: lab.client.get(f"/v1/snapshots/{sid}/cleanup").status_code == 200)
        cleanup = lab.client.get(f"/v1/snapshots/{sid}/cleanup").json()
        assert [n["node_id"] for n in cleanup["nodes"]] == ["P1", "P3"]
        assert {c[1] for c in nodes.calls if c[0] == "cleanup"} == {"P1", "P3"}
        # a new process of P2 (after a restart) joins, holding nothing
        joined = lab.client.post(
            "/internal/v1/heartbeats", json=beat("P2", "2", awaiting_restore=True)
        )
        assert joined.json() == {"changes": ["P2 joined (restarted)"]}
        refused = lab.trigger("P1")
        assert refused.status_code == 409 and "P2 restarted after a crash" in refused.text
        lab.client.post("/internal/v1/heartbeats", json=beat("P2", "2"))
        assert lab.trigger("P1").status_code == 202


def test_a_silent_node_leaves_after_the_heartbeat_timeout(tmp_path: Path) -> None:
    spec = ClusterSpec(
        nodes=make_spec().nodes,
        channels=make_spec().channels,
        heartbeat_ms=50,
        heartbeat_timeout_ms=300,
    )
    with running(tmp_path, spec, **FakeNodes().kw()) as lab:
        for n in ("P1", "P2", "P3"):
            lab.client.post("/internal/v1/heartbeats", json=beat(n))
        sid = lab.started("P1")
        # P1 and P2 keep beating, P3 is silent
        deadline = time.monotonic() + 30
        while lab.get(sid)["status"] != "FAILED":
            assert time.monotonic() < deadline
            for n in ("P1", "P2"):
                lab.client.post("/internal/v1/heartbeats", json=beat(n))
            time.sleep(0.05)
        assert lab.get(sid)["error"].startswith("membership changed: P3 left (no heartbeat for")
        health = {n["id"]: n["health"] for n in lab.client.get("/v1/cluster").json()["nodes"]}
        assert health["P3"] == "down"


def test_the_time_to_live_fails_a_snapshot_left_open(tmp_path: Path) -> None:
    spec = ClusterSpec(nodes=make_spec().nodes, channels=make_spec().channels, ttl_ms=500)
    with running(tmp_path, spec, **FakeNodes().kw()) as lab:
        sid = lab.started("P1")
        # on a loaded machine P1's report may itself come after the time-to-live: then
        # the snapshot failed before it, and the reason names P1 too
        in_time = lab.report(sid, "P1", size=4).json()["status"] != "FAILED"
        wait_for(lambda: lab.get(sid)["status"] == "FAILED")
        missing = "P2, P3" if in_time else "P1, P2, P3"
        assert lab.get(sid)["error"] == f"time-to-live of 500 ms ran out; no part from {missing}"
        # a part coming after is kept, the status stays
        assert lab.report(sid, "P2", size=4).json()["status"] == "FAILED"


def test_restore_rolls_every_node_back_before_any_resumes(tmp_path: Path) -> None:
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        missing = lab.client.post("/v1/snapshots/latest/restore")
        assert missing.status_code == 409 and "no COMPLETED snapshot" in missing.text
        done = lab.started("P1")
        complete(lab, done)
        # a node not heard from since the controller started may be in any epoch
        unheard = lab.client.post("/v1/snapshots/latest/restore")
        assert unheard.status_code == 503
        assert "P1 has not been heard from since the controller started" in unheard.text
        for n in ("P1", "P2", "P3"):
            lab.client.post("/internal/v1/heartbeats", json=beat(n))
        open_one = lab.started("P2")
        answer = lab.client.post("/v1/snapshots/latest/restore")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["snapshot_id"] == done and body["epoch"] == 1
        assert body["failed"] == [open_one]
        assert lab.get(open_one)["error"] == f"the cluster was restored from {done}"
        kinds = [c[0] for c in nodes.calls if c[0] in ("restore", "resume")]
        assert kinds == ["restore"] * 3 + ["resume"] * 3  # nobody sends until all restored
        manifest = json.loads(read(lab.get(done)["checkpoint_manifest_uri"]))
        parts = {p["node_id"]: p["part_uri"] for p in manifest["parts"]}
        restores = [c for c in nodes.calls if c[0] == "restore"]
        assert {c[1]: c[3] for c in restores} == parts
        assert {c[5] for c in restores} == {body["log_folder"]}
        # the next restore is a new epoch; a named one works too
        again = lab.client.post(f"/v1/snapshots/{done}/restore").json()
        assert again["epoch"] == 2 and again["log_folder"] != body["log_folder"]


def test_no_trigger_while_a_restore_runs(tmp_path: Path) -> None:
    nodes = FakeNodes(restore_delay_s=1.0)
    with running(tmp_path, **nodes.kw()) as lab:
        complete(lab, lab.started("P1"))
        for n in ("P1", "P2", "P3"):
            lab.client.post("/internal/v1/heartbeats", json=beat(n))
        restoring = threading.Thread(target=lambda: lab.client.post("/v1/snapshots/latest/restore"))
        restoring.start()
        wait_for(lambda: any(c[0] == "prepare" for c in nodes.calls))
        refused = lab.trigger("P2")
        restoring.join()
        assert refused.status_code == 409 and "a restore is running" in refused.text
        assert lab.trigger("P2").status_code == 202  # once it is over


def test_a_pruning_delays_a_trigger_or_a_restore_but_refuses_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a pruning starts in the background after each completion: a trigger or a restore
    # arriving meanwhile waits for it (it is short) instead of hearing "a restore is running"
    pruning, release = threading.Event(), threading.Event()
    real_prune = snapshot_service.prune

    def slow_prune(registry: Registry, retain: int) -> Any:
        pruning.set()
        assert release.wait(30), "the test never released the pruning"
        return real_prune(registry, retain)

    monkeypatch.setattr(snapshot_service, "prune", slow_prune)
    with running(tmp_path, retain=1, **FakeNodes().kw()) as lab:
        for n in ("P1", "P2", "P3"):
            lab.client.post("/internal/v1/heartbeats", json=beat(n))
        first = lab.started("P1")
        complete(lab, first)
        wait_for(pruning.is_set)
        service = lab.client.app.state.controller.service  # type: ignore[attr-defined]
        registering = threading.Event()
        real_register = service.register

        def register(*args: Any) -> Any:
            registering.set()  # past the trigger's checks: it waits for the pruning
            return real_register(*args)

        monkeypatch.setattr(service, "register", register)
        answers: list[Any] = []
        triggering = threading.Thread(target=lambda: answers.append(lab.trigger("P2")))
        triggering.start()
        wait_for(lambda: registering.is_set() or bool(answers))
        release.set()
        triggering.join()
        assert answers[0].status_code == 202, answers[0].text
        second = str(answers[0].json()["snapshot_id"])
        pruning.clear()
        release.clear()
        complete(lab, second)  # prunes the first
        wait_for(pruning.is_set)
        restores = lab.client.app.state.controller.restores  # type: ignore[attr-defined]
        answers.clear()
        restoring = threading.Thread(
            target=lambda: answers.append(lab.client.post("/v1/snapshots/latest/restore"))
        )
        restoring.start()
        wait_for(lambda: restores.requested or bool(answers))  # waiting for the pruning
        release.set()
        restoring.join()
        assert answers[0].status_code == 200, answers[0].text
        assert answers[0].json()["snapshot_id"] == second
        listed = lab.client.get("/v1/snapshots").json()["snapshots"]
        assert [s["snapshot_id"] for s in listed] == [second]


@pytest.mark.parametrize(
    ("target", "code", "expected"),
    [
        ("snap-0042-abcde", 404, "no snapshot 'snap-0042-abcde'"),
        ("failed", 409, "is FAILED; only a COMPLETED snapshot"),
        ("open", 409, "is INITIATED; only a COMPLETED snapshot"),
    ],
)
def test_only_a_completed_snapshot_is_restored(
    tmp_path: Path, target: str, code: int, expected: str
) -> None:
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        complete(lab, lab.started("P1"))
        failed = lab.started("P1")
        lab.report(failed, "P2", ok=False)
        ids = {"failed": failed, "open": lab.started("P3")}
        answer = lab.client.post(f"/v1/snapshots/{ids.get(target, target)}/restore")
        assert answer.status_code == code
        assert expected in answer.json()["detail"]
        assert not [c for c in nodes.calls if c[0] in ("restore", "resume")]


def test_a_restore_needs_every_node_and_says_which_failed(tmp_path: Path) -> None:
    nodes = FakeNodes(fail_restore="P2")
    with running(tmp_path, **nodes.kw()) as lab:
        done = lab.started("P1")
        complete(lab, done)
        for n in ("P1", "P2", "P3"):
            lab.client.post("/internal/v1/heartbeats", json=beat(n))
        failing = lab.client.post("/v1/snapshots/latest/restore")
        assert failing.status_code == 503
        assert failing.json()["detail"].endswith(
            "refused, nothing changed (every node runs on as it was): P2's part of "
            f"{done} ({(lab.storage / f'{done}.P2.json').as_uri()}): not checked (node P2 at "
            f"{lab.spec.node('P2').address}: Deadline Exceeded)"
        )
        assert not [c for c in nodes.calls if c[0] in ("restore", "resume")]
        lab.client.post("/internal/v1/heartbeats", json=beat("P3", leaving=True))
        down = lab.client.post("/v1/snapshots/latest/restore")
        assert down.status_code == 503 and "P3 is down" in down.json()["detail"]


def ready(lab: Lab) -> None:
    for n in lab.spec.ids:
        lab.client.post("/internal/v1/heartbeats", json=beat(n))


def restore_the_latest(lab: Lab) -> Any:
    """Complete a snapshot, have every node heard from, and restore it: the answer."""
    complete(lab, lab.started("P1"))
    ready(lab)
    return lab.client.post("/v1/snapshots/latest/restore")


def restore_log(lab: Lab) -> list[tuple[str, str | None]]:
    """The registry's restore log, read through a registry of its own: (status, error)."""
    registry = Registry(lab.db_url)
    try:
        return [(r["status"], r["error"]) for r in registry.restores()]
    finally:
        registry.close()


@pytest.mark.parametrize(
    ("nodes", "code", "expected"),
    [
        (
            FakeNodes(refuse_prepare="P2"),
            409,
            "P2's part of {sid}: its bytes changed",
        ),
        (
            FakeNodes(holds={"P3": {"balance": 1100}}),
            409,
            "P3's part of {sid} ({uri}) holds 1100 and 0 in flight, the manifest says 1000 and 0",
        ),
        (
            FakeNodes(fail_restore="P1"),
            503,
            "P1's part of {sid} ({uri_p1}): not checked (node P1 at 127.0.0.1:",
        ),
    ],
    ids=["a-node-refuses-its-part", "a-part-holds-other-money", "a-node-unreachable"],
)
def test_a_restore_any_node_is_not_ready_for_changes_nothing(
    tmp_path: Path, nodes: FakeNodes, code: int, expected: str
) -> None:
    with running(tmp_path, **nodes.kw()) as lab:
        done = lab.started("P1")
        complete(lab, done)
        ready(lab)
        open_one = lab.started("P2")
        answer = lab.client.post("/v1/snapshots/latest/restore")
        assert answer.status_code == code
        uri, uri_p1 = ((lab.storage / f"{done}.{n}.json").as_uri() for n in ("P3", "P1"))
        detail = answer.json()["detail"]
        assert detail.startswith(f"restore of {done} refused, nothing changed (every node runs")
        assert expected.format(sid=done, uri=uri, uri_p1=uri_p1) in detail
        # every node was asked to prepare, none to switch; nothing else moved
        assert {c[1] for c in nodes.calls if c[0] == "prepare"} == {"P1", "P2", "P3"}
        assert not [c for c in nodes.calls if c[0] in ("restore", "resume")]
        assert lab.get(open_one)["status"] == "INITIATED"
        assert restore_log(lab) == [("ABORTED", detail.split("as it was): ")[1])]
        assert lab.trigger("P3").status_code == 202


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda m: m["parts"][1].pop("sha256"),
            "no SHA-256, balance and in-flight money recorded for P2; its parts cannot be checked",
        ),
        (
            lambda m: m.pop("recorded_total"),
            "no SHA-256, balance and in-flight money recorded for the snapshot; "
            "its parts cannot be checked",
        ),
        (lambda m: m["parts"][0].update(balance=1500), "its parts hold 3500, its total says 3000"),
        (lambda m: m["parts"].pop(), "no part of P3"),
        (lambda m: m.clear(), "cannot be read ('parts')"),
    ],
    ids=["a-part-without-hash", "no-total", "a-balance-changed", "a-part-missing", "empty"],
)
def test_a_manifest_that_cannot_be_checked_is_refused_before_any_node_is_asked(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], expected: str
) -> None:
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        done = complete(lab, lab.started("P1"))
        ready(lab)
        path = lab.storage / f"{done['snapshot_id']}.json"
        manifest = json.loads(path.read_text())
        change(manifest)
        path.write_text(json.dumps(manifest))
        # as if the controller had written it so (the registry holds the manifest's hash)
        registry = Registry(lab.db_url)
        with registry.engine.begin() as conn:
            conn.execute(
                update(manifests_table).values(sha256=hashlib.sha256(path.read_bytes()).hexdigest())
            )
        registry.close()
        answer = lab.client.post("/v1/snapshots/latest/restore")
        assert answer.status_code == 409
        assert answer.json()["detail"] == f"manifest {path.as_uri()}: {expected}"
        assert nodes.calls == [] and restore_log(lab) == []


def test_a_manifest_changed_since_its_snapshot_completed_is_refused(tmp_path: Path) -> None:
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        done = complete(lab, lab.started("P1"))
        ready(lab)
        path = lab.storage / f"{done['snapshot_id']}.json"
        manifest = json.loads(path.read_text())
        manifest["parts"][0]["balance"] -= 500  # and 500 on P2: the same total
        manifest["parts"][1]["balance"] += 500
        path.unlink()  # written once: a writer with the folder's rights replaces it
        path.write_text(json.dumps(manifest))
        answer = lab.client.post("/v1/snapshots/latest/restore")
        assert answer.status_code == 409
        assert answer.json()["detail"] == (
            f"manifest {path.as_uri()}: its bytes changed since the snapshot completed"
        )
        assert nodes.calls == [] and restore_log(lab) == []


def test_an_inconsistent_snapshot_completes_but_is_never_restored(tmp_path: Path) -> None:
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        sid = lab.started("P1")
        # P1 recorded 7 on a channel the sender had not yet recorded as sent (what
        # out-of-band markers can do): 3,007 in all
        for node in lab.spec.ids:
            fields = {"channels": {"P2->P1": [7], "P3->P1": []}} if node == "P1" else {}
            uri = write_durable(
                parse_storage_uri(lab.storage_uri),
                f"{sid}.{node}.json",
                part_bytes(lab.spec, sid, node, **fields),
            )
            lab.post(sid, {"node_id": node, "part_uri": uri, "size_bytes": 1, "ok": True})
        got = lab.get(sid)
        assert got["status"] == "COMPLETED"  # the check, not the controller, judges it
        assert json.loads(read(got["checkpoint_manifest_uri"]))["recorded_total"] == 3007
        ready(lab)
        answer = lab.client.post(f"/v1/snapshots/{sid}/restore")
        assert answer.status_code == 409
        assert answer.json()["detail"] == (
            f"snapshot_id: {sid} recorded 3007 in all, the cluster holds 3000: an "
            "inconsistent snapshot is never restored (it would create money)"
        )
        assert nodes.calls == []


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"{not json", "not JSON"),
        (b'{"snapshot_id": "{sid}"}', "node_id: a string expected, got nothing"),
        (None, "channels: 'P9->P2' is not a channel into P2 (its inputs: P1->P2, P3->P2)"),
    ],
    ids=["not-json", "no-node", "foreign-channel"],
)
def test_a_part_that_is_not_one_fails_its_snapshot_at_completion(
    lab: Lab, data: bytes | None, expected: str
) -> None:
    sid = lab.started("P1")
    lab.report(sid, "P1")
    lab.report(sid, "P3")
    if data is None:
        data = part_bytes(lab.spec, sid, "P2", channels={"P9->P2": [1]})
    data = data.replace(b"{sid}", sid.encode())
    uri = write_durable(parse_storage_uri(lab.storage_uri), f"{sid}.P2.json", data)
    lab.post(sid, {"node_id": "P2", "part_uri": uri, "size_bytes": 1, "ok": True})
    got = lab.get(sid)
    assert got["status"] == "FAILED"
    assert got["error"].startswith(f"part: P2's part of {sid} ({uri}): {expected}")
    assert got["checkpoint_manifest_uri"] is None


def test_a_restore_decided_is_finished_even_by_the_next_controller(tmp_path: Path) -> None:
    nodes = FakeNodes(unreachable_switch={"P2"})
    with running(tmp_path, **nodes.kw()) as lab:
        done = lab.started("P1")
        complete(lab, done)
        ready(lab)
        answer = lab.client.post("/v1/snapshots/latest/restore")
        assert answer.status_code == 503
        assert (
            "was decided, every node ready, but is not finished: not switched: P2: "
            in (answer.json()["detail"])
        )
        assert restore_log(lab) == [("SWITCHING", None)]
        # nodes in two epochs: no snapshot until every node has switched
        refused = lab.trigger("P1")
        assert refused.status_code == 409
        assert f"the restore of {done} (epoch 1) is not finished" in refused.text
    # the controller stops (as if killed) and a new one starts on the same registry
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        wait_for(lambda: restore_log(lab) == [("DONE", None)])
        switched = [c for c in nodes.calls if c[0] == "restore"]
        assert {(c[1], c[2], c[4]) for c in switched} == {(n, done, 1) for n in lab.spec.ids}
        assert len({c[5] for c in switched}) == 1  # one log folder for the epoch
        assert {c[1:] for c in nodes.calls if c[0] == "resume"} == {(n, 1) for n in lab.spec.ids}
        assert lab.trigger("P1").status_code == 202
        ready(lab)
        assert lab.client.post("/v1/snapshots/latest/restore").json()["epoch"] == 2


def test_a_restore_decided_is_finished_once_the_node_answers(tmp_path: Path) -> None:
    nodes = FakeNodes(unreachable_switch={"P3"})
    with running(tmp_path, **nodes.kw()) as lab:
        assert restore_the_latest(lab).status_code == 503
        nodes.unreachable_switch.clear()
        wait_for(lambda: restore_log(lab) == [("DONE", None)])
        assert lab.trigger("P1").status_code == 202


def test_a_node_that_switched_and_is_not_resumed_yet_is_only_resumed_later(
    tmp_path: Path,
) -> None:
    nodes = FakeNodes(unreachable_resume={"P3"})
    with running(tmp_path, **nodes.kw()) as lab:
        answer = restore_the_latest(lab)
        assert answer.status_code == 503 and "switched, not resumed: P3: " in answer.text
        assert restore_log(lab) == [("RESUMING", None)]
        nodes.unreachable_resume.clear()
        wait_for(lambda: restore_log(lab) == [("DONE", None)])
        # every node switched once: a switched node is never switched again
        assert [c[1] for c in nodes.calls if c[0] == "restore"] == ["P1", "P2", "P3"]


def test_a_node_restarted_after_it_switched_ends_the_restore(tmp_path: Path) -> None:
    nodes = FakeNodes(restarted={"P2"})
    with running(tmp_path, **nodes.kw()) as lab:
        answer = restore_the_latest(lab)
        assert answer.status_code == 503
        reason = (
            "P2 left epoch 1 after switching to it (restarted, holding nothing): restore the "
            "cluster again"
        )
        assert answer.json()["detail"].endswith(reason)
        assert restore_log(lab) == [("ABORTED", reason)]
        # not finished in the background: the cluster needs a new restore, which works
        nodes.restarted.clear()
        assert lab.client.post("/v1/snapshots/latest/restore").json()["epoch"] == 2


def test_a_new_restore_replaces_one_not_finished(tmp_path: Path) -> None:
    nodes = FakeNodes(unreachable_switch={"P2"})
    with running(tmp_path, **nodes.kw()) as lab:
        assert restore_the_latest(lab).status_code == 503
        # the owner restores again (the finisher, trying meanwhile, is waited for)
        again = lab.client.post("/v1/snapshots/latest/restore")
        assert again.status_code == 503, again.text
        assert "(epoch 2) was decided" in again.json()["detail"]
        assert restore_log(lab) == [
            ("ABORTED", "replaced by the restore of epoch 2 before it finished"),
            ("SWITCHING", None),
        ]
        nodes.unreachable_switch.clear()
        wait_for(lambda: restore_log(lab)[-1] == ("DONE", None))
        assert {c[2] for c in nodes.calls if c[0] == "resume"} == {2}  # epoch 1 never runs


def test_a_restore_left_preparing_by_a_controller_that_stopped_is_aborted(
    tmp_path: Path,
) -> None:
    with running(tmp_path, **FakeNodes().kw()) as lab:
        done = complete(lab, lab.started("P1"))["snapshot_id"]
    registry = Registry(f"sqlite:///{tmp_path / 'registry.db'}")
    assert registry.begin_restore(done, "abc123", started_at="2026-11-29T00:00:00Z") == 1
    registry.close()
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        assert restore_log(lab) == [
            ("ABORTED", "the controller stopped before every node was ready; nothing had changed")
        ]
        assert nodes.calls == []
        assert lab.trigger("P1").status_code == 202


def test_crash_names_an_unknown_or_unreachable_node(tmp_path: Path) -> None:
    nodes = FakeNodes()
    with running(tmp_path, **nodes.kw()) as lab:
        ok = lab.client.post("/v1/nodes/P1/crash")
        assert ok.status_code == 202 and ok.json()["node_id"] == "P1"
        unknown = lab.client.post("/v1/nodes/P7/crash")
        assert unknown.status_code == 422 and "node_id: unknown node 'P7'" in unknown.text
        unreachable = lab.client.post("/v1/nodes/P3/crash")
        assert unreachable.status_code == 503 and "P3" in unreachable.json()["detail"]
        assert nodes.calls == [("crash", "P1"), ("crash", "P3")]


def test_the_journal_holds_every_event_that_decides_a_status(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    with running(tmp_path, **FakeNodes().kw(), journal=journal) as lab:
        for n in ("P1", "P2", "P3"):
            lab.client.post("/internal/v1/heartbeats", json=beat(n))
        done = lab.started("P1")
        complete(lab, done)
        cut = lab.started("P2")
        lab.report(cut, "P1", size=4)
        lab.client.post("/internal/v1/heartbeats", json=beat("P3", leaving=True))
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    kinds = [next(k for k in e if k != "t") for e in events]
    assert kinds == ["controller_started", "trigger", "part", "part", "part", "trigger",
                     "part", "left"]  # fmt: skip
    assert events[1] == {"t": events[1]["t"], "trigger": done, "node": "P1"}
    assert events[-1]["left"] == "P3"
    assert all(a["t"] <= b["t"] for a, b in itertools.pairwise(events))
    from snapshotlib.course.exercises import ex12

    replayed = ex12.replay(events, ["P1", "P2", "P3"], 30_000)
    assert replayed == {done: "COMPLETED", cut: "FAILED"}


def test_a_completion_that_fails_is_journalled_before_the_last_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every part is in but the manifest cannot be written: the snapshot is FAILED, and
    # the journal says so before the last part, or it would read as COMPLETED
    def broken(location: StorageLocation, name: str, data: bytes, *, once: bool = False) -> str:
        raise StorageError(f"{name}: could not write: No space left on device")

    journal = tmp_path / "journal.jsonl"
    with running(tmp_path, journal=journal) as lab:
        monkeypatch.setattr(snapshot_service, "write_durable", broken)
        sid = lab.started("P1")
        for node in ("P1", "P2"):
            lab.report(sid, node)
        assert lab.report(sid, "P3").json()["status"] == "FAILED"
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    kinds = [next(k for k in e if k != "t") for e in events]
    assert kinds == ["controller_started", "trigger", "part", "part", "failed", "part"]
    assert events[-2]["t"] == events[-1]["t"] and events[-1]["node"] == "P3"
    assert "No space left on device" in events[-2]["error"]
    from snapshotlib.course.exercises import ex12

    assert ex12.replay(events, ["P1", "P2", "P3"], 30_000) == {sid: "FAILED"}

"""A live cluster of real processes on 127.0.0.1: what real nodes record is checked by
the engine.

Each test starts the controller and the nodes as OS processes (:class:`LiveCluster`),
triggers snapshots through the REST API, and asks the engine about what the nodes
wrote: the assembled run replayed by the simulator must record the very same snapshot,
which must be a consistent cut that conserves the money exactly.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_support import alive, completed, require_live

require_live()

from snapshotlib.live import cluster as cluster_module  # noqa: E402
from snapshotlib.live.cluster import LiveCluster, LiveClusterError  # noqa: E402


def trigger_together(cluster: LiveCluster, nodes: list[str]) -> list[str]:
    """Trigger one snapshot per node in ``nodes``, all at once (one thread each)."""
    ids: list[Any] = [None] * len(nodes)

    def one(k: int) -> None:
        ids[k] = cluster.trigger(nodes[k])

    threads = [threading.Thread(target=one, args=(k,)) for k in range(len(nodes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(isinstance(i, str) for i in ids), ids
    return ids


@pytest.mark.parametrize(
    ("nodes", "topology", "seed"),
    [(3, "complete", 1), (5, "ring", 2), (6, "random", 3)],
    ids=["3-complete", "5-ring", "6-random"],
)
def test_every_completed_snapshot_is_the_engine_s_consistent_cut_and_conserves_money(
    tmp_path: Path, nodes: int, topology: str, seed: int
) -> None:
    rng = random.Random(seed)
    # short log segments: the checks read logs rotated and compressed under them
    with LiveCluster(
        nodes, topology, rate=100.0, seed=seed, workdir=tmp_path, log_segment_lines=64
    ) as cluster:
        assert cluster.spec is not None
        ids = cluster.spec.ids
        # several initiators at once (concurrent snapshots), then one more later
        taken = trigger_together(cluster, rng.sample(ids, 2))
        taken.append(cluster.trigger(rng.choice(ids), snapshot_type="incremental"))
        answers = [cluster.wait(sid) for sid in taken]
        assert [a["status"] for a in answers] == ["COMPLETED"] * 3, answers
        for sid, answer in zip(taken, answers, strict=True):
            assert answer["nodes_completed"] == nodes and answer["nodes_failed"] == 0
            assert answer["total_size_bytes"] > 0 and answer["duration_ms"] >= 0
            check = cluster.check(sid)
            assert check.ok, check.reason
            assert check.same_as_engine and check.verdict.consistent
            assert check.recorded_total == check.expected_total == nodes * 1000
        # money moved while the snapshots ran: the runs are not trivial
        assert check.simulator is not None
        assert sum(1 for a in check.simulator.trace.actions if a.kind == "send") > 3 * nodes
        # a busy machine may have run the snapshots before P1 filled a segment
        run = tmp_path / "logs" / "run-001"
        deadline = time.monotonic() + 60
        while not list(run.glob("P1.000000064.*")) and time.monotonic() < deadline:
            time.sleep(0.1)
    # a node that stops has finished compressing its full segments
    assert list((tmp_path / "logs" / "run-001").glob("P1.*.jsonl.gz"))


def test_no_process_is_left_behind(tmp_path: Path) -> None:
    cluster = LiveCluster(3, rate=20.0, workdir=tmp_path)
    with cluster:
        pids = cluster.pids
        assert set(pids) == {"controller", "P1", "P2", "P3"}
        assert all(alive(pid) for pid in pids.values())
        # started means every channel is connected, not only every node listening
        health = cluster.health()
        assert all(
            h is not None and h["streams_open"] == h["streams"] == 2 for h in health.values()
        )
    assert not any(alive(pid) for pid in pids.values()), "every process has exited"
    for pid in pids.values():  # nothing any of them started either
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)


def test_a_cluster_whose_starter_is_killed_stops_by_itself(tmp_path: Path) -> None:
    # the starting process dies without stopping anything (SIGKILL: no clean-up runs)
    starter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import json, sys, time\n"
            "from snapshotlib.live import LiveCluster\n"
            f"c = LiveCluster(3, rate=20.0, workdir={str(tmp_path)!r})\n"
            "c.start()\n"
            "print(json.dumps(c.pids), flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert starter.stdout is not None
    pids = json.loads(starter.stdout.readline())
    assert len(pids) == 4 and all(alive(pid) for pid in pids.values())
    starter.send_signal(signal.SIGKILL)
    starter.wait()
    deadline = time.monotonic() + 60  # a backstop; they notice within a second
    while any(alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(pid) for pid in pids.values()), "every process stopped by itself"


def test_a_bad_trigger_is_refused_naming_the_field_and_nothing_is_registered(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "link-out").symlink_to(outside)
    with LiveCluster(3, rate=20.0, workdir=tmp_path / "cluster") as cluster:
        with pytest.raises(LiveClusterError, match="initiated_by_node_id") as refused:
            cluster.trigger("P9")
        assert "422" in str(refused.value)
        with pytest.raises(LiveClusterError, match="target_storage_uri"):
            cluster.trigger("P1", storage="checkpoints/relative")
        # the cluster writes only under its storage root (its workdir) and to no server
        # it was not given
        for elsewhere in (
            outside.as_uri() + "/",
            (tmp_path / "cluster").as_uri() + "/../outside/",
            (tmp_path / "cluster" / "link-out").as_uri() + "/",
            "http://127.0.0.1:9/snaps/",
            "file:///" + "a" * 2000 + "/",
        ):
            with pytest.raises(LiveClusterError, match=r"422.*target_storage_uri"):
                cluster.trigger("P1", storage=elsewhere)
        assert list(outside.iterdir()) == []
        assert cluster.request("GET", "/v1/snapshots")["snapshots"] == []


def test_the_registry_keeps_the_snapshots_when_the_controller_restarts(tmp_path: Path) -> None:
    with LiveCluster(3, rate=50.0, workdir=tmp_path) as cluster:
        sid = cluster.trigger("P2")
        before = completed(cluster, sid)
    with LiveCluster(3, rate=50.0, workdir=tmp_path) as restarted:
        assert restarted.status(sid) == before
        later = restarted.trigger("P1")
        assert later != sid
        completed(restarted, later)
        # each is checked against the logs of the run that took it
        assert restarted.check(later).ok
        assert restarted.check(sid).ok, restarted.check(sid).reason
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["run-001", "run-002"]


def test_out_of_band_markers_make_inconsistent_snapshots_that_the_check_names(
    tmp_path: Path,
) -> None:
    # The system-design text's SendMarker on a connection of its own, 300 ms late: the
    # transfers a node sends after recording reach their receiver before its marker.
    with LiveCluster(
        3, rate=100.0, markers="out-of-band", marker_delay_ms=300, workdir=tmp_path
    ) as cluster:
        taken = [cluster.trigger("P1"), cluster.trigger("P2")]
        checks = []
        for sid in taken:
            completed(cluster, sid)
            checks.append(cluster.check(sid))
        # the replay takes the very messages the nodes took, and so records what they did
        assert all(c.same_as_engine for c in checks), [c.differences for c in checks]
        inconsistent = [c for c in checks if not c.verdict.ok]
        assert inconsistent, "transfers overtook markers late by 300 ms"
        for check in inconsistent:  # the check names a message the snapshot got wrong
            assert check.reason is not None
            assert re.match(r"message P\d->P\d#\d+ ", check.reason), check.reason


def test_markers_held_up_in_band_still_make_consistent_snapshots(tmp_path: Path) -> None:
    # the same delay as above, on the channel's own stream: what follows a marker waits
    with LiveCluster(3, rate=100.0, marker_delay_ms=300, workdir=tmp_path) as cluster:
        taken = [cluster.trigger("P1"), cluster.trigger("P2")]
        for sid in taken:
            answer = cluster.wait(sid)
            assert answer["status"] == "COMPLETED"
            assert answer["duration_ms"] >= 2 * 300  # a marker out, then one back
            check = cluster.check(sid)
            assert check.ok, check.reason


@pytest.mark.parametrize("markers", ["in-band", "out-of-band"])
def test_a_forged_marker_call_is_refused_and_the_node_goes_on(tmp_path: Path, markers: str) -> None:
    import grpc

    from snapshotlib.live.rpc import protos, services, token_metadata

    with LiveCluster(2, rate=20.0, markers=markers, workdir=tmp_path) as cluster:
        assert cluster.spec is not None
        address = cluster.spec.node("P1").address
        # sent with the cluster's token, as from a node gone wrong (without it, no call
        # gets this far: test_live_failures.py)
        meta = token_metadata(cluster.token)
        forged = [
            (protos.MarkerRequest(snapshot_id="s", sender_node_id="P9"), ()),  # no channel
            (protos.MarkerRequest(snapshot_id="s", sender_node_id="P2"), ()),  # no clock
            (
                protos.MarkerRequest(snapshot_id="s", sender_node_id="P2"),
                (("x-snapshotlib-clock", "1,x"),),
            ),
        ]
        expected = (
            grpc.StatusCode.INVALID_ARGUMENT
            if markers == "out-of-band"
            else grpc.StatusCode.FAILED_PRECONDITION
        )
        with grpc.insecure_channel(address) as link:
            stub = services.SnapshotServiceStub(link)
            for request, metadata in forged:
                with pytest.raises(grpc.RpcError) as refused:
                    stub.SendMarker(request, metadata=(*meta, *metadata), timeout=30)
                assert refused.value.code() == expected, refused.value.details()
            with pytest.raises(grpc.RpcError) as refused:  # the text names no use for it
                stub.FlushChannelState(
                    protos.FlushRequest(snapshot_id="s"), metadata=meta, timeout=30
                )
            assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert all(h is not None for h in cluster.health().values())
        sid = cluster.trigger("P1")
        completed(cluster, sid)
        assert "s" not in {
            s["snapshot_id"] for s in cluster.request("GET", "/v1/snapshots")["snapshots"]
        }
        # the refused calls left no trace: the replay records what the nodes did (out of
        # band, the snapshot itself may well be inconsistent)
        check = cluster.check(sid)
        assert check.same_as_engine, check.differences
        assert check.ok or markers == "out-of-band", check.reason


@pytest.mark.parametrize(
    "registry", ["postgresql://nobody@127.0.0.1:1/none", "mysql+nodriver://x/y", "sqlite:"]
)
def test_a_registry_that_cannot_be_opened_stops_the_start_in_one_line(
    tmp_path: Path, registry: str
) -> None:
    cluster = LiveCluster(2, workdir=tmp_path, registry=registry)
    with pytest.raises(LiveClusterError, match="registry_url: ") as refused:
        cluster.start()
    assert "Traceback" not in str(refused.value)
    assert cluster.processes == {}, "nothing is left running"


def test_the_ports_chosen_are_different_free_and_below_outgoing_connections_ports() -> None:
    ports = cluster_module.free_ports(20)
    assert len(set(ports)) == 20
    assert all(p in cluster_module.LISTEN_PORTS and p < 32768 for p in ports)
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # free: this would raise


@pytest.fixture
def busy() -> Iterator[int]:
    """A port another program listens on while the test runs."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def test_a_port_taken_after_it_was_chosen_makes_the_cluster_start_again_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy: int
) -> None:
    # another program may take a chosen port before the node binds it
    real = cluster_module.free_ports
    draws: list[list[int]] = []

    def first_with_a_taken_port(count: int, host: str = "127.0.0.1") -> list[int]:
        ports = real(count, host)
        if not draws:
            ports[0] = busy  # P1's
        draws.append(ports)
        return ports

    monkeypatch.setattr(cluster_module, "free_ports", first_with_a_taken_port)
    with LiveCluster(2, rate=20.0, workdir=tmp_path) as cluster:
        assert len(draws) == 2
        assert cluster.spec is not None and busy not in {n.port for n in cluster.spec.nodes}
        completed(cluster, cluster.trigger("P1"))


def test_a_port_taken_at_every_start_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy: int
) -> None:
    real = cluster_module.free_ports

    def always_taken(count: int, host: str = "127.0.0.1") -> list[int]:
        return [busy, *real(count - 1, host)]

    monkeypatch.setattr(cluster_module, "free_ports", always_taken)
    cluster = LiveCluster(2, workdir=tmp_path)
    with pytest.raises(LiveClusterError, match="P1 exited") as refused:
        cluster.start()
    assert cluster_module._port_taken(str(refused.value))
    assert cluster.processes == {}, "nothing is left running"


def test_a_cluster_starts_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a notebook's kernel runs in notebooks/; its processes must find the package's .proto
    # there too, with the package installed in editable mode (make test, make lab)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    with LiveCluster(2, rate=20.0, workdir=tmp_path / "c") as cluster:
        sid = cluster.trigger("P1")
        completed(cluster, sid)

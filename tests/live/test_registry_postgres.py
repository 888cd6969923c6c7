"""The registry on a real PostgreSQL server, which these tests start and stop.

One server runs for the session (see ``postgres_server.py``); each test gets a new
empty database on it. What is specified here: the registry behaves on PostgreSQL as on
SQLite (test_controller.py's registry tests, run again here), it survives a controller
restart and a server dropping its connections, a bad or unreachable PostgreSQL URL is
refused naming ``registry_url`` and saying what to check, and a live cluster of real
processes keeps its snapshots in PostgreSQL.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from live_support import alive, require_live
from postgres_server import (
    PostgresServer,
    descendants,
    free_port,
    postgres_server,  # noqa: F401  (a fixture)
    postgres_url,  # noqa: F401  (a fixture)
    require_postgres,
)

require_live()
BINARIES = require_postgres()

# test_controller.py's tests of the registry, run again here on PostgreSQL: pytest
# collects the test functions imported into this module, and the `registry_url` they
# (and `lab`) ask for is then this module's fixture below.
from test_controller import (  # noqa: E402, F401
    Lab,
    lab,
    run_together,
    running,
    test_a_failed_part_fails_the_snapshot_without_a_manifest,
    test_a_node_reporting_twice_keeps_its_first_report,
    test_an_unreachable_initiator_answers_503_and_fails_the_snapshot,
    test_concurrent_triggers_and_reports_complete_each_snapshot_exactly_once,
    test_parts_from_every_node_complete_the_snapshot_with_its_manifest,
    test_the_estimate_is_the_median_duration_of_recent_completed_snapshots,
    test_the_list_is_oldest_first_and_filters_by_status,
    test_the_registry_keeps_first_reports_and_first_finishers,
    test_the_registry_survives_a_controller_restart,
    test_two_controllers_on_one_registry_give_every_trigger_its_own_number,
    test_unknown_snapshots_are_404_naming_the_id,
)

from snapshotlib.live.registry import COMPLETED, Registry, RegistryError  # noqa: E402


@pytest.fixture
def registry_url(postgres_url: str) -> str:  # noqa: F811
    """The imported tests' registry: a new database on the session's server."""
    return postgres_url


def new_snapshot(registry: Registry, number: int, started_ns: int = 1) -> None:
    registry.create(
        f"snap-{number:04d}-aaaaa",
        number=number,
        snapshot_type="full",
        initiated_by_node_id="P1",
        target_storage_uri="file:///tmp/",
        initiated_at="2026-05-23T08:12:00Z",
        started_ns=started_ns,
    )


# ------------------------------------------------------------------ the driver
def test_a_plain_postgresql_url_uses_psycopg_and_rows_come_back_whole(
    registry_url: str,
) -> None:
    plain = registry_url.replace("postgresql+psycopg://", "postgresql://", 1)
    assert plain != registry_url
    registry = Registry(plain)
    try:
        assert (registry.engine.dialect.name, registry.engine.dialect.driver) == (
            "postgresql",
            "psycopg",
        )
        # wall-clock nanoseconds need 64 bits; and a NUL, which PostgreSQL's text cannot
        # hold, does not lose a report
        started_ns = 1_779_000_000_123_456_789
        new_snapshot(registry, 1, started_ns)
        part = {"part_uri": "", "size_bytes": 0, "ok": False, "reported_at": "now"}
        assert registry.record_part("snap-0001-aaaaa", "P1", error="disk\x00full", **part)
        got = registry.get("snap-0001-aaaaa")
        assert got is not None and got["started_ns"] == started_ns
        assert got["nodes_completed"] == 0 and got["status"] == "INITIATED"
        [stored] = registry.parts("snap-0001-aaaaa")
        assert stored["error"] == "disk\ufffdfull"
        assert stored["ok"] is False
    finally:
        registry.close()


def test_registries_opening_a_new_database_at_once_all_open_it(registry_url: str) -> None:
    # controllers starting together on an empty database each create the tables
    registries: list[Registry] = []
    run_together([lambda: registries.append(Registry(registry_url)) for _ in range(4)])
    try:
        assert len(registries) == 4
        new_snapshot(registries[0], 1)
        assert [r.next_number() for r in registries] == [2, 2, 2, 2]
    finally:
        for registry in registries:
            registry.close()


def test_a_registry_reconnects_after_the_server_drops_its_connections(
    postgres_server: PostgresServer,  # noqa: F811
    registry_url: str,
) -> None:
    registry = Registry(registry_url)
    try:
        new_snapshot(registry, 1)
        database = registry.engine.url.database
        dropped = postgres_server.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{database}' AND pid <> pg_backend_pid()"
        )
        assert dropped and all(ok for (ok,) in dropped)
        # the pooled connection is dead; the registry notices and opens a new one
        assert registry.list()[0]["snapshot_id"] == "snap-0001-aaaaa"
    finally:
        registry.close()


# ------------------------------------------------------------------ bad URLs
def test_an_unknown_database_is_refused_naming_registry_url(
    postgres_server: PostgresServer,  # noqa: F811
) -> None:
    url = postgres_server.url("no_such_database")
    with pytest.raises(RegistryError, match=r"^registry_url: cannot open ") as refused:
        Registry(url)
    message = str(refused.value)
    assert url in message
    assert 'database "no_such_database" does not exist' in message
    assert "createdb" in message


def test_a_port_nobody_listens_on_is_refused_without_showing_the_password() -> None:
    url = f"postgresql+psycopg://postgres:s3cret@127.0.0.1:{free_port()}/registry"
    with pytest.raises(RegistryError, match=r"^registry_url: cannot open ") as refused:
        Registry(url)
    message = str(refused.value)
    assert "Connection refused" in message
    assert "check that a PostgreSQL server is running at 127.0.0.1:" in message
    assert "s3cret" not in message and "postgres:***@" in message


@pytest.mark.parametrize("driver", ["postgresql+psycopg", "postgresql"])
def test_a_missing_driver_is_refused_saying_what_to_install(
    driver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` now fails
    with pytest.raises(RegistryError, match=r"^registry_url: the driver .* is not installed") as e:
        Registry(f"{driver}://postgres@127.0.0.1:{free_port()}/registry")
    assert "pip install 'psycopg[binary]>=3.1'" in str(e.value)


def test_a_server_that_stops_leaves_no_process_and_its_controller_answers_503(
    tmp_path: Path,
) -> None:
    # a server of this test's own, since it is stopped under a running controller
    server = PostgresServer(BINARIES)
    server.start()
    try:
        pids = [server.pid, *descendants(server.pid)]
        # the server and its workers (a short-lived one may be gone by the time it is asked)
        assert len(pids) > 1 and alive(server.pid)
        url = server.url()
        with running(tmp_path, registry_url=url) as lab:
            sid = lab.started()
            server.stop()
            assert not any(alive(pid) for pid in pids), "every server process has exited"
            assert server.folder is None
            answer = lab.client.get(f"/v1/snapshots/{sid}")
            assert answer.status_code == 503
            assert answer.json()["detail"].startswith("registry: ")
        with pytest.raises(RegistryError, match=r"^registry_url: cannot open .*running at"):
            Registry(url)
    finally:
        server.stop()


# --------------------------------------------------------- real processes
def test_a_live_cluster_keeps_its_snapshots_in_postgresql(
    tmp_path: Path, registry_url: str
) -> None:
    from snapshotlib.live import LiveCluster

    with LiveCluster(nodes=3, rate=50.0, workdir=tmp_path, registry=registry_url) as cluster:
        pids = cluster.pids
        sid = cluster.trigger()
        assert cluster.wait(sid)["status"] == COMPLETED
        check = cluster.check(sid)
        assert check.ok, check.reason
    assert not any(alive(pid) for pid in pids.values()), "every cluster process has exited"
    for pid in pids.values():  # nothing any of them started either
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)
    assert not (tmp_path / "registry.db").exists()  # nothing went to the SQLite default
    registry = Registry(registry_url)
    try:
        [row] = registry.list()
        assert (row["snapshot_id"], row["status"]) == (sid, COMPLETED)
        assert [p["node_id"] for p in registry.parts(sid)] == ["P1", "P2", "P3"]
    finally:
        registry.close()


def test_the_imported_tests_run_on_postgresql(
    lab: Lab,  # noqa: F811
    registry_url: str,
    tmp_path: Path,
) -> None:
    # else the tests above would pass on SQLite without saying so
    assert lab.db_url == registry_url
    assert lab.client.app.state.controller.service.registry.engine.dialect.name == "postgresql"
    lab.started()
    assert not (tmp_path / "registry.db").exists()

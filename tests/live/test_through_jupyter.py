"""On Binder or a JupyterHub the browser is not on the session's machine: the live lab's
API pages are reached through the session's Jupyter server (jupyter-server-proxy, in the
course extra), as a learner there opens them.

The test starts a Jupyter server under a hub-like prefix (``/user/ada/``), a cluster in an
environment that says so (as the single-user server's does), and reads the API pages,
their OpenAPI document and the cluster's state through the server, with its token."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.live_support import require_live, start_live_up
from tests.support import free_port, jupyter_running

require_live()

from snapshotlib.live import LiveCluster  # noqa: E402
from snapshotlib.live.api_token import bearer  # noqa: E402
from snapshotlib.live.hub import NO_PROXY_NOTE, browser_address, proxied_path  # noqa: E402

PREFIX = "/user/ada/"


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect (to the login page) is the answer itself, not a page to follow."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


OPENER = urllib.request.build_opener(_NoRedirects)


class Server:
    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.token = token

    def get(self, path: str, cluster_token: str | None = None) -> tuple[int, str]:
        """GET ``path`` as the session's browser does; with ``cluster_token``, the call
        carries the cluster's token too (as the API docs' Authorize button sends it), and
        the session's own goes in the query, as only one Authorization header can."""
        if cluster_token is None:
            request = urllib.request.Request(
                self.base + path, headers={"Authorization": f"token {self.token}"}
            )
        else:
            request = urllib.request.Request(
                f"{self.base}{path}?token={self.token}", headers=bearer(cluster_token)
            )
        try:
            with OPENER.open(request, timeout=30) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")


@pytest.fixture
def hub_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """A Jupyter server at ``/user/ada/`` with this environment's extensions, and the
    variable a hub's single-user server sets, for the cluster started next to inherit."""
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", PREFIX)
    port, token = free_port(), secrets.token_hex(16)
    server = Server(port, token)
    with jupyter_running(
        ["server", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--ServerApp.base_url={PREFIX}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
         "--ServerApp.open_browser=False", "--ServerApp.allow_root=True"],
        cwd=tmp_path,
        state=tmp_path / "jupyter",
        ready_url=f"{server.base}{PREFIX}api/status?token={token}",
        unset=["JUPYTERHUB_SERVICE_PREFIX"],  # a plain server: no hub to authenticate with
    ):  # fmt: skip
        yield server


def test_the_api_pages_open_through_the_sessions_jupyter_server(
    hub_server: Server, tmp_path: Path
) -> None:
    with LiveCluster(3, rate=20.0, workdir=tmp_path / "cluster") as cluster:
        port = cluster.url.rsplit(":", 1)[1]
        assert cluster.browser_url == f"{PREFIX}proxy/{port}"
        status, docs = hub_server.get(f"{cluster.browser_url}/docs")
        assert status == 200, docs
        # the page asks for its OpenAPI document through the same path, not at the root
        assert f"'{cluster.browser_url}/openapi.json'" in docs
        status, document = hub_server.get(f"{cluster.browser_url}/openapi.json")
        assert status == 200, document
        assert json.loads(document)["info"]["title"] == "snapshotlib live controller"
        # the cluster's own token passes through the proxy; without it, no cluster
        status, view = hub_server.get(f"{cluster.browser_url}/v1/cluster")
        assert status == 401, view
        status, view = hub_server.get(f"{cluster.browser_url}/v1/cluster", cluster.token)
        assert status == 200, view
        assert len(json.loads(view)["nodes"]) == 3
        # the kernel still speaks to the controller directly
        assert cluster.trigger("P1")


def test_live_up_prints_the_path_a_browser_in_the_session_opens(
    hub_server: Server, tmp_path: Path
) -> None:
    folder = tmp_path / "cluster"
    up, text = start_live_up(folder, "--nodes", "3")
    try:
        said = re.search(r"in your browser: (/user/ada/proxy/\d+/docs) after the address", text)
        assert said, text
        status, docs = hub_server.get(said[1])
        assert status == 200 and "swagger" in docs.lower(), docs
        # the proxy is behind the session's login: without its token, no cluster
        stranger = Server(hub_server.port, "not-the-token")
        status, _ = stranger.get(said[1].replace("/docs", "/v1/cluster"))
        assert status in (302, 403), status
    finally:
        subprocess.run(
            [sys.executable, "-m", "snapshotlib", "live", "down", "--workdir", str(folder)],
            capture_output=True,
            timeout=120,
        )
        if up.poll() is None:
            up.kill()
        up.wait(timeout=60)


def test_outside_a_hub_the_browser_opens_the_controller_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    assert proxied_path("http://127.0.0.1:8123") is None
    assert browser_address("http://127.0.0.1:8123") == "http://127.0.0.1:8123"


def test_in_a_hub_without_the_proxy_the_local_address_stays_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import snapshotlib.live.hub as hub

    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "ada")  # a prefix without slashes
    assert proxied_path("http://127.0.0.1:8123") == "/ada/proxy/8123"
    monkeypatch.setattr(hub, "proxy_installed", lambda: False)
    assert browser_address("http://127.0.0.1:8123") == "http://127.0.0.1:8123"
    assert hub.inside_a_hub()
    assert "jupyter-server-proxy" in NO_PROXY_NOTE and "lesson 10" in NO_PROXY_NOTE

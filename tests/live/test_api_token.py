"""Only the cluster's owner drives it: every call of the controller carries the token
that ``live up`` wrote into the workdir, readable by its owner only."""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the controller needs fastapi (the live extra)")
pytest.importorskip("httpx", reason="FastAPI's test client needs httpx (the dev extra)")

from fastapi.routing import APIRoute
from test_controller import running

from snapshotlib.live.api_token import (
    TokenError,
    bearer,
    create_token,
    read_token,
    token_file,
)
from snapshotlib.live.controller_routes import cluster_routes, node_routes, snapshot_routes

TOKEN = "t0Ken-of_the-cluster" * 3


def every_route(app: Any) -> list[tuple[str, str]]:
    """Each (method, path) the app serves, path parameters filled in: its routers'
    routes, which its OpenAPI document (the API pages aside) lists exactly (a route
    left out of it would still need the token)."""
    served = {
        (method, route.path)
        for router in (snapshot_routes, cluster_routes, node_routes)
        for route in router.routes
        if isinstance(route, APIRoute)
        for method in route.methods
    }
    documented = {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        for method in operations
    }
    assert served == documented
    return [(method, re.sub(r"\{[^}]+\}", "P1", path)) for method, path in sorted(served)]


def test_every_route_refuses_a_call_without_the_token_or_with_another(
    tmp_path: Path,
) -> None:
    with running(tmp_path, token=TOKEN) as lab:
        routes = every_route(lab.client.app)
        assert ("POST", "/internal/v1/heartbeats") in routes and len(routes) >= 9
        for method, path in routes:
            none = lab.client.request(method, path, json={})
            assert none.status_code == 401, (method, path, none.text)
            assert none.headers["www-authenticate"] == "Bearer"
            assert "api-token" in none.json()["detail"]
            other = lab.client.request(method, path, json={}, headers=bearer(TOKEN[::-1]))
            assert other.status_code == 403, (method, path, other.text)
            basic = lab.client.request(method, path, headers={"Authorization": "Basic eDp5"})
            assert basic.status_code == 401, (method, path)
        assert lab.registry_state() == (), "a refused call changed nothing"


def test_a_call_without_the_token_is_refused_before_its_body_is_read(tmp_path: Path) -> None:
    with running(tmp_path, token=TOKEN) as lab:
        for path in ("/v1/snapshots/trigger", "/internal/v1/heartbeats"):
            # a body the controller would answer 422 for, had it read it
            junk = lab.client.post(path, content=b"{not json" + b" " * 1_000_000)
            assert junk.status_code == 401, junk.text
            other = lab.client.post(path, content=b"{not json", headers=bearer(TOKEN[::-1]))
            assert other.status_code == 403, other.text
            lowercase = lab.client.post(path, json={}, headers={"authorization": f"bearer {TOKEN}"})
            assert lowercase.status_code == 422  # the scheme's case does not matter


def test_the_token_opens_every_route_and_the_docs_stay_readable(tmp_path: Path) -> None:
    with running(tmp_path, token=TOKEN) as lab:
        listed = lab.client.get("/v1/snapshots", headers=bearer(TOKEN))
        assert listed.status_code == 200 and listed.json() == {"snapshots": []}
        beat = lab.client.post("/internal/v1/heartbeats", json={}, headers=bearer(TOKEN))
        assert beat.status_code == 422  # past the token: the body is what is wrong now
        assert lab.client.get("/docs").status_code == 200
        assert lab.client.get("/redoc").status_code == 200
        schema = lab.client.get("/openapi.json").json()
        assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_the_token_file_is_new_each_time_and_its_owners_alone(tmp_path: Path) -> None:
    first = create_token(tmp_path)
    path = token_file(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_token(path) == first and len(first) >= 43
    path.chmod(0o644)  # a file left readable by others is replaced, not reused
    second = create_token(tmp_path)
    assert second != first and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_token_file_others_may_read_is_not_a_secret_and_is_refused(tmp_path: Path) -> None:
    create_token(tmp_path)
    token_file(tmp_path).chmod(0o640)
    with pytest.raises(TokenError, match=r"may be read or written by others \(mode 640"):
        read_token(token_file(tmp_path))


@pytest.mark.parametrize("content", [None, "", "short\n", "not a token, has spaces " * 3])
def test_a_missing_or_foreign_token_file_is_refused_naming_it(
    tmp_path: Path, content: str | None
) -> None:
    path = token_file(tmp_path)
    if content is not None:
        path.write_text(content)
        path.chmod(0o600)
    with pytest.raises(TokenError, match=re.escape(str(path))):
        read_token(path)

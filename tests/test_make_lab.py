"""`make lab` opens the whole course: JupyterLab started with the Makefile's own command
line serves lesson 00 as its first page and reaches the exercises the lessons link to
(a notebook given as an argument would make its folder the root, and every
``../exercises/`` link would lead nowhere)."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import free_port, jupyter_running

ROOT = Path(__file__).resolve().parents[1]


def lab_command() -> list[str]:
    """The `jupyter lab` line `make lab` runs (make -n prints it without running it)."""
    shown = subprocess.run(
        ["make", "-n", "lab"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    line = next(line for line in shown.splitlines() if "jupyter lab" in line)
    words = shlex.split(line)
    assert words[0].endswith("/jupyter"), line
    return words[1:]  # after `jupyter`: run with this interpreter's (jupyter_running)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, str]]:
    port, token = free_port(), secrets.token_hex(16)
    command = [
        *lab_command(),
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if "--allow-root" not in command and os.geteuid() == 0:
        command.append("--allow-root")
    base = f"http://127.0.0.1:{port}"
    with jupyter_running(
        command, cwd=ROOT, state=tmp_path, ready_url=f"{base}/api/status?token={token}"
    ):
        yield base, token


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_make_lab_opens_lesson_00_with_the_whole_course_reachable(
    lab: tuple[str, str],
) -> None:
    base, token = lab
    opener = urllib.request.build_opener(_Stay)
    with pytest.raises(urllib.error.HTTPError) as first:
        opener.open(f"{base}/?token={token}", timeout=30)
    assert first.value.code == 302
    assert "/lab/tree/notebooks/00_start_here.ipynb" in first.value.headers["Location"]
    lesson = json.loads(
        urllib.request.urlopen(
            f"{base}/api/contents/notebooks/00_start_here.ipynb?token={token}", timeout=30
        ).read()
    )
    # every notebook lesson 00 links to (the exercises, the glossary...) is served
    linked = {
        target.split("#")[0]
        for cell in lesson["content"]["cells"]
        if cell["cell_type"] == "markdown"
        for target in _links(cell["source"])
        if target.endswith(".ipynb") or ".ipynb#" in target
    }
    assert any(t.startswith("../exercises/") for t in linked), linked
    for target in sorted(linked):
        path = os.path.normpath(os.path.join("notebooks", target))
        answer = urllib.request.urlopen(
            f"{base}/api/contents/{path}?content=0&token={token}", timeout=30
        )
        assert answer.status == 200, path


def _links(source: str) -> list[str]:
    import re

    return re.findall(r"\]\(([^)\s]+)\)", source)

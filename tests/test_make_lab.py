"""`make lab` opens the whole course: JupyterLab started with the Makefile's own command
line serves lesson 00 as its first page and reaches the exercises the lessons link to
(a notebook given as an argument would make its folder the root, and every
``../exercises/`` link would lead nowhere)."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: a backstop for a server that never answers, not a speed requirement
START_BACKSTOP_S = 120.0


def lab_command() -> list[str]:
    """The `jupyter lab` line `make lab` runs (make -n prints it without running it)."""
    shown = subprocess.run(
        ["make", "-n", "lab"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    line = next(line for line in shown.splitlines() if "jupyter lab" in line)
    words = shlex.split(line)
    assert words[0].endswith("/jupyter"), line
    return [sys.executable, "-m", "jupyter", *words[1:]]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, str]]:
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
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
    log = (tmp_path / "lab.log").open("wb")
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_BACKSTOP_S
        while True:
            assert process.poll() is None, (tmp_path / "lab.log").read_text()
            assert time.monotonic() < deadline, "JupyterLab never answered"
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.25)
        yield base, token
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
        log.close()


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

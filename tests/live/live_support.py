"""What the live-lab tests share: the check that the ``live`` extra is installed, and
whether a process is still alive."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from snapshotlib.live import EXTRA_MODULES

#: the live extra's modules, and FastAPI's test client's
NEEDED = (*EXTRA_MODULES, "httpx")


def require_live() -> None:
    """Skip the calling test module (fail it under CI) unless the live extra is there."""
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if not missing:
        return
    reason = f"needs {', '.join(missing)} (pip install -e '.[live,dev]'; make test does)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so live tests may not be skipped", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def completed(cluster: Any, snapshot_id: str, timeout: float = 60.0) -> dict[str, Any]:
    """Wait for ``snapshot_id`` and assert it COMPLETED; its status. A snapshot that
    FAILED fails the test with the controller's reason (a bare ``'FAILED' ==
    'COMPLETED'`` says nothing of why)."""
    status: dict[str, Any] = cluster.wait(snapshot_id, timeout=timeout)
    assert status["status"] == "COMPLETED", (
        f"{snapshot_id} {status['status']}: {status.get('error')}"
    )
    return status


def processes_using(folder: Path) -> list[int]:
    """Running processes whose command line names ``folder`` (a cluster's own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(folder) in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


#: a backstop for `live up` to print its banner, not a speed requirement
UP_BACKSTOP_S = 120.0


def start_live_up(folder: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``snapshotlib live up`` on ``folder`` and read what it prints until its
    banner ends (the line naming Ctrl-C); the process, still running, and that text."""
    up = subprocess.Popen(
        [sys.executable, "-m", "snapshotlib", "live", "up", *options, "--workdir", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert up.stdout is not None
    printed = []
    deadline = time.monotonic() + UP_BACKSTOP_S
    while time.monotonic() < deadline:
        line = up.stdout.readline()
        printed.append(line)
        if "Ctrl-C" in line or not line:
            break
    return up, "".join(printed)


def part_bytes(spec: Any, snapshot_id: str, node: str, **fields: Any) -> bytes:
    """A node's part as a node writes it: its share of the money, nothing in flight, and
    ``fields`` in place of any of these."""
    network = spec.network()
    part = {
        "snapshot_id": snapshot_id,
        "node_id": node,
        "balance": spec.initial_money,
        "channels": {str(c): [] for c in network.inputs(node)},
        "state": {"chunks": [], "folders": []},
        **fields,
    }
    return json.dumps(part).encode()


def run_async(coroutine: Any) -> Any:
    """Run ``coroutine`` to its end on an event loop of its own, in a thread of its own:
    a test that ran earlier in the same worker (a kernel's, a widget's) may have left
    an event loop running in this thread, where ``asyncio.run`` refuses to start."""
    import asyncio
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()

"""Real-browser tests: JupyterLab on 127.0.0.1, driven by Playwright in Debian's Chromium.

Fixtures
--------
``jupyter_server`` (session)
    A :class:`labdriver.LabServer`: JupyterLab started once for the whole run, on a free
    port of 127.0.0.1 with a random token, its root a temporary directory holding copies
    of ``notebooks/`` and ``examples/`` (tests write their own notebooks there too). The
    server cannot reach the network (no news, no update check, no extension manager). Its
    PID is recorded; at the end it is terminated, waited for and killed if need be, with
    any kernel it left behind. Kernels a test started are shut down after that test.
``browser_page`` (function)
    A fresh Playwright ``Page`` in one headless ``/usr/bin/chromium`` (a fresh user data
    directory per run; never ``playwright install``). When the test fails, a screenshot
    ``test-artifacts/FAILED-<test>.png`` and the browser console are kept.

Every test in this directory is marked ``browser`` (deselect with ``-m "not browser"``).
Without chromium, playwright or jupyterlab the tests are skipped, except when the ``CI``
environment variable is set: there they fail, so CI never passes by skipping them.
See ``labdriver.py`` for the helpers and an example test.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labdriver import (
    ARTIFACTS_DIR,
    REPO_ROOT,
    LabServer,
    require_modules,
    save_screenshot,
    skip_or_fail,
)

HERE = Path(__file__).resolve().parent

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}

SERVER_START_TIMEOUT_S = 90.0
SERVER_STOP_TIMEOUT_S = 15.0

# Copied into the server's root so lesson notebooks open with their relative paths.
COPIED_DIRS = ("notebooks", "examples", "exercises")

# Lab settings that keep the frontend from asking the internet for anything.
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/extensionmanager-extension/plugin.jupyterlab-settings": {"enabled": False},
}


# ----------------------------------------------------------------------------- skip or fail


def require_browser_stack() -> None:
    """Skip the test when the browser stack is missing; fail instead when CI is set."""
    if not os.access(CHROMIUM, os.X_OK):
        skip_or_fail(f"browser test needs {CHROMIUM} (Debian package chromium)")
    require_modules("playwright", "jupyterlab")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    # Keep each phase's report on the item, for browser_page's teardown to see failures.
    report = yield
    setattr(item, f"_report_{report.when}", report)
    return report


# ----------------------------------------------------------------------------- server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _prepare_root(root: Path) -> None:
    for name in COPIED_DIRS:
        if (REPO_ROOT / name).is_dir():
            shutil.copytree(REPO_ROOT / name, root / name)


def _write_user_settings(settings_dir: Path) -> None:
    import json

    for relpath, values in USER_SETTINGS.items():
        path = settings_dir / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _server_command(port: int, token: str, root: Path, state: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        # ServerApp.token is the deprecated spelling of IdentityProvider.token
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.open_browser=False",
        "--ServerApp.allow_root=True",  # CI and these machines run as root
        # nothing from the internet: no news feed, no update check, no PyPI listing
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        # a clean, throw-away Lab state; window.jupyterapp for labdriver
        f"--LabApp.user_settings_dir={state / 'user-settings'}",
        f"--LabApp.workspaces_dir={state / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
    ]


def _server_env(state: Path) -> dict[str, str]:
    env = dict(os.environ)
    # Keep the user's own Jupyter/IPython configuration and kernels out of the test.
    env.update(
        JUPYTER_CONFIG_DIR=str(state / "config"),
        JUPYTER_DATA_DIR=str(state / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        IPYTHONDIR=str(state / "ipython"),
        PYTHONUNBUFFERED="1",
    )
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_CONFIG_PATH", None)
    return env


def _wait_until_ready(proc: subprocess.Popen[bytes], server: LabServer) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with status {proc.returncode} before answering")
        try:
            server.api("GET", "/api/status", timeout=2.0)
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as exc:
            last_error = exc
        time.sleep(0.25)
    raise RuntimeError(
        f"no answer from {server.url}/api/status within {SERVER_START_TIMEOUT_S:.0f} s "
        f"(last error: {last_error})"
    )


def _stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server by its PID, wait, kill if it lingers; then its kernels."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=SERVER_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=SERVER_STOP_TIMEOUT_S)
    # On SIGTERM the server shuts its kernels down (they run in sessions of their own,
    # and exit by themselves when their parent dies). The server ran in its own session
    # too (process group id = its PID): kill anything it left in that group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _log_tail(path: Path, lines: int = 80) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no server log)"
    return "\n".join(text[-lines:])


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1 for the whole session, stopped by its PID at the end."""
    require_browser_stack()
    base = tmp_path_factory.mktemp("jupyterlab")
    root, state = base / "root", base / "state"
    root.mkdir()
    state.mkdir()
    _prepare_root(root)
    _write_user_settings(state / "user-settings")
    port, token = _free_port(), secrets.token_hex(16)
    log_path = base / "server.log"

    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            _server_command(port, token, root, state),
            cwd=root,
            env=_server_env(state),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # no Ctrl-C from the terminal; one group to sweep
        )
    (base / "server.pid").write_text(f"{proc.pid}\n")
    server = LabServer(
        url=f"http://127.0.0.1:{port}",
        token=token,
        root_dir=root,
        pid=proc.pid,
        log_path=log_path,
    )
    try:
        problem = None
        try:
            _wait_until_ready(proc, server)
        except RuntimeError as exc:
            problem = str(exc)
        if problem is not None:
            pytest.fail(
                f"JupyterLab (pid {proc.pid}) did not start: {problem}\n"
                f"--- {log_path} ---\n{_log_tail(log_path)}",
                pytrace=False,
            )
        yield server
    finally:
        _stop_server(proc)
        ARTIFACTS_DIR.mkdir(exist_ok=True)
        shutil.copyfile(log_path, ARTIFACTS_DIR / "jupyterlab-server.log")


@pytest.fixture(autouse=True)
def _shutdown_kernels_after_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that used the server, shut its kernels down (the server stays up)."""
    yield
    if "jupyter_server" in request.fixturenames:
        server: LabServer = request.getfixturevalue("jupyter_server")
        with contextlib.suppress(OSError):  # the server is gone; its fixture says why
            server.shutdown_kernels()


# ----------------------------------------------------------------------------- browser


@pytest.fixture(scope="session")
def _browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    require_browser_stack()
    from playwright.sync_api import sync_playwright

    user_data_dir = tmp_path_factory.mktemp("chromium-profile")
    # Requests a page's service worker makes (JupyterLite's proxies every GET) reach the
    # context's routes and events only with this set before Playwright starts: the
    # browser-only site's test refuses requests outside the site, the worker's included
    os.environ.setdefault("PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS", "1")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport=VIEWPORT,
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def browser_page(_browser_context: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A new page in headless Chromium; screenshot and console kept when the test fails."""
    page = _browser_context.new_page()
    console: list[str] = []
    page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda err: console.append(f"pageerror: {err}"))
    try:
        yield page
    finally:
        report = getattr(request.node, "_report_call", None)
        failed = report is not None and report.failed
        broken = widget_failures(console)
        if failed or broken:
            name = "FAILED-" + request.node.name.replace("/", "_")
            ARTIFACTS_DIR.mkdir(exist_ok=True)
            try:
                save_screenshot(page, name)
            except Exception as exc:  # the page may be gone; keep the console anyway
                console.append(f"(no screenshot: {exc})")
            (ARTIFACTS_DIR / f"{name}.console.txt").write_text("\n".join(console) + "\n")
        page.close()
    if broken and not failed:
        # A widget whose model failed in the browser never applies the kernel's updates
        # again (a figure stays as first drawn), which a test checking other things passes.
        pytest.fail("the browser reported broken widgets:\n" + "\n".join(broken))


#: console lines saying a widget's model or view failed in the browser
WIDGET_FAILURE = ("[anywidget] Failed", "Could not create")


def widget_failures(console: list[str]) -> list[str]:
    """The console lines that report a widget failing in the browser."""
    return [line for line in console if any(sign in line for sign in WIDGET_FAILURE)]

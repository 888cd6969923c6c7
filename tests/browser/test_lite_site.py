"""The course without a server: the site ``snapshotlib course lite`` builds, served as plain
static files and opened in Chromium, runs lessons with nothing fetched from elsewhere.

The site is built once for this file, as a course's staff build it (the CLI, from the
registries), and served by Python's own static file server. Every request for an address
outside the site is refused and recorded; a test fails on any, as it does on an error
output, a broken widget or a kernel dialog.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import _free_port
from labdriver import (
    REPO_ROOT,
    Outside,
    html_widget,
    plotly_plot,
    require_modules,
    run_all_cells,
    run_new_cell,
    save_screenshot,
    skip_or_fail,
    wait_kernel_idle,
    widget_button,
)

#: the kernel starts Pyodide and loads the course's packages: tens of seconds when busy
OPEN_TIMEOUT_MS = 240_000
RUN_TIMEOUT_MS = 600_000
PROCESSES = "g.trace:last-of-type path.point"  # as in test_explorer_browser.py
# the notebook in view: the site restores the tabs of an earlier visit, hidden behind it
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden)"
RED = "rgb(214, 39, 40)"
# JupyterLab's error output, and anything a cell wrote to stderr
_OUTPUTS_JS = """() => {
    const found = [];
    window.jupyterapp.shell.currentWidget.content.widgets.forEach((cell, i) => {
        const outputs = cell.model.outputs;
        for (let k = 0; outputs && k < outputs.length; k++) {
            const o = outputs.get(k).toJSON();
            if (o.output_type === 'error') found.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
            if (o.output_type === 'stream' && o.name === 'stderr')
                found.push(`cell ${i}: ${o.text}`);
        }
    });
    return found;
}"""


@pytest.fixture(scope="module")
def lite_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site, built by the CLI and served on 127.0.0.1; its base address."""
    require_modules("jupyterlite_core", "jupyterlite_pyodide_kernel", "uv")
    if shutil.which("npm") is None:
        skip_or_fail("the site takes Pyodide from npm: install npm")
    out = tmp_path_factory.mktemp("lite") / "site"
    built = subprocess.run(
        [sys.executable, "-m", "snapshotlib", "course", "lite", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert built.returncode == 0, built.stderr
    # Test instrumentation only: the page hands the drivers its JupyterLab application
    # (labdriver's helpers read the notebook's model through it)
    config_path = out / "jupyter-lite.json"
    config = json.loads(config_path.read_text())
    config["jupyter-config-data"]["exposeAppInBrowser"] = True
    config_path.write_text(json.dumps(config))
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", "-b", "127.0.0.1", str(port), "-d", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_until_serving(server, base)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=15)


def _wait_until_serving(server: subprocess.Popen[bytes], base: str) -> None:
    """Until the static server answers (it may take seconds to start on a busy machine)."""
    for _ in range(600):
        assert server.poll() is None, "the static file server exited"
        try:
            with urllib.request.urlopen(f"{base}/jupyter-lite.json", timeout=5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"the static file server at {base} never answered")


def open_in_site(page: Any, base: str, path: str) -> None:
    """Open the site at ``path`` (a link to a lesson) as on a first visit: what an earlier
    test left in the browser for the site (its layout, whose restored tabs race with the
    one asked for; its stored notebooks; its service worker) is cleared first. Wait for
    the notebook's kernel."""
    devtools = page.context.new_cdp_session(page)
    devtools.send("Storage.clearDataForOrigin", {"origin": base, "storageTypes": "all"})
    devtools.detach()
    page.goto(f"{base}/lab/index.html?path={path}", timeout=OPEN_TIMEOUT_MS)
    _wait_for_notebook(page, path)


def open_from_the_lab(page: Any, path: str) -> None:
    """Open ``path`` in the site's JupyterLab already open, as a learner does by a link
    in a lesson or the file browser; wait for its kernel."""
    page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", path)
    _wait_for_notebook(page, path)


def _wait_for_notebook(page: Any, path: str) -> None:
    page.wait_for_function(
        "(name) => window.jupyterapp && window.jupyterapp.shell.currentWidget &&"
        " window.jupyterapp.shell.currentWidget.title.label === name",
        arg=Path(path).name,
        timeout=OPEN_TIMEOUT_MS,
    )
    page.locator(f"{SHOWN} .jp-Notebook").first.wait_for(state="visible", timeout=OPEN_TIMEOUT_MS)
    wait_kernel_idle(page, timeout=OPEN_TIMEOUT_MS)
    assert_no_dialog(page)


def run_all_without_errors(page: Any) -> None:
    """Run All on the notebook in view; no cell may raise or write to stderr."""
    run_all_cells(page, timeout=RUN_TIMEOUT_MS)
    assert page.evaluate(_OUTPUTS_JS) == []
    assert_no_dialog(page)


def assert_no_dialog(page: Any) -> None:
    """No dialog (Select Kernel, a kernel restart, an error) stands over the notebook."""
    dialogs = page.locator(".jp-Dialog")
    assert dialogs.count() == 0, "a dialog opened: " + dialogs.first.inner_text()


def test_lessons_run_top_to_bottom_and_the_explorer_answers_clicks(
    lite_site: str, browser_page: Any
) -> None:
    from playwright.sync_api import expect

    page = browser_page
    with Outside(page, lite_site) as outside:
        open_in_site(page, lite_site, "notebooks/00_start_here.ipynb")
        run_all_without_errors(page)
        open_from_the_lab(page, "notebooks/02_chandy_lamport.ipynb")
        run_all_without_errors(page)

        # lesson 02's first explorer: a snapshot started at P1 turns P1 red, fills the table
        shown = page.locator(SHOWN)
        network = plotly_plot(shown, "explorer-network").first
        points = network.locator(PROCESSES)
        table = html_widget(shown, "explorer-table").first
        table.scroll_into_view_if_needed()
        widget_button(shown, "Start snapshot").first.click()
        expect(points.first).to_have_css("fill", RED, timeout=60_000)
        expect(table).to_contain_text("snapshot s1, initiated by P1", timeout=60_000)
        wait_kernel_idle(page, timeout=RUN_TIMEOUT_MS)
        assert page.evaluate(_OUTPUTS_JS) == []
        assert_no_dialog(page)
        save_screenshot(page, "lite-lesson-02")
        assert outside.refused == [], "the site asked for addresses outside it"
        outside.probe(page)


def test_an_exercise_says_where_its_answers_are_checked(lite_site: str, browser_page: Any) -> None:
    from playwright.sync_api import expect

    page = browser_page
    with Outside(page, lite_site) as outside:
        open_in_site(page, lite_site, "exercises/01_is_this_cut_consistent.ipynb")
        # the note the build puts on top (the exercise's own first cell names grader.check too)
        note = page.locator(f"{SHOWN} .jp-MarkdownCell").first
        expect(note).to_contain_text("cannot check them")
        said = run_new_cell(
            page,
            "from snapshotlib.course.checking import Notebook\n"
            'Notebook("01_is_this_cut_consistent.ipynb").check("q1")',
            timeout=RUN_TIMEOUT_MS,
        )
        assert "not checked" in said and "Binder" in said, said
        assert page.evaluate(_OUTPUTS_JS) == []
        assert_no_dialog(page)
        assert outside.refused == []
        outside.probe(page)

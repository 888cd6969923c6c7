"""Drive JupyterLab 4 in headless Chromium: the helpers every browser test uses.

The fixtures in ``conftest.py`` start the server (:class:`LabServer`) and the browser
(a Playwright ``Page``); the functions here do what a learner does with them: open a
notebook, run all its cells, click a widget's button, read a widget, take a screenshot.

A browser test reads like this::

    from labdriver import (html_widget, open_notebook, run_all_cells, save_screenshot,
                           widget_button, write_notebook)
    from playwright.sync_api import expect

    def test_button_updates_label(jupyter_server, browser_page):
        write_notebook(jupyter_server.root_dir / "demo.ipynb", [
            "import ipywidgets as w",
            "label = w.HTML('before'); label.add_class('demo-label')",
            "button = w.Button(description='Go')",
            "button.on_click(lambda _: setattr(label, 'value', 'after'))",
            "w.VBox([button, label])",
        ])
        open_notebook(browser_page, jupyter_server, "demo.ipynb")
        run_all_cells(browser_page)
        widget_button(browser_page, "Go").click()
        expect(html_widget(browser_page, "demo-label")).to_have_text("after")
        save_screenshot(browser_page, "demo")

Widgets are found the way a person finds them: buttons by their text, other widgets by
a CSS class the notebook gives them with ``widget.add_class(NAME)`` (ipywidgets puts it
on the widget's outer element). Playwright's ``expect`` retries until the page agrees
or its timeout passes, so assert with ``expect`` rather than reading once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO_ROOT / "test-artifacts"

#: JupyterLab's first load (all federated extensions, then a kernel start) on a slow
#: 2-core machine takes a few seconds; leave a wide margin.
LOAD_TIMEOUT_MS = 60_000
RUN_TIMEOUT_MS = 120_000


@dataclass(frozen=True)
class LabServer:
    """A running JupyterLab server, as the ``jupyter_server`` fixture hands it out."""

    url: str  # http://127.0.0.1:PORT
    token: str
    root_dir: Path  # the server's root: write or copy notebooks here
    pid: int
    log_path: Path

    def lab_url(self, path: str) -> str:
        """The address that opens ``path`` (relative to ``root_dir``) in JupyterLab.

        ``reset`` starts from an empty workspace, so a notebook opened by an earlier
        test does not open again next to this one.
        """
        return f"{self.url}/lab/tree/{path}?reset&token={self.token}"

    def api(self, method: str, endpoint: str, timeout: float = 10.0) -> Any:
        """Call the server's REST API (``endpoint`` like ``/api/sessions``)."""
        request = urllib.request.Request(
            self.url + endpoint,
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Shut down every kernel session (a test's notebooks), leaving the server up."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")


# ----------------------------------------------------------------------------- skip or fail


def in_ci() -> bool:
    """Whether the ``CI`` environment variable is set (to anything but 0/false/no)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_or_fail(reason: str) -> None:
    """Skip the test for a missing piece, or fail it under CI, which must not skip."""
    if in_ci():
        pytest.fail(f"{reason}; CI is set, so browser tests may not be skipped", pytrace=False)
    pytest.skip(reason)


def require_modules(*modules: str) -> None:
    """Skip (fail under CI) unless every Python module named is installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        skip_or_fail(f"needs {', '.join(missing)} (make test installs .[course,dev])")


# ----------------------------------------------------------------------------- notebooks


def write_notebook(path: Path, cells: Sequence[str]) -> Path:
    """Write a notebook of code cells (sources as strings) with the python3 kernel."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


# The JupyterLab application object, exposed by --LabApp.expose_app_in_browser.
_NO_BUSY_PROMPT_JS = """() => ![...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-InputPrompt')]
    .some(p => p.textContent.includes('*'))"""

# Start Run > Run All Cells; its promise resolves once every cell's execute request has
# been answered (false when a cell raised: execution stops there).
_START_RUN_ALL_JS = """() => {
    const app = window.jupyterapp;
    const panel = app.shell.currentWidget;
    if (!panel || !panel.content || !panel.sessionContext) {
        throw new Error('the current JupyterLab widget is not a notebook');
    }
    window.__labdriverRunAll = undefined;
    app.commands.execute('notebook:run-all-cells').then(
        ok => { window.__labdriverRunAll = ok !== false ? 'ok' : 'a cell raised'; },
        err => { window.__labdriverRunAll = 'failed: ' + err; });
}"""

_RUN_ALL_DONE_JS = "() => window.__labdriverRunAll !== undefined"


def open_notebook(
    page: Any, server: LabServer, path: str, timeout: float = LOAD_TIMEOUT_MS
) -> None:
    """Open ``path`` (relative to the server's root) and wait for its kernel to be idle."""
    page.goto(server.lab_url(path), timeout=timeout)
    page.locator(".jp-NotebookPanel .jp-Notebook").first.wait_for(state="visible", timeout=timeout)
    wait_kernel_idle(page, timeout=timeout)


# "ready" without a kernel is what JupyterLab's status bar shows as "No Kernel"
_KERNEL_STATE_JS = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const ctx = panel && panel.sessionContext;
    if (!panel || !panel.content || !ctx || !ctx.isReady) { return 'starting'; }
    const kernel = ctx.session && ctx.session.kernel;
    if (!kernel) { return 'no kernel'; }
    return kernel.connectionStatus === 'connected' && kernel.status === 'idle' ? 'idle' : 'busy';
}"""

#: how long a notebook may show "No Kernel" before waiting for an idle one gives up
NO_KERNEL_GRACE_S = 30.0


class NoKernelError(AssertionError):
    """The notebook is open but has no kernel: its status bar says "No Kernel"."""


def wait_kernel_idle(page: Any, timeout: float = RUN_TIMEOUT_MS) -> None:
    """Wait until the current notebook's kernel is connected and idle.

    A notebook left without a kernel never becomes idle: after ``NO_KERNEL_GRACE_S``
    of "No Kernel" this raises :class:`NoKernelError` instead of waiting out ``timeout``.
    """
    deadline = time.monotonic() + timeout / 1000
    no_kernel_since: float | None = None
    while True:
        state = page.evaluate(_KERNEL_STATE_JS)
        now = time.monotonic()
        if state == "idle":
            return
        if state != "no kernel":
            no_kernel_since = None
        elif no_kernel_since is None:
            no_kernel_since = now
        elif now - no_kernel_since > NO_KERNEL_GRACE_S:
            raise NoKernelError(f"the notebook has had no kernel for {NO_KERNEL_GRACE_S:.0f} s")
        if now > deadline:
            raise AssertionError(f"no idle kernel after {timeout / 1000:.0f} s (state: {state})")
        page.wait_for_timeout(250)


def start_kernel(page: Any) -> None:
    """Start the notebook's own kernel, as a learner does from the "No Kernel" status."""
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.changeKernel({name: 'python3'})"
    )


def run_all_cells(page: Any, timeout: float = RUN_TIMEOUT_MS) -> None:
    """Run > Run All Cells in the current notebook and wait until execution is done.

    Done means: every cell's execute request answered, the kernel idle again and no
    ``[*]`` prompt left. A cell that raises fails the call with the error output.
    Widgets render asynchronously after that: find them with locators and ``expect``.
    """
    page.evaluate(_START_RUN_ALL_JS)
    page.wait_for_function(_RUN_ALL_DONE_JS, timeout=timeout)
    outcome = page.evaluate("() => window.__labdriverRunAll")
    wait_kernel_idle(page, timeout=timeout)
    page.wait_for_function(_NO_BUSY_PROMPT_JS, timeout=timeout)
    if outcome != "ok":
        errors = page.evaluate(_ERROR_OUTPUTS_JS)
        raise AssertionError(f"Run All Cells: {outcome}; error output:\n" + "\n".join(errors))


# read from the notebook's model: a windowed notebook does not render cells out of view
_ERROR_OUTPUTS_JS = """() => {
    const errors = [];
    const cells = window.jupyterapp.shell.currentWidget.content.widgets;
    cells.forEach((cell, i) => {
        const outputs = cell.model.outputs;
        for (let k = 0; outputs && k < outputs.length; k++) {
            const o = outputs.get(k).toJSON();
            if (o.output_type === 'error') {
                const shown = (o.traceback || []).join('\\n').replace(/\\u001b\\[[0-9;]*m/g, '');
                errors.push(`cell ${i}: ${shown}`);
            }
        }
    });
    return errors;
}"""


# ----------------------------------------------------------------------------- widgets


def widget_button(page: Any, text: str) -> Any:
    """The ipywidgets Button whose description is exactly ``text`` (a Locator).

    ipywidgets 8 renders ``<button class="jupyter-widgets jupyter-button widget-button">``
    with the description as its text (after an ``<i>`` when it has an icon).
    """
    pattern = re.compile(rf"^\s*{re.escape(text)}\s*$")
    return page.locator("button.jupyter-button").filter(has_text=pattern)


def widget(page: Any, css_class: str) -> Any:
    """The widget the notebook marked with ``widget.add_class(css_class)`` (a Locator).

    ``add_class`` puts the class on the widget's outer element (``.lm-Widget``); this
    works for every DOMWidget, ipywidgets' own and anywidgets such as ``FigureWidget``.
    """
    return page.locator(f".lm-Widget.{css_class}")


def html_widget(page: Any, css_class: str) -> Any:
    """The content of the HTML/Label widget marked with ``add_class(css_class)``.

    ipywidgets 8 renders ``<div class="... widget-html CLASS"><label class="widget-label">
    </label><div class="widget-html-content">VALUE</div></div>``.
    """
    return page.locator(f".lm-Widget.{css_class} .widget-html-content")


def html_widget_text(page: Any, css_class: str) -> str:
    """The rendered text of that HTML widget, read once (prefer ``expect`` to assert)."""
    text: str = html_widget(page, css_class).inner_text()
    return text


# ----------------------------------------------------------------------------- plotly


def plotly_plot(page: Any, css_class: str | None = None) -> Any:
    """A rendered plotly figure (``.js-plotly-plot``), or the one marked with ``css_class``.

    A ``FigureWidget`` is an anywidget whose own element is the ``.js-plotly-plot``, so
    ``fig.add_class(NAME)`` marks that very element; a figure inside a marked box is
    found too.
    """
    if css_class is None:
        return page.locator(".js-plotly-plot")
    return page.locator(f".js-plotly-plot.{css_class}, .{css_class} .js-plotly-plot")


def expect_point_fills(points: Any, want: list[str]) -> None:
    """The markers ``points`` (a locator) have the fills ``want``, in order, each read with
    playwright's retrying checks: a figure that redraws meanwhile replaces its markers,
    and one read of them all could see none."""
    from playwright.sync_api import expect

    expect(points).to_have_count(len(want))
    for i, colour in enumerate(want):
        expect(points.nth(i)).to_have_css("fill", colour)


# ----------------------------------------------------------------------------- artifacts


def save_screenshot(page: Any, name: str) -> Path:
    """Save a PNG of the page as ``test-artifacts/NAME.png`` (repo root); return its path."""
    ARTIFACTS_DIR.mkdir(exist_ok=True)
    path = ARTIFACTS_DIR / f"{name}.png"
    page.screenshot(path=str(path))
    return path


_RUN_NEW_CELL_JS = """async (source) => {
    const app = window.jupyterapp;
    const notebook = app.shell.currentWidget.content;
    notebook.activeCellIndex = notebook.widgets.length - 1;
    await app.commands.execute('notebook:insert-cell-below');
    notebook.activeCell.model.sharedModel.setSource(source);
    await app.commands.execute('notebook:run-cell');
}"""

_LAST_OUTPUT_JS = """() => {
    const notebook = window.jupyterapp.shell.currentWidget.content;
    const cell = notebook.widgets[notebook.widgets.length - 1];
    return cell.outputArea ? cell.outputArea.node.innerText : '';
}"""


def run_new_cell(page: Any, source: str, timeout: float = RUN_TIMEOUT_MS) -> str:
    """Add a code cell at the end of the notebook, run it as a learner would, return its
    output's text (for asking the kernel what it knows after clicks in the page)."""
    page.evaluate(_RUN_NEW_CELL_JS, source)
    wait_kernel_idle(page, timeout=timeout)
    page.wait_for_function(_NO_BUSY_PROMPT_JS, timeout=timeout)
    text: str = page.evaluate(_LAST_OUTPUT_JS)
    return text


# ----------------------------------------------------------------------------- static sites


class Outside:
    """The requests the browser made for addresses outside the site, its service worker's
    included (routed on the context: a page's routes never see what a service worker
    fetches): refused, and listed. Use as a context manager; the routes end with it."""

    def __init__(self, page: Any, base: str) -> None:
        self.refused: list[str] = []
        self.context = page.context
        self.base = base

    def _route(self, request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(self.base + "/") or url.startswith(("data:", "blob:")):
            request_route.continue_()
        else:
            self.refused.append(url)
            request_route.abort()

    def __enter__(self) -> Outside:
        self.context.route("**/*", self._route)
        return self

    def __exit__(self, *exc: object) -> None:
        self.context.unroute("**/*", self._route)

    def probe(self, page: Any) -> None:
        """Ask for an outside address from the page (through the site's service worker,
        once it is active) and check that it was refused: the guard sees such requests."""
        probe = "https://example.invalid/snapshotlib-probe.js"
        page.evaluate("(url) => fetch(url).then(() => 'fetched', () => 'refused')", probe)
        assert probe in self.refused, f"a request outside the site went unseen: {self.refused}"
        self.refused = [url for url in self.refused if url != probe]

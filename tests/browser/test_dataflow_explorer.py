"""The dataflow explorer in a real browser: JupyterLab, the widget, Crash and Restore.

An aligned word count has run until checkpoint c1 has COMPLETED and a later one is in
progress. Clicking Crash (C1, the drop-down's first stateful operator) must cross
C1 out in the rendered graph, say so in the status line and the title, and show the
failed checkpoints in the registry; Restore must take the cross away and say which
checkpoint the job rolled back to; Step must then run the job again.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from labdriver import (
    LabServer,
    html_widget,
    open_notebook,
    plotly_plot,
    require_modules,
    run_all_cells,
    save_screenshot,
    wait_kernel_idle,
    widget_button,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

NOTEBOOK = "dataflow_explorer.ipynb"
CELLS = [
    "from snapshotlib.dataflow import StreamJob, word_count\n"
    "from snapshotlib.widgets import DataflowExplorer",
    'job = StreamJob(word_count(records=30), "aligned", seed=0, interval=15)\n'
    "explorer = DataflowExplorer(job)\n"
    "# on until c1 has COMPLETED and a later checkpoint is under way\n"
    'while not (job.coordinator.entries.get("c1") and job.coordinator.entry("c1").status'
    ' == "COMPLETED" and job.coordinator.pending()):\n'
    "    explorer.step_once()\n"
    "explorer",
]
WHITE = "rgb(255, 255, 255)"  # viz.style.WHITE_FILL
RED = "rgb(214, 39, 40)"  # viz.style.RED_FILL


def crosses(graph: Any) -> Any:
    """The "crashed" labels over crossed-out operators (plotly draws no element for an
    empty trace, so the traces cannot be counted on to keep their places)."""
    return graph.locator(".scatterlayer text").filter(has_text=re.compile(r"^crashed$"))


def operator_points(page: Page, graph: Any) -> Any:
    """The operators' markers, S1, S2, C1, C2, K: the trace that names S1."""
    named = page.locator("text").filter(has_text=re.compile(r"^S1$"))
    return graph.locator(".scatterlayer .trace").filter(has=named).locator("path.point")


@pytest.fixture(autouse=True)
def _widget_packages() -> None:
    require_modules("ipywidgets", "plotly", "anywidget", "networkx")


def test_crash_crosses_the_operator_out_and_restore_rolls_back_to_the_last_checkpoint(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    from playwright.sync_api import expect

    page = browser_page
    write_notebook(jupyter_server.root_dir / NOTEBOOK, CELLS)
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all_cells(page)

    graph = plotly_plot(page, "dataflow-graph")
    registry = plotly_plot(page, "dataflow-registry")
    status = html_widget(page, "dataflow-status")
    operators = operator_points(page, graph)
    expect(operators).to_have_count(5)
    expect(operators.nth(0)).to_have_css("fill", RED)  # S1 recorded the newest checkpoint
    expect(status).to_contain_text(re.compile(r"^step \d+: "))
    expect(graph.locator(".gtitle")).to_contain_text(re.compile(r"aligned · step \d+"))
    expect(crosses(graph)).to_have_count(0)
    expect(registry).to_contain_text("COMPLETED")
    assert "FAILED" not in registry.inner_text()

    widget_button(page, "Crash").click()

    expect(crosses(graph)).to_have_count(1)
    expect(status).to_contain_text(re.compile(r"C1 crashed at step \d+"))
    expect(status).to_contain_text("FAILED: C1 crashed")
    expect(graph.locator(".gtitle")).to_contain_text("halted: C1 crashed")
    expect(registry).to_contain_text("FAILED")
    expect(widget_button(page, "Restore")).to_be_enabled()
    expect(widget_button(page, "Step")).to_be_disabled()
    wait_kernel_idle(page)
    save_screenshot(page, "dataflow-explorer-crashed")

    widget_button(page, "Restore").click()

    expect(crosses(graph)).to_have_count(0)
    expect(status).to_contain_text("restored from c1:")
    expect(graph.locator(".gtitle")).not_to_contain_text("halted")
    # the restored job starts with no checkpoint in progress: every operator white
    expect(operators.nth(0)).to_have_css("fill", WHITE)
    expect(graph.locator(".gtitle")).to_contain_text("no checkpoint in progress")
    expect(widget_button(page, "Crash")).to_be_enabled()

    widget_button(page, "Step").click()

    expect(status).to_contain_text(re.compile(r"^step \d+: "))
    expect(widget_button(page, "Restore")).to_be_disabled()
    wait_kernel_idle(page)
    save_screenshot(page, "dataflow-explorer")

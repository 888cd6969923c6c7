"""The instructions of lessons 00 and 02, followed click by click after Run All.

A learner runs the whole lesson first and only then reads and clicks: every instruction
must work from the state Run All leaves behind (no later cell has moved the widget, a
snapshot id already used is not offered again, Step and Play carry on after the
learner's own actions).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from labdriver import (
    LabServer,
    open_notebook,
    plotly_plot,
    require_modules,
    run_all_cells,
    save_screenshot,
    wait_kernel_idle,
)

from snapshotlib.text_colours import WRONG

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

RED = "rgb(214, 39, 40)"  # viz.style.RED_FILL
ERROR_COLOUR = WRONG  # the explorer's status line when an action was refused


@pytest.fixture(autouse=True)
def _widget_packages() -> None:
    require_modules("ipywidgets", "plotly", "anywidget", "networkx")


def button(explorer: Locator, text: str) -> Locator:
    return explorer.locator("button.jupyter-button").filter(
        has_text=re.compile(rf"^\s*{re.escape(text)}\s*$")
    )


def status(explorer: Locator) -> Locator:
    return explorer.locator(".explorer-status .widget-html-content")


def assert_no_refusal(explorer: Locator) -> None:
    html = status(explorer).inner_html()
    assert ERROR_COLOUR not in html, f"the explorer refused: {status(explorer).inner_text()}"


def first_explorer_after_run_all(page: Page, server: LabServer, path: str) -> Locator:
    """Open the lesson, Run All as a learner does, and scroll to its first explorer."""
    open_notebook(page, server, path)
    run_all_cells(page)
    explorer = page.locator(".snapshot-explorer").first
    explorer.scroll_into_view_if_needed()
    return explorer


def test_lesson_00_start_a_snapshot_and_deliver_its_marker(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    from playwright.sync_api import expect

    page = browser_page
    explorer = first_explorer_after_run_all(page, jupyter_server, "notebooks/00_start_here.ipynb")

    button(explorer, "Start snapshot").click()  # "press Start snapshot"
    expect(status(explorer)).to_contain_text("did: snapshot")
    assert_no_refusal(explorer)
    marker = button(explorer, "P1→P2: marker s1")  # "deliver that marker"
    expect(marker).to_be_visible()
    marker.click()
    points = plotly_plot(explorer, "explorer-network").locator("g.trace:last-of-type path.point")
    expect(points.nth(1)).to_have_css("fill", RED)  # "watch P2 turn red"
    table = explorer.locator(".explorer-table")
    expect(table.locator("tr[data-process='P2']")).to_contain_text("red")  # "the table fill in"
    assert_no_refusal(explorer)
    wait_kernel_idle(page)
    save_screenshot(page, "lesson-00-instructions")


def test_lesson_02_step_act_then_play_to_the_end(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    from playwright.sync_api import expect

    page = browser_page
    lesson = "notebooks/02_chandy_lamport.ipynb"
    explorer = first_explorer_after_run_all(page, jupyter_server, lesson)

    for _ in range(4):  # "press Step"
        button(explorer, "Step").click()
        expect(status(explorer)).to_contain_text("did:")
        wait_kernel_idle(page)
    assert_no_refusal(explorer)
    # "start a second snapshot at P3 in the middle (Start snapshot proposes a fresh id)"
    start = page.locator("button.jupyter-button", has_text="Start snapshot")
    snap_row = explorer.locator(".widget-hbox").filter(has=start).last
    snap_row.locator("select").first.select_option("P3")
    wait_kernel_idle(page)
    button(explorer, "Start snapshot").click()
    expect(status(explorer)).to_contain_text("snapshot s2 at P3")
    assert_no_refusal(explorer)
    # "deliver markers in another order": the last delivery offered, not the first
    deliveries = explorer.locator("button.jupyter-button").filter(has_text="→")
    deliveries.last.click()
    expect(status(explorer)).to_contain_text("did: deliver")
    assert_no_refusal(explorer)
    # "Step and Play carry on from wherever you are"
    explorer.locator(".widget-play button").first.click()
    expect(status(explorer)).to_contain_text("nothing left", timeout=120_000)
    assert_no_refusal(explorer)
    wait_kernel_idle(page)
    save_screenshot(page, "lesson-02-instructions")

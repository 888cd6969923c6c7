"""The browser test machinery, end to end, on a placeholder notebook.

A button that, when clicked, rewrites an HTML widget and recolours a point of a plotly
``FigureWidget`` inside ``fig.batch_update()`` — the same round trip the Explorer makes
(click, Python handler, figure updated in place, browser redraws).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from labdriver import (
    LabServer,
    expect_point_fills,
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

NOTEBOOK = "smoke.ipynb"

CELLS = [
    """\
import ipywidgets as widgets
import plotly.graph_objects as go""",
    """\
status = widgets.HTML("<b>P2 is white</b>")
status.add_class("smoke-status")

fig = go.FigureWidget(
    data=[go.Scatter(x=[0, 1, 2], y=[0, 0, 0], mode="markers+text",
                     text=["P1", "P2", "P3"], textposition="top center",
                     marker=dict(size=28, color=["white", "white", "white"],
                                 line=dict(color="black", width=2)))],
    layout=dict(width=500, height=300, showlegend=False,
                margin=dict(l=20, r=20, t=20, b=20)),
)
fig.add_class("smoke-figure")

button = widgets.Button(description="Colour P2 red")

def on_click(_):
    status.value = "<b>P2 is red</b>"
    with fig.batch_update():
        fig.data[0].marker.color = ["white", "red", "white"]

button.on_click(on_click)
widgets.VBox([button, status, fig])""",
]

WHITE = "rgb(255, 255, 255)"
RED = "rgb(255, 0, 0)"


@pytest.fixture(autouse=True)
def _widget_packages() -> None:
    require_modules("ipywidgets", "plotly", "anywidget")


def test_button_click_updates_html_widget_and_plotly_point(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    from playwright.sync_api import expect

    page = browser_page
    write_notebook(jupyter_server.root_dir / NOTEBOOK, CELLS)
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all_cells(page)

    status = html_widget(page, "smoke-status")
    expect(status).to_have_text("P2 is white")
    plot = plotly_plot(page, "smoke-figure")
    expect(plot.locator("path.point")).to_have_count(3)
    expect_point_fills(plot.locator("path.point"), [WHITE, WHITE, WHITE])

    widget_button(page, "Colour P2 red").click()

    expect(status).to_have_text("P2 is red")
    # the figure is redrawn once the batched update reaches the browser
    expect(plot.locator("path.point").nth(1)).to_have_css("fill", RED)
    expect_point_fills(plot.locator("path.point"), [WHITE, RED, WHITE])
    wait_kernel_idle(page)  # the click's handler done: a quiet status bar in the picture
    save_screenshot(page, "lab-smoke")

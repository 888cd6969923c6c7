"""The explorer in a real browser: JupyterLab, the widget, clicks, and what is drawn.

Starting a snapshot at P1 must turn P1 red in the rendered network view and fill the
recorded-state table; delivering P1's marker to P2 must turn P2 red too.
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
    run_new_cell,
    save_screenshot,
    wait_kernel_idle,
    widget_button,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

NOTEBOOK = "explorer.ipynb"
CELLS = [
    "from snapshotlib.widgets import Explorer",
    'explorer = Explorer("examples/scenarios/token-ring.json")\nexplorer',
]
# the processes are the network figure's last trace (viz.network.TRACES), never empty
PROCESSES = "g.trace:last-of-type path.point"
WHITE = "rgb(255, 255, 255)"
RED = "rgb(214, 39, 40)"  # viz.style.RED_FILL


@pytest.fixture(autouse=True)
def _widget_packages() -> None:
    require_modules("ipywidgets", "plotly", "anywidget", "networkx")


def test_starting_a_snapshot_and_delivering_a_marker_turn_processes_red(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    from playwright.sync_api import expect

    page = browser_page
    write_notebook(jupyter_server.root_dir / NOTEBOOK, CELLS)
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all_cells(page)

    network = plotly_plot(page, "explorer-network")
    points = network.locator(PROCESSES)
    expect(points).to_have_count(3)
    expect_point_fills(points, [WHITE, WHITE, WHITE])
    table = html_widget(page, "explorer-table")
    expect(table).to_contain_text("No snapshot yet")

    widget_button(page, "Start snapshot").click()  # at P1, the drop-down's first choice

    expect(points.nth(0)).to_have_css("fill", RED)
    expect(table).to_contain_text("snapshot s1, initiated by P1")
    expect(table.locator("tr[data-process='P1']")).to_contain_text("red")
    expect(table.locator("tr[data-process='P2']")).to_contain_text("not recorded yet")
    expect_point_fills(points, [RED, WHITE, WHITE])

    widget_button(page, "P1→P2: marker s1").click()

    expect(points.nth(1)).to_have_css("fill", RED)
    expect(table.locator("tr[data-process='P2']")).to_contain_text("red")
    expect(table.locator("tr[data-channel='P1->P2']")).to_contain_text("recorded")
    expect_point_fills(points, [RED, RED, WHITE])
    wait_kernel_idle(page)
    save_screenshot(page, "explorer")


# Holds plotly's widget module (the only script of over a megabyte a page turns into a
# blob to import) until `window.releasePlotly()`: it loads as on a machine too busy to
# parse it within anywidget's two seconds.
_HOLD_PLOTLY_JS = """() => {
    let release;
    window.plotlyGate = new Promise((resolve) => { release = resolve; });
    window.releasePlotly = release;
    const create = URL.createObjectURL.bind(URL);
    URL.createObjectURL = (blob) => {
        if (!(blob instanceof Blob) || blob.size < 1e6) return create(blob);
        const module = create(blob);
        const held = `await window.plotlyGate;
            export * from "${module}"; export { default } from "${module}";`;
        return create(new Blob([held], { type: "text/javascript" }));
    };
}"""


def test_figures_whose_code_loads_slowly_still_show_every_step(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    # anywidget fails a model still initializing two seconds after it was created, and a
    # failed figure never draws another step (the browser fixture fails the test on it)
    from playwright.sync_api import expect

    page = browser_page
    write_notebook(jupyter_server.root_dir / "slow.ipynb", CELLS)
    open_notebook(page, jupyter_server, "slow.ipynb")
    page.evaluate(_HOLD_PLOTLY_JS)
    run_all_cells(page)
    table = html_widget(page, "explorer-table")
    widget_button(page, "Start snapshot").click()
    expect(table).to_contain_text("snapshot s1, initiated by P1")
    page.wait_for_timeout(2500)  # past anywidget's deadline for both figures
    page.evaluate("() => window.releasePlotly()")

    points = plotly_plot(page, "explorer-network").locator(PROCESSES)
    expect(points).to_have_count(3)
    expect(points.nth(0)).to_have_css("fill", RED)
    expect_point_fills(points, [RED, WHITE, WHITE])
    widget_button(page, "P1→P2: marker s1").click()
    expect(points.nth(1)).to_have_css("fill", RED)
    expect_point_fills(points, [RED, RED, WHITE])
    wait_kernel_idle(page)


def test_the_kernel_learns_that_each_figure_has_drawn(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    # until then every update also rewrites the whole figure for views still to come
    # (viz/update.py); plotly's view says so after drawing, and the kernel must hear it
    from playwright.sync_api import expect

    page = browser_page
    write_notebook(jupyter_server.root_dir / "drawn.ipynb", CELLS)
    open_notebook(page, jupyter_server, "drawn.ipynb")
    run_all_cells(page)
    expect(plotly_plot(page, "explorer-network").locator(PROCESSES)).to_have_count(3)
    expect(plotly_plot(page, "explorer-spacetime").locator(".scatterlayer")).to_have_count(1)
    wait_kernel_idle(page)
    shown = run_new_cell(
        page,
        "print([getattr(v, '_snapshotlib_drawn', None) "
        "for v in (explorer.network_view, explorer.spacetime_view)])",
    )
    assert "[True, True]" in shown, shown

"""The widgets laid out for a projector and a laptop, checked on screen.

A lecture hall's projector is 1280×720, usually zoomed to 150 % so the back rows can
read it: 853×480 CSS pixels (the layout is the same as at a device scale of 1.5, only
the screenshot is coarser), with JupyterLab's left sidebar hidden as a presenter hides
it (View → Left Sidebar, Ctrl+B). A laptop is 1400 pixels wide. On both, for every widget of
the course, each figure must fit the screen's height and show both its edges, and
plotly's tool bar must not cover a figure's title; the explorer's recorded-state table
must show all its columns and its heading. Screenshots:
``test-artifacts/layout-WIDGET-SCREEN.png``.
"""

from __future__ import annotations

from typing import Any

import pytest
from labdriver import (
    ARTIFACTS_DIR,
    LabServer,
    open_notebook,
    require_modules,
    run_all_cells,
    wait_kernel_idle,
    widget,
    write_notebook,
)

SCREENS = {"projector": {"width": 853, "height": 480}, "laptop": {"width": 1400, "height": 900}}
WORKED = "examples/scenarios/worked-example.json"
WIDGETS = {
    "explorer": f"from snapshotlib.widgets import Explorer\nExplorer({WORKED!r})",
    "cut-checker": f"from snapshotlib.widgets import CutChecker\nCutChecker({WORKED!r})",
    "commutation-stepper": (
        f"from snapshotlib.widgets import CommutationStepper\nCommutationStepper({WORKED!r})"
    ),
    "dataflow-explorer": (
        "from snapshotlib.course.lesson_07 import DAG\n"
        "from snapshotlib.dataflow import StreamJob\n"
        "from snapshotlib.widgets import DataflowExplorer\n"
        "ex = DataflowExplorer(StreamJob(DAG, 'unaligned', seed=0))\nex.run(40)\nex"
    ),
}

# the part of an element the page shows, and how much of its content overflows it
_BOX_JS = """el => {
    const r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
            height: r.height, width: r.width,
            hidden_x: el.scrollWidth - el.clientWidth};
}"""

# whether the element's left and right edges are on screen and not clipped by a box
# around it: clipped content is not what the browser finds at that point
_EDGES_SHOWN_JS = """el => {
    const r = el.getBoundingClientRect();
    const y = r.top + Math.min(r.height / 2, 8);
    return [r.left + 12, r.right - 12].every(x => {
        const hit = document.elementFromPoint(x, y);
        return x >= 0 && x < window.innerWidth && hit !== null
            && (hit === el || el.contains(hit));
    });
}"""

# plotly's title and tool bar inside each figure, as rectangles
_TITLE_AND_TOOLBAR_JS = """plot => {
    const box = el => { if (!el) return null; const r = el.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
    return {title: box(plot.querySelector('.gtitle')),
            toolbar: box(plot.querySelector('.modebar'))};
}"""


def overlap(a: dict[str, float] | None, b: dict[str, float] | None) -> bool:
    if not a or not b:
        return False
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and (b["top"] < a["bottom"])
    )


@pytest.fixture(autouse=True)
def _widget_packages() -> None:
    require_modules("ipywidgets", "plotly", "anywidget", "networkx")


#: the CSS class each widget puts on its outer box
ROOTS = {
    "explorer": "snapshot-explorer",
    "cut-checker": "cut-checker",
    "commutation-stepper": "commutation-stepper",
    "dataflow-explorer": "dataflow-explorer",
}


@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_widget_fits_the_screen(
    jupyter_server: LabServer, _browser_context: Any, screen: str
) -> None:
    from playwright.sync_api import expect

    page = _browser_context.new_page()
    page.set_viewport_size(SCREENS[screen])
    try:
        name = f"layout-{screen}"
        write_notebook(jupyter_server.root_dir / f"{name}.ipynb", list(WIDGETS.values()))
        open_notebook(page, jupyter_server, f"{name}.ipynb")
        if screen == "projector":  # the presenter hides the file browser
            page.evaluate(
                "() => window.jupyterapp.commands.execute('application:toggle-left-area')"
            )
        run_all_cells(page)
        # what the notebook shows between JupyterLab's tool bars and its status bar
        room = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").evaluate(
            "el => el.getBoundingClientRect().height"
        )
        for kind, css in ROOTS.items():
            root = page.locator(f".lm-Widget.{css}").first
            root.scroll_into_view_if_needed()
            if kind == "explorer":
                start = root.locator("button.jupyter-button", has_text="Start snapshot")
                start.click()
                expect(widget(page, "explorer-table")).to_contain_text("initiated by P1")
                wait_kernel_idle(page)
            plots = root.locator(".js-plotly-plot")
            expect(plots.first).to_be_visible()
            plots.first.scroll_into_view_if_needed()
            ARTIFACTS_DIR.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS_DIR / f"layout-{kind}-{screen}.png"))

            parts = [
                (p.locator(".svg-container").first, f"{kind}: figure {i}")
                for i, p in enumerate(plots.all())
            ]
            if kind == "explorer":
                table = widget(page, "explorer-table")
                parts += [
                    (table.locator(".snapshot-heading"), "the table's heading"),
                    (table.locator("th").nth(3), "the table's last column"),
                ]
            for part, what in parts:
                part.scroll_into_view_if_needed()
                height = part.evaluate(_BOX_JS)["height"]
                assert height <= room, f"{what} is taller than the notebook's {room:.0f} px"
                assert part.evaluate(_EDGES_SHOWN_JS), f"{what} is cut off"
            for plot in plots.all():
                plot.scroll_into_view_if_needed()
                plot.hover()  # the tool bar shows while the pointer is over the figure
                found = plot.evaluate(_TITLE_AND_TOOLBAR_JS)
                assert not overlap(found["title"], found["toolbar"]), (
                    f"{kind}: the tool bar covers the title"
                )
    finally:
        page.close()

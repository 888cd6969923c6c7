"""The errata page's links in JupyterLab: a click opens the lesson at the section.

Each erratum links to the lesson section with the evidence, as ``[lesson 07b, "The
sizing arithmetic, worked"](07b_measuring_tradeoffs.ipynb#cell-id=l07b-sizing)``: the
id of the markdown cell that starts with the section's heading. JupyterLab opens the
notebook in a tab of its own and scrolls to that cell, also when it has only just
opened the notebook (a heading fragment, ``#The-sizing-arithmetic,-worked``, is found
only once the notebook's cells are rendered, so the first click would open the lesson
at the top). The server's root holds a copy of ``notebooks/`` in a folder of that name
(see ``conftest.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from labdriver import LabServer, open_notebook, save_screenshot
from playwright.sync_api import expect

if TYPE_CHECKING:
    from playwright.sync_api import Page

CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden)"

#: (the link's text on the errata page, the notebook it opens, the heading it shows)
LINKS = [
    (
        'lesson 07b, "The sizing arithmetic, worked"',
        "07b_measuring_tradeoffs.ipynb",
        "The-sizing-arithmetic,-worked",
    ),
    (
        'lesson 08, "Read positions, not high-water marks"',
        "08_failures_and_recovery.ipynb",
        "Read-positions,-not-high-water-marks",
    ),
    (
        'lesson 07a, "Aligned barriers: asynchronous barrier snapshots"',
        "07a_barrier_snapshots.ipynb",
        "Aligned-barriers:-asynchronous-barrier-snapshots",
    ),
]


@pytest.mark.parametrize(("text", "notebook", "heading"), LINKS)
def test_an_errata_link_opens_the_lesson_at_its_section(
    jupyter_server: LabServer, browser_page: Page, text: str, notebook: str, heading: str
) -> None:
    page = browser_page
    open_notebook(page, jupyter_server, "notebooks/errata.ipynb")
    page.locator(f"{CURRENT} .jp-RenderedMarkdown a", has_text=text).first.click()
    page.wait_for_function(
        "name => { const w = window.jupyterapp.shell.currentWidget;"
        " return Boolean(w && w.context && w.context.path.endsWith(name)); }",
        arg=notebook,
        timeout=60_000,
    )
    target = page.locator(
        f"{CURRENT} [data-jupyter-id='{heading}'], {CURRENT} [id='{heading}']"
    ).first
    expect(target).to_be_in_viewport(timeout=30_000)
    save_screenshot(page, f"errata-link-{notebook.split('_')[0]}")

"""A lesson opens in JupyterLab with the section after each try-it folded.

The section that discusses a try-it's answer carries JupyterLab's
``jp-MarkdownHeadingCollapsed`` metadata: the notebook opens with its heading and a
"cells hidden" button in its place, so the answer is not on screen until the learner
opens it. The server's root holds a copy of ``notebooks/`` (see ``conftest.py``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from labdriver import LabServer, open_notebook, save_screenshot
from playwright.sync_api import expect

if TYPE_CHECKING:
    from playwright.sync_api import Page

CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden)"
#: a sentence of lesson 02 that answers its first try-it, inside the folded section
ANSWER = "lies entirely after the cut"


def test_lesson_02_opens_with_the_answer_folded_and_a_click_unfolds_it(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    page = browser_page
    open_notebook(page, jupyter_server, "notebooks/02_chandy_lamport.ipynb")
    heading = page.locator(
        f"{CURRENT} .jp-RenderedMarkdown h2", has_text="Two cuts through one run"
    )
    heading.scroll_into_view_if_needed()
    expect(heading).to_be_visible()
    answer = page.locator(f"{CURRENT} .jp-RenderedMarkdown p", has_text=ANSWER)
    expect(answer).to_be_hidden()
    cell = page.locator(
        f"{CURRENT} .jp-MarkdownCell",
        has=page.locator("h2", has_text="Two cuts through one run"),
    )
    cell.get_by_role("button", name=re.compile("cells hidden")).click()
    expect(answer).to_be_visible()
    save_screenshot(page, "folded-answer-opened")

"""A try-it's feedback in JupyterLab: the answer folded under *Show answer*, even untrusted.

A wrong answer's feedback carries the right answer in an HTML ``<details>`` element.
JupyterLab sanitizes the HTML of an untrusted notebook (one opened from disk, whose
outputs it did not produce), so the test opens such a notebook too: the control must
survive, closed, and open on a click.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from labdriver import LabServer, open_notebook, run_all_cells, save_screenshot, write_notebook
from playwright.sync_api import expect

from snapshotlib.course import check_equal

if TYPE_CHECKING:
    from playwright.sync_api import Page

ANSWER = "False: the recorded state occurred at no moment of the run."
CHECK = (
    "from snapshotlib.course import check_equal\n"
    "check_equal('did it occur', True, False, hint='Look at each moment.',\n"
    f"            reveal={ANSWER!r})"
)
#: HTML the sanitizer of an untrusted notebook must change (it drops event handlers)
PROBE = "<span class='sanitizer-probe' onclick='void 0'>probe</span>"
OUTPUT = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output"


def _expect_folded_answer(page: Page) -> None:
    feedback = page.locator(f"{OUTPUT} .feedback").first
    expect(feedback).to_contain_text("did it occur: not quite.")
    expect(feedback).to_contain_text("Hint: Look at each moment.")
    summary = feedback.locator("details > summary")
    expect(summary).to_have_text("Show answer")
    answer = feedback.locator("details > div")
    expect(answer).to_be_hidden()  # folded until asked for
    summary.click()
    expect(answer).to_be_visible()
    expect(answer).to_have_text(ANSWER)


def test_a_wrong_answer_shows_a_hint_and_folds_the_answer(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    write_notebook(jupyter_server.root_dir / "feedback.ipynb", [CHECK])
    open_notebook(browser_page, jupyter_server, "feedback.ipynb")
    run_all_cells(browser_page)
    _expect_folded_answer(browser_page)
    save_screenshot(browser_page, "feedback-show-answer")


def test_the_answer_control_survives_an_untrusted_notebooks_sanitizer(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    fb = check_equal("did it occur", True, False, hint="Look at each moment.", reveal=ANSWER)
    path = write_notebook(jupyter_server.root_dir / "untrusted-feedback.ipynb", [CHECK])
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["cells"][0]["execution_count"] = 1
    nb["cells"][0]["outputs"] = [
        {
            "output_type": "execute_result",
            "execution_count": 1,
            "metadata": {},
            "data": {"text/plain": repr(fb), "text/html": fb._repr_html_() + PROBE},
        }
    ]
    path.write_text(json.dumps(nb), encoding="utf-8")  # no signature: untrusted
    open_notebook(browser_page, jupyter_server, "untrusted-feedback.ipynb")
    probe = browser_page.locator(f"{OUTPUT} .sanitizer-probe")
    expect(probe).to_have_text("probe")
    assert probe.get_attribute("onclick") is None  # the sanitizer did run
    _expect_folded_answer(browser_page)

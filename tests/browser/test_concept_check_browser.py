"""A concept check in JupyterLab, clicked as a learner clicks it: a wrong choice shows why
it is wrong, the right answer folded under *Show answer*; the right choice is confirmed;
*Next* shows the next question with nothing chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labdriver import LabServer, open_notebook, run_all_cells, save_screenshot, write_notebook
from playwright.sync_api import expect

from snapshotlib.course.concepts import for_lesson
from snapshotlib.widgets.concept_check import plain_label

if TYPE_CHECKING:
    from playwright.sync_api import Page

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def shown(markdown: str) -> str:
    """The start of a text as the page shows it (backticks, bold, italics are markup)."""
    return plain_label(markdown)[:30]


def test_choosing_an_answer_shows_its_feedback_and_next_moves_on(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    page = browser_page
    first, second = for_lesson("02")[:2]
    wrong = next(x for x in first.letters if x != first.right_letter)
    code = "from snapshotlib.course.concepts import concept_check\nconcept_check('02')"
    write_notebook(jupyter_server.root_dir / "concepts.ipynb", [code])
    open_notebook(page, jupyter_server, "concepts.ipynb")
    run_all_cells(page)
    check = page.locator(f"{PANEL} .concept-choices").first
    expect(check).to_be_visible()
    expect(page.locator(f"{PANEL} .concept-prompt").first).to_contain_text(shown(first.prompt))
    check.get_by_text(plain_label(first.labelled()[first.letters.index(wrong)]), exact=True).click()
    feedback = page.locator(f"{PANEL} .feedback").first
    said = first.choices[first.letters.index(wrong)].feedback
    expect(feedback).to_contain_text(shown(said))
    answer = feedback.locator("details > div")
    expect(answer).to_be_hidden()
    feedback.locator("details > summary").click()
    right_text = first.choices[first.letters.index(first.right_letter)].text
    expect(answer).to_contain_text(shown(right_text))
    save_screenshot(page, "concept-check-wrong")
    right = plain_label(first.labelled()[first.letters.index(first.right_letter)])
    check.get_by_text(right, exact=True).click()
    expect(feedback).to_contain_text("✓")
    page.locator(f"{PANEL} button", has_text="Next").first.click()
    expect(page.locator(f"{PANEL} .concept-prompt").first).to_contain_text(shown(second.prompt))
    expect(page.locator(f"{PANEL} .feedback")).to_have_count(0)
    save_screenshot(page, "concept-check-next")

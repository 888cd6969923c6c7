"""Every lesson, walked as a learner walks it: open it in JupyterLab, Run All, look; and
presented as a lecturer presents it: saved, then stepped through slide by slide in RISE.

After Run All every plotly figure on the page has drawn traces, no output is an error,
no widget shows its plain-text fallback, no picture shows as a Python object's repr,
and no dialog (JupyterLab's "Select Kernel", an error) appeared. A screenshot of each
lesson's first interactive figure is kept in ``test-artifacts/``.

Then the lesson is saved and presented (``presenting.py``): on a 1280×720 projector at
150 %, every slide's content lies on the screen, no slide shows an error, and every
widget comes up live in the slideshow. Each slide's screenshot is kept in
``test-artifacts/slides/LESSON/``.

The first-load race between a widget's display and its figure data shows on a busy
machine, so the Explorer lessons are also walked with every core kept busy, pressing
Run All the moment the notebook opens, as an impatient learner does. That is when
JupyterLab asked "Select Kernel" again and again; the course's lab settings
(``jupyter/overrides.json``) start the preferred kernel instead. A Run All pressed
before the kernel is connected may stop after the first cell (JupyterLab's own
behaviour, no error shown); the learner then presses it again, and so does the test.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import warnings
from typing import TYPE_CHECKING

import pytest
from labdriver import (
    ARTIFACTS_DIR,
    REPO_ROOT,
    LabServer,
    NoKernelError,
    open_notebook,
    require_modules,
    run_all_cells,
    save_screenshot,
    start_kernel,
    wait_kernel_idle,
)
from lessonwalk import DIALOG_WATCH_JS, busy_machine, read_page, scroll_through, wait_for_plots
from presenting import present

if TYPE_CHECKING:
    from playwright.sync_api import Page

LESSONS = sorted(p.name for p in (REPO_ROOT / "notebooks").glob("*.ipynb"))
EXERCISES = sorted(p.name for p in (REPO_ROOT / "exercises").glob("*.ipynb"))
#: lessons whose Explorer showed empty figures on a loaded machine
LOADED = ["00_start_here.ipynb", "02_chandy_lamport.ipynb"]
#: Run All of the slowest lesson (a Spark sweep) on a loaded 2-core machine, with margin
RUN_ALL_TIMEOUT_MS = 900_000


@pytest.fixture(autouse=True)
def _lab_packages() -> None:
    require_modules("ipywidgets", "plotly", "anywidget", "networkx")


def walk(
    page: Page,
    server: LabServer,
    path: str,
    impatient: bool = False,
    opened: bool = False,
    slides: bool = False,
) -> None:
    """Open ``path`` (unless ``opened``: it is the notebook on the page), Run All, and
    check what the page shows; screenshots on the way. With ``slides``, then save it and
    present it in RISE (:func:`check_slides`)."""
    if not opened:
        page.add_init_script(DIALOG_WATCH_JS)
        if impatient:
            page.goto(server.lab_url(path))
            page.locator(".jp-NotebookPanel .jp-Notebook").first.wait_for(state="visible")
            # stopped early, before the kernel was there: the learner presses it again
            with contextlib.suppress(AssertionError):
                run_all_cells(page, timeout=RUN_ALL_TIMEOUT_MS)
            try:
                wait_kernel_idle(page)
            except NoKernelError as e:
                # seen once on a loaded machine: the kernel started and was shut down a
                # second later, and the page said "No Kernel"; the learner starts it again,
                # and the test run's warnings say it happened
                warnings.warn(f"{path}: {e}; started it again", stacklevel=1)
                start_kernel(page)
                wait_kernel_idle(page)
        else:
            open_notebook(page, server, path)
    run_all_cells(page, timeout=RUN_ALL_TIMEOUT_MS)
    scroll_through(page)
    report = wait_for_plots(page)
    name = path.replace("/", "-").removesuffix(".ipynb")
    first = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .js-plotly-plot").first
    if report.plots:
        first.scroll_into_view_if_needed()
        first.screenshot(path=str(save_screenshot(page, name)))
    else:
        save_screenshot(page, name)
    assert not report.dialogs, f"{path}: a dialog appeared: {report.dialogs}"
    assert not report.problems, f"{path}: " + "; ".join(report.problems)
    assert not report.blank_plots, f"{path}: figures without traces: {report.blank_plots}"
    if slides:
        check_slides(page, server, path)


def check_slides(page: Page, server: LabServer, path: str) -> None:
    """Save the run lesson (RISE's page loads it from disk) and present it in a second
    page, as a lecturer opens the slideshow beside the lesson."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=60_000
    )
    deck = page.context.new_page()
    try:
        steps = present(deck, server, path)
    finally:
        deck.close()
    where = lambda s: f"slide {s.position} ({s.title or 'untitled'}, {s.screenshot})"  # noqa: E731
    broken = [f"{where(s)}: {p}" for s in steps for p in s.problems]
    assert not broken, f"{path} presented:\n" + "\n".join(broken)
    outside = [f"{where(s)}: the cell {o['cell']!r} reaches {o['reaches']}"
               for s in steps for o in s.outside]  # fmt: skip
    assert not outside, (
        f"{path} presented on 1280x720 at 150 %: content off the screen on "
        f"{len(outside)} of {len(steps)} steps:\n" + "\n".join(outside)
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_all_and_shows_everything(
    jupyter_server: LabServer, browser_page: Page, lesson: str
) -> None:
    walk(browser_page, jupyter_server, f"notebooks/{lesson}", slides=lesson[:2].isdigit())


@pytest.mark.parametrize("lesson", LOADED)
def test_lesson_on_a_busy_machine_run_at_once(
    jupyter_server: LabServer, browser_page: Page, lesson: str
) -> None:
    with busy_machine():
        walk(browser_page, jupyter_server, f"notebooks/{lesson}", impatient=True, slides=True)


_SHOW_ID_CELL_JS = """async () => {
    const notebook = window.jupyterapp.shell.currentWidget.content;
    const index = notebook.widgets.findIndex(
        (cell) => cell.model.sharedModel.getSource().startsWith('learner_id'));
    notebook.activeCellIndex = index;
    await notebook.scrollToItem(index);
}"""


def has_learner_id(exercise: str) -> bool:
    nb = json.loads((REPO_ROOT / "exercises" / exercise).read_text())
    return any("".join(c["source"]).startswith("learner_id") for c in nb["cells"])


@pytest.mark.parametrize("exercise", EXERCISES)
def test_an_exercise_runs_all_without_error(
    jupyter_server: LabServer, browser_page: Page, exercise: str
) -> None:
    # An exercise with runs of the learner's own stops, on the first Run All with the id
    # cell still blank, at the variant cell with one plain message (no traceback); once
    # the id is typed, all runs. The others run at once, with no answer written yet.
    from playwright.sync_api import expect

    page, path = browser_page, f"exercises/{exercise}"
    if not has_learner_id(exercise):
        walk(page, jupyter_server, path)
        return
    page.add_init_script(DIALOG_WATCH_JS)
    open_notebook(page, jupyter_server, path)
    with pytest.raises(AssertionError) as stopped:
        run_all_cells(page, timeout=RUN_ALL_TIMEOUT_MS)
    shown = str(stopped.value)
    assert "Your id is missing: enter your id in the cell above" in shown
    assert "Traceback" not in shown and "variants.py" not in shown, shown

    # go to the id cell as a reader scrolls to it (a windowed notebook renders only the
    # cells in view), then click into it and type
    page.evaluate(_SHOW_ID_CELL_JS)
    id_cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell.jp-mod-active")
    expect(id_cell).to_contain_text("learner_id")
    id_cell.locator(".cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type('learner_id = "ada"')
    walk(page, jupyter_server, path, opened=True)


_NO_TRUSTED_CODE_CELL_JS = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
    const code = [...Array(cells.length).keys()].map(i => cells.get(i))
        .filter(c => c.type === 'code');
    return code.length > 0 && code.every(c => !c.trusted);
}"""


def test_a_lesson_opened_as_cloned_shows_its_pictures(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    # a freshly cloned notebook is untrusted: its stored pictures must still show
    from playwright.sync_api import expect

    # a copy of its own: the lesson walks save the lessons they run into the same
    # server root, signed, so the shared copy may be a run and trusted one by now
    page = browser_page
    page.add_init_script(DIALOG_WATCH_JS)
    cloned = "notebooks/01_global_state_as_cloned.ipynb"
    shutil.copyfile(REPO_ROOT / "notebooks/01_global_state.ipynb", jupyter_server.root_dir / cloned)
    open_notebook(page, jupyter_server, cloned)
    assert page.evaluate(_NO_TRUSTED_CODE_CELL_JS), "the lesson should open untrusted, as cloned"
    scroll_through(page)
    images = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedImage img")
    expect(images.first).to_be_attached()
    assert images.count() >= 1
    assert all(img.evaluate("i => i.naturalWidth > 0") for img in images.all()), "a broken image"
    # before Run All a widget's place holds its stored fallback, which says to run the
    # notebook (whether one is on screen when the page is read depends on the scroll)
    problems = read_page(page).problems
    assert [p for p in problems if "shows its text fallback" not in p] == []
    assert all("run the notebook to use it" in p for p in problems)
    assert read_page(page).dialogs == []


def test_the_speaker_view_shows_the_presenters_notes(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    # the presenter presses T on the first slide: the speaker view opens in a window of
    # its own and shows the lesson's plan, the first slide's note
    from presenting import PROJECTOR, rise_url, settle

    page = browser_page
    page.set_viewport_size(PROJECTOR)
    page.goto(rise_url(jupyter_server, "notebooks/02_chandy_lamport.ipynb"))
    page.locator(".reveal.ready").wait_for(state="attached", timeout=60_000)
    settle(page)
    page.locator(".reveal .slides section.present .jp-Cell").first.click()
    page.keyboard.press("Escape")
    with page.context.expect_page(timeout=30_000) as opened:
        page.keyboard.press("t")
    speaker = opened.value
    try:
        speaker.wait_for_function(
            "() => document.body.innerText.includes('For the presenter')", timeout=60_000
        )
        assert "A 50-minute session" in speaker.evaluate("() => document.body.innerText")
        speaker.set_viewport_size({"width": 1280, "height": 800})
        speaker.screenshot(path=str(ARTIFACTS_DIR / "slides" / "speaker-view.png"))
        # the note as written, not its markdown source too (RISE hands the speaker view
        # the cell as JupyterLab drew it, hidden editor and all; the course's RISE
        # extension hides that editor there)
        notes = speaker.evaluate(
            "() => document.querySelector('.speaker-controls-notes').innerText"
        )
        assert notes.count("For the presenter") == 1, notes
        assert "*For the presenter*" not in notes and "* 0–5 min" not in notes, notes
    finally:
        speaker.close()

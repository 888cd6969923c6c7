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


#: the WCAG contrast of an element's text against what is behind it (its own and its
#: ancestors' backgrounds, blended down to the first opaque one)
_CONTRAST_JS = """(el) => {
    const parse = s => (s.match(/[\\d.]+/g) || []).map(Number);
    const over = (top, under) => {
        const a = top.length > 3 ? top[3] : 1;
        return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a));
    };
    const layers = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
        const c = parse(getComputedStyle(node).backgroundColor);
        if (c.length === 3 || (c.length > 3 && c[3] > 0)) layers.push(c);
        if (c.length === 3 || (c.length > 3 && c[3] === 1)) break;
    }
    let back = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) back = over(layers[i], back);
    const text = over(parse(getComputedStyle(el).color), back);
    const lum = c => {
        const [r, g, b] = c.map(v => {
            v /= 255;
            return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const [hi, lo] = [lum(text), lum(back)].sort((a, b) => b - a);
    return (hi + 0.05) / (lo + 0.05);
}"""
THEMES = ("JupyterLab Light", "JupyterLab Dark")
READABLE = (
    "from snapshotlib.course import check_equal\n"
    "from snapshotlib.course.checking import Checked\n"
    "from snapshotlib.widgets import Explorer\n"
    "from IPython.display import display\n"
    "display(check_equal('right', 1, 1))\n"
    "display(Checked('q1', 'refused', 'refused: q1 uses check_frontier (In [3], line 2)'))\n"
    "display(Checked('q2', 'form', 'format accepted: correctness is graded later'))\n"
    "from snapshotlib.course.tables import Table\n"
    "display(Table(['run', 'bytes'], [['a', 1]], notes=['bytes recorded, per run']))\n"
    "explorer = Explorer('worked-example.json')\n"
    "explorer._say('P1 cannot receive: nothing is on its way to it', error=True)\n"
    "explorer"
)


def test_feedback_checks_notes_and_status_lines_read_at_aa_contrast_in_light_and_dark(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    # WCAG AA for text: 4.5:1 against what is behind it, in JupyterLab's two themes
    import shutil
    from pathlib import Path

    import snapshotlib

    page = browser_page
    scenarios = Path(snapshotlib.__file__).parent / "examples" / "scenarios"
    shutil.copy(scenarios / "worked-example.json", jupyter_server.root_dir)
    write_notebook(jupyter_server.root_dir / "contrast.ipynb", [CHECK, READABLE])
    open_notebook(page, jupyter_server, "contrast.ipynb")
    run_all_cells(page)
    out = page.locator(OUTPUT)
    texts = {
        "wrong feedback": out.locator(".feedback").first,
        "its hint": out.locator(".feedback i").first,
        "Show answer": out.locator(".feedback details > summary").first,
        "the answer": out.locator(".feedback details > div").first,
        "right feedback": out.locator(".feedback").nth(1),
        "a refusal": out.locator("p", has_text="refused: q1").first,
        "a form check": out.locator("p", has_text="format accepted").first,
        "a table's note": out.locator(".lesson-table div", has_text="bytes recorded").first,
        "an explorer's refusal": page.locator(".explorer-status .widget-html-content span"),
    }
    texts["Show answer"].click()
    try:
        for theme in THEMES:
            page.evaluate(
                "t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
                theme,
            )
            page.wait_for_function(
                "t => document.body.dataset.jpThemeName === t", arg=theme, timeout=30_000
            )
            page.wait_for_timeout(500)  # the theme's style sheet applied
            low = {what: round(loc.evaluate(_CONTRAST_JS), 2) for what, loc in texts.items()}
            assert all(v >= 4.5 for v in low.values()), (theme, low)
            save_screenshot(page, f"contrast-{theme.split()[-1].lower()}")
    finally:
        page.evaluate(
            "() => window.jupyterapp.commands.execute('apputils:change-theme', "
            "{theme: 'JupyterLab Light'})"
        )

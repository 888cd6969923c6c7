"""Present a lesson as a lecturer does: RISE's slideshow on a projector, every slide in turn.

A lecturer runs the lesson in JupyterLab (Run All), saves it, and opens the slideshow
(RISE, *View > Open as Reveal Slideshow*). RISE's page loads the saved notebook
and joins the lesson's running kernel, so its widgets come up live. The projector is
1280×720 and the browser is zoomed to 150 %: the page is 853×480 CSS pixels, and that is
the viewport here. :func:`present` steps through the deck with the space bar (every
slide, sub-slide and fragment, as the presenter's clicker does), screenshots each step
into ``test-artifacts/slides/LESSON/`` and reports what would spoil it on the wall: content
outside the screen, an error output, a widget that did not come up.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from labdriver import ARTIFACTS_DIR, LOAD_TIMEOUT_MS, LabServer
from playwright.sync_api import TimeoutError as PlaywrightTimeout

#: 1280×720 at 150 % zoom, in CSS pixels
PROJECTOR = {"width": 853, "height": 480}
#: how long a widget may take to come up on a slide on a loaded machine
WIDGET_TIMEOUT_MS = 60_000
#: a deck longer than this many steps has lost its way (the lessons have under 150)
MAX_STEPS = 400

# Where the deck is: the present horizontal slide, the present vertical one in it, and
# the fragments shown. reveal.js marks them with classes; RISE keeps Reveal itself private.
_POSITION_JS = """() => {
    const slides = [...document.querySelectorAll('.reveal .slides > section')];
    const h = slides.findIndex(s => s.classList.contains('present'));
    const stack = slides[h];
    const inner = stack ? [...stack.querySelectorAll(':scope > section')] : [];
    const v = inner.findIndex(s => s.classList.contains('present'));
    const shown = document.querySelectorAll('.reveal .fragment.visible').length;
    return `${h}.${v}.${shown}`;
}"""

# What the present slide shows and where: everything visible on it must lie inside the
# window. Hidden fragments and speaker notes do not count; what is inside a scrolling box
# (a wide table the widget scrolls itself) counts by the box.
_SLIDE_JS = r"""() => {
    const slides = [...document.querySelectorAll('.reveal .slides section.present')];
    const slide = slides[slides.length - 1];
    if (!slide) return null;
    const W = window.innerWidth, H = window.innerHeight;
    const shown = el => {
        for (let e = el; e && e !== slide; e = e.parentElement) {
            const cs = getComputedStyle(e);
            const gone = cs.display === 'none' || cs.visibility === 'hidden';
            if (gone || cs.opacity === '0') return false;
            if (e.matches('aside.notes, .fragment:not(.visible)')) return false;
        }
        return true;
    };
    const clipped = el => {
        for (let e = el.parentElement; e && e !== slide; e = e.parentElement) {
            const cs = getComputedStyle(e);
            if (/(auto|scroll|hidden)/.test(cs.overflow + cs.overflowX + cs.overflowY)) return true;
        }
        return false;
    };
    const outside = [];
    for (const el of slide.querySelectorAll('.jp-Cell, .jp-Cell *')) {
        if (el.children.length && !el.matches('img, svg, canvas, .js-plotly-plot, table')) continue;
        const cell = el.closest('.jp-Cell');
        if (!shown(el) || clipped(el)) continue;
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) continue;
        if (r.bottom > H + 1 || r.right > W + 1 || r.top < -1 || r.left < -1) {
            // the cell by its first line of code that is not a comment, or of text
            const code = cell && cell.querySelector('.cm-content');
            const input = code || (cell && cell.querySelector('.jp-RenderedMarkdown'));
            const lines = ((input || cell || el).innerText || '').split('\n')
                .map(l => l.trim()).filter(l => l && !(code && l.startsWith('#')));
            const text = lines[0] || '';
            outside.push({cell: text.slice(0, 70),
                          reaches: [Math.round(r.right), Math.round(r.bottom)]});
        }
    }
    const problems = [];
    for (const out of slide.querySelectorAll('.jp-OutputArea-output')) {
        if (!shown(out)) continue;
        const text = out.innerText || '';
        // an error's traceback (a warning on stderr, such as Spark's, is not one)
        if (out.matches('[data-mime-type="application/vnd.jupyter.stderr"]') &&
            /Traceback|\w+Error\b/.test(text)) {
            problems.push('an error output: ' + text.slice(0, 160));
        }
        if (text.includes('an interactive widget; run the notebook to use it') ||
            text.includes('Error displaying widget') || text.includes('Loading widget')) {
            problems.push('a widget did not come up: ' + text.slice(0, 120));
        }
    }
    const title = (slide.querySelector('h1, h2, h3') || {}).innerText || '';
    const cells = [...new Map(outside.map(o => [o.cell, o])).values()];
    return {title: title.slice(0, 80), outside: cells, problems};
}"""


@dataclass
class Step:
    """One press of the clicker: where the deck was and what was wrong there."""

    position: str
    title: str
    screenshot: str
    #: the cells that reach off the screen: their first line, and how far they reach
    outside: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def rise_url(server: LabServer, path: str) -> str:
    """The address of RISE's slideshow of ``path`` (what Alt-R opens)."""
    return f"{server.url}/rise/{path}?token={server.token}"


def present(page: Any, server: LabServer, path: str) -> list[Step]:
    """Open the saved ``path`` in RISE on a projector-sized page and step through it all."""
    page.set_viewport_size(PROJECTOR)
    page.goto(rise_url(server, path), timeout=LOAD_TIMEOUT_MS)
    page.locator(".reveal .slides section").first.wait_for(state="attached",
                                                           timeout=LOAD_TIMEOUT_MS)  # fmt: skip
    page.locator(".reveal.ready").wait_for(state="attached", timeout=LOAD_TIMEOUT_MS)
    name = path.rsplit("/", 1)[-1].removesuffix(".ipynb")
    folder = ARTIFACTS_DIR / "slides" / name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    steps: list[Step] = []
    position = page.evaluate(_POSITION_JS)
    while len(steps) < MAX_STEPS:
        settle(page)
        shot = folder / f"{len(steps):03d}.png"
        page.screenshot(path=str(shot))
        seen = page.evaluate(_SLIDE_JS)
        seen = seen or {"title": "", "outside": [], "problems": []}
        steps.append(Step(position, seen["title"], str(shot), seen["outside"], seen["problems"]))
        page.keyboard.press("Space")
        after = page.evaluate(_POSITION_JS)
        if after == position:  # the last step: the clicker does nothing more
            break
        position = after
    return steps


def settle(page: Any) -> None:
    """Wait until the slide has stopped moving and what it shows has been drawn, as a
    presenter waits a moment: reveal's transition over, and every widget on it made (RISE
    makes a widget's view once its model has come from the kernel; until then it says
    "Loading widget..."). A widget still loading after the wait is reported by the slide's
    check, not here."""
    page.wait_for_function(
        """() => {
            const s = document.querySelector('.reveal .slides > section.present');
            if (!s) return false;
            const moving = getComputedStyle(s).transform;
            return moving === 'none' || moving === 'matrix(1, 0, 0, 1, 0, 0)';
        }""",
        timeout=LOAD_TIMEOUT_MS,
    )
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(
            """() => ![...document.querySelectorAll(
                    '.reveal .slides section.present .jp-OutputArea-output')]
                .some(o => (o.innerText || '').includes('Loading widget'))""",
            timeout=WIDGET_TIMEOUT_MS,
        )
    page.wait_for_timeout(150)

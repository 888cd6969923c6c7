"""The static decks (``snapshotlib course slides``), opened as a lecturer opens one with no
network: every slide stepped through in Chromium on a 1280×720 projector at 150 %.

Every request that leaves the file is blocked and counted (there must be none), the
figures are drawn, nothing raises, and each slide's content lies inside the slide (but
for the cells the lesson walk lists as taller than the screen on their own).
Screenshots: ``test-artifacts/decks/LESSON/NNN.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from labdriver import ARTIFACTS_DIR, REPO_ROOT, require_modules
from presenting import PROJECTOR

LESSONS = sorted(p.stem for p in (REPO_ROOT / "notebooks").glob("[0-9][0-9]*.ipynb"))

# Everything shown on the present slide must lie inside the slide area (reveal.js scales
# the 853×480 slide to the window; the rectangles are compared after that scaling).
_SLIDE_JS = r"""() => {
    const area = document.querySelector('.reveal .slides').getBoundingClientRect();
    const scale = Reveal.getScale();
    const slide = Reveal.getCurrentSlide();
    const outside = [];
    const clipped = el => {  // inside a box that scrolls (a long line of code)
        for (let e = el.parentElement; e && e !== slide; e = e.parentElement) {
            if (/(auto|scroll)/.test(getComputedStyle(e).overflowX)) return true;
        }
        return false;
    };
    for (const el of slide.querySelectorAll('.jp-Cell *')) {
        if (el.children.length && !el.matches('img, svg, .js-plotly-plot, table')) continue;
        if (el.closest('.fragment:not(.visible), aside.notes') || clipped(el)) continue;
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) continue;
        if (r.bottom > area.top + 480 * scale + 1 || r.right > area.left + 853 * scale + 1) {
            // the cell by its first line of code that is not a comment, or of text
            const cell = el.closest('.jp-Cell');
            const code = cell && cell.querySelector('.jp-InputArea pre');
            const input = code || (cell && cell.querySelector('.jp-RenderedMarkdown')) || cell;
            const lines = ((input && input.innerText) || '').split('\n')
                .map(l => l.trim()).filter(l => l && !(code && l.startsWith('#')));
            outside.push((lines[0] || '').slice(0, 70));
        }
    }
    const plots = [...slide.querySelectorAll('.js-plotly-plot')];
    const blank = plots.filter(p => !p.querySelector('.trace')).length;
    return {outside: [...new Set(outside)], blank, at: Reveal.getIndices()};
}"""


@pytest.fixture(scope="module")
def decks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_modules("nbconvert", "plotly")
    from snapshotlib.publish.decks import export_decks

    out = tmp_path_factory.mktemp("decks")
    export_decks(out)
    return out


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_deck_presents_offline_and_every_slide_fits(
    decks: Path, browser_page: Any, lesson: str
) -> None:
    page = browser_page
    blocked: list[str] = []

    def only_the_file(route: Any) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:", "about:")):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.route("**/*", only_the_file)
    page.set_viewport_size(PROJECTOR)
    page.goto((decks / f"{lesson}.html").as_uri())
    page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=60_000)
    folder = ARTIFACTS_DIR / "decks" / lesson
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    wrong: list[str] = []
    total = page.evaluate("() => Reveal.getTotalSlides()")
    for step in range(4 * total + 10):
        page.wait_for_timeout(60)
        shot = folder / f"{step:03d}.png"
        page.screenshot(path=str(shot))
        seen = page.evaluate(_SLIDE_JS)
        if seen["outside"]:
            wrong.append(f"slide {seen['at']} ({shot.name}): off the slide: {seen['outside']}")
        if seen["blank"]:
            wrong.append(f"slide {seen['at']} ({shot.name}): {seen['blank']} figure(s) not drawn")
        if page.evaluate("() => Reveal.isLastSlide() && !Reveal.availableFragments().next"):
            break
        page.evaluate("() => Reveal.next()")
    else:
        pytest.fail(f"{lesson}: the deck never reached its last slide")
    assert not blocked, f"{lesson}: the deck asked the network for {blocked}"
    assert not errors, f"{lesson}: the deck raised {errors}"
    assert not wrong, f"{lesson}'s deck on 1280x720 at 150 %:\n" + "\n".join(wrong)

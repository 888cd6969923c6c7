"""The lessons as slides: the layout rule every lesson carries, and the static decks.

What a presenter sees in a browser (RISE's live slides, the static decks offline, what
fits the projector) is tested in ``tests/browser/test_presenting.py``.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import tool

from snapshotlib.publish.release import ReleaseError
from snapshotlib.publish.slides import (
    NOTES_TAG,
    RISE_SETTINGS,
    SLIDE_BUDGET,
    is_answer_cell,
    is_heading,
    layout,
    source,
    stored_layout,
)

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*.ipynb"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def md(text: str, **meta: object) -> dict:
    return {"cell_type": "markdown", "source": text, "metadata": dict(meta)}


def code(text: str, outputs: list | None = None) -> dict:
    return {"cell_type": "code", "source": text, "metadata": {}, "outputs": outputs or [],
            "execution_count": None}  # fmt: skip


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_lesson_stores_the_layout_the_rule_gives(path: Path) -> None:
    nb = load(path)
    assert stored_layout(nb) == layout(nb["cells"]), (
        f"{path.name}: the stored slide layout is stale; run python tools/lesson_slides.py --write"
    )
    assert nb["metadata"].get("rise") == RISE_SETTINGS


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_starts_a_slide_at_its_top_and_at_every_heading(path: Path) -> None:
    nb = load(path)
    kinds = stored_layout(nb)
    assert kinds[0] == "slide"
    for cell, kind in zip(nb["cells"], kinds, strict=True):
        if is_heading(cell):
            assert kind == "slide", f"{path.name}: {source(cell).splitlines()[0]!r}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_try_it_asks_the_room_before_the_engine_answers(path: Path) -> None:
    # a try-it's answer cell sits on its question's slide (the prediction); the check that
    # runs the answer through the engine opens the next slide (the reveal). The same holds
    # for a question asked in a lesson's running text.
    nb = load(path)
    cells, kinds = nb["cells"], stored_layout(nb)
    headings = [i for i, c in enumerate(cells) if is_heading(c)] + [len(cells)]
    for start, end in itertools.pairwise(headings):
        if "Try it" in source(cells[start]).splitlines()[0]:
            assert any(is_answer_cell(c) for c in cells[start:end]), (
                f"{path.name}: {source(cells[start]).splitlines()[0]!r} has no answer cell"
            )
    for i, cell in enumerate(cells):
        if is_answer_cell(cell):
            assert kinds[i] == "-", f"{path.name}: answer cell {i} is not on its question's slide"
            assert cells[i + 1]["cell_type"] == "code" and kinds[i + 1] == "slide", (
                f"{path.name}: the check after answer cell {i} does not open a slide"
            )


def test_the_lessons_have_try_its_with_answer_cells() -> None:
    # the try-it test above looks at every answer cell: there must be some to look at
    assert sum(is_answer_cell(c) for p in LESSONS for c in load(p)["cells"]) >= 25


def test_a_presenters_note_goes_to_the_speaker_view() -> None:
    cells = [md("# Title"), md("Ask the room first.", tags=[NOTES_TAG]), md("Text.")]
    assert layout(cells) == ["slide", "notes", "-"]


def test_a_cell_that_would_not_fit_beside_the_last_starts_a_sub_slide() -> None:
    long_text = "\n\n".join(["A paragraph of words. " * 8] * 4)
    cells = [md("# Title"), md(long_text), md(long_text), code("x = 1")]
    kinds = layout(cells)
    assert kinds[:3] == ["slide", "-", "subslide"]
    assert kinds[3] == "-"


def test_a_widget_gets_a_slide_to_itself() -> None:
    fallback = "[Explorer: an interactive widget; run the notebook to use it]"
    view = {"application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": fallback}
    widget = {"output_type": "display_data", "metadata": {}, "data": view}
    cells = [md("# Title\n\nSome words."), code("Explorer('x')", [widget])]
    assert layout(cells) == ["slide", "subslide"]
    assert SLIDE_BUDGET < 480


def test_an_answer_cell_is_one_blank_assignment() -> None:
    assert is_answer_cell(code("p1_p2_state = None  # message labels in order"))
    assert is_answer_cell(code("restore_point = ...  # your answer"))
    assert not is_answer_cell(code("x = None\nprint(x)"))
    assert not is_answer_cell(md("x = None"))


# ----------------------------------------------------------------------------- decks


@pytest.fixture(scope="module")
def decks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nbconvert")
    from snapshotlib.publish.decks import export_decks

    out = tmp_path_factory.mktemp("decks")
    export_decks(out, ["02", "06b"])
    return out


def test_a_deck_is_one_file_per_lesson_that_fetches_nothing(decks: Path) -> None:
    assert sorted(p.name for p in decks.iterdir()) == [
        "02_chandy_lamport.html",
        "06b_lattice_of_cuts.html",
    ]
    for deck in decks.iterdir():
        page = deck.read_text(encoding="utf-8")
        # no element loads anything: no src or stylesheet href, no CSS import
        assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=['\"](https?:)?//", page)
        assert not re.search(r"<link[^>]*href=['\"](https?:)?//", page)
        assert "@import url(http" not in page
        assert "Reveal.initialize(" in page and "RevealNotes" in page


def test_a_deck_draws_its_figures_with_plotly_inlined_once(tmp_path: Path) -> None:
    pytest.importorskip("nbconvert")
    from snapshotlib.publish.decks import export_deck

    figure = {"data": [{"type": "scatter", "x": [1, 2], "y": [3, 4]}], "layout": {}}
    data = {"application/vnd.plotly.v1+json": figure, "text/plain": "Figure"}
    plotly = {"output_type": "display_data", "metadata": {}, "data": data}
    cells = [md("# A deck"), code("fig", [plotly]), md("## Two"), code("fig", [plotly])]
    for cell, kind in zip(cells, layout(cells), strict=True):
        cell["metadata"]["slideshow"] = {"slide_type": kind}
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    (tmp_path / "deck.ipynb").write_text(json.dumps(nb))
    page = export_deck(tmp_path / "deck.ipynb", tmp_path / "deck.html").read_text("utf-8")
    assert page.count("Plotly.newPlot(") == 2
    assert page.count("plotly.js v") == 1  # plotly.js's own banner: inlined once
    assert '"x": [1, 2]' in page


def test_a_widget_in_a_deck_says_where_it_runs(decks: Path) -> None:
    page = (decks / "02_chandy_lamport.html").read_text(encoding="utf-8")
    assert "<b>Explorer</b>: live in the lesson" in page
    assert "Plotly.newPlot(" not in page and "plotly.js v" not in page  # no figure, no plotly


def test_a_reveal_slide_in_a_deck_says_where_the_check_runs(decks: Path) -> None:
    # the stored check ran on no answer: a deck without a kernel must not show that as
    # if it were the room's answer
    for deck in decks.iterdir():
        page = deck.read_text(encoding="utf-8")
        assert "No answer yet" not in page and "no answer yet" not in page, deck.name
    page = (decks / "02_chandy_lamport.html").read_text(encoding="utf-8")
    nb = load(ROOT / "notebooks" / "02_chandy_lamport.ipynb")
    checks = sum(is_answer_cell(c) for c in nb["cells"])
    assert checks >= 1
    assert page.count("<b>The check</b> runs the room's answer") == checks


def test_a_deck_keeps_the_presenters_notes_for_its_speaker_view(decks: Path) -> None:
    page = (decks / "02_chandy_lamport.html").read_text(encoding="utf-8")
    notes = re.findall(r'<aside class="notes">(.*?)</aside>', page, re.S)
    assert any("For the presenter" in n and "50-minute session" in n for n in notes)
    assert any("let the room answer" in n for n in notes)


def test_a_deck_keeps_the_lessons_slides(decks: Path) -> None:
    page = (decks / "02_chandy_lamport.html").read_text(encoding="utf-8")
    nb = load(ROOT / "notebooks" / "02_chandy_lamport.ipynb")
    slides = stored_layout(nb).count("slide")
    assert page.count("<section") >= slides
    assert "Try it: a channel" in page


def test_an_unknown_lesson_is_refused_naming_the_lessons(tmp_path: Path) -> None:
    pytest.importorskip("nbconvert")
    from snapshotlib.publish.decks import export_decks

    with pytest.raises(ReleaseError, match=r"no lesson 99: the lessons are 00, 01"):
        export_decks(tmp_path / "out", ["99"])
    assert not (tmp_path / "out").exists()


def test_course_slides_writes_the_decks_and_says_where(tmp_path: Path) -> None:
    pytest.importorskip("nbconvert")
    run = subprocess.run(
        [sys.executable, "-m", "snapshotlib", "course", "slides", str(tmp_path / "d"),
         "--lesson", "05b"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "the lessons' decks are in" in run.stdout and "(1 files)" in run.stdout
    assert (tmp_path / "d" / "05b_without_fifo.html").is_file()
    bad = subprocess.run(
        [sys.executable, "-m", "snapshotlib", "course", "slides", str(tmp_path / "e"),
         "--lesson", "12"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert bad.returncode == 2 and "no lesson 12" in bad.stderr and "Traceback" not in bad.stderr


# ----------------------------------------------------------------------------- notes


def is_widget(cell: dict) -> bool:
    return any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
               for o in cell.get("outputs", []))  # fmt: skip


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_the_first_slide_carries_the_lessons_plan_for_the_presenter(path: Path) -> None:
    cells = load(path)["cells"]
    plans = tool("lecture_plans")
    first_heading = next(i for i, c in enumerate(cells) if i and is_heading(c))
    notes = [c for c in cells[:first_heading] if NOTES_TAG in c["metadata"].get("tags", [])]
    assert len(notes) == 1, f"{path.name}: the first slide has {len(notes)} notes"
    assert source(notes[0]) == plans.title_note(cells), (
        f"{path.name}: the plan note is stale; run python tools/lesson_slides.py --write"
    )
    assert "50-minute session" in source(notes[0]) and "Close" in source(notes[0])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_prediction_and_every_widget_slide_has_a_note_for_the_presenter(
    path: Path,
) -> None:
    cells = load(path)["cells"]
    for i, cell in enumerate(cells):
        if is_answer_cell(cell):
            note = cells[i - 1]
            assert NOTES_TAG in note["metadata"].get("tags", []), f"{path.name}: cell {i}"
            assert "let the room answer" in source(note)
        if is_widget(cell):
            note = cells[i + 1]
            assert NOTES_TAG in note["metadata"].get("tags", []), f"{path.name}: cell {i}"
            # what to click, or what to ask the room
            assert re.search(
                r"\b([Pp]ress|[Cc]lick|[Aa]sk|[Uu]se|[Rr]eplay|[Bb]uild)\b", source(note)
            )


def test_a_presenters_note_takes_none_of_the_learners_time(tmp_path: Path) -> None:
    times = tool("lesson_times")
    lesson = ROOT / "notebooks" / "02_chandy_lamport.ipynb"
    nb = load(lesson)
    without = {**nb, "cells": [c for c in nb["cells"] if NOTES_TAG not in
                               c["metadata"].get("tags", [])]}  # fmt: skip
    (tmp_path / "with.ipynb").write_text(json.dumps(nb))
    (tmp_path / "without.ipynb").write_text(json.dumps(without))
    assert times.measure(tmp_path / "with.ipynb") == times.measure(tmp_path / "without.ipynb")
    assert len(without["cells"]) < len(nb["cells"])


def test_the_guide_gives_every_lesson_its_50_minute_plan() -> None:
    plans = tool("lecture_plans")
    guide = (ROOT / "docs" / "instructor-guide.md").read_text(encoding="utf-8")
    assert plans.guide_section() in guide, "run python tools/lecture_plans.py --write"
    for path in LESSONS:
        rows = plans.plan(load(path)["cells"])
        assert rows[0][0] == 0 and rows[-1][1] <= 50, path.name
        assert all(a <= b for a, b, _ in rows), path.name
        assert all(rows[k][1] == rows[k + 1][0] for k in range(len(rows) - 1)), path.name
        assert f"`slides/{path.stem}.html`" in guide

"""Every link between course pages leads somewhere: lessons, exercises, errata, glossary.

Lesson 00 is the course's landing page; a link to a lesson or exercise that was renamed
or split would open JupyterLab's "file not found" for a newcomer on their first click.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "exercises").glob("*.ipynb"))
# [text](target) where target is a relative path, not a web address or an anchor alone
LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s]+)\)")


def links(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [
        m.group(1)
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for m in LINK.finditer(cell.source)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_relative_link_names_a_file_of_the_course(page: Path) -> None:
    broken = [t for t in links(page) if not (page.parent / t.split("#")[0]).exists()]
    assert broken == [], f"{page.name} links to missing files: {broken}"


def test_the_landing_page_links_every_lesson_and_every_exercise() -> None:
    start = ROOT / "notebooks" / "00_start_here.ipynb"
    targets = {(start.parent / t.split("#")[0]).resolve() for t in links(start)}
    lessons = {p.resolve() for p in (ROOT / "notebooks").glob("[0-9][0-9]*.ipynb")} - {
        start.resolve()
    }
    exercises = {p.resolve() for p in (ROOT / "exercises").glob("*.ipynb")}
    assert lessons - targets == set(), "lessons lesson 00 does not link"
    assert exercises - targets == set(), "exercises lesson 00 does not link"

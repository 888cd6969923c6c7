"""What the stored lessons show before anyone runs them (a fresh clone, a download).

A freshly cloned or downloaded notebook is untrusted: JupyterLab then shows no SVG
(it could carry script) and falls back to the output's plain text, which for an SVG
made by IPython reads ``<IPython.core.display.SVG object>``. Stored pictures are PNG.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: the size above which a lesson file is suspect (stored widget state, huge outputs)
MAX_BYTES = 500_000


def outputs(path: Path) -> list[dict[str, object]]:
    nb = nbformat.read(path, as_version=4)
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name)
def test_stored_pictures_are_ones_an_untrusted_notebook_shows(lesson: Path) -> None:
    for out in outputs(lesson):
        data = out.get("data", {})
        assert isinstance(data, dict)
        assert "image/svg+xml" not in data, f"{lesson.name}: an SVG picture is stored"
        text = str(data.get("text/plain", ""))
        assert not (text.startswith("<IPython.core.display.") and len(data) == 1), (
            f"{lesson.name}: an output that shows only an object's repr: {text}"
        )


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name)
def test_a_lesson_file_stays_small(lesson: Path) -> None:
    assert lesson.stat().st_size <= MAX_BYTES, f"{lesson.name} is {lesson.stat().st_size} bytes"

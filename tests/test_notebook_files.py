"""The lessons as files: all there, built the same way, stored small.

That they run top to bottom and that their key results still hold is checked by nbval,
which collects ``notebooks/*.ipynb`` (see ``[tool.pytest.ini_options]``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = [
    "00_start_here",
    "01_global_state",
    "02_chandy_lamport",
    "03_worked_example",
    "04_dijkstra_proof",
    "05_fifo_matters",
    "06_stable_predicates",
    "07_barrier_snapshots",
    "08_failures_and_recovery",
    "09_cost_at_scale",
]
MAX_BYTES = 400_000
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def load(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))


def sources(nb: dict, kind: str) -> list[str]:  # type: ignore[type-arg]
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind]


def test_every_lesson_is_there_and_nothing_else_is_numbered() -> None:
    found = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    assert found == LESSONS


@pytest.mark.parametrize("name", LESSONS)
def test_a_lesson_is_stored_small_and_without_widget_state(name: str) -> None:
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = load(name)
    assert path.stat().st_size < MAX_BYTES
    assert "widgets" not in nb["metadata"]
    assert WIDGET_STATE not in path.read_text(encoding="utf-8")
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("name", LESSONS)
def test_a_lesson_has_a_numbered_title_a_try_it_and_a_summary(name: str) -> None:
    markdown = sources(load(name), "markdown")
    assert markdown[0].startswith(f"# {name[:2]} · ")
    headings = [line for text in markdown for line in text.splitlines() if line.startswith("## ")]
    assert any(h.startswith("## Try it") for h in headings) or name == "00_start_here"
    assert "## Summary" in headings


@pytest.mark.parametrize("name", LESSONS)
def test_a_lesson_was_run_top_to_bottom_before_it_was_stored(name: str) -> None:
    code = [c for c in load(name)["cells"] if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1))


@pytest.mark.parametrize("name", LESSONS[1:])
def test_a_lesson_checks_at_least_two_key_results_against_stored_output(name: str) -> None:
    checked = [
        c
        for c in load(name)["cells"]
        if c["cell_type"] == "code" and "".join(c["source"]).startswith("# NBVAL_CHECK_OUTPUT")
    ]
    assert len(checked) >= 2
    assert all(c["outputs"] for c in checked)

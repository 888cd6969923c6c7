"""A widget a lesson shows is the learner's: no later cell moves it.

After Run All a learner follows the text's instructions ("press Start snapshot", "pick
an operator and press Crash") on the widgets the lesson displayed. A later cell that
steps, runs or crashes such a widget (to print a result, to draw a static picture)
leaves it somewhere the instruction does not expect; those cells work on a copy.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: what moves an Explorer, DataflowExplorer, CutChecker or CommutationStepper
DRIVES = r"(step|step_once|run|crash|restore|take|go|reset|undo|redo|button|trigger|set_\w+)"
NAME = re.compile(r"[A-Za-z_]\w*")


def displayed_then_driven(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    shown: dict[str, int] = {}
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for name, at in shown.items():
            if re.search(rf"\b{name}\.{DRIVES}\(", cell.source):
                found.append(f"cell {i} drives {name!r}, shown in cell {at}")
        lines = [
            s for s in cell.source.splitlines() if s.strip() and not s.lstrip().startswith("#")
        ]
        if lines and NAME.fullmatch(lines[-1].strip()):
            shown[lines[-1].strip()] = i  # the cell's value is displayed: a widget, often
    return found


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name)
def test_no_cell_moves_a_widget_the_lesson_has_shown(lesson: Path) -> None:
    assert displayed_then_driven(lesson) == []


def test_the_check_finds_a_cell_that_steps_a_shown_explorer(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("ex = Explorer('x.json')\nex"),
        nbformat.v4.new_code_cell("while ex.step_once():\n    pass"),
    ]
    path = tmp_path / "demo.ipynb"
    nbformat.write(nb, path)
    assert displayed_then_driven(path) == ["cell 1 drives 'ex', shown in cell 0"]

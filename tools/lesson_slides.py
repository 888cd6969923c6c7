"""Store the slide layout of every lesson: the ``slideshow`` metadata RISE and the static
decks read, from the one rule of ``snapshotlib/publish/slides.py``.

    python tools/lesson_slides.py           # say which lessons' stored layout is stale
    python tools/lesson_slides.py --write   # store the rule's layout in every lesson

It first splits a markdown cell too tall for one slide into several,
between paragraphs (a table between rows, its header repeated), so that each part
fits the projector; the text stays the same and in the same place. Then it writes the
generated presenter's notes (``write_notes``) and the layout.

``tests/test_slides.py`` fails when a lesson's stored layout is not the rule's; run
this after changing a lesson's cells.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from snapshotlib.publish.slides import (  # noqa: E402
    NOTES_TAG,
    SLIDE_BUDGET,
    apply_layout,
    estimated_height,
    is_answer_cell,
    is_heading,
    is_notes,
    source,
)

sys.path.insert(0, str(ROOT / "tools"))
import lecture_plans  # noqa: E402

#: the generated presenter's notes: the lesson's plan on its first slide, and at each
#: question the room answers, how to run the prediction
TITLE_NOTE_ID = "presenter-title"


def prediction_note(question: str | None, part: int = 1) -> str:
    """The note on a question's prediction slide (``part``: which answer cell of the
    question it is, for a try-it asked in parts)."""
    ask = f' "{question}"' if question else " the question on this slide"
    if part > 1:
        ask = f" part {part} of{ask}"
    return (
        f"**In class** (about 5 minutes): let the room answer{ask} first: a minute to "
        "think, then a show of hands or two answers. Type the room's answer into the cell "
        "below; on the next slide run the check (Shift-Enter): the engine says who was right."
    )


#: the note after a lesson's concept check (its widget): how to run it with a room
CONCEPT_NOTE = (
    "**In class** (about a minute a question): show each question and let the room vote "
    "(hands or cards) before you click anything; then click the choice the room chose: "
    "its feedback says why it is right or not. Open *Show answer* only after the room "
    "has read it; *Next* moves on."
)


def is_concept_check(cell: dict) -> bool:
    """Whether ``cell`` shows a lesson's concept check."""
    return cell["cell_type"] == "code" and "concept_check(" in source(cell)


def _note(cell_id: str, text: str) -> dict:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {"tags": [NOTES_TAG]},
            "source": text.splitlines(keepends=True)}  # fmt: skip


def _generated_ids(cells: list[dict]) -> set[str]:
    """The ids the generated notes have: the plan's, and one per answer cell."""
    return (
        {TITLE_NOTE_ID}
        | {f"presenter-{c['id']}" for c in cells if is_answer_cell(c)}
        | {f"presenter-after-{c['id']}" for c in cells if is_concept_check(c)}
    )


def strip_notes(notebook: dict) -> None:
    """Take the generated notes out (``write_notes`` puts them back where they belong
    now); the notes written by hand stay."""
    generated = _generated_ids(notebook["cells"])
    kept = [c for c in notebook["cells"] if not (is_notes(c) and c.get("id") in generated)]
    notebook["cells"] = kept


def write_notes(notebook: dict) -> None:
    """Put the generated notes in: the lesson's plan right after its first cell (the first
    slide's note), a prediction note before each answer cell."""
    cells = notebook["cells"]
    out = [cells[0], _note(TITLE_NOTE_ID, lecture_plans.title_note(cells))]
    question: str | None = None
    part = 0
    for cell in cells[1:]:
        if is_heading(cell):
            title = source(cell).splitlines()[0].lstrip("# ").strip()
            question = title.removeprefix("Try it: ") if title.startswith("Try it: ") else None
            question = question[0].upper() + question[1:] if question else None
            part = 0
        if is_answer_cell(cell):
            part += 1
            out.append(_note(f"presenter-{cell['id']}", prediction_note(question, part)))
        out.append(cell)
        if is_concept_check(cell):
            out.append(_note(f"presenter-after-{cell['id']}", CONCEPT_NOTE))
    notebook["cells"] = out


def _blocks(text: str) -> list[str]:
    """The markdown's paragraphs, lists and tables, a table's rows each its own block
    (headed by the table's header when split off)."""
    blocks: list[str] = []
    for part in text.strip("\n").split("\n\n"):
        lines = part.splitlines()
        if len(lines) > 3 and all(line.startswith("|") for line in lines):
            header, rows = lines[:2], lines[2:]
            blocks.append("\n".join(header + rows[:1]))
            blocks.extend("\n".join([*header, row]) for row in rows[1:])
        else:
            blocks.append(part)
    return blocks


def _join(blocks: list[str]) -> str:
    """Blocks back into markdown: a table's rows split off rejoin their table."""
    out: list[str] = []
    for block in blocks:
        lines = block.splitlines()
        if (
            out
            and len(lines) == 3
            and lines[0].startswith("|")
            and out[-1].startswith("\n".join(lines[:2]))
        ):
            out[-1] += "\n" + lines[2]
        else:
            out.append(block)
    return "\n\n".join(out)


def _merge_parts(cells: list[dict]) -> list[dict]:
    """Undo earlier splits: a cell and the parts split off it (ids ``ID-2``, ``ID-3``...
    right after it) become one cell again, so that a split follows the current rule."""
    merged: list[dict] = []
    for cell in cells:
        base = merged[-1] if merged else None
        family = base is not None and re.fullmatch(
            re.escape(str(base.get("id"))) + r"(-\d+)+", str(cell.get("id"))
        )
        if base is not None and family and cell["cell_type"] == base["cell_type"] == "markdown":
            text = _join(_blocks(source(base)) + _blocks(source(cell)))
            merged[-1] = {**base, "source": text, "_parts": True}
            continue
        merged.append(cell)
    for cell in merged:
        if cell.pop("_parts", None):
            cell["source"] = source(cell).splitlines(keepends=True)
    return merged


def _is_heading_block(block: str) -> bool:
    return len(block.splitlines()) == 1 and block.lstrip().startswith("#")


def split_tall_cells(notebook: dict) -> int:
    """Split each markdown cell taller than a slide into parts that fit (a heading stays
    with what follows it); how many split."""
    cells: list[dict] = []
    count = 0
    for cell in _merge_parts(notebook["cells"]):
        if (
            cell["cell_type"] != "markdown"
            or is_notes(cell)
            or estimated_height(cell) <= (SLIDE_BUDGET)
        ):
            cells.append(cell)
            continue
        parts: list[list[str]] = [[]]
        for block in _blocks(source(cell)):
            trial = _join([*parts[-1], block])
            alone = len(parts[-1]) == 1 and _is_heading_block(parts[-1][0])
            if (
                parts[-1]
                and not alone
                and estimated_height({"cell_type": "markdown", "source": trial}) > SLIDE_BUDGET
            ):
                parts.append([])
            parts[-1].append(block)
        if len(parts) == 1:
            cells.append(cell)
            continue
        count += 1
        for k, blocks in enumerate(parts):
            text = _join(blocks).splitlines(keepends=True)
            part = {**cell, "source": text} if k == 0 else {
                "cell_type": "markdown", "id": f"{cell.get('id', 'cell')}-{k + 1}",
                "metadata": {}, "source": text,
            }  # fmt: skip
            cells.append(part)
    notebook["cells"] = cells
    return count


def main(argv: list[str]) -> int:
    write = "--write" in argv
    stale = []
    for path in lecture_plans.lesson_times.lessons():
        notebook = json.loads(path.read_text(encoding="utf-8"))
        before = json.dumps(notebook)
        strip_notes(notebook)
        split_tall_cells(notebook)
        write_notes(notebook)
        apply_layout(notebook)
        if json.dumps(notebook) == before:
            continue
        stale.append(path.name)
        if write:
            text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
            path.write_text(text, encoding="utf-8")
    verb = "wrote the layout of" if write else "stale layout in"
    print(f"{verb} {len(stale)} lesson(s)" + (": " + ", ".join(stale) if stale else ""))
    return 1 if stale and not write else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

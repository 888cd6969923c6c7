"""The lessons as slides: one rule lays every lesson out as a deck for the projector.

A lesson's cells carry Jupyter's ``slideshow`` metadata, which RISE (live slides in
JupyterLab, widgets running) and nbconvert's reveal.js export (the static decks of
``snapshotlib course slides``) both read. No one sets it by hand: :func:`layout` derives
it from the lesson, and ``tools/lesson_slides.py --write`` stores it (a test fails when
the stored layout is not the rule's). The rule:

* a heading starts a slide, and so does the lesson's first cell;
* a *Try it* is asked before it is answered: its question and the cell where the answer
  goes are the **prediction** slide (the room answers; the presenter types the answer
  in), and the check that runs the answer through the engine starts the next slide, the
  **reveal**; the folded section after a try-it, which shows the engine's run, starts a
  slide of its own by its heading;
* a presenter's note (a markdown cell tagged ``presenter-notes``) goes to the speaker
  view, never on the wall;
* any other cell joins the slide before it if the two fit on the screen together, and
  starts a sub-slide otherwise (an answer cell always joins its question).

The screen is a 1280×720 projector with the browser at 150 %: 853×480 CSS pixels. What
fits is estimated from the cell's text and stored outputs (:func:`estimated_height`); the
browser test that presents every lesson measures the real thing.
"""

from __future__ import annotations

import base64
import re
import struct
import textwrap
from typing import Any

#: the projector's page: 1280×720 at 150 % zoom, in CSS pixels
SCREEN_WIDTH, SCREEN_HEIGHT = 853, 480
#: the height one slide may fill by the estimate below (which runs short of what RISE
#: draws by up to a quarter; the rest is margin and the progress bar)
SLIDE_BUDGET = 340
#: tag of a markdown cell that is a note for the presenter (shown in the speaker view)
NOTES_TAG = "presenter-notes"

# What one line costs on RISE's page at its default fonts (measured on the lessons):
# prose wraps at about 100 characters on 835 pixels, code at about 90.
_PROSE_CHARS, _PROSE_LINE, _PARAGRAPH_GAP = 100, 21, 12
_CODE_CHARS, _CODE_LINE, _CELL_PADDING = 90, 18, 16
_HEADING = {1: 56, 2: 44, 3: 34}
# A table's text (12 px, rise.css) fits about 125 characters across the slide, shared
# by its columns; each line 16 pixels, each row 6 more.
_TABLE_CHARS, _TABLE_LINE, _TABLE_ROW_PADDING = 125, 16, 6
_TABLE = re.compile(r"<table\b.*?</table>", re.S | re.I)
_ROW = re.compile(r"<tr\b.*?</tr>", re.S | re.I)
_CELL = re.compile(r"<t[dh]\b[^>]*>(.*?)</t[dh]>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
#: a widget's view (the explorers: a network, a space-time diagram, buttons, a table)
_WIDGET_HEIGHT = 430
_FIGURE_HEIGHT = 450
#: an answer cell: ``name = None  # what to write`` (or ``...``), where a learner answers;
#: beside it only imports of what an answer may name, and given values
#: ``name = None`` or ``...``, or a dict of blanks on one line (``{"b2": None, ...}``)
_BLANK = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_]* = "
    r"(None|\.\.\.|\{\s*(\"[^\"]*\"|'[^']*')\s*:\s*(None|\.\.\.)"
    r"(\s*,\s*(\"[^\"]*\"|'[^']*')\s*:\s*(None|\.\.\.))*\s*,?\s*\})\s*(#.*)?$"
)
_GIVEN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]* = .+|from [\w.]+ import [\w, ]+|import [\w.]+)$")


def source(cell: dict[str, Any]) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def is_heading(cell: dict[str, Any]) -> bool:
    return cell["cell_type"] == "markdown" and source(cell).lstrip().startswith("#")


def is_notes(cell: dict[str, Any]) -> bool:
    return NOTES_TAG in cell.get("metadata", {}).get("tags", [])


def is_answer_cell(cell: dict[str, Any]) -> bool:
    """A try-it's answer cell: it names the answer and leaves it blank (``None`` or
    ``...``), and does nothing else (imports and given values aside); the check that
    runs the answer is the next cell."""
    lines = [line.strip() for line in source(cell).splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    return (
        cell["cell_type"] == "code"
        and any(_BLANK.match(line) for line in lines)
        and all(_GIVEN.match(line) for line in lines)
    )


def _prose_height(text: str) -> int:
    height = 0
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            height += _PARAGRAPH_GAP
            continue
        level = len(stripped) - len(stripped.lstrip("#"))
        if 0 < level <= 3 and stripped[level:].startswith(" "):
            height += _HEADING[level] * max(1, -(-len(stripped) // 45))
            continue
        if stripped.startswith("|") and set(stripped) <= set("|-: "):
            continue  # a table's rule line draws no text
        height += _PROSE_LINE * len(textwrap.wrap(stripped, _PROSE_CHARS) or [""])
    return height + _PARAGRAPH_GAP


def _png_height(data: str) -> int:
    """A stored PNG's height as shown (JupyterLab shows a picture at most as wide as
    the page, scaled down with its aspect)."""
    try:
        raw = base64.b64decode(data[:64])
        width, height = struct.unpack(">II", raw[16:24])
    except (ValueError, struct.error):
        return _FIGURE_HEIGHT
    scale = min(1.0, (SCREEN_WIDTH - 60) / width) if width else 1.0
    return int(height * scale)


def _table_height(table: str) -> int:
    """A table's rows, each as tall as its most wrapped cell: the columns share the
    slide's width, and a cell's text wraps in its column."""
    height = 0
    for row in _ROW.findall(table):
        cells = [_TAG.sub("", c) for c in _CELL.findall(row)] or [""]
        chars = max(8, _TABLE_CHARS // len(cells))
        lines = max(len(textwrap.wrap(c, chars) or [""]) for c in cells)
        height += _TABLE_LINE * lines + _TABLE_ROW_PADDING
    return height


def _output_height(output: dict[str, Any]) -> int:
    data = output.get("data", {})
    if "application/vnd.jupyter.widget-view+json" in data:
        return _WIDGET_HEIGHT
    if "image/png" in data:
        png = data["image/png"]
        return _png_height(png if isinstance(png, str) else "".join(png))
    if "application/vnd.plotly.v1+json" in data:
        figure = data["application/vnd.plotly.v1+json"]
        return int(figure.get("layout", {}).get("height") or _FIGURE_HEIGHT)
    if "text/html" in data:
        html = data["text/html"]
        text = html if isinstance(html, str) else "".join(html)
        rest = _TABLE.sub("", text)
        lines = rest.count("<p") + rest.count("<li") + rest.count("<br") + rest.count("<div")
        tables = sum(_table_height(t) for t in _TABLE.findall(text))
        return tables + _PROSE_LINE * max(2 if not tables else 0, lines) + _CELL_PADDING
    text = output.get("text") or data.get("text/plain") or ""
    text = text if isinstance(text, str) else "".join(text)
    lines = sum(len(textwrap.wrap(line, _CODE_CHARS) or [""]) for line in text.splitlines())
    return _CODE_LINE * lines + _CELL_PADDING


def estimated_height(cell: dict[str, Any]) -> int:
    """About how many CSS pixels the cell takes on a slide, outputs included."""
    if cell["cell_type"] == "markdown":
        return _prose_height(source(cell))
    lines = source(cell).splitlines() or [""]
    code = sum(len(textwrap.wrap(line, _CODE_CHARS) or [""]) for line in lines)
    height = _CODE_LINE * code + _CELL_PADDING
    return height + sum(_output_height(o) for o in cell.get("outputs", []))


def layout(cells: list[dict[str, Any]]) -> list[str]:
    """The slide type of every cell, by the rule in this module's docstring."""
    types: list[str] = []
    filled = 0
    after_answer = False
    for i, cell in enumerate(cells):
        if is_notes(cell):
            types.append("notes")
            continue
        height = estimated_height(cell)
        if i == 0 or is_heading(cell) or after_answer:
            kind, filled = "slide", height
        elif is_answer_cell(cell) or filled + height <= SLIDE_BUDGET:
            # an answer cell (a line or two) stays with the question it answers
            kind, filled = "-", filled + height
        else:
            kind, filled = "subslide", height
        types.append(kind)
        after_answer = is_answer_cell(cell)
    return types


#: how RISE presents a lesson: from its first slide (after Run All the selected cell is
#: the last), with no slide transition (the slide is still for the room to read), and a
#: slide taller than the screen scrolled rather than cut off: every slide fits a 1280×720
#: projector at 150 % (a browser test checks each), but a smaller screen or a larger
#: zoom may not
RISE_SETTINGS = {"start_slideshow_at": "beginning", "transition": "none", "scroll": True}


def apply_layout(notebook: dict[str, Any]) -> bool:
    """Store the rule's slide types in ``notebook``'s cells, and the RISE settings in its
    metadata; whether anything changed."""
    changed: bool = notebook.setdefault("metadata", {}).get("rise") != RISE_SETTINGS
    notebook["metadata"]["rise"] = dict(RISE_SETTINGS)
    for cell, kind in zip(notebook["cells"], layout(notebook["cells"]), strict=True):
        meta = cell.setdefault("metadata", {})
        if meta.get("slideshow", {}).get("slide_type") != kind:
            meta["slideshow"] = {"slide_type": kind}
            changed = True
    return changed


def stored_layout(notebook: dict[str, Any]) -> list[str | None]:
    """The slide types the notebook's cells carry (None where a cell has none)."""
    return [c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in notebook["cells"]]

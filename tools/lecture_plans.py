"""A 50-minute plan for lecturing each lesson from its slides.

A session is 5 minutes to open (the goal, what the room will do), 40 of the lesson,
and 5 to close (the summary, questions, the exercise handed out); a short lesson ends
early and can share its session. The 40 minutes follow
the lesson's sections in order. Each gets the time the lesson's rule gives a learner
alone (``tools/lesson_times.py``: words, code cells), scaled down when the whole would
not fit, since a lecturer tells what a reader reads; each try-it the room answers gets
its full 5 minutes. When the room cannot do every try-it and still give the rest at
least half its reading time, the last try-its are left to the learners (the plan says
so).

    python tools/lecture_plans.py           # print the plans
    python tools/lecture_plans.py --write   # put them into the instructor guide

``tests/test_slides.py`` fails when the guide's plans or a lesson's first presenter's
note (``tools/lesson_slides.py`` writes it) are not this rule's.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import lesson_times  # noqa: E402

from snapshotlib.publish.slides import is_heading, is_notes, source  # noqa: E402

GUIDE = ROOT / "docs" / "instructor-guide.md"
SESSION, OPENING, CLOSING = 50, 5, 5
#: the shortest share of its reading time a section may get in class
LEAST_PACE = 0.5
PREDICTED, LEFT_TO_LEARNERS = " (the room predicts, then the reveal)", " (left to the learners)"
BEGIN, END = "<!-- lecture plans: tools/lecture_plans.py -->", "<!-- end of lecture plans -->"


@dataclass
class Section:
    title: str
    minutes: float  # a learner alone, without the try-it's own 5 minutes
    try_it: bool


Cells = list[dict[str, Any]]


def cells_of(path: Path) -> Cells:
    cells: Cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return cells


def sections(cells: Cells) -> list[Section]:
    """The lesson's sections (from its first heading after the title), each with the
    time the rule gives it; a folded answer section joins the try-it before it."""
    out: list[Section] = []
    for cell in cells[1:]:
        if is_notes(cell):
            continue
        text = source(cell)
        if is_heading(cell):
            title = text.splitlines()[0].lstrip("# ").strip()
            folded = cell.get("metadata", {}).get("jp-MarkdownHeadingCollapsed", False)
            if not (folded and out and out[-1].try_it):
                out.append(Section(title, 0.0, title.startswith("Try it")))
        if not out:
            continue
        if cell["cell_type"] == "markdown":
            words = len(lesson_times._WORD.findall(text))
            out[-1].minutes += words / lesson_times.WORDS_PER_MINUTE
        else:
            out[-1].minutes += lesson_times.MINUTES_PER_CODE_CELL
    return [s for s in out if s.title not in ("Where these ideas come from",)]


def plan(cells: Cells) -> list[tuple[int, int, str]]:
    """(start, end, what) rows of the session of a lesson (its cells), in minutes from
    its start."""
    parts = [s for s in sections(cells) if s.title != "Summary"]
    budget = SESSION - OPENING - CLOSING
    try_its = [s for s in parts if s.try_it]
    in_class = len(try_its)
    reading = sum(s.minutes for s in parts)
    while in_class and (budget - 5 * in_class) < LEAST_PACE * reading:
        in_class -= 1
    room = set(map(id, try_its[:in_class]))
    pace = min(1.0, (budget - 5 * in_class) / reading) if reading else 1.0
    rows: list[tuple[int, int, str]] = [(0, OPENING, "Open: the goal, what the room will do")]
    clock = float(OPENING)
    for s in parts:
        length = s.minutes * pace + (5 if id(s) in room else 0)
        what = s.title
        if s.try_it:
            what += PREDICTED if id(s) in room else LEFT_TO_LEARNERS
        start, clock = clock, clock + length
        if rows and round(clock) == rows[-1][1] and not s.try_it:
            rows[-1] = (rows[-1][0], rows[-1][1], rows[-1][2] + "; " + what)
            continue
        rows.append((round(start), round(clock), what))
    end = rows[-1][1]
    rows.append((end, end + CLOSING, "Close: the summary, questions, the exercise"))
    return rows


def plan_markdown(path: Path) -> str:
    cells = cells_of(path)
    title = source(cells[0]).splitlines()[0].lstrip("# ").replace(" · ", " ")
    alone, rows = lesson_times.stated(path), plan(cells)
    session = rows[-1][1]
    lines = [f"**{title}** (a learner alone: {alone} minutes; in class: {session}; the deck: "
             f"`slides/{path.stem}.html`)", "",
             "| minutes | what |", "|---|---|"]  # fmt: skip
    lines += [f"| {a}–{b} | {what} |" for a, b, what in rows]
    return "\n".join(lines)


def guide_section() -> str:
    return "\n\n".join(plan_markdown(p) for p in lesson_times.lessons())


def title_note(cells: Cells) -> str:
    """The presenter's note on a lesson's first slide: how to start, and the plan."""
    rows = "\n".join(f"* {a}–{b} min: {what}" for a, b, what in plan(cells))
    return (
        "*For the presenter* (this note is in the speaker view: key T in RISE, S in the "
        "static deck). Before the session: open this lesson in JupyterLab, Run All, "
        "save, then View > Open as Reveal Slideshow; every widget comes up live.\n\n"
        f"A 50-minute session:\n\n{rows}"
    )


def main(argv: list[str]) -> int:
    if "--write" not in argv:
        print(guide_section())
        return 0
    text = GUIDE.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{GUIDE}: no {BEGIN} ... {END} block to write the plans into")
    block = f"{BEGIN}\n\n{guide_section()}\n\n{END}"
    GUIDE.write_text(pattern.sub(lambda _: block, text), encoding="utf-8")
    print(f"wrote {len(lesson_times.lessons())} plans into {GUIDE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The time each lesson states at its top, from one rule, and the tables that repeat it.

The rule (lesson 00 and the instructor guide state it too): a learner alone reads about
**100 words a minute** of this course's prose (it is read with the runs beside it), runs
and looks at a code cell in **half a minute**, spends **5 minutes** on each *Try it*
(answer, check, perhaps a hint and a second go) and **a minute** on each question of
its concept check (read, choose, read why). The sum is rounded up to 5 minutes.

    python tools/lesson_times.py           # print each lesson's words, tasks and time
    python tools/lesson_times.py --write   # write the times into the lessons, lesson
                                           # 00's table and the instructor guide

``tests/test_lesson_times.py`` fails when a stated time is not the rule's.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from snapshotlib.course.concepts import for_lesson
from snapshotlib.publish.slides import is_notes

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
GUIDE = ROOT / "docs" / "instructor-guide.md"
START = NOTEBOOKS / "00_start_here.ipynb"

WORDS_PER_MINUTE = 100
MINUTES_PER_CODE_CELL = 0.5
MINUTES_PER_TRY_IT = 5
MINUTES_PER_CONCEPT_QUESTION = 1
#: a lesson should be read in one go: the most words one may hold
MAX_WORDS = 2_500

_WORD = re.compile(r"[A-Za-z0-9'\u2019\u2013-]+")  # apostrophes and en dashes inside words
#: the top cell's time, in a lesson (``Time: about N minutes.``) and in lesson 00
_TIME = re.compile(r"(Time:(?:\*\*)? about )(\d+)( minutes)")


def lessons() -> list[Path]:
    """Every lesson, 00 first: the numbered notebooks (not the glossary or errata)."""
    return sorted(p for p in NOTEBOOKS.glob("*.ipynb") if re.match(r"\d\d", p.name))


def _source(cell: dict[str, Any]) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else str(text)


def measure(path: Path) -> dict[str, int]:
    """Words of prose, code cells and try-its of a lesson, and the minutes the rule gives."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    # a presenter's note (the slides' speaker view) is not the learner's to read
    prose = [_source(c) for c in cells if c["cell_type"] == "markdown" and not is_notes(c)]
    words = sum(len(_WORD.findall(text)) for text in prose)
    code = sum(1 for c in cells if c["cell_type"] == "code")
    try_its = sum(len(re.findall(r"^#{2,3} Try it", text, re.M)) for text in prose)
    checked = [m for c in cells if c["cell_type"] == "code"
               for m in re.findall(r'concept_check\("(\w+)"\)', _source(c))]  # fmt: skip
    questions = sum(len(for_lesson(lesson)) for lesson in checked)
    raw = (
        words / WORDS_PER_MINUTE
        + code * MINUTES_PER_CODE_CELL
        + try_its * MINUTES_PER_TRY_IT
        + questions * MINUTES_PER_CONCEPT_QUESTION
    )
    return {
        "words": words,
        "code": code,
        "try_its": try_its,
        "questions": questions,
        "minutes": 5 * math.ceil(raw / 5),
    }


def stated(path: Path) -> int | None:
    """The time the lesson's top cell states, in minutes."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = _TIME.search(_source(cells[0]))
    return int(found.group(2)) if found else None


def prose(path: Path) -> str:
    """All the markdown of a notebook, its cells joined (lesson 00's tables span cells)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join(_source(c) for c in cells if c["cell_type"] == "markdown")


def lesson_number(path: Path) -> str:
    return path.name.split("_", 1)[0]


def _write_top(path: Path, minutes: int) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    top = _source(nb["cells"][0])
    new = _TIME.sub(lambda m: f"{m.group(1)}{minutes}{m.group(3)}", top, count=1)
    if new != top:
        nb["cells"][0]["source"] = new.splitlines(keepends=True)
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _table_rows(suffix: str) -> re.Pattern[str]:
    """Rows of a table of lessons whose last column is a time: lesson 00's
    ``| [05a Why FIFO matters](05a_fifo_matters.ipynb) | ... | 35 min |`` (an exercise's
    row links ../exercises/ instead) with ``suffix`` " min", and the instructor guide's
    ``| 05a Why FIFO matters | 35 |`` with no suffix. Group 1 is the row up to the time,
    group 2 the lesson's number, group 3 the time."""
    lesson = r"\[(\d\d[a-z]?) [^\]]*\]\(\2_[^|]*" if suffix else r"(\d\d[a-z]?) [^|]*"
    return re.compile(
        r"^(\| " + lesson + r"\|(?:[^|\n]*\|)*? )(\d+)" + re.escape(suffix) + r" \|$", re.M
    )


def table_times(text: str, suffix: str) -> dict[str, int]:
    """The time each lesson's row of a table gives, by lesson number."""
    return {m.group(2): int(m.group(3)) for m in _table_rows(suffix).finditer(text)}


def _write_table_rows(text: str, times: dict[str, int], suffix: str) -> str:
    def row(match: re.Match[str]) -> str:
        number = match.group(2)
        if number not in times:
            return match.group(0)
        return f"{match.group(1)}{times[number]}{suffix} |"

    return _table_rows(suffix).sub(row, text)


def write(times: dict[str, int]) -> None:
    for path in lessons():
        _write_top(path, times[lesson_number(path)])
    nb = json.loads(START.read_text(encoding="utf-8"))
    # lesson 00's table of lessons runs over several cells (one slide each)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text = _write_table_rows(_source(cell), times, " min")
            cell["source"] = text.splitlines(keepends=True)
    START.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    GUIDE.write_text(_write_table_rows(GUIDE.read_text(encoding="utf-8"), times, ""), "utf-8")


def main(argv: list[str]) -> int:
    times = {}
    for path in lessons():
        m = measure(path)
        times[lesson_number(path)] = m["minutes"]
        flag = "  (over the word limit)" if m["words"] > MAX_WORDS else ""
        print(
            f"{path.stem:32} {m['words']:5} words {m['code']:3} code cells "
            f"{m['try_its']} try-its {m['questions']} questions"
            f" -> {m['minutes']:3} min (states {stated(path)}){flag}"
        )
    if "--write" in argv:
        write(times)
        print("written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

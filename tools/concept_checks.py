"""The instructor guide's table of concept checks: per lesson, the misconception each
question aims at (``snapshotlib.course.concepts``).

    python tools/concept_checks.py           # print the table
    python tools/concept_checks.py --write   # put it into the instructor guide

``tests/test_concepts.py`` fails when the guide's table is not the questions'.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from snapshotlib.course.concepts import QUESTIONS  # noqa: E402

GUIDE = ROOT / "docs" / "instructor-guide.md"
BEGIN, END = "<!-- concept checks: tools/concept_checks.py -->", "<!-- end of concept checks -->"


def guide_table() -> str:
    """One row per question: where it is, and the misconception it aims at."""
    rows = ["| question | where | aims at the belief that |", "|---|---|---|"]
    for q in QUESTIONS.values():
        lesson = q.id.split(".")[0]
        where = f"lesson {lesson}" if lesson != "self" else f"self-test (lesson {q.lesson})"
        rows.append(f"| {q.id} | {where} | {q.misconception} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    block = f"{BEGIN}\n\n{guide_table()}\n\n{END}"
    if "--write" not in argv:
        print(block)
        return 0
    text = GUIDE.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{GUIDE}: no {BEGIN} ... {END} block to write the table into")
    GUIDE.write_text(pattern.sub(lambda _: block, text), encoding="utf-8")
    print("written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Every lesson states one goal and the time one rule gives it, and holds at most 2,500
words; lesson 00's table and the instructor guide give the same times.

The rule is ``tools/lesson_times.py``'s: 100 words of prose a minute, half a minute per
code cell, 5 minutes per *Try it*, a minute per concept-check question, rounded up to 5
minutes. After changing a lesson,
``python tools/lesson_times.py --write`` puts its new time everywhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import tool

ROOT = Path(__file__).resolve().parents[1]
times = tool("lesson_times")
LESSONS = times.lessons()


def top(path: Path) -> str:
    cell = json.loads(path.read_text(encoding="utf-8"))["cells"][0]
    return "".join(cell["source"])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_states_one_goal_and_the_time_the_rule_gives_it(path: Path) -> None:
    text = top(path)
    assert len(re.findall(r"^(?:\*\*)?Goal(?: of this page)?:", text, re.M)) == 1, "one goal"
    assert times.stated(path) == times.measure(path)["minutes"], (
        f"{path.name} states {times.stated(path)} minutes, the rule gives "
        f"{times.measure(path)['minutes']}: run python tools/lesson_times.py --write"
    )


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_holds_at_most_2500_words(path: Path) -> None:
    assert times.measure(path)["words"] <= times.MAX_WORDS


def test_lesson_00_and_the_guide_give_every_lesson_its_stated_time() -> None:
    stated = {times.lesson_number(p): times.stated(p) for p in LESSONS}
    listed = times.table_times(times.prose(times.START), " min")
    assert listed == {n: m for n, m in stated.items() if n != "00"}
    guide = times.table_times(times.GUIDE.read_text(encoding="utf-8"), "")
    assert guide == stated


def test_the_rule_counts_prose_code_and_try_its(tmp_path: Path) -> None:
    def cell(kind: str, text: str) -> dict[str, object]:
        return {"cell_type": kind, "source": text, "metadata": {}}

    lesson = tmp_path / "99_made_up.ipynb"
    prose = " ".join(["word"] * 1_000)  # 10 minutes
    cells = [cell("markdown", prose), cell("markdown", "## Try it: one\n\nDo it.")]
    cells += [cell("code", "x = 1")] * 4  # 2 minutes; with the try-it, 17.07: 20
    lesson.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    measured = times.measure(lesson)
    assert measured["try_its"] == 1 and measured["code"] == 4
    assert measured["minutes"] == 20


def test_lesson_00_and_the_guide_call_every_lesson_by_its_own_title() -> None:
    start, guide = times.prose(times.START), times.GUIDE.read_text(encoding="utf-8")
    for path in LESSONS:
        title = top(path).splitlines()[0].lstrip("# ").replace(" · ", " ")
        assert title in guide, f"the guide does not call {path.name} {title!r}"
        if path != times.START:
            assert f"[{title}]({path.name})" in start, f"lesson 00 does not link {title!r}"

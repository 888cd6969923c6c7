"""`snapshotlib grade --similarity`: pairs of submissions ranked by the code they share,
each also against the engine's own implementations of what the exercise asks for, with
the code the exercise gives everyone left out; a report that opens offline."""

from __future__ import annotations

import csv
import inspect
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("copydetect", reason="needs copydetect (pip install 'snapshotlib[similarity]')")

from snapshotlib.checks.cut import check_frontier
from snapshotlib.grading.similarity import similarity_report

NAME = "01_is_this_cut_consistent"
GIVEN = (
    "from snapshotlib.course.exercises import ex01\nsim = ex01.execution(variant)\n"
    "trace = sim.trace\n"
)

MINE = """
def offending_message(trace, frontier):
    inside = set()
    for process, count in frontier.items():
        inside.update(trace.process_actions(process)[:count])
    for index in sorted(inside):
        action = trace.actions[index]
        if action.kind == "receive" and trace.messages[action.message].sent_by not in inside:
            return trace.message_name(action.message)
    return None
"""

OTHER = """
def offending_message(t, f):
    seen = {}
    for p in f:
        for k, i in enumerate(t.process_actions(p)):
            seen[i] = k < f[p]
    bad = [a for a in range(len(t.actions)) if seen.get(a) and t.actions[a].kind == "receive"]
    for a in bad:
        sender = t.messages[t.actions[a].message].sent_by
        if not seen.get(sender):
            return t.message_name(t.actions[a].message)
"""


def notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": c, "metadata": {},
                                  "outputs": []} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})  # fmt: skip


def test_copies_rank_first_and_the_engines_code_is_a_reference(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    renamed = re.sub(r"\binside\b", "within", MINE).replace("index", "i")
    (subs / "ada.ipynb").write_text(notebook(GIVEN, MINE))
    (subs / "bob.ipynb").write_text(notebook(GIVEN, renamed))  # ada's, names changed
    (subs / "cy.ipynb").write_text(notebook(GIVEN, OTHER))
    (subs / "dee.ipynb").write_text(notebook(GIVEN, inspect.getsource(check_frontier)))
    (subs / "broken.ipynb").write_text("{not json")
    given = tmp_path / "exercise.ipynb"
    given.write_text(notebook(GIVEN))
    report = similarity_report(subs, NAME, tmp_path / "similarity", exercise_notebook=given)
    top = report.pairs[0]
    assert {top.first, top.second} in ({"ada", "bob"}, {"dee", "engine.cut.check_frontier"})
    pairs = {
        frozenset((p.first, p.second)): max(p.first_share, p.second_share) for p in report.pairs
    }
    assert pairs[frozenset(("ada", "bob"))] > 0.8
    assert pairs[frozenset(("dee", "engine.cut.check_frontier"))] > 0.8
    assert pairs.get(frozenset(("ada", "cy")), 0.0) < pairs[frozenset(("ada", "bob"))]
    rows = list(csv.DictReader(report.csv.open()))
    assert len(rows) == len(report.pairs)
    page = report.html.read_text()
    assert not re.search(r"<(script|link)[^>]+(src|href)=['\"]?https?:", page)
    assert "highlight-red" in page and "ada" in page
    assert "broken" not in {p.first for p in report.pairs}

"""The lessons as files: all there, built the same way, stored small; the reference pages
(errata and glossary) beside them; and every link between them leading somewhere.

That they run top to bottom and that their key results still hold is checked by nbval,
which collects ``notebooks/*.ipynb`` (see ``[tool.pytest.ini_options]``), reference
pages included; ``tools/run_notebooks.py`` runs them all.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LESSONS = [
    "00_start_here",
    "01_global_state",
    "02_chandy_lamport",
    "03_worked_example",
    "04_dijkstra_proof",
    "05a_fifo_matters",
    "05b_without_fifo",
    "06a_stable_predicates",
    "06b_lattice_of_cuts",
    "07a_barrier_snapshots",
    "07b_measuring_tradeoffs",
    "08_failures_and_recovery",
    "09_cost_at_scale",
    "10_live_lab_under_failure",
    "11_rollback_recovery",
]
#: pages every lesson may link to; not lessons (no number, no try-it)
REFERENCE = ["errata", "glossary", "reading", "self_test"]
#: lessons whose summary links the glossary and the errata
LINKED = ["05a_fifo_matters", "05b_without_fifo", "07a_barrier_snapshots",
          "07b_measuring_tradeoffs", "08_failures_and_recovery", "09_cost_at_scale",
          "10_live_lab_under_failure", "11_rollback_recovery"]  # fmt: skip
MAX_BYTES = 400_000
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def load(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))


def sources(nb: dict, kind: str) -> list[str]:  # type: ignore[type-arg]
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind]


def number(name: str) -> str:
    """A lesson's number as its title shows it: ``07a`` for ``07a_barrier_snapshots``."""
    return name.split("_", 1)[0]


def test_every_lesson_and_page_is_there_and_nothing_else() -> None:
    found = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert found == sorted(LESSONS + REFERENCE)
    assert all(re.fullmatch(r"\d\d[a-z]?", number(name)) for name in LESSONS)


def test_the_notebook_runner_runs_every_lesson_and_page_in_order() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import run_notebooks
    finally:
        sys.path.pop(0)
    assert [p.stem for p in run_notebooks.notebooks(NOTEBOOKS)] == LESSONS + REFERENCE


@pytest.mark.parametrize("name", LESSONS + REFERENCE)
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
    assert markdown[0].startswith(f"# {number(name)} · ")
    headings = [line for text in markdown for line in text.splitlines() if line.startswith("## ")]
    assert any(h.startswith("## Try it") for h in headings) or name == "00_start_here"
    assert "## Summary" in headings


@pytest.mark.parametrize("name", LESSONS + REFERENCE)
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


# ------------------------------------------------------------------- links

#: [text](target) in markdown, the target not a web address
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
#: characters a URL fragment keeps as they are: JupyterLab compares the fragment as
#: written with a heading's id (its text with spaces made "-") or a cell's id
FRAGMENT_SAFE = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?]+")


def plain(heading: str) -> str:
    """A heading's text as JupyterLab renders it: markup such as `code` and **bold** dropped."""
    return re.sub(r"[`*]", "", heading).strip()


def heading_ids(nb: dict) -> set[str]:  # type: ignore[type-arg]
    """The ids JupyterLab gives the markdown headings of ``nb``: the heading's text with
    its spaces made "-"."""
    ids = set()
    for text in sources(nb, "markdown"):
        in_code = False
        for line in text.splitlines():
            if line.startswith("```"):
                in_code = not in_code
            found = None if in_code else re.match(r"#{1,6} (.+)$", line)
            if found:
                ids.add(plain(found.group(1)).replace(" ", "-"))
    return ids


def cell_heading(nb: dict, cell_id: str) -> str | None:  # type: ignore[type-arg]
    """The heading that starts the markdown cell ``cell_id`` (``None``: no such cell, or
    it does not start with a heading)."""
    for cell in nb["cells"]:
        if cell.get("id") == cell_id and cell["cell_type"] == "markdown":
            first = "".join(cell["source"]).splitlines()[0]
            found = re.match(r"#{1,6} (.+)$", first)
            return plain(found.group(1)) if found else None
    return None


def local_links(name: str) -> list[tuple[str, str]]:
    out = []
    for text in sources(load(name), "markdown"):
        for label, target in LINK.findall(text):
            if not re.match(r"[a-z]+:", target):
                out.append((label, target))
    return out


@pytest.mark.parametrize("name", LESSONS + REFERENCE)
def test_every_link_between_notebooks_leads_to_a_notebook_and_a_section(name: str) -> None:
    for label, target in local_links(name):
        path, _, fragment = target.partition("#")
        file = (NOTEBOOKS / path).resolve() if path else NOTEBOOKS / f"{name}.ipynb"
        assert file.exists(), f"{name}: {label} -> {target}: no such file"
        if not fragment:
            continue
        stem = file.stem
        assert file.parent == NOTEBOOKS and stem in LESSONS + REFERENCE, f"{name}: {target}"
        assert FRAGMENT_SAFE.fullmatch(fragment), f"{name}: {target}: not kept as written"
        if fragment.startswith("cell-id="):
            # JupyterLab scrolls to a cell by id even in a notebook it has just opened
            heading = cell_heading(load(stem), fragment.removeprefix("cell-id="))
            assert heading is not None, f"{name}: {target}: no cell that starts a section"
            quoted = re.search(r'"(.+)"', label)
            assert quoted is None or quoted.group(1) == heading, f"{name}: {label} -> {heading}"
        else:
            assert fragment in heading_ids(load(stem)), f"{name}: {target}: no such heading"


@pytest.mark.parametrize("name", LINKED)
def test_a_lessons_summary_links_the_glossary_and_the_errata(name: str) -> None:
    text = "\n".join(sources(load(name), "markdown"))
    summary = text.split("## Summary", 1)[1]
    assert "(glossary.ipynb)" in summary and "(errata.ipynb)" in summary


def test_the_reading_list_gives_every_lesson_readings_and_questions() -> None:
    text = "\n".join(sources(load("reading"), "markdown"))
    papers, lessons = text.split("## Lesson by lesson", 1)
    full = re.findall(r"\*\*(.+?) \((\d{4})\)\*\*", papers, re.S)
    sections = re.split(r"\n### ", lessons)[1:]
    linked = [stem for s in sections for _, stem in re.findall(r"\[([^]]+)\]\(([^)]+)\.ipynb\)", s)]
    assert sorted(linked) == sorted(n for n in LESSONS if not n.startswith("00"))
    for section in sections:
        assert "Read " in section and section.count("\n* ") >= 1, section[:60]
        assert "?" in section, section[:60]  # questions to read by
        # every text a section sends the reader to is one the list names in full
        cited = re.findall(r"\b([A-Z][a-zé]+)(?: and [A-Z]\w+| et al\.)? \((\d{4})\)", section)
        assert cited, section[:60]
        for surname, year in cited:
            assert any(surname in names and year == y for names, y in full), (surname, year)


def test_every_erratum_names_the_lesson_file_and_links_the_section() -> None:
    text = "\n".join(sources(load("errata"), "markdown"))
    design = text.split("## The system-design lesson", 1)[1].split("\n## ", 1)[0]
    entries = re.split(r"\n\d+\. ", design)[1:]
    assert len(entries) >= 15
    for entry in entries:
        links = LINK.findall(entry)
        assert links, entry[:60]
        for label, target in links:
            path = target.partition("#")[0]
            assert f"`{path}`" in entry, f"the entry does not name {path}"
            assert re.match(r'lesson \d\d[ab]?, "', label), label


@pytest.mark.parametrize("name", LESSONS + REFERENCE)
def test_no_internal_names_reach_a_learner(name: str) -> None:
    nb = load(name)
    shown = sources(nb, "markdown") + sources(nb, "code")
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            shown.append(json.dumps(out))
    for text in shown:
        for word in ("SEED_000", "SEED_TABLE", "seeds/", "production lesson", "course's Flink"):
            assert word not in text, f"{name}: {word!r}"


@pytest.mark.parametrize("name", LINKED)
def test_no_cell_prints_a_wall_of_text(name: str) -> None:
    """Long results are tables or figures, which wrap on a projector; printed text stays
    short, in lines that fit."""
    for cell in load(name)["cells"]:
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream" and out["name"] == "stdout":
                text = "".join(out["text"])
                assert len(text) <= 1200, f"{name}: {text[:80]!r}"
                assert max(map(len, text.splitlines()), default=0) <= 132, f"{name}: {text[:80]!r}"


# ------------------------------------------------------------------ folded sections


def _names(code: str) -> tuple[set[str], set[str]]:
    """The names a code cell binds (assignments, imports, definitions) and reads."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:  # IPython syntax (magics): such a cell binds nothing we track
        return set(), set()
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
    return bound, read


@pytest.mark.parametrize("name", LESSONS)
def test_code_outside_a_folded_section_needs_nothing_defined_only_inside_it(name: str) -> None:
    """A learner who runs the cells one by one and leaves a section folded still runs
    every cell after it: those may not read a name only a folded cell binds."""
    from tryit_support import folded

    nb = load(name)
    hidden = folded(nb)
    only_hidden: dict[str, int] = {}
    seen: set[str] = set()
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        bound, read = _names("".join(cell["source"]))
        if k in hidden:
            only_hidden.update({n: k for n in bound if n not in seen})
            continue
        needs = sorted(n for n in read if n in only_hidden and n not in seen)
        assert not needs, f"{name}: cell {k} reads {needs}, bound only in folded cells"
        seen |= bound


@pytest.mark.parametrize("name", LESSONS)
def test_a_folded_heading_says_when_to_open_it(name: str) -> None:
    from tryit_support import FOLDED, heading_level

    for cell in load(name)["cells"]:
        if cell["metadata"].get(FOLDED):
            text = " ".join("".join(cell["source"]).split())
            assert heading_level(cell) is not None, text[:60]
            assert "once you have answered" in text, text[:60]


@pytest.mark.parametrize("exercise", sorted(p.name for p in (ROOT / "exercises").glob("*.ipynb")))
def test_an_exercise_opens_with_its_summary_folded(exercise: str) -> None:
    """An exercise's summary sums up its answers: it opens folded, in the learner's form."""
    from tryit_support import FOLDED

    cells = json.loads((ROOT / "exercises" / exercise).read_text(encoding="utf-8"))["cells"]
    summary = [c for c in cells if "".join(c["source"]).startswith("## Summary")]
    assert len(summary) == 1 and summary[0]["metadata"].get(FOLDED) is True


def test_start_here_lists_every_exercise_and_which_ask_for_an_id() -> None:
    """Lesson 00's table has every exercise, in the order of the lessons they follow; its
    prose names the exercises whose runs are made from the learner's id (VARIANT)."""
    from snapshotlib.course.exercises import rules_for

    text = "\n".join(sources(load("00_start_here"), "markdown"))
    row = r"^\| \[(\d+) [^]]+\]\(\.\./exercises/([^)]+)\.ipynb\) \| (\w+) \|"
    rows = re.findall(row, text, re.M)
    names = sorted(p.stem for p in (ROOT / "exercises").glob("*.ipynb"))
    assert sorted(f for _, f, _ in rows) == names
    order = [LESSONS.index(next(n for n in LESSONS if number(n) == after)) for _, _, after in rows]
    assert order == sorted(order), "the table is not in the order of the lessons"
    said = re.search(r"Exercises ([\d, and]+) ask for your id", " ".join(text.split()))
    assert said is not None
    named = {int(n) for n in re.findall(r"\d+", said.group(1))}
    with_ids = {int(f[:2]) for f in names if getattr(rules_for(f), "VARIANT", False)}
    assert named == with_ids


@pytest.mark.parametrize("name", LESSONS)
def test_no_presenters_note_is_said_twice(name: str) -> None:
    """A note written by hand that the slide tool also writes shows twice in the speaker
    view: every note of a lesson is different."""
    notes = [
        "".join(c["source"])
        for c in load(name)["cells"]
        if "presenter-notes" in c.get("metadata", {}).get("tags", [])
    ]
    assert len(notes) == len(set(notes)), [n[:60] for n in notes if notes.count(n) > 1]

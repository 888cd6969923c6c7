"""Reading a stored lesson the way a learner meets it: what a *Try it* shows around itself.

A try-it is the code cell that assigns the learner's answer (``name = None``) and the
check that follows it (in the same cell or a later one). A learner who opens the stored
notebook, or runs it top to bottom, sees

* everything *before* the answer cell: markdown and stored outputs;
* the code of the answer cell and of the check (its comments and examples);
* the check's own output, which must say "no answer yet" and give a hint;
* what comes *after*: the cells up to the next ``## `` heading that is not another
  *Try it*, and the whole section that heading opens (the cells a glance below the
  check falls on, the try-its that follow straight on, and the section a learner reads
  next): none of them may answer this one.

None of these may give the try-it's answer away; the lessons' tests say, per try-it,
which texts would. A section whose heading is folded (JupyterLab's
``jp-MarkdownHeadingCollapsed`` cell metadata: the notebook opens with the heading and a
"cells hidden" button in its place) is not seen until the learner opens it, so its
cells count as unseen; its heading cell is seen.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
#: the cell metadata with which JupyterLab opens a heading folded
FOLDED = "jp-MarkdownHeadingCollapsed"


def load(name: str) -> dict[str, Any]:
    return json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def source(cell: dict[str, Any]) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else str(text)


def shown(cell: dict[str, Any]) -> str:
    """What a cell shows: a markdown cell's text, a code cell's stored outputs (every
    text format: plain text, HTML, streams)."""
    if cell["cell_type"] == "markdown":
        return source(cell)
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append("".join(out["text"]))
        for mime, data in out.get("data", {}).items():
            if mime.startswith("text/") or mime.endswith("json"):
                parts.append(data if isinstance(data, str) else "".join(map(str, data)))
    return "\n".join(parts)


def heading_level(cell: dict[str, Any]) -> int | None:
    """The level of a markdown cell's first heading (JupyterLab folds by it), if any."""
    if cell["cell_type"] != "markdown":
        return None
    in_code = False
    for line in source(cell).splitlines():
        if line.startswith("```"):
            in_code = not in_code
        found = None if in_code else re.match(r"(#{1,6}) ", line)
        if found:
            return len(found.group(1))
    return None


def folded(nb: dict[str, Any]) -> set[int]:
    """The cells hidden when the notebook opens: those under a folded heading, up to the
    next heading of the same level or a higher one."""
    hidden: set[int] = set()
    fold: int | None = None  # the level of the open fold
    for k, cell in enumerate(nb["cells"]):
        level = heading_level(cell)
        if fold is not None and (level is None or level > fold):
            hidden.add(k)
            continue
        fold = level if level is not None and cell["metadata"].get(FOLDED) else None
    return hidden


@dataclass(frozen=True)
class TryIt:
    variable: str
    answer_cell: int
    check_cell: int
    before: str  #: every markdown text and stored output before the answer cell
    code: str  #: the source of the answer cell and of the check cell
    placeholder: str  #: the check cell's stored output
    after: str  #: what follows the check, up to the next "## " heading but a "Try it" one


def _heading_split(text: str) -> tuple[str, bool]:
    """The part of a markdown cell before its first ``## `` heading that is not a *Try
    it*, and whether it has one."""
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("## ") and not line.startswith("## Try it"):
            return "\n".join(lines[:k]), True
    return text, False


def find_try_it(nb: dict[str, Any], variable: str) -> TryIt:
    cells = nb["cells"]
    assign = re.compile(rf"^{re.escape(variable)} = ", re.M)
    assign_line = re.compile(rf"^{re.escape(variable)} = .*$", re.M)
    answer = next(
        k for k, c in enumerate(cells) if c["cell_type"] == "code" and assign.search(source(c))
    )
    used = re.compile(rf"\b{re.escape(variable)}\b")
    check = next(
        k
        for k in range(answer, len(cells))
        if cells[k]["cell_type"] == "code"
        and "check" in source(cells[k])
        and used.search(assign_line.sub("", source(cells[k])))
    )
    after = []
    sections = 0  # the section after the try-it is read too: it is where eyes fall next
    unseen = folded(nb)
    for k, cell in enumerate(cells[check + 1 :], start=check + 1):
        if k in unseen:
            continue
        if cell["cell_type"] == "markdown":
            text = source(cell)
            while True:
                before_heading, heading = _heading_split(text)
                if not heading:
                    break
                sections += 1
                if sections == 2:
                    after.append(before_heading)
                    break
                after.append(before_heading)
                rest = text[len(before_heading) :].lstrip("\n")
                after.append(rest.split("\n", 1)[0])  # the heading itself
                text = rest.split("\n", 1)[1] if "\n" in rest else ""
            if sections == 2:
                break
            after.append(text)
        else:
            after.append(shown(cell))
    return TryIt(
        variable,
        answer,
        check,
        "\n".join(shown(c) for c in cells[:answer]),
        "\n".join(source(cells[k]) for k in sorted({answer, check})),
        shown(cells[check]),
        "\n".join(after),
    )


def _joined(text: str) -> str:
    """``text`` with its lines joined, so a sentence wrapped over two lines is found too."""
    return re.sub(r"\s*\n\s*", " ", text)


def given_away(found: TryIt, patterns: list[str]) -> list[str]:
    """Which of ``patterns`` (regular expressions) the learner would see too early."""
    return [
        f"{pattern!r} {where}"
        for pattern in patterns
        for where, text in [
            ("before it", found.before),
            ("in its cells", found.code),
            ("in its check's output", found.placeholder),
            ("right after it", found.after),
        ]
        if re.search(pattern, text) or re.search(pattern, _joined(text))
    ]


def try_it_variables(nb: dict[str, Any]) -> list[str]:
    """The answer variables of every try-it, in order: ``name = None`` (or a dict of
    ``None``) in a code cell under a "## Try it" heading."""
    found = []
    under_try_it = False
    for cell in nb["cells"]:
        text = source(cell)
        if cell["cell_type"] == "markdown":
            headings = [line for line in text.splitlines() if line.startswith("## ")]
            if headings:
                under_try_it = headings[-1].startswith("## Try it")
            continue
        if not under_try_it:
            continue
        for match in re.finditer(r"^(\w+) = (None|\{)", text, re.M):
            if match.group(2) == "None" or "None" in text.split(match.group(0), 1)[1]:
                found.append(match.group(1))
                under_try_it = False
                break
    return found


def goal_and_minutes(nb: dict[str, Any]) -> tuple[str, int]:
    """The lesson's stated goal and its time in minutes, from the top cell's
    ``Goal: ...`` and ``Time: about N minutes`` lines."""
    top = source(nb["cells"][0])
    goal = re.search(r"^Goal: (\S.*)$", top, re.M)
    minutes = re.search(r"^Time: about (\d+) minutes", top, re.M)
    assert goal is not None and minutes is not None, "no Goal: or Time: line at the top"
    return goal.group(1), int(minutes.group(1))

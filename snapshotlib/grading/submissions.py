"""The submissions of a class: which files they are, what code they hold, whose they are.

Everything here reads files a learner handed in, so everything is checked: a submission
must be a regular file (not a link, a folder or a device), JSON that is a notebook, with
at most :data:`MAX_CODE_BYTES` of code (outputs do not count: they are dropped before
any size is measured), and no larger than :data:`MAX_FILE_BYTES` in all. What is wrong
is said in one line that names the file.

Who a submission is comes from course staff, never from its own cells: a roster (a CSV
file with the columns ``submission`` and ``learner_id``), or the file name as the
learning platform's export names it (the whole name, or a part of it picked out by a
regular expression).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the largest notebook file read (outputs included)
MAX_FILE_BYTES = 256 * 1024 * 1024
#: the most code a notebook may hold, outputs left out
MAX_CODE_BYTES = 4 * 1024 * 1024


class SubmissionError(ValueError):
    """A submission that cannot be graded; the message names the file and why."""


class RosterError(ValueError):
    """A roster or an id pattern that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Notebook:
    """A submitted notebook as the grader uses it."""

    cells: tuple[str, ...]  # its code cells' sources, in order
    digest: str  # SHA-256 of the file's bytes


def candidates(folder: Path) -> list[Path]:
    """Every entry of ``folder`` whose name ends in ``.ipynb``, whatever kind of file it
    is (a folder or a link so named is reported, not skipped), sorted by name."""
    return sorted((p for p in folder.iterdir() if p.name.endswith(".ipynb")), key=lambda p: p.name)


def read_bytes(path: Path) -> bytes:
    """The bytes of a submitted file: a regular file, never followed through a link."""
    name = path.name
    try:
        info = os.lstat(path)
    except OSError as e:
        raise SubmissionError(f"{name}: cannot be read ({e.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise SubmissionError(f"{name} is a symbolic link: a submission must be a file of its own")
    if stat.S_ISDIR(info.st_mode):
        raise SubmissionError(f"{name} is a folder, not a notebook file")
    if not stat.S_ISREG(info.st_mode):
        raise SubmissionError(f"{name} is not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise SubmissionError(f"{name} is larger than {MAX_FILE_BYTES // 2**20} MiB")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise SubmissionError(f"{name}: cannot be read ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SubmissionError(f"{name} is not a regular file")
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise SubmissionError(f"{name} is larger than {MAX_FILE_BYTES // 2**20} MiB")
    return data


def parse_notebook(name: str, data: bytes) -> Notebook:
    """The code cells of a notebook file's bytes; :class:`SubmissionError` if it is not
    a notebook, naming the file and what is wrong.

    >>> parse_notebook("a.ipynb", b'{"cells": [{"cell_type": "code", "source": ["x = 1"]}]}').cells
    ('x = 1',)
    >>> parse_notebook("a.ipynb", b'{"cells": ["x = 1"]}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    snapshotlib.grading.submissions.SubmissionError: a.ipynb ...: cell 1 is a string, not a cell
    """
    try:
        nb = json.loads(data)
    except UnicodeDecodeError:
        raise SubmissionError(f"{name} is not a Jupyter notebook: not text (UTF-8)") from None
    except RecursionError:
        raise SubmissionError(f"{name} is not a Jupyter notebook: nested too deeply") from None
    except MemoryError:
        raise SubmissionError(f"{name} is too large to read within the memory limit") from None
    except ValueError as e:
        raise SubmissionError(f"{name} is not a Jupyter notebook: not JSON ({e})") from None
    cells = _code_cells(name, nb)
    if sum(len(c.encode()) for c in cells) > MAX_CODE_BYTES:
        raise SubmissionError(
            f"{name} holds more than {MAX_CODE_BYTES // 2**20} MiB of code (outputs not counted)"
        )
    return Notebook(tuple(cells), hashlib.sha256(data).hexdigest())


def _code_cells(name: str, nb: Any) -> list[str]:
    def wrong(what: str) -> SubmissionError:
        return SubmissionError(f"{name} is not a Jupyter notebook: {what}")

    if not isinstance(nb, dict):
        raise wrong(f"the file holds a JSON {type(nb).__name__}, not an object")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise wrong("no list of cells (nbformat 4)")
    code = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise wrong(f"cell {number} is a {_kind(cell)}, not a cell")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            code.append("".join(source))
        elif isinstance(source, str):
            code.append(source)
        else:
            raise wrong(f"the source of cell {number} is a {_kind(source)}, not text")
    return code


def _kind(value: Any) -> str:
    return {str: "string", list: "list", dict: "object", int: "number", float: "number",
            bool: "boolean", type(None): "null"}.get(type(value), type(value).__name__)  # fmt: skip


def read_notebook(path: Path) -> Notebook:
    """A submitted notebook, read and checked (see the module docstring)."""
    return parse_notebook(path.name, read_bytes(path))


# ------------------------------------------------------------------ identity


@dataclass(frozen=True)
class Identity:
    """Who a submission is, as course staff say: the id and where it came from."""

    learner_id: str
    source: str  # "roster", "file name"


class Identities:
    """Names each submission's learner: from a roster if given, else from its file
    name (all of its stem, or the first group of ``pattern`` matched against the name).

    >>> Identities(pattern=r"^([a-z]+)_\\d+").of("ada_1234_ex01.ipynb")
    Identity(learner_id='ada', source='file name')
    >>> Identities().of("bob.ipynb").learner_id
    'bob'
    """

    def __init__(
        self, roster: str | Path | dict[str, str] | None = None, pattern: str | None = None
    ) -> None:
        self.roster_path = Path(roster) if isinstance(roster, (str, Path)) else None
        self.roster = read_roster(self.roster_path) if self.roster_path is not None else None
        if isinstance(roster, dict):
            self.roster = dict(roster)
        try:
            self.pattern = re.compile(pattern) if pattern else None
        except re.error as e:
            raise RosterError(
                f"--id-pattern {pattern!r} is not a regular expression: {e}"
            ) from None
        if self.pattern is not None and self.pattern.groups < 1:
            raise RosterError(f"--id-pattern {pattern!r} has no group to pick the id with: (...)")

    def of(self, name: str) -> Identity:
        if self.roster is not None:
            learner = self.roster.get(name)
            if learner is None:
                raise SubmissionError(
                    f"{name} is not in the roster {self.roster_path or ''}".strip()
                )
            return Identity(learner, "roster")
        if self.pattern is not None:
            found = self.pattern.search(name)
            if found is None or not (found.group(1) or "").strip():
                raise SubmissionError(
                    f"{name}: its name does not match --id-pattern {self.pattern.pattern!r}"
                )
            return Identity(found.group(1).strip(), "file name")
        return Identity(name[: -len(".ipynb")] if name.endswith(".ipynb") else name, "file name")


def read_roster(path: Path) -> dict[str, str]:
    """``{submission file name: learner id}`` from a roster CSV file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise RosterError(f"{path}: cannot be read ({e})") from None
    rows = csv.reader(text.splitlines())
    header = [h.strip().lower() for h in next(rows, [])]
    if "submission" not in header or "learner_id" not in header:
        raise RosterError(
            f"{path}, line 1: the header must name the columns submission and learner_id "
            f"(it has {', '.join(header) or 'nothing'})"
        )
    sub, learner = header.index("submission"), header.index("learner_id")
    roster: dict[str, str] = {}
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) <= max(sub, learner) or not row[sub].strip() or not row[learner].strip():
            raise RosterError(f"{path}, line {line}: expected a submission and a learner_id")
        name = row[sub].strip()
        if name in roster:
            raise RosterError(f"{path}, line {line}: {name} is listed twice")
        roster[name] = row[learner].strip()
    return roster

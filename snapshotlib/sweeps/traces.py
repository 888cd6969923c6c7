"""Bulk checking of recorded executions, one per line of JSON Lines files.

Each non-blank line is one execution in the scenario format (see
:mod:`snapshotlib.formats.scenario`; the same object as a ``.json`` scenario file, written
on one line): its processes, channels, application, algorithm and the steps that were
taken. Each line is replayed and each of its snapshots checked
(:func:`snapshotlib.sweeps.measure.checks`), giving one row per snapshot;
a line with no snapshot gives one row saying so.

A line that cannot be checked (not UTF-8, not JSON, not a scenario, a step that is not
enabled, an engine failure) is *corrupt*: it gives one row whose ``error`` names the
file and line and says what is wrong, and checking goes on with the next line. No
line is dropped without a row.

>>> lines = [
...     '{"processes": ["P1", "P2"], "app": "tokens", "initial": {"P1": 2},'
...     ' "steps": [{"do": "send", "from": "P1", "to": "P2", "payload": 1},'
...     ' {"do": "snapshot", "at": "P2"}, {"do": "run"}]}',
...     '{"processes": ["P1", "P2"], "steps": [',
... ]
>>> rows = list(check_lines((("t.jsonl", n, text) for n, text in enumerate(lines, 1))))
>>> [(r["line"], r["snapshot"], r["consistent"], r["error"]) for r in rows]
... # doctest: +NORMALIZE_WHITESPACE
[(1, 's1', True, None),
 (2, None, None, 't.jsonl, line 2: invalid JSON: Expecting value (column 39)')]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..formats.scenario import ScenarioError, parse_scenario, run_scenario
from .measure import checks
from .params import CHECKS

TRACE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("file", "str"),
    ("line", "int"),
    ("name", "str"),
    ("snapshot", "str"),
    ("algorithm", "str"),
    ("processes", "int"),
    ("actions", "int"),
    *CHECKS,
    ("reason", "str"),
    ("error", "str"),
)
TRACE_COLUMN_NAMES = tuple(name for name, _ in TRACE_COLUMNS)

Line = tuple[str, int, str | bytes]


def read_lines(path: str | Path) -> Iterator[tuple[str, int, bytes]]:
    """``(file, line number, raw line)`` for every line of ``path`` (``OSError`` if unreadable)."""
    data = Path(path).read_bytes()
    for number, raw in enumerate(data.splitlines(), start=1):
        yield str(path), number, raw


def check_lines(lines: Iterable[Line]) -> Iterator[dict[str, Any]]:
    """Rows for ``(file, line number, text)`` triples; blank lines give none."""
    for file, number, text in lines:
        if not text.strip():
            continue
        yield from check_record(file, number, text)


def check_record(file: str, number: int, text: str | bytes) -> list[dict[str, Any]]:
    """The rows of one recorded execution (module docstring); never raises."""
    where = f"{file}, line {number}"
    base = dict.fromkeys(TRACE_COLUMN_NAMES)
    base.update(file=file, line=number)
    try:
        return _check(where, text, base)
    except Exception as e:  # a corrupt record is reported in its row, never fatal
        return [{**base, "error": f"{where}: {_describe(e, where)}"}]


def _check(where: str, text: str | bytes, base: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    data = json.loads(text)
    if isinstance(data, dict) and "snapshots" in data and "processes" not in data:
        raise ValueError(
            "a `snapshotlib run --json` result, not a recorded execution: checking needs "
            "the execution itself (processes and steps, the scenario format)"
        )
    sim = run_scenario(parse_scenario(data, source=where))
    base.update(
        name=str(data.get("name", "")),
        algorithm=sim.algorithm.name,
        processes=len(sim.network.processes),
        actions=sim.time,
    )
    ids = sim.snapshot_ids()
    if not ids:
        return [{**base, "reason": "no snapshot was taken"}]
    return [{**base, "snapshot": sid, **checks(sim, sid)} for sid in ids]


def _describe(e: Exception, where: str) -> str:
    if isinstance(e, UnicodeDecodeError):
        return f"not UTF-8 text (byte {e.start})"
    if isinstance(e, json.JSONDecodeError):
        return f"invalid JSON: {e.msg} (column {e.colno})"
    text = str(e)
    if isinstance(e, ScenarioError):
        return text.removeprefix(f"{where}: ")  # it names the source we gave it
    return text if isinstance(e, ValueError) else f"{type(e).__name__}: {text}"


def failing(row: Mapping[str, Any]) -> bool:
    """Whether a row is a snapshot that is not a consistent cut with exact channel
    states, or on which Dijkstra's argument does not hold."""
    return (
        row["error"] is None
        and row["snapshot"] is not None
        and not (row["consistent"] and row["dijkstra_holds"])
    )


def tally(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Counts for a report: records read, snapshots, snapshots :func:`failing`, corrupt lines."""
    records: set[tuple[str, int]] = set()
    counts = {"records": 0, "snapshots": 0, "failed": 0, "corrupt": 0}
    for row in rows:
        records.add((row["file"], row["line"]))
        if row["error"] is not None:
            counts["corrupt"] += 1
        elif row["snapshot"] is not None:
            counts["snapshots"] += 1
            counts["failed"] += failing(row)
    counts["records"] = len(records)
    return counts

"""Sweep configurations: a TOML file naming a grid of executions.

Schema
------
::

    [sweep]
    name = "marker-delay"      # optional; default: the file name without .toml
    seeds = 100                # n: seeds 0 .. n-1; or a list of seeds, [1, 5, 9]
    duration = 30              # any parameter may be fixed here for every grid

    [grid]                     # each parameter: one value, or a list to sweep over
    topology = ["ring", "complete"]
    size = [4, 8]
    algorithm = ["chandy-lamport", "clock"]
    marker_delay = [1, 2, 4, 8]
    fifo = [true, false]

A sweep runs every combination of a grid's lists (their Cartesian product, a *cell*)
once per seed. Several ``[[grid]]`` tables instead of one ``[grid]`` make a sweep the
union of their grids, for combinations a single product cannot express (dataflow
graphs with the barrier algorithms, networks with the marker ones). A parameter not
given in a grid comes from ``[sweep]``, else its default. The same seed gives every
cell the same random choices as far as they go, so cells are compared on like
workloads.

Parameters (time in ticks, see :mod:`snapshotlib.sweeps.runner`):

=============== ======================================================= ==============
parameter       meaning                                                 default
=============== ======================================================= ==============
topology        ring, complete, random (strongly connected: a cycle     ring
                plus ``size`` extra channels) or dataflow (a
                word-count job, for the barrier algorithms only)
size            number of processes, 2 .. 1000                          4
algorithm       chandy-lamport, lai-yang, clock (naive, clock-based),    chandy-lamport
                aligned, unaligned, at-least-once (dataflow barriers)
fifo            true or false                                           true
rate            messages each process sends per tick, 0 < rate <= 10    0.5
message_delay   a message takes 1 .. message_delay ticks                3
marker_delay    ticks a marker or barrier takes                         1
drift           clock rate error bound (clock algorithm), 0 .. 1        0.0
duration        ticks of activity before the run drains                 30
start           when the snapshot begins, fraction of duration          0.5
initiators      processes starting the snapshot (at most ``size``)      1
tokens          tokens each process starts with                         10
message_bytes   bytes per recorded message                              200
=============== ======================================================= ==============

Errors are :class:`SweepConfigError` naming the file, the table and key, and what was
expected.

>>> sweep = parse_config({"sweep": {"seeds": 2},
...                       "grid": {"size": [3, 5], "fifo": [True, False]}}, "demo.toml")
>>> len(sweep), len(sweep.cells)
(8, 4)
>>> {k: sweep.point(5)[k] for k in ("point", "seed", "size", "fifo")}
{'point': 5, 'seed': 1, 'size': 3, 'fifo': False}
>>> parse_config({"grid": {"topology": ["ring", "star"]}}, "sweep.toml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
snapshotlib...SweepConfigError: sweep.toml: [grid] topology: expected one of ring, ...; got 'star'
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..shipped import SWEEPS, find, not_shipped
from .execute import unsupported
from .params import PARAMETER, PARAMETERS, Parameter, SweepConfigError

#: more executions than this is surely a mistake in the grid
MAX_EXECUTIONS = 10**9

_SWEEP_KEYS = ("name", "seeds")


@dataclass(frozen=True)
class Sweep:
    """An expanded sweep: its cells (parameter dicts) times its seeds.

    Points are numbered seed-major (``point // len(cells)`` picks the seed), so any
    contiguous range of points holds every cell in turn: a Spark partition of a range
    gets a fair share of the cheap and the expensive cells.
    """

    name: str
    seeds: tuple[int, ...]
    cells: tuple[Mapping[str, Any], ...]
    source: str = "<sweep>"

    def __len__(self) -> int:
        return len(self.cells) * len(self.seeds)

    def point(self, i: int) -> dict[str, Any]:
        """Point number ``i``: ``point``, ``sweep``, ``seed`` and every parameter."""
        seed, cell = divmod(i, len(self.cells))
        return {"point": i, "sweep": self.name, "seed": self.seeds[seed], **self.cells[cell]}

    def points(self) -> Iterator[dict[str, Any]]:
        return (self.point(i) for i in range(len(self)))


def load_config(path: str | Path) -> Sweep:
    """Read and check a sweep configuration file (module docstring), or the shipped one
    of that name (``"small"``: see :mod:`snapshotlib.shipped`)."""
    path = find(path, SWEEPS)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SweepConfigError(f"{path}: cannot read: {e.strerror}{not_shipped(path)}") from None
    return parse_config_text(text, str(path), default_name=path.stem)


def parse_config_text(text: str, source: str = "<sweep>", default_name: str = "sweep") -> Sweep:
    """Check a configuration given as TOML text (a notebook's, say)."""
    toml = _toml()
    try:
        data = toml.loads(text)
    except toml.TOMLDecodeError as e:
        raise SweepConfigError(f"{source}: invalid TOML: {e}") from None
    return parse_config(data, source, default_name=default_name)


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    try:
        import tomli
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10 without the spark extra
        raise SweepConfigError(
            "reading TOML on Python 3.10 needs tomli (pip install 'snapshotlib[spark]')"
        ) from None
    return tomli


def parse_config(
    data: Mapping[str, Any], source: str = "<sweep>", default_name: str = "sweep"
) -> Sweep:
    """Check a decoded configuration and expand its grids."""
    for key in data:
        if key not in ("sweep", "grid"):
            raise SweepConfigError(
                f"{source}: [{key}]: unknown table; expected [sweep] and [grid] (or [[grid]])"
            )
    head = data.get("sweep", {})
    if not isinstance(head, dict):
        raise SweepConfigError(f"{source}: sweep: expected a table [sweep]")
    name = head.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise SweepConfigError(f"{source}: [sweep] name: expected a non-empty string; got {name!r}")
    seeds = _seeds(head.get("seeds", 10), source)
    fixed = {}
    for key, value in head.items():
        if key in _SWEEP_KEYS:
            continue
        where = f"{source}: [sweep] {key}"
        if key not in PARAMETER:
            raise SweepConfigError(
                f"{where}: unknown key; expected name, seeds or a parameter "
                f"({', '.join(PARAMETER)})"
            )
        if isinstance(value, list):
            raise SweepConfigError(
                f"{where}: expected one value (put lists in [grid]); got {value!r}"
            )
        fixed[key] = _value(PARAMETER[key], value, where)
    grids = data.get("grid", {})
    tables = grids if isinstance(grids, list) else [grids]
    cells: list[dict[str, Any]] = []
    first: dict[tuple[tuple[str, Any], ...], str] = {}  # cell -> the grid it came from
    for k, table in enumerate(tables, start=1):
        label = f"[grid {k}]" if isinstance(grids, list) and len(grids) > 1 else "[grid]"
        for cell in _cells(table, fixed, f"{source}: {label}"):
            same = tuple(sorted(cell.items()))
            if same in first:  # it would run twice and its summary row merge both
                shown = ", ".join(f"{n} = {v!r}" for n, v in cell.items() if n in table)
                raise SweepConfigError(
                    f"{source}: {label} repeats a cell of {first[same]} ({shown})"
                )
            first[same] = label
            cells.append(cell)
    if len(cells) * len(seeds) > MAX_EXECUTIONS:
        raise SweepConfigError(
            f"{source}: {len(cells)} cells x {len(seeds)} seeds is more than "
            f"{MAX_EXECUTIONS} executions"
        )
    return Sweep(name, seeds, tuple(cells), source)


def _seeds(value: Any, source: str) -> tuple[int, ...]:
    where = f"{source}: [sweep] seeds"
    expected = "expected a whole number >= 1 or a non-empty list of whole numbers >= 0"
    if _is_int(value):
        if value < 1:
            raise SweepConfigError(f"{where}: {expected}; got {value!r}")
        return tuple(range(value))
    if not isinstance(value, list) or not value or not all(_is_int(s) and s >= 0 for s in value):
        raise SweepConfigError(f"{where}: {expected}; got {value!r}")
    if len(set(value)) != len(value):
        raise SweepConfigError(f"{where}: every seed once; got {value!r}")
    return tuple(value)


def _cells(table: Any, fixed: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    if not isinstance(table, dict):
        raise SweepConfigError(f"{where}: expected a table of parameters; got {table!r}")
    axes: dict[str, list[Any]] = {}
    for key, raw in table.items():
        at = f"{where} {key}"
        if key not in PARAMETER:
            raise SweepConfigError(
                f"{at}: unknown parameter; expected one of {', '.join(PARAMETER)}"
            )
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            raise SweepConfigError(f"{at}: expected a value or a non-empty list; got []")
        checked = [_value(PARAMETER[key], v, at) for v in values]
        if len(set(checked)) != len(checked):
            raise SweepConfigError(f"{at}: expected each value once; got {raw!r}")
        axes[key] = checked
    base = {p.name: fixed.get(p.name, p.default) for p in PARAMETERS}
    names = [p.name for p in PARAMETERS if p.name in axes]
    cells = []
    for combo in itertools.product(*(axes[n] for n in names)):
        cell = {**base, **dict(zip(names, combo, strict=True))}
        problem = unsupported(cell["algorithm"], cell["topology"])
        if problem:
            hint = ""
            if cell["topology"] == "dataflow" or cell["algorithm"] in _DATAFLOW_ALGORITHMS:
                hint = "; give dataflow runs a [[grid]] of their own"
            raise SweepConfigError(f"{where} algorithm: {problem}{hint}")
        cells.append(cell)
    return cells


_DATAFLOW_ALGORITHMS = ("aligned", "unaligned", "at-least-once")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _value(param: Parameter, value: Any, where: str) -> Any:
    """``value`` checked against ``param`` (ints accepted for floats)."""
    if param.choices:
        if value not in param.choices:
            raise SweepConfigError(
                f"{where}: expected one of {', '.join(param.choices)}; got {value!r}"
            )
        return value
    if param.kind == "bool":
        if not isinstance(value, bool):
            raise SweepConfigError(f"{where}: expected true or false; got {value!r}")
        return value
    if param.kind == "int" and not _is_int(value):
        raise SweepConfigError(f"{where}: expected a whole number; got {value!r}")
    if param.kind == "float":
        if not (_is_int(value) or isinstance(value, float)) or not math.isfinite(value):
            raise SweepConfigError(f"{where}: expected a number; got {value!r}")
        value = float(value)
    low, high = param.low, param.high
    if low is not None and (value < low or (param.exclusive_low and value == low)):
        bound = f"> {low:g}" if param.exclusive_low else f">= {low:g}"
        raise SweepConfigError(f"{where}: expected a number {bound}; got {value!r}")
    if high is not None and value > high:
        raise SweepConfigError(f"{where}: expected a number <= {high:g}; got {value!r}")
    return value

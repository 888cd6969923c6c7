"""The lessons' views of an exhaustive search (:mod:`snapshotlib.search`): the small
system they search, a table of what a search explored, and a counterexample as steps.

>>> from snapshotlib.search import search
>>> print(search_table([("FIFO", search(three_processes(fifo=True)))]))  # doctest: +ELLIPSIS
search  schedules  distinct states  end states  verdict
FIFO            -            ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..algorithms import ChandyLamport
from ..model import Network
from ..search import SearchResult, SnapshotPlan, System, each_sends
from ..search.command import steps_text
from .tables import Table


def three_processes(fifo: bool, algorithm: Any = ChandyLamport, sends: int = 1) -> System:
    """Three processes on a complete graph with 2 tokens each; each sends ``sends``
    tokens (to its neighbours in turn), and one snapshot is started by any one of them."""
    net = Network(["P1", "P2", "P3"], fifo=fifo)
    return System(
        net,
        "tokens",
        {p: 2 for p in net.processes},
        algorithm,
        programs=each_sends(net, "tokens", sends),
        snapshots=(SnapshotPlan("s1", net.processes),),
        name=f"three processes, {'FIFO' if fifo else 'non-FIFO'}",
    )


def search_table(rows: Sequence[tuple[str, SearchResult]]) -> Table:
    """One row per search: schedules counted (or -), distinct states, states where
    nothing more can happen, and the verdict."""
    body = []
    for name, result in rows:
        s = result.stats
        if result.violation is not None:
            verdict = f"{result.violation.invariant} broken in {result.violation.depth} steps"
        elif result.exhaustive:
            verdict = "holds in every run"
        else:
            verdict = "holds as far as searched"
        runs = f"{s.runs:,}" if s.runs is not None else "-"
        end = f"{s.quiescent:,}" if result.violation is None else "-"
        body.append((name, runs, f"{s.distinct:,}", end, verdict))
    return Table(("search", "schedules", "distinct states", "end states", "verdict"), body)


def steps_table(result: SearchResult) -> Table:
    """The counterexample's steps, numbered, and what breaks at the end."""
    if result.violation is None:
        raise ValueError("the search found no violation")
    rows = [line.split(". ", 1) for line in steps_text(result)]
    return Table(
        ("step", "action"),
        [(n.strip(), text) for n, text in rows],
        notes=(f"then: {result.violation.reason}",),
    )

"""One grid point, one simulated execution, one flat result row.

:func:`run_point` looks the point's algorithm up in :data:`EXECUTORS` and returns a row
with every column of :data:`~snapshotlib.sweeps.params.COLUMNS`: the point's
parameters, the checks and the metrics. An executor that fails does not stop a sweep:
its row carries the parameters and the error, and ``None`` for the outcomes.

Built in here: Chandy–Lamport, Lai–Yang and the naive clock snapshot, on ring, complete
and random strongly connected networks, run by :class:`~snapshotlib.sweeps.runner.TickRun`
with the ``tokens`` application. Units: ``rate`` is messages per process per tick,
``message_delay``, ``marker_delay``, ``duration``, ``latency``, ``ticks`` and
``blocked_time`` (channel-ticks) are in ticks, ``recorded_bytes`` is
``recorded_messages * message_bytes``.

Other executors (the dataflow barrier variants) register themselves with
:func:`register` when their module is imported; the modules in :data:`PLUGINS` are
imported the first time an algorithm is not found, so a Spark worker finds them too.

>>> row = run_point({"algorithm": "chandy-lamport", "topology": "ring", "size": 3, "seed": 1})
>>> row["consistent"], row["dijkstra_holds"], row["conserved"], row["error"]
(True, True, True, None)
>>> row["recorded_bytes"] == 200 * row["recorded_messages"]
True
>>> run_point({"algorithm": "chandy-lamport", "topology": "dataflow"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
snapshotlib...SweepConfigError: algorithm 'chandy-lamport' does not run on topology 'dataflow' (...)
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..algorithms import ClockSnapshot, SnapshotAlgorithm, algorithm_class
from ..algorithms.state import PLAIN
from ..model import Network
from ..simulator import Simulator
from ..workloads import complete, max_extra_edges, random_strongly_connected, ring
from .measure import checks, metrics
from .params import COLUMN_NAMES, PARAMETERS, SweepConfigError
from .runner import TickRun

Row = dict[str, Any]
Point = Mapping[str, Any]

#: parameter defaults, for points given in part (``run_point({"seed": 1})``)
DEFAULTS: dict[str, Any] = {p.name: p.default for p in PARAMETERS}


@dataclass(frozen=True)
class Executor:
    """Runs one point of an algorithm; ``topologies`` are the network shapes it knows."""

    run: Callable[[Point], Row]
    topologies: frozenset[str]

    def __call__(self, point: Point) -> Row:
        return self.run(point)


#: algorithm name -> executor; see :func:`register`
EXECUTORS: dict[str, Executor] = {}
#: modules that register further executors when imported
PLUGINS = ("snapshotlib.dataflow",)
_plugins_loaded = False


def register(name: str, run: Callable[[Point], Row], topologies: Iterable[str]) -> None:
    """Make algorithm ``name`` runnable in sweeps.

    ``run`` gets a complete point (every parameter, plus ``seed``) and returns the
    outcome columns it measured (checks, metrics, ``reason``); :func:`run_point` adds
    the parameters and fills what it leaves out with ``None``.
    """
    EXECUTORS[name] = Executor(run, frozenset(topologies))


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for module in PLUGINS:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise


def unsupported(algorithm: str, topology: str) -> str | None:
    """Why ``algorithm`` cannot run on ``topology`` here, or ``None`` when it can."""
    if algorithm not in EXECUTORS:
        _load_plugins()
    executor = EXECUTORS.get(algorithm)
    if executor is None:
        available = ", ".join(sorted(EXECUTORS))
        return f"algorithm {algorithm!r} is not available in this version (available: {available})"
    if topology not in executor.topologies:
        known = ", ".join(sorted(executor.topologies))
        return f"algorithm {algorithm!r} does not run on topology {topology!r} (it runs on {known})"
    return None


def run_point(point: Point) -> Row:
    """Simulate one execution; a row with every column (module docstring).

    Missing parameters take their defaults (``seed``: 0). :class:`SweepConfigError`
    when the algorithm cannot run on the topology here.
    """
    full = {**DEFAULTS, "seed": 0, **point}
    problem = unsupported(full["algorithm"], full["topology"])
    if problem:
        raise SweepConfigError(problem)
    row: Row = dict.fromkeys(COLUMN_NAMES)
    row.update((k, v) for k, v in full.items() if k in row)
    try:
        outcome = EXECUTORS[full["algorithm"]](full)
    except Exception as e:  # an engine failure is reported in its row, not fatal to a sweep
        row["error"] = f"{type(e).__name__}: {e}"
        return row
    row.update((k, v) for k, v in outcome.items() if k in row)
    return row


# ------------------------------------------------- the marker and clock algorithms
def network(point: Point, rng: random.Random) -> Network:
    """The point's network; a random one is a cycle plus ``size`` extra channels (at most
    as many as fit), drawn from ``rng``."""
    n, fifo = point["size"], point["fifo"]
    topology = point["topology"]
    if topology == "ring":
        return ring(n, fifo=fifo)
    if topology == "complete":
        return complete(n, fifo=fifo)
    extra = min(n, max_extra_edges(n))
    return random_strongly_connected(n, extra, rng.randrange(2**32), fifo=fifo)


class TickClock(ClockSnapshot):
    """The clock snapshot with clocks that read ticks of a :class:`TickRun`, not actions.

    ``tick_of`` (the run's :meth:`TickRun.tick_of`) is set once the run exists.
    """

    state_fields: ClassVar[Mapping[str, str]] = {"tick_of": PLAIN}

    def __init__(self, at: float, rate: Mapping[str, float]) -> None:
        super().__init__(at, rate, snapshot_id="s1")
        self.tick_of: Callable[[int], int] = int

    def clock(self, process: str, t: int) -> float:
        return self.offset.get(process, 0.0) + self.rate.get(process, 1.0) * self.tick_of(t)


def _run_classic(point: Point) -> Row:
    rng = random.Random(point["seed"])
    net = network(point, rng)
    duration = point["duration"]
    start = round(point["start"] * duration)
    name = point["algorithm"]
    algorithm: SnapshotAlgorithm
    initiations: dict[int, list[str]] = {}
    if name == "clock":
        drift = point["drift"]
        rates = {p: 1 + drift * rng.uniform(-1, 1) for p in net.processes}
        algorithm = TickClock(point["start"] * duration, rates)
    else:
        algorithm = algorithm_class(name)()
        count = min(point["initiators"], len(net.processes))
        initiations[start] = rng.sample(net.processes, count)
    sim = Simulator(net, "tokens", dict.fromkeys(net.processes, point["tokens"]), algorithm)
    run = TickRun(
        sim,
        seed=rng,
        rate=point["rate"],
        message_delay=point["message_delay"],
        marker_delay=point["marker_delay"],
        duration=duration,
    )
    if isinstance(algorithm, TickClock):
        algorithm.tick_of = run.tick_of
    run.run(initiations)
    row = checks(sim, "s1")
    row.update(metrics(sim, "s1", run.tick_of, point["message_bytes"]))
    row["peak_buffered"] = max(row["peak_buffered"], run.peak_blocked)
    row.update(channels=len(net.channels), ticks=run.ticks, blocked_time=run.blocked_time)
    return row


for _name in ("chandy-lamport", "lai-yang", "clock"):
    register(_name, _run_classic, ("ring", "complete", "random"))

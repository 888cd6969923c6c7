"""Dataflow graphs: sources, transformations and sinks joined by FIFO channels.

A :class:`Dataflow` is a list of :class:`Operator` and a list of edges. Every operator
must be reachable from a source; sources have no inputs and sinks no outputs. Cycles
are allowed (an iteration feeding records back) and their back edges are found by
:func:`snapshotlib.algorithms.barriers.back_edges`.

Operators (``kind``):

``source``
    Reads its input log (``records``: ``(key, value)`` pairs) one record per action,
    sending each on the output chosen by its key; its state is the read offset, which
    is what a restore rewinds to (a Kafka partition offset, in production).
``count``
    A keyed count (stateful): its state maps each key to the records seen; each record
    goes on with its new count.
``map``
    Stateless: passes each record on (by key when it has several outputs).
``loop``
    Sends a record with ``hops`` left back along its first output (the feedback edge)
    with one hop less, and on along its second once ``hops`` is 0.
``sink``
    Keeps every record it receives: the job's output.

>>> job = word_count(sources=2, counters=2, records=4, keys=2)
>>> [op.name for op in job.operators]
['S1', 'S2', 'C1', 'C2', 'K']
>>> job.network().channels[:2]
(Channel(src='S1', dst='C1'), Channel(src='S1', dst='C2'))
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..model import Network, NetworkError

KINDS = ("source", "count", "map", "loop", "sink")


class DataflowError(NetworkError):
    """A dataflow graph that cannot run, with the reason."""


@dataclass(frozen=True)
class Operator:
    """One node of the graph; ``records`` is a source's input log."""

    name: str
    kind: str
    records: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Dataflow:
    """Operators and the edges between them, validated when built."""

    operators: tuple[Operator, ...]
    edges: tuple[tuple[str, str], ...]
    _by_name: dict[str, Operator] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Operator] = {}
        for op in self.operators:
            if op.kind not in KINDS:
                raise DataflowError(
                    f"operator {op.name!r}: unknown kind {op.kind!r} (expected {', '.join(KINDS)})"
                )
            if op.name in by_name:
                raise DataflowError(f"operator {op.name!r} is listed twice")
            by_name[op.name] = op
        object.__setattr__(self, "_by_name", by_name)
        try:
            net = self.network()  # checks names, self-loops, duplicate edges
        except DataflowError:
            raise
        except NetworkError as e:
            raise DataflowError(str(e)) from None
        for op in self.operators:
            ins, outs = net.inputs(op.name), net.outputs(op.name)
            if op.kind == "source" and ins:
                raise DataflowError(f"source {op.name!r} has an input ({ins[0]})")
            if op.kind != "source" and not ins:
                raise DataflowError(f"{op.kind} {op.name!r} has no input")
            if op.kind == "sink" and outs:
                raise DataflowError(f"sink {op.name!r} has an output ({outs[0]})")
            if op.kind != "sink" and not outs:
                raise DataflowError(f"{op.kind} {op.name!r} has no output")
            if op.kind == "loop" and len(outs) != 2:
                raise DataflowError(
                    f"loop {op.name!r} needs two outputs (feedback, exit), has {len(outs)}"
                )
        reached = self._reachable_from_sources(net)
        for op in self.operators:
            if op.name not in reached:
                raise DataflowError(f"{op.name!r} cannot be reached from any source")

    def operator(self, name: str) -> Operator:
        return self._by_name[name]

    @property
    def sources(self) -> list[str]:
        return [op.name for op in self.operators if op.kind == "source"]

    @property
    def sinks(self) -> list[str]:
        return [op.name for op in self.operators if op.kind == "sink"]

    def network(self) -> Network:
        """The processes and FIFO channels the simulator runs."""
        return Network(
            [op.name for op in self.operators], list(self.edges), strongly_connected=False
        )

    def _reachable_from_sources(self, net: Network) -> set[str]:
        seen = set(self.sources)
        stack = list(seen)
        while stack:
            for c in net.outputs(stack.pop()):
                if c.dst not in seen:
                    seen.add(c.dst)
                    stack.append(c.dst)
        return seen


def input_log(seed: int, n: int, keys: int, hops: int = 0) -> tuple[tuple[str, int], ...]:
    """``n`` records over ``keys`` keys (``k0``, ``k1``...), seeded; the value is the
    number of ``hops`` round a loop (0 for graphs without one)."""
    rng = random.Random(seed)
    return tuple((f"k{rng.randrange(keys)}", rng.randrange(hops + 1)) for _ in range(n))


def word_count(
    sources: int = 2, counters: int = 2, records: int = 20, keys: int = 4, seed: int = 0
) -> Dataflow:
    """Sources partition records by key over keyed counters, which feed one sink ``K``."""
    srcs = [Operator(f"S{i + 1}", "source", input_log(seed + i, records, keys))
            for i in range(sources)]  # fmt: skip
    counts = [Operator(f"C{i + 1}", "count") for i in range(counters)]
    edges = [(s.name, c.name) for s in srcs for c in counts]
    edges += [(c.name, "K") for c in counts]
    return Dataflow((*srcs, *counts, Operator("K", "sink")), tuple(edges))


def iteration(records: int = 12, keys: int = 3, hops: int = 2, seed: int = 0) -> Dataflow:
    """A cyclic job: source ``S`` feeds the keyed count ``H``, which feeds the ``loop``
    ``L``; ``L`` sends records back to ``H`` (the back edge) until their hops are used,
    then on to the sink ``K``."""
    ops = (
        Operator("S", "source", input_log(seed, records, keys, hops)),
        Operator("H", "count"),
        Operator("L", "loop"),
        Operator("K", "sink"),
    )
    return Dataflow(ops, (("S", "H"), ("H", "L"), ("L", "H"), ("L", "K")))


def random_dag(
    seed: int, sources: int = 2, layers: int = 2, width: int = 2, records: int = 8, keys: int = 3
) -> Dataflow:
    """A random layered DAG: sources, ``layers`` layers of counts and maps, one sink;
    every node has an input from the layer before and an output to the layer after."""
    rng = random.Random(seed)
    levels: list[list[Operator]] = [
        [Operator(f"S{i + 1}", "source", input_log(rng.randrange(10**6), records, keys))
         for i in range(sources)]
    ]  # fmt: skip
    for layer in range(layers):
        n = rng.randint(1, width)
        levels.append(
            [Operator(f"{'CM'[rng.randrange(2)]}{layer + 1}{chr(97 + j)}",
                      "count" if rng.random() < 0.6 else "map") for j in range(n)]
        )  # fmt: skip
    levels.append([Operator("K", "sink")])
    edges: list[tuple[str, str]] = []
    for up, down in itertools.pairwise(levels):
        pairs = {(u.name, d.name) for u in up for d in down if rng.random() < 0.5}
        for u in up:  # every node keeps an output...
            if not any(a == u.name for a, _ in pairs):
                pairs.add((u.name, rng.choice(down).name))
        for d in down:  # ...and an input
            if not any(b == d.name for _, b in pairs):
                pairs.add((rng.choice(up).name, d.name))
        edges += sorted(pairs)
    return Dataflow(tuple(op for level in levels for op in level), tuple(edges))


def dataflow(operators: Iterable[Operator], edges: Sequence[tuple[str, str]]) -> Dataflow:
    """Build a :class:`Dataflow` from any iterables (a convenience for notebooks)."""
    return Dataflow(tuple(operators), tuple((a, b) for a, b in edges))

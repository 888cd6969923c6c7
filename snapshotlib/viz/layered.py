"""The layered layout of a dataflow graph, and where its channels are drawn.

Operators go left to right by layer: an operator's layer is its longest path from a
source, back edges (which close a cycle) left out, and every sink is in the last layer.
A channel is a straight line between two layers, or, for a back edge, an arc over the
graph; records and barriers are placed along it by :func:`along`.

>>> from snapshotlib.dataflow import iteration
>>> flow = iteration()
>>> pos = dataflow_layout(flow)
>>> geometry = channel_geometry(flow.network(), tuple(sorted(pos.items())))
>>> [len(path) for path in geometry.paths]  # L->H closes the cycle: an arc
[3, 3, 17, 3]
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import networkx as nx

from ..algorithms.barriers import back_edges

if TYPE_CHECKING:
    from ..dataflow.graph import Dataflow
    from ..model import Network

Point = tuple[float, float]

LAYER_GAP = 1.0  # between layers, in data units
ROW_GAP = 0.8  # between the operators of a layer
NODE_GAP = 0.14  # how far a channel stops short of an operator


def dataflow_layout(flow: Dataflow) -> dict[str, Point]:
    """Positions of the operators: one column per layer, sources left, sinks right.

    An operator's layer is its longest path from a source, back edges left out; every
    sink goes in the last layer. Within a layer, operators are ordered by the mean
    height of their inputs (fewer crossings), ties kept in the graph's order.

    >>> from snapshotlib.dataflow import word_count
    >>> pos = dataflow_layout(word_count())
    >>> [pos[p][0] for p in ("S1", "C1", "K")]
    [0.0, 1.0, 2.0]
    """
    net = flow.network()
    back = back_edges(net)
    graph = nx.DiGraph()
    graph.add_nodes_from(net.processes)
    graph.add_edges_from((c.src, c.dst) for i, c in enumerate(net.channels) if i not in back)
    layer: dict[str, int] = {}
    for p in nx.topological_sort(graph):
        layer[p] = max((layer[u] + 1 for u in graph.predecessors(p)), default=0)
    last = max(layer.values())
    for sink in flow.sinks:
        layer[sink] = last
    pos: dict[str, Point] = {}
    order = {p: i for i, p in enumerate(net.processes)}
    for k in range(last + 1):
        members = [p for p in net.processes if layer[p] == k]

        def height(p: str) -> tuple[float, int]:
            ys = [pos[u][1] for u in graph.predecessors(p) if u in pos]
            return (-sum(ys) / len(ys) if ys else 0.0, order[p])

        if k > 0:
            members.sort(key=height)
        for i, p in enumerate(members):
            pos[p] = (k * LAYER_GAP, ((len(members) - 1) / 2 - i) * ROW_GAP)
    return pos


@dataclass(frozen=True)
class ChannelGeometry:
    """Where each channel is drawn: fixed for a graph and its layout, so computed once."""

    paths: tuple[tuple[Point, ...], ...]  # the polyline of each channel
    lengths: tuple[tuple[float, ...], ...]  # cumulative length along each polyline
    x: tuple[float | None, ...]  # every channel's polyline, a gap after each
    y: tuple[float | None, ...]
    sizes: tuple[float, ...]  # an arrow head at the last point of each channel
    owner: tuple[int, ...]  # the channel of each point (-1: a gap)


def _straight(a: Point, b: Point) -> tuple[Point, ...]:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy) or 1.0
    s = min(NODE_GAP, 0.4 * length) / length
    start = (a[0] + dx * s, a[1] + dy * s)
    end = (b[0] - dx * s, b[1] - dy * s)
    return (start, ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2), end)


def _arc(a: Point, b: Point, top: float) -> tuple[Point, ...]:
    """A back edge: a curve from the top of ``a`` over the graph to the top of ``b``."""
    start, end = (a[0], a[1] + NODE_GAP), (b[0], b[1] + NODE_GAP)
    control = ((a[0] + b[0]) / 2, top + 0.35 + 0.1 * abs(a[0] - b[0]))
    points = []
    for k in range(17):
        t = k / 16
        u = 1 - t
        points.append(
            (
                u * u * start[0] + 2 * u * t * control[0] + t * t * end[0],
                u * u * start[1] + 2 * u * t * control[1] + t * t * end[1],
            )
        )
    return tuple(points)


@lru_cache(maxsize=16)
def channel_geometry(net: Network, positions: tuple[tuple[str, Point], ...]) -> ChannelGeometry:
    pos = dict(positions)
    back = back_edges(net)
    top = max(y for _, y in pos.values())
    paths, lengths = [], []
    xs: list[float | None] = []
    ys: list[float | None] = []
    sizes: list[float] = []
    owner: list[int] = []
    for i, c in enumerate(net.channels):
        a, b = pos[c.src], pos[c.dst]
        path = _arc(a, b, max(a[1], b[1], top)) if i in back else _straight(a, b)
        cumulative = [0.0]
        for p, q in itertools.pairwise(path):
            cumulative.append(cumulative[-1] + math.hypot(q[0] - p[0], q[1] - p[1]))
        paths.append(path)
        lengths.append(tuple(cumulative))
        xs += [x for x, _ in path] + [None]
        ys += [y for _, y in path] + [None]
        sizes += [0.0] * (len(path) - 1) + [11.0, 0.0]
        owner += [i] * len(path) + [-1]
    return ChannelGeometry(
        tuple(paths), tuple(lengths), tuple(xs), tuple(ys), tuple(sizes), tuple(owner)
    )


def along(geometry: ChannelGeometry, channel: int, t: float) -> Point:
    """The point a fraction ``t`` of the way along a channel's polyline."""
    path, cumulative = geometry.paths[channel], geometry.lengths[channel]
    goal = t * cumulative[-1]
    for k in range(1, len(path)):
        if cumulative[k] >= goal or k == len(path) - 1:
            span = cumulative[k] - cumulative[k - 1] or 1.0
            f = (goal - cumulative[k - 1]) / span
            (x0, y0), (x1, y1) = path[k - 1], path[k]
            return (x0 + (x1 - x0) * f, y0 + (y1 - y0) * f)
    return path[-1]  # pragma: no cover - a path has at least two points


def beside(geometry: ChannelGeometry, channel: int, t: float, by: float) -> Point:
    """A point ``by`` to the left of the channel (seen along it), for its labels."""
    x0, y0 = along(geometry, channel, max(0.0, t - 0.05))
    x1, y1 = along(geometry, channel, min(1.0, t + 0.05))
    length = math.hypot(x1 - x0, y1 - y0) or 1.0
    xm, ym = along(geometry, channel, t)
    return (xm - (y1 - y0) / length * by, ym + (x1 - x0) / length * by)

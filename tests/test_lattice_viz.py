"""The lattice figure, read as data: nodes, edges, the run's path, SSS, S0 and S1."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

try:
    import plotly.graph_objects as go

    from snapshotlib.checks.lattice import (
        CutLattice,
        GlobalState,
        cut_lattice,
        run_path,
        snapshot_window,
    )
    from snapshotlib.formats.scenario import load_scenario, run_scenario
    from snapshotlib.viz import lattice_figure, lattice_layout, lattice_spec
    from snapshotlib.viz.lattice import MAX_HEIGHT, TRACES
except ImportError:
    _missing = [m for m in ("plotly", "networkx") if importlib.util.find_spec(m) is None]
    if not _missing or os.environ.get("CI"):
        raise
    pytest.skip(f"needs {', '.join(_missing)} (the viz extra)", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "examples" / "scenarios" / "06-tokens-lattice.json"
WORKED = ROOT / "examples" / "scenarios" / "worked-example.json"


def nobody_holds(state: GlobalState) -> bool:
    return all(v == 0 for v in state.processes.values())


@pytest.fixture(scope="module")
def lesson() -> tuple[Any, CutLattice]:
    sim = run_scenario(load_scenario(LESSON))
    return sim, cut_lattice(sim)


def figure(sim: Any, lattice: CutLattice) -> go.Figure:
    return lattice_figure(
        lattice,
        snapshot_window(sim, "s1"),
        predicate=nobody_holds,
        predicate_name="no process holds a token",
        path=run_path(sim),
    )


def trace(fig: go.Figure, key: str) -> dict[str, Any]:
    data = fig.to_dict()["data"]
    return data[TRACES.index(key)]  # type: ignore[no-any-return]


def points(t: dict[str, Any]) -> list[tuple[float, float]]:
    return list(zip(t.get("x", ()), t.get("y", ()), strict=True))


def test_the_figure_has_its_traces_in_order_and_is_valid_plotly(
    lesson: tuple[Any, CutLattice],
) -> None:
    fig = figure(*lesson)
    assert [t.uid for t in fig.data] == list(TRACES)
    go.Figure(fig.to_dict())  # validates; raises on a misspelt property
    bare = lattice_figure(lesson[1])  # no snapshot, no predicate, no path: same traces
    assert [t.uid for t in bare.data] == list(TRACES)
    go.Figure(bare.to_dict())
    assert lattice_spec(lesson[1])["data"][2]["x"] == list(bare.data[2].x)


def test_every_cut_is_a_node_labelled_by_its_counts_one_level_per_event(
    lesson: tuple[Any, CutLattice],
) -> None:
    sim, lattice = lesson
    fig = figure(sim, lattice)
    pos = lattice_layout(lattice)
    nodes = trace(fig, "cuts"), trace(fig, "holds")
    labels = [text for t in nodes for text in t["text"]]
    assert sorted(labels) == sorted(" ".join(map(str, c)) for c in lattice.cuts)
    for cut in lattice.cuts:
        assert pos[cut][1] == sum(cut)
    assert len(set(pos.values())) == len(lattice)  # no two nodes on top of each other
    edges = trace(fig, "edges")
    assert len(edges["x"]) == 3 * len(lattice.edges)


def test_the_snapshot_cut_is_framed_and_s0_and_s1_are_ringed(
    lesson: tuple[Any, CutLattice],
) -> None:
    sim, lattice = lesson
    fig = figure(sim, lattice)
    pos = lattice_layout(lattice)
    window = snapshot_window(sim, "s1")
    sss = trace(fig, "snapshot")
    assert points(sss) == [pos[window.recorded]]
    assert list(sss["text"]) == ["SSS"]
    ringed = trace(fig, "window")
    assert points(ringed) == [pos[window.begin], pos[window.end]]
    assert list(ringed["text"]) == ["S0", "S1"]
    assert sss["marker"]["symbol"] != ringed["marker"]["symbol"]


def test_the_predicate_cuts_differ_by_shape_not_only_by_colour(
    lesson: tuple[Any, CutLattice],
) -> None:
    sim, lattice = lesson
    fig = figure(sim, lattice)
    pos = lattice_layout(lattice)
    holds, others = trace(fig, "holds"), trace(fig, "cuts")
    assert points(holds) == [pos[c] for c in lattice.holding(nobody_holds)]
    assert holds["marker"]["symbol"] != others["marker"]["symbol"]
    assert holds["name"] == "no process holds a token"
    assert holds["showlegend"]


def test_the_runs_own_order_is_drawn_through_its_cuts(lesson: tuple[Any, CutLattice]) -> None:
    sim, lattice = lesson
    pos = lattice_layout(lattice)
    assert points(trace(figure(sim, lattice), "run")) == [pos[c] for c in run_path(sim)]


def test_hovering_a_node_shows_its_global_state(lesson: tuple[Any, CutLattice]) -> None:
    sim, lattice = lesson
    holds = trace(figure(sim, lattice), "holds")
    (text,) = holds["hovertext"]
    assert "cut 1 1 1" in text
    assert "P1 0, P2 0, P3 0" in text
    assert "a on P1->P3" in text


def test_it_fits_a_projector_and_keeps_the_title_clear_of_the_modebar() -> None:
    for path in (LESSON, WORKED):
        sim = run_scenario(load_scenario(path))
        lattice = cut_lattice(sim)
        fig = lattice_figure(lattice, snapshot_window(sim, "s1"), path=run_path(sim))
        layout = fig.to_dict()["layout"]
        assert layout["height"] <= MAX_HEIGHT <= 520
        title = layout["title"]
        assert title["xanchor"] == "left" and title["x"] <= 0.05  # the modebar is top right
        assert len(title["text"]) <= 60
        assert layout["legend"]["yanchor"] == "bottom"  # the legend stays out of its way too

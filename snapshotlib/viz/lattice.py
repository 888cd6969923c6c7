"""The lattice of consistent cuts: every global state a run could have passed through.

Each consistent cut is a node labelled by the number of events each process has taken
(``1 0 2``: one event of P1, none of P2, two of P3); the initial state is at the
bottom, the final state at the top, and each level up holds cuts with one more event in
all. An edge adds one event of one process, so a path from the bottom to the top is an
order in which the events could have happened; the order in which they did happen is
drawn thick. A snapshot's recorded cut is framed (SSS), the true states when it began
(S0) and ended (S1) are ringed; the cuts where a chosen predicate holds are drawn as
diamonds, not only in another colour.

>>> from snapshotlib.formats.scenario import parse_scenario, run_scenario
>>> from snapshotlib.checks.lattice import cut_lattice, snapshot_window
>>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "tokens",
...     "initial": {"P1": 1}, "steps": [
...     {"do": "send", "from": "P1", "to": "P2", "label": "a", "payload": 1},
...     {"do": "snapshot", "at": "P2", "id": "s1"}, {"do": "run"}]}))
>>> fig = lattice_figure(cut_lattice(sim), snapshot_window(sim, "s1"))
>>> [t.uid for t in fig.data] == list(TRACES)
True
>>> fig.data[TRACES.index("snapshot")].text
('SSS',)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..checks.lattice import Cut, CutLattice, GlobalState, SnapshotWindow
from . import style
from .build import Figure, build_figure

TRACES = ("edges", "run", "cuts", "holds", "window", "snapshot")

HOLDS_FILL = "#ffd166"  # amber: light enough for dark text, distinct from white in greyscale
HOLDS_LINE = "#7a5200"
HOLDS_SYMBOL = "diamond"
CUT_SYMBOL = "circle"
NODE_SIZE = 34
MAX_HEIGHT = 520


def lattice_layout(lattice: CutLattice) -> dict[Cut, tuple[float, float]]:
    """Positions of the cuts: one row per level (total events), bottom to top.

    Within a level, cuts are ordered by the mean position of the cuts they come from
    (fewer crossing edges), ties by their counts, and centred.

    >>> from snapshotlib.checks.lattice import CutLattice
    >>> lat = CutLattice(("P1", "P2"), (("a",), ("b",)),
    ...     ((0, 0), (0, 1), (1, 0), (1, 1)), (), {})
    >>> lattice_layout(lat)
    {(0, 0): (0.0, 0), (0, 1): (-0.5, 1), (1, 0): (0.5, 1), (1, 1): (0.0, 2)}
    """
    pos: dict[Cut, tuple[float, float]] = {}
    levels: dict[int, list[Cut]] = {}
    for cut in lattice.cuts:
        levels.setdefault(sum(cut), []).append(cut)
    for level in sorted(levels):
        members = levels[level]

        def mean_x(cut: Cut) -> tuple[float, Cut]:
            xs = [
                pos[b][0]
                for k in range(len(cut))
                if cut[k] > 0 and (b := (*cut[:k], cut[k] - 1, *cut[k + 1 :])) in pos
            ]
            return (sum(xs) / len(xs) if xs else 0.0, cut)

        members.sort(key=mean_x)
        for i, cut in enumerate(members):
            pos[cut] = (i - (len(members) - 1) / 2, level)
    return pos


def _label(cut: Cut) -> str:
    return " ".join(map(str, cut))


def _describe(lattice: CutLattice, state: GlobalState) -> str:
    done = [
        f"{p}: {', '.join(lattice.events[k][: state.cut[k]]) or 'no event'}"
        for k, p in enumerate(lattice.processes)
    ]
    held = ", ".join(f"{p} {state.processes[p]!r}" for p in lattice.processes)
    moving = [f"{m.label or m.id} on {name}" for name, msgs in state.channels.items() for m in msgs]
    return (
        f"<b>cut {_label(state.cut)}</b><br>events: {'; '.join(done)}<br>states: {held}"
        f"<br>in transit: {', '.join(moving) or 'nothing'}"
    )


def lattice_figure(
    lattice: CutLattice,
    window: SnapshotWindow | None = None,
    *,
    predicate: Callable[[GlobalState], bool] | None = None,
    predicate_name: str = "the predicate holds",
    path: Sequence[Cut] = (),
    title: str | None = None,
) -> Figure:
    """The lattice of ``lattice``'s consistent cuts (see the module's docstring).

    Parameters
    ----------
    lattice
        From :func:`snapshotlib.checks.lattice.cut_lattice`.
    window
        A snapshot's S0, recorded cut and S1 (:func:`~snapshotlib.checks.lattice.snapshot_window`):
        the recorded cut is framed and labelled SSS, S0 and S1 are ringed.
    predicate, predicate_name
        Cuts whose global state satisfies ``predicate`` are diamonds, named in the legend.
    path
        A path through the lattice drawn thick, e.g. the run's own
        (:func:`~snapshotlib.checks.lattice.run_path`).
    title
        Replaces the default title (the number of cuts and paths).
    """
    return build_figure(
        lattice_spec(
            lattice,
            window,
            predicate=predicate,
            predicate_name=predicate_name,
            path=path,
            title=title,
        )
    )


def lattice_spec(
    lattice: CutLattice,
    window: SnapshotWindow | None = None,
    *,
    predicate: Callable[[GlobalState], bool] | None = None,
    predicate_name: str = "the predicate holds",
    path: Sequence[Cut] = (),
    title: str | None = None,
) -> dict[str, Any]:
    """:func:`lattice_figure` as plain ``{"data": [...], "layout": {...}}``."""
    pos = lattice_layout(lattice)
    holds = set(lattice.holding(predicate)) if predicate is not None else set()
    levels = max(sum(lattice.top), 1)
    height = min(MAX_HEIGHT, 150 + 40 * (levels + 1))
    # nodes shrink when many levels share the height (a long run), so they never touch
    size = max(14, min(NODE_SIZE, int((height - 90) / (levels + 1.4)) - 6))
    font = 12 if size >= 28 else 9

    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    for a, b in lattice.edges:
        edge_x += [pos[a][0], pos[b][0], None]
        edge_y += [pos[a][1], pos[b][1], None]
    run = [c for c in path if c in pos]

    def nodes(cuts: list[Cut], holding: bool) -> dict[str, Any]:
        return dict(
            type="scatter",
            name=predicate_name if holding else "consistent cut",
            x=[pos[c][0] for c in cuts],
            y=[pos[c][1] for c in cuts],
            mode="markers+text",
            text=[_label(c) for c in cuts],
            textfont={"size": font, "color": "#111111"},
            marker={
                "size": size + 8 if holding else size,
                "symbol": HOLDS_SYMBOL if holding else CUT_SYMBOL,
                "color": HOLDS_FILL if holding else style.WHITE_FILL,
                "line": {
                    "color": HOLDS_LINE if holding else style.WHITE_LINE,
                    "width": 2.5 if holding else style.WHITE_WIDTH,
                },
            },
            hovertext=[_describe(lattice, lattice.states[c]) for c in cuts],
            hoverinfo="text",
            showlegend=bool(cuts) and (holding or predicate is not None),
        )

    ringed = [] if window is None else [(window.begin, "S0"), (window.end, "S1")]
    if window is not None and window.begin == window.end:
        ringed = [(window.begin, "S0 = S1")]
    recorded = [] if window is None else [window.recorded]
    data: list[dict[str, Any]] = [
        dict(
            type="scatter",
            name="one more event",
            x=edge_x,
            y=edge_y,
            mode="lines",
            line={"color": style.CHANNEL, "width": 1.5},
            hoverinfo="skip",
            showlegend=False,
        ),
        dict(
            type="scatter",
            name="the order the run took",
            x=[pos[c][0] for c in run],
            y=[pos[c][1] for c in run],
            mode="lines",
            line={"color": style.HIGHLIGHT, "width": 5},
            opacity=0.55,
            hoverinfo="skip",
            showlegend=bool(run),
        ),
        nodes([c for c in lattice.cuts if c not in holds], False),
        nodes([c for c in lattice.cuts if c in holds], True),
        dict(
            type="scatter",
            name="S0, S1: when the snapshot began, ended",
            x=[pos[c][0] for c, _ in ringed],
            y=[pos[c][1] for c, _ in ringed],
            mode="markers+text",
            text=[t for _, t in ringed],
            textposition="middle left",
            textfont={"size": 14, "color": style.CUT},
            marker={
                "size": size + 10,
                "symbol": "circle-open",
                "color": style.CUT,
                "line": {"width": 2.5, "color": style.CUT},
            },
            hoverinfo="skip",
            showlegend=bool(ringed),
        ),
        dict(
            type="scatter",
            name="SSS: what the snapshot recorded",
            x=[pos[c][0] for c in recorded],
            y=[pos[c][1] for c in recorded],
            mode="markers+text",
            text=["SSS"] * len(recorded),
            textposition="middle right",
            textfont={"size": 14, "color": style.CUT},
            marker={
                "size": size + 16,
                "symbol": "square-open",
                "color": style.CUT,
                "line": {"width": 3.5, "color": style.CUT},
            },
            hoverinfo="skip",
            showlegend=bool(recorded),
        ),
    ]
    for trace, key in zip(data, TRACES, strict=True):
        trace["uid"] = key  # the legend shows names; tests and widgets find traces by uid
    width = max((sum(1 for c in lattice.cuts if sum(c) == n) for n in range(levels + 1)), default=1)
    events = " · ".join(
        f"{p}: {', '.join(names) or '-'}"
        for p, names in zip(lattice.processes, lattice.events, strict=True)
    )
    heading = title or (
        f"{len(lattice)} consistent cuts, {lattice.count_paths()} orders of the events"
    )
    layout = dict(
        title={"text": heading, "x": 0.01, "xanchor": "left", "font": {"size": 15}},
        font=style.FONT,
        modebar=style.MODEBAR,
        showlegend=True,
        legend={"x": 1.0, "xanchor": "left", "y": 0.0, "yanchor": "bottom", "font": {"size": 12}},
        xaxis={
            "visible": False,
            "range": [-(width + 1) / 2 - 0.2, (width + 1) / 2 + 0.2],
            "fixedrange": True,
        },
        yaxis={"visible": False, "range": [-0.7, levels + 0.7], "fixedrange": True},
        annotations=[
            {
                "x": pos[cut][0],
                "y": pos[cut][1],
                "xshift": size / 2 + 6,
                "xanchor": "left",
                "text": text,
                "showarrow": False,
                "font": {"size": 12, "color": style.WHITE_LINE},
            }
            for cut, text in ((lattice.bottom, "initial state"), (lattice.top, "final state"))
        ]
        + [
            {
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": 0,
                "yshift": -8,
                "xanchor": "left",
                "yanchor": "top",
                "text": f"a node's label: events taken by {', '.join(lattice.processes)}"
                f"<br>events: {events}",
                "showarrow": False,
                "align": "left",
                "font": {"size": 12},
            }
        ],
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 50},
        plot_bgcolor="#ffffff",
        uirevision="lattice",
    )
    return {"data": data, "layout": layout}

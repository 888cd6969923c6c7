"""The commutation view: Dijkstra's reordering, one adjacent swap at a time.

The execution is a row of application actions, white or red; the swap just made is
outlined, the count of inversions still to remove is in the title, and once every
white action precedes every red one a line marks the state between the two parts: SSS.
When a red message is accepted in a white action, the swap that cannot be made is
shown instead, naming the message.
"""

from __future__ import annotations

import math
from typing import Any

from ..checks.commutation import CommutationResult, arrangement
from ..colouring import Colouring
from . import style
from .build import Figure, build_figure

TRACES = ("actions", "swap")


def commutation_figure(colouring: Colouring, result: CommutationResult, done: int = 0) -> Figure:
    """The arrangement after ``done`` of ``result.swaps`` (0 = the recorded execution)."""
    return build_figure(commutation_spec(colouring, result, done))


def commutation_spec(
    colouring: Colouring, result: CommutationResult, done: int = 0
) -> dict[str, Any]:
    """:func:`commutation_figure` as plain ``{"data": [...], "layout": {...}}``."""
    trace = colouring.trace
    swaps = result.swaps or ()
    done = max(0, min(done, len(swaps)))
    listed = result.swaps is not None
    if listed:
        seq = arrangement(result, done)
    else:  # too many swaps to list: show where they lead (when they lead anywhere)
        seq = list(result.order if result.holds else result.original)
    xs = list(range(len(seq)))
    reds = [colouring.is_red(i) for i in seq]
    names = [trace.action_name(i) for i in seq]
    hover = [
        f"<b>{trace.action_name(i)}</b> ({trace.actions[i].kind}) at {trace.actions[i].process}"
        f"<br>{'red' if r else 'white'}; trace position {i}"
        for i, r in zip(seq, reds, strict=True)
    ]
    swap_x: list[float] = []
    note = ""
    blocked = next((s for s in swaps if not s.legal), None)
    if done > 0 and swaps[done - 1].legal:
        last = swaps[done - 1]
        swap_x = [last.position, last.position + 1]
        note = (
            f"swapped {trace.action_name(last.white)} (white) before "
            f"{trace.action_name(last.red)} (red)"
        )
    if blocked is not None and done >= swaps.index(blocked):
        swap_x = [blocked.position, blocked.position + 1]
        note = (
            f"cannot swap: red {trace.action_name(blocked.red)} sends message "
            f"{trace.message_name(trace.actions[blocked.white].message)}, which white "
            f"{trace.action_name(blocked.white)} accepts"
        )
    illegal_shown = blocked is not None and done >= swaps.index(blocked)
    swap_colour = style.ILLEGAL if illegal_shown else style.HIGHLIGHT
    remaining = result.inversions - min(done, swaps.index(blocked) if blocked else done)
    if not listed:
        remaining = 0 if result.holds else result.inversions
    finished = blocked is None and done == len(swaps) and (listed or result.holds)
    slot = (style.FIGURE_WIDTH - 20) / (max(len(xs), 4) + 1)  # pixels per action
    labels, positions, thinned = _fitted_labels(names, slot, keep=set(map(int, swap_x)))

    data: list[dict[str, Any]] = [
        dict(
            type="scatter",
            name="actions",
            x=xs,
            y=[0] * len(xs),
            mode="markers+text",
            text=labels,
            textposition=positions,
            marker={
                "size": max(8, min(26, int(slot * 0.9))),
                "symbol": [style.symbol(r) for r in reds],
                "color": [style.fill(r) for r in reds],
                "line": {
                    "color": [style.outline(r) for r in reds],
                    "width": [style.width(r) for r in reds],
                },
            },
            hovertext=hover,
            hoverinfo="text",
        ),
        dict(
            type="scatter",
            name="swap",
            x=swap_x,
            y=[0] * len(swap_x),
            mode="markers",
            marker={
                "size": 40,
                "symbol": "square-open",
                "color": swap_colour,  # open symbols are drawn in the marker colour
                "line": {"width": 3, "color": swap_colour},
            },
            hoverinfo="skip",
        ),
    ]
    shapes = []
    annotations = []
    if finished:
        boundary = result.n_white - 0.5
        shapes.append(
            {
                "type": "line",
                "x0": boundary,
                "x1": boundary,
                "y0": -0.6,
                "y1": 0.6,
                "line": {"color": style.CUT, "width": 3, "dash": "dash"},
            }
        )
        annotations.append(
            {
                "x": boundary,
                "y": 0.75,
                "text": "SSS",
                "showarrow": False,
                "font": {"color": style.CUT, "size": 14},
            }
        )
    if thinned:
        annotations.append(
            {
                "xref": "paper",
                "yref": "paper",
                "x": 1,
                "y": 1.02,
                "xanchor": "right",
                "text": f"one action in {thinned} named; hover over any for its name",
                "showarrow": False,
                "font": {"size": 11, "color": style.WHITE_LINE},
            }
        )
    if note:
        annotations.append(
            {
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": -0.25,
                "xanchor": "left",
                "text": note,
                "showarrow": False,
                "font": {"size": 12},
            }
        )
    layout = dict(
        title={
            "text": (
                f"Dijkstra's reordering: swap {done} of {len(swaps)} refused, "
                f"{remaining} inversion(s) cannot be removed"
                if illegal_shown
                else f"Dijkstra's reordering: swap {done} of {len(swaps)}, "
                f"{remaining} inversion(s) left"
            ),
            "font": {"size": 15},
        },
        showlegend=False,
        font=style.FONT,
        modebar=style.MODEBAR,
        xaxis={"visible": False, "range": [-1, max(len(xs), 4)]},
        yaxis={"visible": False, "range": [-1, 1]},
        shapes=shapes,
        annotations=annotations,
        height=220,
        width=style.FIGURE_WIDTH,
        margin={"l": 10, "r": 10, "t": 40, "b": 50},
        plot_bgcolor="#ffffff",
        uirevision="commutation",
    )
    return {"data": data, "layout": layout}


#: the width of one character of the labels, in pixels (13 px text)
CHAR_PX = 7.5


def _fitted_labels(
    names: list[str], slot: float, keep: set[int]
) -> tuple[list[str], list[str], int]:
    """Labels that do not run into each other at ``slot`` pixels per action: below the
    actions while they fit; otherwise every n-th action named, below and above in turn,
    so that two names on one row stand 2n slots apart (the actions in ``keep``, the swap
    shown, are always named). Returns the labels, their positions and n (0 when every
    action is named)."""
    widest = max((len(n) for n in names), default=0) * CHAR_PX
    if widest <= slot * 0.95:
        return list(names), ["bottom center"] * len(names), 0
    every = max(1, math.ceil(widest / (2 * slot * 0.95)))
    positions = ["top center" if (k // every) % 2 else "bottom center" for k in range(len(names))]
    labels = [n if k % every == 0 or k in keep else "" for k, n in enumerate(names)]
    return labels, positions, every if every > 1 else 0

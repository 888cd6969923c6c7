"""Colours and shapes shared by the figures.

White and red must stay distinguishable in greyscale and for colour-blind readers, so
red is never shown by colour alone: a red process or event also has a thick dark
outline and a different symbol, a white one a thin grey outline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

WHITE_FILL = "#ffffff"
WHITE_LINE = "#6b6b6b"
WHITE_WIDTH = 1.5
RED_FILL = "#d62728"
RED_LINE = "#3b0000"
RED_WIDTH = 3.5
WHITE_SYMBOL = "circle"
RED_SYMBOL = "square"

CHANNEL = "#9a9a9a"
RECORDING = "#ff9f1c"  # a channel whose state is being recorded
#: the width of the widgets' wide figures, in pixels. A figure widget is drawn before
#: the page has placed it, so it cannot take its column's width; this fits a
#: projector's notebook column (1280x720 at 150% zoom, the file browser hidden).
FIGURE_WIDTH = 680
#: plotly's tool bar upright at the right edge, where it covers no title
MODEBAR = {"orientation": "v"}
MESSAGE = "#1f77b4"
MARKER = "#222222"
MARKER_SYMBOL = "diamond"
CUT = "#7b2cbf"
OTHER_CUT = "#b8a3d6"
CHECKPOINT = "#1b7837"  # a saved checkpoint (lesson 11): dark green, apart from the cut
HIGHLIGHT = "#0057b7"  # dark blue: visible on white, and in greyscale
ILLEGAL = "#e7298a"

FONT = {"family": "Inter, Helvetica, Arial, sans-serif", "size": 13}


def fill(red: bool) -> str:
    return RED_FILL if red else WHITE_FILL


def outline(red: bool) -> str:
    return RED_LINE if red else WHITE_LINE


def width(red: bool) -> float:
    return RED_WIDTH if red else WHITE_WIDTH


def label_colour(red: bool) -> str:
    """Text drawn on a process: white on red, near-black on white (contrast >= 4.5:1)."""
    return "#ffffff" if red else "#111111"


def symbol(red: bool) -> str:
    return RED_SYMBOL if red else WHITE_SYMBOL


def channels_trace(
    x: Sequence[float | None], y: Sequence[float | None], sizes: Sequence[float], hovertext: Any
) -> dict[str, Any]:
    """The channel lines of a network view, an arrowhead (``sizes``) at each channel's end."""
    return dict(
        type="scatter",
        name="channels",
        x=x,
        y=y,
        mode="lines+markers",
        line={"color": CHANNEL, "width": 1.5},
        marker={"symbol": "arrow", "angleref": "previous", "size": sizes, "color": CHANNEL},
        hovertext=hovertext,
        hoverinfo="text",
    )

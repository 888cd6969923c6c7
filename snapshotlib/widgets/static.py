"""A static picture of a figure, for where widgets cannot run.

Lessons call :func:`show_static` after their key interactive figures, so a notebook
viewed without a kernel (on a website, in a PDF) still shows what the widget showed.
The picture is an SVG made by kaleido, which drives a Chromium browser; where there
is none (a Binder session, which has live widgets anyway) nothing is shown.
"""

from __future__ import annotations

import shutil
from typing import Any

import plotly.graph_objects as go


def static_svg(fig: go.Figure, width: int = 760, height: int | None = None) -> str | None:
    """The figure as SVG text, or ``None`` when no renderer is available here."""
    try:
        import kaleido  # noqa: F401  (the renderer plotly uses)
    except ImportError:
        return None
    if not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")):
        return None
    try:
        image = fig.to_image(format="svg", width=width, height=height or fig.layout.height)
    except Exception:  # a missing or broken browser: the picture is only a fallback
        return None
    return image.decode("utf-8") if isinstance(image, bytes) else str(image)


def show_static(fig: go.Figure, width: int = 760, height: int | None = None) -> Any:
    """Display the static picture of ``fig`` (in a notebook), if one can be made."""
    from IPython.display import SVG, display

    svg = static_svg(fig, width, height)
    if svg is not None:
        display(SVG(svg))  # type: ignore[no-untyped-call]
    return None

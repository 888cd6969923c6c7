"""A static picture of a figure, for where widgets cannot run.

Lessons call :func:`show_static` after their key interactive figures, so a notebook
viewed without a kernel (on a website, in a PDF, freshly downloaded) still shows what
the widget showed. The picture is a PNG: JupyterLab shows images only in trusted
notebooks when they are SVG, and every freshly cloned or downloaded notebook is
untrusted, while a PNG shows everywhere. It is made by kaleido, which drives a Chromium
browser. Where there is none (a Binder session) a figure that is not already on screen
as a widget is shown as an interactive plotly figure instead, so nothing goes missing.
"""

from __future__ import annotations

import shutil
from typing import Any

import plotly.graph_objects as go


def static_png(fig: go.Figure, width: int = 760, height: int | None = None) -> bytes | None:
    """The figure as PNG bytes, or ``None`` when no renderer is available here."""
    try:
        import kaleido  # noqa: F401  (the renderer plotly uses)
    except ImportError:
        return None
    if not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")):
        return None
    try:
        image = fig.to_image(format="png", width=width, height=height or fig.layout.height)
    except Exception:  # a missing or broken browser: the picture is only a fallback
        return None
    return bytes(image)


def show_static(fig: go.Figure, width: int = 760, height: int | None = None) -> Any:
    """Display the static picture of ``fig`` (in a notebook), if one can be made."""
    from IPython.display import Image, display

    png = static_png(fig, width, height)
    if png is not None:
        display(Image(data=png, format="png", width=width))  # type: ignore[no-untyped-call]
    elif not isinstance(fig, go.FigureWidget):  # a widget is on screen already
        display(go.Figure(fig).update_layout(width=width))  # type: ignore[no-untyped-call]
    return None

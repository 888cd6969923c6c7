"""A static picture of a figure, for where widgets cannot run.

Lessons call :func:`show_static` after their key interactive figures, so a notebook
viewed without a kernel (on a website, in a PDF, freshly downloaded) still shows what
the widget showed. The picture is a PNG: JupyterLab shows images only in trusted
notebooks when they are SVG, and every freshly cloned or downloaded notebook is
untrusted, while a PNG shows everywhere. It is made by kaleido, which drives a Chromium
browser. Where there is none (a Binder session) a figure that is not already on screen
as a widget is shown as an interactive plotly figure instead, so nothing goes missing.

Making a picture may hang: kaleido waits without limit for its browser to start, and on
a loaded machine it once never did, which left a lesson's cell running for good. So a
picture gets :data:`RENDER_BACKSTOP` seconds of wall-clock time (it takes about one);
past that the figure is shown live instead, and no later picture of this session waits
on the stuck renderer.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from typing import Any

import plotly.graph_objects as go

#: wall-clock seconds a picture may take before the figure is shown live instead
RENDER_BACKSTOP = 120.0
#: set once a picture has taken longer than the backstop: the renderer is stuck
_stuck = threading.Event()


#: the loggers of kaleido and of the browser driver under it (choreographer), which log
#: a traceback to the cell's output for a message they ignore (seen on a loaded machine:
#: "JSONError decoding message. Ignoring"): a learner would see it in red under a picture
#: that came out right. A picture is only a fallback, and its failure is said otherwise.
RENDERER_LOGGERS = ("kaleido", "choreographer", "logistro")


def quiet_renderer() -> None:
    """Keep the renderer's own log records (errors included) out of the notebook."""
    for name in RENDERER_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def static_png(fig: go.Figure, width: int = 760, height: int | None = None) -> bytes | None:
    """The figure as PNG bytes, or ``None`` when no renderer is available here (or it did
    not answer within :data:`RENDER_BACKSTOP` seconds)."""
    try:
        import kaleido  # noqa: F401  (the renderer plotly uses)
    except ImportError:
        return None
    quiet_renderer()
    if _stuck.is_set():
        return None
    if not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")):
        return None
    made: list[bytes] = []

    def render() -> None:
        # a missing or broken browser: no picture (it is only a fallback)
        with contextlib.suppress(Exception):
            image = fig.to_image(format="png", width=width, height=height or fig.layout.height)
            made.append(bytes(image))

    worker = threading.Thread(target=render, name="static-picture", daemon=True)
    worker.start()
    worker.join(RENDER_BACKSTOP)
    if worker.is_alive():
        _stuck.set()
        return None
    return made[0] if made else None


def show_static(fig: go.Figure, width: int = 760, height: int | None = None) -> Any:
    """Display the static picture of ``fig`` (in a notebook), if one can be made."""
    from IPython.display import Image, display

    png = static_png(fig, width, height)
    if png is not None:
        display(Image(data=png, format="png", width=width))  # type: ignore[no-untyped-call]
    elif not isinstance(fig, go.FigureWidget):  # a widget is on screen already
        display(go.Figure(fig).update_layout(width=width))  # type: ignore[no-untyped-call]
    return None

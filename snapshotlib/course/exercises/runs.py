"""What the exercise drivers share: stopping a run whose markers never die out, and
saying where in the learner's code a run failed."""

from __future__ import annotations

import traceback
from typing import Any

#: a run that sends more markers than this has markers causing markers: it is stopped
MAX_MARKERS = 2000


class TooManyMarkers(RuntimeError):
    """The run kept sending markers."""


def where(e: BaseException) -> str:
    """Where in the learner's code ``e`` was raised, if it was."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "snapshotlib" not in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    return f" (in {f.name}: {f.line})" if f.line else f" (in {f.name})"


def capped(answer_class: Any) -> Any:
    """``answer_class``, stopped with :class:`TooManyMarkers` after :data:`MAX_MARKERS`."""

    class Capped(answer_class):  # type: ignore[misc,valid-type]
        def on_control(self, *args: Any) -> None:
            self._markers_seen = getattr(self, "_markers_seen", 0) + 1
            if self._markers_seen > MAX_MARKERS:
                raise TooManyMarkers(f"more than {MAX_MARKERS} markers in one run")
            super().on_control(*args)

    Capped.__name__ = Capped.__qualname__ = getattr(answer_class, "__name__", "Capped")
    return Capped

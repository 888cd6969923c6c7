"""What the exercise drivers share: playing a recipe under a learner's algorithm,
stopping a run whose markers never die out, and saying where in the learner's code a
run failed."""

from __future__ import annotations

import json
import traceback
from collections.abc import Mapping
from typing import Any, ClassVar

from ...algorithms.state import PLAIN
from ...formats.scenario import EXAMPLES, parse_scenario, run_scenario
from ...workloads import max_extra_edges, random_execution, random_strongly_connected

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
        # a count; the learner's own fields stay as the learner's class declares them
        state_fields: ClassVar[Mapping[str, str]] = {"_markers_seen": PLAIN}

        def on_control(self, *args: Any) -> None:
            self._markers_seen = getattr(self, "_markers_seen", 0) + 1
            if self._markers_seen > MAX_MARKERS:
                raise TooManyMarkers(f"more than {MAX_MARKERS} markers in one run")
            super().on_control(*args)

    Capped.__name__ = Capped.__qualname__ = getattr(answer_class, "__name__", "Capped")
    return Capped


def simulate(algorithm: Any, recipe: dict[str, Any], fifo: bool = True) -> Any:
    """Play ``recipe`` under ``algorithm``: a course scenario (``"scenario"``: its name),
    a scenario document (``"document"``), or a random run on a random strongly connected
    network (``"processes"``, ``"seed"`` and optional ``"extra"`` edges,
    ``"network_seed"``, ``"n_actions"``, ``"snapshots"``, ``"initiators"``,
    ``"spread"``), whose channels are FIFO or not as ``fifo`` says."""
    if "scenario" in recipe or "document" in recipe:
        if "scenario" in recipe:
            path = EXAMPLES / f"{recipe['scenario']}.json"
            data, source = json.loads(path.read_text(encoding="utf-8")), path.name
        else:
            data, source = dict(recipe["document"]), "the recipe"
        # Parsing checks the scenario on a simulator of its own algorithm; name one that is
        # not the marker algorithm, which a learner's class may not use (the grader watches).
        data["algorithm"] = {"name": "clock", "at": 0}
        return run_scenario(parse_scenario(data, source=source), algorithm=algorithm)
    n = int(recipe["processes"])
    net = random_strongly_connected(
        n, extra_edges=min(int(recipe.get("extra", 0)), max_extra_edges(n)),
        seed=int(recipe.get("network_seed", 0)), fifo=fifo,
    )  # fmt: skip
    return random_execution(
        net,
        seed=int(recipe["seed"]),
        n_actions=int(recipe.get("n_actions", 40)),
        snapshots=int(recipe.get("snapshots", 1)),
        initiators_per_snapshot=min(int(recipe.get("initiators", 1)), n),
        spread=recipe.get("spread"),
        algorithm=algorithm,
    )

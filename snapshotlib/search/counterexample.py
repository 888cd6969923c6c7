"""A violation's run as a scenario file, which ``snapshotlib run`` and ``check``, the
Explorer, the CommutationStepper and the ShiViz export all read.
"""

from __future__ import annotations

from typing import Any

from ..actions import Action
from ..apps import make_app
from ..formats.scenario import play_steps
from ..simulator import Simulator
from .explore import Violation
from .system import System

#: algorithms a scenario file can name (see :mod:`snapshotlib.formats.scenario`)
_SCENARIO_ALGORITHMS = ("chandy-lamport", "lai-yang")


def replay(system: System, path: tuple[Action, ...]) -> tuple[Simulator, list[dict[str, Any]]]:
    """Take ``path`` after the system's prefix on a new run; the run, and every step
    (prefix and path) as a scenario step."""
    sim = Simulator(system.network, system.app, system.initial, system.algorithm)
    steps: list[dict[str, Any]] = []
    play_steps(sim, (*system.prefix, *path), f"{system.name}: counterexample step", steps)
    sim.algorithm.finish()
    return sim, steps


def counterexample_scenario(violation: Violation, system: System) -> dict[str, Any]:
    """The scenario file (as a dict, for ``json.dump``) of ``violation``'s run."""
    sim, steps = replay(system, violation.path)
    net = system.network
    algorithm = sim.algorithm.name
    data: dict[str, Any] = {
        "name": f"{system.name}-counterexample",
        "description": (
            f"The shortest run found that breaks '{violation.invariant}': "
            f"{violation.reason}. Found by snapshotlib search on: {system.describe()}."
        ),
        "processes": list(net.processes),
        "channels": [[c.src, c.dst] for c in net.channels],
        "fifo": net.fifo,
        "app": make_app(system.app).name,
        "initial": dict(system.initial),
        "steps": steps,
    }
    if algorithm in _SCENARIO_ALGORITHMS:
        data["algorithm"] = {"name": algorithm}
    else:
        data["description"] += f" Replay it under {type(sim.algorithm).__name__}."
    return data

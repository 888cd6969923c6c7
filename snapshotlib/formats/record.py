"""Record a run as a scenario: every action it took, as steps that replay it exactly.

A recorded run is a scenario (the JSON format of ``examples/scenarios/``) whose steps
are the trace's actions one by one (no ``run`` steps), so replaying it gives the same
trace. Written one per line, recorded runs form the JSON Lines files that
``snapshotlib check-traces`` checks in bulk; ``snapshotlib run --record FILE`` and the
explorer's :meth:`~snapshotlib.widgets.Explorer.record` append them.

>>> from snapshotlib.formats.scenario import parse_scenario, run_scenario
>>> from snapshotlib.workloads import random_execution, ring
>>> sim = random_execution(ring(3), seed=2, n_actions=12)
>>> again = run_scenario(parse_scenario(recorded_scenario(sim)))
>>> again.trace.actions == sim.trace.actions
True
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..actions import Action, Internal, Send, StartSnapshot
from ..apps import APPLICATIONS
from ..simulator import Simulator
from .scenario import ScenarioError

#: algorithms a scenario can name without further parameters
_PLAIN_ALGORITHMS = ("chandy-lamport", "lai-yang")


def recorded_scenario(sim: Simulator, name: str = "recorded") -> dict[str, Any]:
    """The scenario that replays ``sim``'s run action by action.

    :class:`~snapshotlib.formats.scenario.ScenarioError` when the run cannot be written
    as a scenario: an application or algorithm the format has no name for, or (on
    non-FIFO channels) a delivered message without a label that tells it apart.
    """
    if sim.app.name not in APPLICATIONS:
        raise ScenarioError(
            f"cannot record a run of the {sim.app.name!r} application as a scenario "
            f"(scenarios know {', '.join(APPLICATIONS)})"
        )
    if sim.algorithm.name not in _PLAIN_ALGORITHMS:
        raise ScenarioError(
            f"cannot record a run under {sim.algorithm.name!r} as a scenario "
            f"(recordable: {', '.join(_PLAIN_ALGORITHMS)})"
        )
    net = sim.network
    steps = [
        action_step(sim.action(number), sim, a.message, number, name_fifo=False)
        for number, a in enumerate(sim.trace.actions)
    ]
    data: dict[str, Any] = {
        "name": name,
        "processes": list(net.processes),
        "channels": [[c.src, c.dst] for c in net.channels],
        "fifo": net.fifo,
        "app": sim.app.name,
        "initial": dict(sim.initial),
        "algorithm": {"name": sim.algorithm.name},
        "steps": steps,
    }
    return data


def action_step(
    action: Action,
    sim: Simulator,
    message: int | None = None,
    number: int | None = None,
    *,
    name_fifo: bool = True,
) -> dict[str, Any]:
    """The scenario step that takes ``action`` in ``sim``: the one way a run's actions
    are written as steps (a recorded run, a search's counterexample).

    A delivery names what it takes: ``message``, an id in ``sim``'s trace, or else what
    ``action`` takes there now (the head of a FIFO channel). A marker is named by its
    snapshot id; a message by its label, which on a non-FIFO channel must tell it apart
    from the others on it (:class:`ScenarioError` if not; ``number``, the action's place
    in the run, goes in that message). On a FIFO channel, unless ``name_fifo`` is false
    (a recorded run's steps stay short), the label or marker is said when there is one,
    so the step reads as what it does; replaying takes the head anyway.
    """
    if isinstance(action, StartSnapshot):
        return {"do": "snapshot", "at": action.process, "id": action.snapshot_id}
    if isinstance(action, Internal):
        step: dict[str, Any] = {"do": "internal", "at": action.process}
    elif isinstance(action, Send):
        step = {"do": "send", "from": action.src, "to": action.dst}
        if action.payload is not None:
            step["payload"] = action.payload
    else:
        channel = action.channel
        step = {"do": "deliver", "from": channel.src, "to": channel.dst}
        if name_fifo or not sim.network.fifo:
            if message is None:
                message = action.message
            if message is None:
                message = sim.queued(sim.network.channel_index(channel))[0]
            step.update(_named(sim, message, number))
    if action.label is not None:
        step["label"] = action.label
    return step


def _named(sim: Simulator, message: int, number: int | None) -> dict[str, str]:
    """How a deliver step names ``message``."""
    trace = sim.trace
    rec = trace.messages[message]
    if rec.kind != "app":
        return {"marker": str(rec.tag)}
    if sim.network.fifo:
        return {} if rec.label is None else {"msg": rec.label}
    queued = sim.queued(rec.channel)
    if message in queued:  # about to be delivered: the first in flight with its label?
        same = [m for m in queued if trace.messages[m].label == rec.label]
        twins = 1 if same[0] == message else 2
    else:  # delivered already: no other message on its channel may have its label
        twins = sum(
            1 for other in trace.messages
            if other.channel == rec.channel and other.kind == "app" and other.label == rec.label
        )  # fmt: skip
    if rec.label is None or twins > 1:
        where = f"action {number}: " if number is not None else ""
        raise ScenarioError(
            f"{where}message #{message} on a non-FIFO channel has no label of its own, so "
            "a scenario cannot say which message was delivered (label every send)"
        )
    return {"msg": rec.label}


def append_record(sim: Simulator, path: str | Path, name: str = "recorded") -> Path:
    """Append ``sim``'s run to the JSON Lines file ``path`` (one scenario per line)."""
    line = json.dumps(recorded_scenario(sim, name), separators=(",", ":"))
    out = Path(path)
    with out.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
    return out

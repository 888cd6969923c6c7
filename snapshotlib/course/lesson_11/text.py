"""What lesson 11 prints and draws: a run with its checkpoints, the rollbacks that lead
to its recovery line, and the line itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...checks.cut import cut_limits
from ...checks.recovery import Rollback, checkpoint_sets
from ...simulator import Simulator
from ...viz import spacetime_figure
from ...viz.style import CHECKPOINT

#: the lesson's run (a token passed around twice) and its two sets of checkpoints
RUN = "11-checkpoints"
CHECKPOINTS: dict[str, list[int]] = {"P1": [1, 2], "P2": [2, 4], "P3": [1]}
DOMINO: dict[str, list[int]] = {"P1": [2], "P2": [1, 3], "P3": [2]}


def events_text(sim: Simulator, process: str, count: int) -> str:
    """The first ``count`` events of ``process`` by label: ``"get-a, b"``, or
    ``"nothing (its start)"``."""
    trace = sim.trace
    labels = [trace.action_name(i) for i in trace.process_actions(process)[:count]]
    return ", ".join(labels) if labels else "nothing (its start)"


def checkpoints_text(sim: Simulator, checkpoints: Mapping[str, Sequence[int]]) -> str:
    """One line per process: its events, then what each of its checkpoints holds."""
    lines = []
    for p, marks in checkpoint_sets(sim.trace, checkpoints).items():
        events = events_text(sim, p, len(sim.trace.process_actions(p)))
        saved = "; ".join(f"{k}: {events_text(sim, p, k)}" for k in marks if k > 0)
        lines.append(f"{p}: events {events}; checkpoints {saved or 'none of its own'}")
    return "\n".join(lines)


def rollbacks_text(line: Mapping[str, int], steps: Sequence[Rollback]) -> str:
    """The rollbacks in the order they were taken, then the recovery line."""
    lines = [
        f"{s.process} received {s.message}, an orphan: {s.process} rolls back to {s.to}"
        for s in steps
    ]
    lines.append("recovery line: " + " ".join(f"{p} {k}" for p, k in line.items()))
    return "\n".join(lines)


def checkpoints_figure(
    sim: Simulator,
    checkpoints: Mapping[str, Sequence[int]],
    line: Mapping[str, int] | None = None,
) -> Any:
    """The run as a space-time diagram with each checkpoint as a bar across its process's
    line, and ``line`` (a recovery line, counts per process) drawn as the cut."""
    trace = sim.trace
    fig = spacetime_figure(sim, cut=cut_limits(trace, line) if line is not None else None)
    row = {p: k for k, p in enumerate(sim.network.processes)}
    xs, ys, hover = [], [], []
    for p, marks in checkpoint_sets(trace, checkpoints).items():
        for k in marks:
            # where a cut through this checkpoint crosses the line: before the next event
            xs.append(cut_limits(trace, {p: k})[p] - 0.5)
            ys.append(row[p])
            hover.append(f"{p}'s checkpoint after {k} events: {events_text(sim, p, k)}")
    fig.add_scatter(
        x=xs,
        y=ys,
        mode="markers",
        name="checkpoint",
        marker={"symbol": "line-ns", "size": 22, "line": {"width": 4, "color": CHECKPOINT}},
        hovertext=hover,
        hoverinfo="text",
    )
    return fig

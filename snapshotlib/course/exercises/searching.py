"""Exhaustive search over a learner's class, for the exercises' tests and feedback.

:func:`search_report` runs :func:`snapshotlib.search.search` on a small system under a
class and reports, as plain data, whether every interleaving holds, the shortest
failing run as scenario steps, and the **outcomes**: every distinct set of snapshots
recorded where nothing more can happen. The tests run the same system under the
engine's class in the grader's process and compare with :func:`search_difference`: a
class that behaves like the engine's records the same outcomes in every interleaving.
"""

from __future__ import annotations

from typing import Any

from ...search import Invariant, System, search
from ...search.command import describe_step
from ...simulator import Simulator

#: states a search may reach before it stops (a class whose runs never end)
MAX_STATES = 60_000


def outcome(sim: Simulator) -> list[Any]:
    """What the snapshots of a finished run recorded, as plain data: per snapshot, each
    process's recorded state and each channel's recorded messages by label (sorted on a
    non-FIFO network, where order means nothing)."""
    out = []
    fifo = sim.network.fifo
    for sid, snap in sorted(sim.snapshots().items()):
        states = sorted((p, repr(r.state)) for p, r in snap.processes.items())
        channels = []
        for name, msgs in sorted(snap.channels.items()):
            labels = [str(m.label) for m in msgs]
            channels.append([name, labels if fifo else sorted(labels)])
        out.append([sid, [list(s) for s in states], channels, bool(snap.complete)])
    return out


def search_report(system: System, max_states: int = MAX_STATES) -> dict[str, Any]:
    """Search ``system`` (its algorithm: the class under test); plain data."""
    report: dict[str, Any] = {
        "error": None,
        "ok": False,
        "exhaustive": False,
        "invariant": None,
        "reason": None,
        "steps": [],
        "states": 0,
        "outcomes": [],
        "control": "marker",
    }
    seen: set[str] = set()

    def collect(sim: Simulator) -> None:
        seen.add(repr(outcome(sim)))

    invariants = ["consistent", "dijkstra", "conservation", "completes"]
    try:
        result = search(
            system, [*invariants, Invariant("outcomes", collect)], max_states=max_states
        )
    except Exception as e:
        report["error"] = f"{type(e).__name__}: {e}"
        return report
    report["states"] = result.stats.distinct
    report["control"] = (
        str(result.violation.sim.algorithm.control_kind) if result.violation else "marker"
    )
    report["exhaustive"] = result.exhaustive
    report["ok"] = result.ok
    report["outcomes"] = sorted(seen)
    if result.violation is not None:
        v = result.violation
        report["invariant"] = v.invariant
        report["reason"] = v.reason
        report["steps"] = result.counterexample()["steps"]
    return report


def open_failing_run(system: System, max_states: int = MAX_STATES) -> Any:
    """In the notebook: the shortest run of ``system`` that breaks an invariant, opened
    in the explorer, rewound; a line saying so when none does, or when the search
    stopped at ``max_states`` (as the tests' searches do: a learner's class whose runs
    never end would otherwise keep the notebook busy for good)."""
    from ...widgets import Explorer

    result = search(system, max_states=max_states)
    if result.violation is None:
        if result.limited:
            return (
                f"no failing run in the first {max_states:,} states, where the search "
                "stopped (the engine's class needs far fewer): do markers keep causing "
                "more markers?"
            )
        return f"every interleaving holds ({result.stats.distinct:,} states)"
    print(f"{result.violation.invariant}: {result.violation.reason}")
    return rewound(Explorer(result.violation.sim))


def rewound(explorer: Any) -> Any:
    """``explorer`` (opened on a failing run) taken back to its start, so that **Redo**
    takes the run's actions one at a time."""
    while explorer.sim.undo():
        pass
    explorer.refresh()
    explorer._say(
        f"the failing run, rewound: press Redo to take its {len(explorer.sim._redo)} actions"
    )
    return explorer


def failing_run_text(report: dict[str, Any]) -> str:
    """The report's failing run as numbered lines, and what breaks at its end."""
    control = str(report.get("control", "marker"))
    lines = []
    for k, step in enumerate(report["steps"], 1):
        try:
            said = describe_step(step, control)
        except (KeyError, TypeError):  # not a step the search writes: shown as it is
            said = repr(step)[:200]
        lines.append(f"  {k}. {said}")
    return "\n".join([*lines, f"  then: {report['reason']}"])


#: the fields of a report and their types, as :func:`search_report` makes them
_REPORT_TYPES: dict[str, type | tuple[type, ...]] = {
    "error": (str, type(None)),
    "ok": bool,
    "exhaustive": bool,
    "invariant": (str, type(None)),
    "reason": (str, type(None)),
    "steps": list,
    "states": int,
    "outcomes": list,
    "control": str,
}


def malformed(report: Any) -> str | None:
    """What is wrong with ``report`` as a :func:`search_report` (it comes back from the
    learner's process, which may have replaced the function that makes it); None when it
    has the fields and types one has. A driver that stopped early reports only an error."""
    if not isinstance(report, dict):
        return f"a {type(report).__name__}, not a report"
    if isinstance(report.get("error"), str) and report["error"]:
        return None
    for name, kind in _REPORT_TYPES.items():
        if not isinstance(report.get(name), kind):
            return f"its field {name!r} is {report.get(name)!r}"
    if not all(isinstance(o, str) for o in report["outcomes"]):
        return "its outcomes are not all text"
    if not all(isinstance(s, dict) for s in report["steps"]):
        return "its steps are not all steps"
    return None


def search_difference(got: Any, want: dict[str, Any], what: str) -> str | None:
    """Where the learner's search report ``got`` departs from the engine's ``want`` (same
    system), with the shortest failing run when there is one; None when they agree."""
    broken = malformed(got)
    if broken is not None:
        return (
            f"every interleaving of {what}: what came back from your notebook's process is "
            f"not the search's report ({broken}): was the grader's code replaced?"
        )
    if got.get("error"):
        return f"every interleaving of {what}: the search stopped: {got['error']}"
    if not got.get("ok") and got.get("steps"):
        return (
            f"every interleaving of {what}: '{got['invariant']}' breaks. The shortest run "
            f"that breaks it ({len(got['steps'])} steps):\n{failing_run_text(got)}\n"
            "Open it in the explorer with explore_failing_run(YourClass) in the notebook."
        )
    if not got.get("exhaustive"):
        return (
            f"every interleaving of {what}: the search did not finish within "
            f"{MAX_STATES:,} states (the engine's class needs {want['states']:,}); do "
            "markers keep causing more markers?"
        )
    mine, theirs = set(got.get("outcomes", ())), set(want["outcomes"])
    if mine != theirs:
        extra = sorted(mine - theirs)
        missing = sorted(theirs - mine)
        shown = f"one your class records: {extra[0]}" if extra else f"one missing: {missing[0]}"
        return (
            f"every interleaving of {what}: your class ends with snapshots the engine's "
            f"never records ({len(extra)} such end states, {len(missing)} of the engine's "
            f"missing); {shown}"
        )
    return None

"""Exercise 2, *Implement the marker rules*: the driver that runs a learner's class on a
recipe, and the comparison of its report with the engine's.

A **recipe** is plain data that says which run to make:

* ``{"scenario": "worked-example"}`` or ``{"scenario": "token-ring"}``: a scenario of
  the course (``examples/scenarios``), its steps played under the class;
* ``{"processes": 4, "extra": 2, "network_seed": 1, "seed": 7, "n_actions": 40,
  "snapshots": 1, "initiators": 2, "spread": 3}``: a random strongly connected network
  and a random run on it (:func:`snapshotlib.workloads.random_execution`), with
  ``snapshots`` snapshot ids started by ``initiators`` processes each.

:func:`run_recipe` runs a recipe under an algorithm class and returns a **report**, plain
data only::

    {"error": None,             # or what stopped the run, as text
     "markers": 7,              # control messages sent in all
     "snapshots": {"s1": {"complete": True, "initiators": ["P2"],
                          "processes": {"P1": {"events": ["P1.1"], "state": 3}, ...},
                          "channels": {"P1->P2": ["P1.2"], ...},   # message labels
                          "pending": [],                            # still recording
                          "markers": 7}}}

The hidden tests run the same recipe under the engine's own algorithm (in the grader's
process) and compare: :func:`difference` says, with a hint, where a report departs from
the engine's.

>>> from snapshotlib.algorithms.chandy_lamport import ChandyLamport
>>> report = run_recipe(ChandyLamport, {"scenario": "token-ring"})
>>> report["snapshots"]["s1"]["channels"]["P1->P2"], report["markers"]
(['pass1'], 3)
>>> difference(report, report, "the token ring") is None
True
"""

from __future__ import annotations

import random
from typing import Any

from ...model import Network
from ...workloads import random_strongly_connected
from .runs import capped as _capped
from .runs import simulate as _simulate
from .runs import where as _where

NAME = "02_marker_rules"
#: question 2 (how many markers) is about a network of the learner's own
VARIANT = True
REFUSE: dict[str, tuple[str, ...]] = {
    "MarkerRules": (
        "snapshotlib.algorithms.chandy_lamport:ChandyLamport",
        "snapshotlib.algorithms.lai_yang:LaiYang",
        # the barrier snapshots hold the marker rules too: unaligned barriers, on a
        # network rather than a dataflow, are Chandy-Lamport's rules in a few lines
        "snapshotlib.algorithms.barriers:AlignedBarriers",
        "snapshotlib.algorithms.barriers:AtLeastOnceBarriers",
        "snapshotlib.algorithms.barriers:UnalignedBarriers",
    ),
}

DRIVER = f"{__name__}:run_recipe"
SEARCH_DRIVER = f"{__name__}:search_recipe"

#: the small system the public test searches (every interleaving of it)
PUBLIC_SEARCH: dict[str, Any] = {"processes": 3, "channels": "ring", "sends": 1}
#: the small systems the hidden test searches
HIDDEN_SEARCHES: tuple[dict[str, Any], ...] = (
    {"processes": 2, "sends": 2},
    {"processes": 2, "sends": 1, "initiators": "all"},
    {"processes": 2, "sends": 1, "snapshots": 2},
    {"processes": 3, "channels": "ring", "sends": 1, "initiators": "all", "at": 2},
)

_FIRST_MARKER = (
    "on its first marker (the process is not yet in record.red_from) a process records, "
    "as an initiator does: call self.record_and_send_markers"
)


def marker_question(variant: int) -> tuple[Network, list[str]]:
    """Question 2's network for a learner's variant and the processes that start ``s1``
    (two or three, one right after the other): 4 to 6 processes, a random ring of
    channels plus 1 to 7 more.

    >>> net, initiators = marker_question(7)
    >>> 4 <= len(net.processes) <= 6 and len(initiators) in (2, 3)
    True
    """
    rng = random.Random(f"{NAME}/markers/{variant}")
    n = rng.randint(4, 6)
    net = random_strongly_connected(n, extra_edges=rng.randint(1, 7), seed=rng.randrange(10**6))
    return net, sorted(rng.sample(list(net.processes), rng.choice((2, 3))))


def run_recipe(answer_class: Any, recipe: dict[str, Any]) -> dict[str, Any]:
    """Run ``recipe`` (see the module's docstring) under a fresh ``answer_class()``; the
    report, with what stopped the run in ``"error"`` (the run is cut short after
    :data:`.runs.MAX_MARKERS` markers)."""
    report: dict[str, Any] = {"error": None, "markers": 0, "snapshots": {}}
    if not isinstance(answer_class, type):
        report["error"] = f"{answer_class!r} is not a class"
        return report
    try:
        sim = _simulate(_capped(answer_class)(), recipe)
    except Exception as e:
        report["error"] = f"{type(e).__name__}: {e}{_where(e)}"
        return report
    trace = sim.trace
    report["markers"] = sum(1 for m in trace.messages if m.kind != "app")
    for sid, snap in sorted(sim.snapshots().items()):
        report["snapshots"][sid] = {
            "complete": snap.complete,
            "initiators": list(snap.initiators),
            "processes": {
                p: {"events": list(r.events), "state": sim.app.describe(r.state, r.events)}
                for p, r in snap.processes.items()
            },
            "channels": {name: [m.label for m in msgs] for name, msgs in snap.channels.items()},
            "pending": list(snap.pending_channels),
            "markers": sum(1 for m in trace.messages if m.kind != "app" and m.tag == sid),
        }
    return report


def search_system(answer_class: Any, recipe: dict[str, Any]) -> Any:
    """The system a search recipe describes: ``processes`` on a complete graph (or
    ``"channels": "ring"``), ``fifo`` (default true), 2 tokens each, ``sends`` tokens
    each (to the neighbours in turn), and ``snapshots`` ids (default 1) each started by
    any one process (``"initiators": "all"``: by each of the first ``at`` processes)."""
    from ...model import Network
    from ...search import SnapshotPlan, System, each_sends

    n = int(recipe.get("processes", 3))
    net = Network(
        [f"P{i + 1}" for i in range(n)],
        recipe.get("channels", "complete"),
        fifo=bool(recipe.get("fifo", True)),
    )
    initiators = str(recipe.get("initiators", "one"))
    at = net.processes[: int(recipe.get("at", n))]
    plans = tuple(
        SnapshotPlan(f"s{k + 1}", at, initiators) for k in range(int(recipe.get("snapshots", 1)))
    )
    return System(
        net,
        "tokens",
        {p: 2 for p in net.processes},
        _capped(answer_class),
        programs=each_sends(net, "tokens", int(recipe.get("sends", 1))),
        snapshots=plans,
        name=f"{n} processes",
    )


def search_recipe(answer_class: Any, recipe: dict[str, Any]) -> dict[str, Any]:
    """Search every interleaving of the recipe's system (:func:`search_system`) under a
    fresh ``answer_class()`` per run; the report of :func:`.searching.search_report`."""
    from .searching import search_report

    if not isinstance(answer_class, type):
        return {"error": f"{answer_class!r} is not a class", "ok": False, "steps": []}
    return search_report(search_system(answer_class, recipe))


def explore_failing_run(answer_class: Any, recipe: dict[str, Any] | None = None) -> Any:
    """In the notebook: the shortest run of the recipe's system (the public test's by
    default) in which ``answer_class`` breaks an invariant, opened in the explorer; a
    line saying so when every interleaving holds."""
    from .searching import open_failing_run

    return open_failing_run(search_system(answer_class, recipe or PUBLIC_SEARCH))


def _error_hint(error: str) -> str:
    if error.startswith("TooManyMarkers"):
        return (
            "markers keep causing more markers. Hint: a process records and sends its "
            "markers on its first marker only"
        )
    if error.startswith("ScenarioError"):
        return (
            "the scenario delivers the markers a process sends when it records. Hint: "
            + _FIRST_MARKER
        )
    return (
        "Hint: every marker belongs to the snapshot self.sim.trace.messages[message].tag, "
        "whose record is self.records[snapshot_id]"
    )


def difference(
    got: dict[str, Any], want: dict[str, Any], what: str, only: str | None = None
) -> str | None:
    """Where report ``got`` departs from ``want`` (the engine's, for the same recipe), with
    a hint; None when they agree. ``only="processes"`` compares only who recorded when,
    ``only="channels"`` only the channels' states and completion."""
    if got.get("error"):
        return f"{what}: the run stopped: {got['error']}; {_error_hint(got['error'])}"
    mine, theirs = got.get("snapshots", {}), want["snapshots"]
    for sid, snap in theirs.items():
        if sid not in mine:
            return f"{what}: snapshot {sid} was never recorded. Hint: {_FIRST_MARKER}"
        have = mine[sid]
        for p, part in snap["processes"].items() if only != "channels" else ():
            if p not in have["processes"]:
                return (
                    f"{what}, snapshot {sid}: {p} never recorded its state. Hint: {_FIRST_MARKER}"
                )
            events = have["processes"][p]["events"]
            if events != part["events"]:
                return (
                    f"{what}, snapshot {sid}: {p} recorded after {', '.join(events) or 'no event'}"
                    f", but it records after {', '.join(part['events']) or 'no event'} (at its "
                    "first marker). Hint: a process records on its first marker only; a later "
                    "marker must not record it again"
                )
        if only == "processes":
            continue
        if have["pending"] and not snap["pending"]:
            return (
                f"{what}, snapshot {sid}: channel(s) {', '.join(have['pending'])} are still being"
                " recorded after every marker arrived. Hint: every marker closes its channel for"
                " its snapshot: add it to record.closed, on the first marker as on a later one"
            )
        for name, labels in snap["channels"].items():
            recorded = have["channels"].get(name)
            if recorded is None:
                return f"{what}, snapshot {sid}: channel {name} was never recorded"
            if recorded != labels:
                extra = [m for m in recorded if m not in labels]
                why = (
                    f"{', '.join(extra)} arrived after the marker on {name}"
                    if extra
                    else f"{', '.join(m for m in labels if m not in recorded)} was in transit"
                )
                return (
                    f"{what}, snapshot {sid}: channel {name} recorded {recorded}, but it holds "
                    f"{labels} ({why}). Hint: a message accepted on a channel goes to every list"
                    " in self.recording[channel]; the marker's channel stops recording (for its"
                    " snapshot only) when the marker arrives"
                )
        if have["markers"] != snap["markers"]:
            return (
                f"{what}, snapshot {sid}: {have['markers']} markers sent, but one per channel "
                f"makes {snap['markers']}. Hint: a process sends its markers once per snapshot, "
                "when it records"
            )
        if have["complete"] != snap["complete"]:
            return f"{what}, snapshot {sid}: complete is {have['complete']}, not {snap['complete']}"
    extra = sorted(set(mine) - set(theirs))
    if extra and only is None:
        return f"{what}: snapshot(s) {', '.join(extra)} were recorded but never started"
    return None


#: what the live lab's nodes need to define a learner's class saved from the notebook
LIVE_LAB_IMPORTS = "from snapshotlib.algorithms import SnapshotAlgorithm"


def save_for_live_lab(answer_class: Any, path: str = "marker_rules.py") -> str:
    """Save the learner's class to ``path`` for ``snapshotlib live lab``, and say how to
    run it; a line saying why when it cannot be saved (never an error: this is an
    optional step, and a graded run of the notebook must not stop on it)."""
    from ..class_file import save_class

    name = getattr(answer_class, "__name__", "the class")
    try:
        saved = save_class(answer_class, path, LIVE_LAB_IMPORTS)
    except (OSError, ValueError, SyntaxError) as e:
        return f"{name} was not saved: {e}"
    except Exception as e:  # the class itself failed when the file was run
        return f"{name} was not saved: running the file raised {type(e).__name__}: {e}"
    return (
        f"saved {name} to {saved}. In a terminal, in this folder:\n"
        f"    snapshotlib live lab --algorithm {saved.name}:{name}\n"
        "(the live lab needs its extra: pip install 'snapshotlib[live]')"
    )

"""Exercise 11, *Lai–Yang*: the driver that runs a learner's snapshot class on non-FIFO
runs, and the comparison of its report with the engine's.

A **recipe** is plain data that says which run to make:

* ``{"scenario": "non-fifo-breaks"}``: a scenario of the course (``examples/scenarios``),
  its steps played under the class;
* ``{"document": {...}}``: a scenario document given whole (processes, ``"fifo": false``,
  steps...);
* ``{"processes": 4, "extra": 2, "network_seed": 1, "seed": 7, "n_actions": 40,
  "snapshots": 1, "initiators": 2, "spread": 3}``: a random strongly connected network
  of **non-FIFO** channels and a random run of the ``tokens`` application on it
  (:func:`snapshotlib.workloads.random_execution`), with ``snapshots`` snapshot ids
  started by ``initiators`` processes each.

:func:`run_recipe` runs a recipe under an algorithm class and returns a **report**, plain
data only::

    {"error": None,              # or what stopped the run, as text
     "steps": 61,                # actions in the run
     "markers": 9,               # control messages sent in all
     "snapshots": {"s1": {
         "complete": True, "initiators": ["P2"],
         "processes": {"P1": {"events": ["P1.1"], "state": 3, "step": 12,
                              "at": "marker from P2"}, ...},  # or "start", "receive P3.2"
         "channels": {"P1->P2": ["P1.2"], ...},   # message labels, sorted
         "pending": [],                            # channels still being recorded
         "red": ["P1.3", ...],                     # sent after their sender recorded
         "markers": 9}}}

The tests run the same recipe under the engine's own algorithm (in the grader's
process) and compare: :func:`difference` says, with a hint, where a report departs from
the engine's; :func:`token_problem` checks a report on its own (tokens are conserved).

>>> from snapshotlib.algorithms.lai_yang import LaiYang
>>> report = run_recipe(LaiYang, {"scenario": "05-marker-overtakes-message"})
>>> report["snapshots"]["s1"]["channels"]["P1->P2"]
['early']
>>> difference(report, report, "the run") is None, token_problem(report, 2)
(True, None)
"""

from __future__ import annotations

from typing import Any

from ...colouring import RED, colouring
from ...trace import APP, CONTROL, RECEIVE, SNAPSHOT
from .runs import capped as _capped
from .runs import simulate as _simulate
from .runs import where as _where

NAME = "11_lai_yang"
VARIANT = False
REFUSE: dict[str, tuple[str, ...]] = {
    "LaiYangRules": (
        "snapshotlib.algorithms.lai_yang:LaiYang",
        "snapshotlib.algorithms.chandy_lamport:ChandyLamport",
    ),
}

DRIVER = f"{__name__}:run_recipe"

_WHEN = (
    "a process records when it starts the snapshot, at its first marker, or just before it "
    "accepts its first red message, whichever comes first"
)


def _at(sim: Any, index: int) -> str:
    """Why a process recorded at trace action ``index``."""
    trace = sim.trace
    if not 0 <= index < len(trace.actions):
        return f"step {index}"
    a = trace.actions[index]
    if a.kind == SNAPSHOT:
        return "start"
    if a.kind == CONTROL:
        return f"marker from {sim.network.channels[a.channel].src}"
    if a.kind == RECEIVE:
        return f"receive {trace.message_name(a.message)}"
    return f"{a.kind} {trace.action_name(index)}"


def run_recipe(answer_class: Any, recipe: dict[str, Any]) -> dict[str, Any]:
    """Run ``recipe`` (see the module's docstring) under a fresh ``answer_class()``; the
    report, with what stopped the run in ``"error"`` (the run is cut short after
    :data:`.runs.MAX_MARKERS` markers)."""
    report: dict[str, Any] = {"error": None, "steps": 0, "markers": 0, "snapshots": {}}
    if not isinstance(answer_class, type):
        report["error"] = f"{answer_class!r} is not a class"
        return report
    try:
        sim = _simulate(_capped(answer_class)(), recipe, fifo=False)
        trace = sim.trace
        report["steps"] = len(trace.actions)
        report["markers"] = sum(1 for m in trace.messages if m.kind != APP)
        for sid, snap in sorted(sim.snapshots().items()):
            col = colouring(sim, sid)
            red = [
                trace.message_name(m)
                for m, msg in enumerate(trace.messages)
                if msg.kind == APP and col.message(m) == RED
            ]
            report["snapshots"][sid] = {
                "complete": bool(snap.complete),
                "initiators": list(snap.initiators),
                "processes": {
                    p: {
                        "events": list(r.events),
                        "state": sim.app.describe(r.state, r.events),
                        "step": r.red_from,
                        "at": _at(sim, r.red_from),
                    }
                    for p, r in snap.processes.items()
                },
                "channels": {
                    name: sorted(str(m.label) for m in msgs) for name, msgs in snap.channels.items()
                },
                "pending": list(snap.pending_channels),
                "red": sorted(red),
                "markers": sum(1 for m in trace.messages if m.kind != APP and m.tag == sid),
            }
    except Exception as e:
        report["error"] = f"{type(e).__name__}: {e}{_where(e)}"
        report["snapshots"] = {}
    return report


def _error_hint(error: str) -> str:
    if error.startswith("TooManyMarkers"):
        return (
            "markers keep causing more markers. Hint: a process records (and sends its "
            "markers) once per snapshot"
        )
    if error.startswith("ScenarioError"):
        return "the scenario delivers a marker that was never sent. Hint: " + _WHEN
    return (
        "Hint: a marker belongs to the snapshot self.sim.trace.messages[message].tag, whose "
        "record is self.records[snapshot_id]; a message's colour is per snapshot"
    )


def _events(events: list[str]) -> str:
    """``"no event"``, ``"P1.1, P1.2"``, or ``"its first 9 events (..., P1.8, P1.9)"``."""
    if len(events) <= 3:
        return ", ".join(events) or "no event"
    return f"its first {len(events)} events (..., {events[-2]}, {events[-1]})"


def _are(names: list[str]) -> str:
    return f"{', '.join(names)} {'is' if len(names) == 1 else 'are'}"


def _process_difference(sid: str, p: str, have: dict[str, Any], want: dict[str, Any]) -> str:
    events, right = have["events"], want["events"]
    said = f"snapshot {sid}: {p} recorded after {_events(events)}"
    ought = f"it records after {_events(right)}"
    if events == right:
        return (
            f"{said}, as it should, but recorded state {have['state']!r}, not "
            f"{want['state']!r}. Hint: record self.sim.states[process] when the process "
            "turns red; on_app_receive is called before the message's handler runs, so the "
            "state is still the one from before the red message"
        )
    if want["at"].startswith("receive") and len(events) > len(right):
        label = want["at"].removeprefix("receive ")
        return (
            f"{said}, but {ought}: {label} is a red message (sent after its sender recorded) "
            f"and {p} was still white when it accepted it. Hint: in on_app_receive a white "
            "process that gets a red message records first; it turns red at the receive "
            "action itself, len(self.sim.trace.actions) - 1"
        )
    if want["at"].startswith("marker") and len(events) > len(right):
        return f"{said}, but {ought}, at its first marker ({want['at']}). Hint: {_WHEN}"
    if len(events) < len(right):
        return (
            f"{said}, but {ought} ({want['at']}): it recorded too early. Hint: a white "
            "message does not make a process record, and neither does a marker of another "
            "snapshot"
        )
    return f"{said}, but {ought} ({want['at']}). Hint: {_WHEN}"


def difference(
    got: dict[str, Any], want: dict[str, Any], what: str, only: str | None = None
) -> str | None:
    """Where report ``got`` departs from ``want`` (the engine's, for the same recipe), with
    a hint; None when they agree. ``only="processes"`` compares only who recorded when,
    ``only="channels"`` only the channels' states and completion."""
    if not isinstance(got, dict) or not isinstance(got.get("snapshots"), dict):
        return f"{what}: the driver gave no report"
    if got.get("error"):
        return f"{what}: the run stopped: {got['error']}; {_error_hint(str(got['error']))}"
    mine, theirs = got["snapshots"], want["snapshots"]
    for sid in theirs:
        if sid not in mine:
            return f"{what}: snapshot {sid} was never recorded. Hint: {_WHEN}"
    # who recorded when, the earliest first: after a difference the runs part ways
    parts = [
        (part["step"], sid, p, part)
        for sid, snap in theirs.items()
        for p, part in snap["processes"].items()
    ]
    for _, sid, p, part in sorted(parts) if only != "channels" else ():
        have = mine[sid]["processes"]
        if p not in have:
            return f"{what}, snapshot {sid}: {p} never recorded its state. Hint: {_WHEN}"
        if have[p]["events"] != part["events"] or have[p]["state"] != part["state"]:
            return f"{what}, {_process_difference(sid, p, have[p], part)}"
    if only == "processes":
        return None
    for sid, snap in theirs.items():
        have = mine[sid]
        for name, labels in snap["channels"].items():
            recorded = have["channels"].get(name)
            if recorded is None:
                return (
                    f"{what}, snapshot {sid}: channel {name} was never recorded. Hint: a process "
                    "that records starts recording each of its input channels"
                )
            if recorded == labels:
                continue
            extra = [m for m in recorded if m not in labels]
            missing = [m for m in labels if m not in recorded]
            red = [m for m in extra if m in snap["red"]]
            if red:
                why = (
                    f"{_are(red)} red: sent after the sender recorded, so in the future of the "
                    "cut. Hint: a channel's state holds white messages only"
                )
            elif extra:
                why = (
                    f"{', '.join(extra)} arrived before the receiver recorded. Hint: a channel's "
                    "state holds the white messages accepted after the receiver recorded"
                )
            else:
                why = (
                    f"{_are(missing)} white and arrived after the receiver recorded, maybe "
                    "after the marker: on a non-FIFO channel a marker may overtake white "
                    "messages. Hint: keep recording until as many white messages have arrived "
                    "as the marker says were sent"
                )
            return (
                f"{what}, snapshot {sid}: channel {name} recorded {recorded}, but it holds "
                f"{labels}: {why}"
            )
        if have["markers"] != snap["markers"]:
            return (
                f"{what}, snapshot {sid}: {have['markers']} markers sent, but one per channel "
                f"makes {snap['markers']}. Hint: a process sends its markers once per snapshot, "
                "when it records"
            )
        if have["pending"] and not snap["pending"]:
            return (
                f"{what}, snapshot {sid}: channel(s) {', '.join(have['pending'])} are still "
                "being recorded at the end of the run. Hint: a channel is closed once its "
                "marker has arrived and as many white messages as the marker counts (those "
                "accepted before the receiver recorded included)"
            )
        if have["complete"] != snap["complete"]:
            return f"{what}, snapshot {sid}: complete is {have['complete']}, not {snap['complete']}"
    extra_ids = sorted(set(mine) - set(theirs))
    if extra_ids and only is None:
        return f"{what}: snapshot(s) {', '.join(extra_ids)} were recorded but never started"
    return None


def token_problem(report: dict[str, Any], tokens: int) -> str | None:
    """What is wrong with the snapshots of ``report`` of a ``tokens`` run whose processes
    hold ``tokens`` in all (each message carries one token), with a hint; None when every
    snapshot is complete and counts exactly ``tokens``."""
    if not isinstance(report, dict) or not isinstance(report.get("snapshots"), dict):
        return "the driver gave no report"
    if report.get("error"):
        return f"the run stopped: {report['error']}; {_error_hint(str(report['error']))}"
    for sid, snap in report["snapshots"].items():
        if not snap["complete"]:
            return (
                f"snapshot {sid} never completed (still recording: "
                f"{', '.join(snap['pending']) or 'a process never recorded'}). Hint: a channel "
                "is closed once its marker and as many white messages as the marker counts "
                "have arrived"
            )
        held = sum(int(part["state"]) for part in snap["processes"].values())
        moving = sum(len(labels) for labels in snap["channels"].values())
        if held + moving != tokens:
            why = (
                "a token counted twice is a red message accepted by a white process, or "
                "recorded in transit"
                if held + moving > tokens
                else "a token missing is a white message that arrived after its channel was "
                "closed, or was never recorded"
            )
            return (
                f"snapshot {sid} counts {held} tokens in processes and {moving} in channels, "
                f"{held + moving} in all, but there are {tokens}. Hint: {why}"
            )
    return None

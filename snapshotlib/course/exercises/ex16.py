"""Exercise 16, *Exactly-once output*: the driver that runs a learner's transactional
sink on streaming jobs crashed at every step, and the comparison with the engine's.

A **recipe** is plain data::

    {"flow": graph_data(word_count(records=12)),   # the job's graph (exercise 7's form)
     "variant": "aligned", "seed": 1, "interval": 10, "ttl": None,
     "max_concurrent": 1,                           # checkpoints in progress at once
     "crashes": [None, [5, "S1"], [6, "C1"], ...]}  # one run per entry: no crash, or
                                                     # crash that operator at that step

:func:`run_sink` runs each of the recipe's runs with a :class:`~snapshotlib.dataflow.sinks.Sink`
class and returns one **report** per run, plain data only::

    {"error": None,                               # or what stopped the run, as text
     "finished": True,                            # nothing left to do within LIMIT steps
     "writes": [["S1#0", 12, 20], ...],           # record, step it reached the sink, step
                                                  # it became visible, in the order written
     "completed": {"c1": 20, ...},                # checkpoint -> step it completed
     "aborted": 3}                                # records a restore found not yet written

The tests run the same recipe with the engine's
:class:`~snapshotlib.dataflow.sinks.TransactionalSink` in the grader's process, and
:func:`difference` says, with a hint, where the learner's writes depart from it.

>>> from snapshotlib.dataflow import word_count
>>> from snapshotlib.dataflow.sinks import TransactionalSink
>>> recipe = every_crash({"flow": graph_data(word_count(records=4)), "seed": 1}, 3)
>>> [r["finished"] for r in run_sink(TransactionalSink, recipe)]
[True, True, True]
>>> want = run_sink(TransactionalSink, recipe)
>>> difference(want, want, "word_count(records=4)")
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...dataflow import COMPLETED, StreamJob, word_count
from ...dataflow.sinks import Sink, SinkError
from .ex07 import flow_of, graph_data
from .runs import where as _where

NAME = "16_exactly_once_output"
VARIANT = False
REFUSE: dict[str, tuple[str, ...]] = {
    "ExactlyOnceSink": ("snapshotlib.dataflow.sinks:TransactionalSink",),
}

DRIVER = f"{__name__}:run_sink"
#: steps a run may take (these jobs need a few hundred)
LIMIT = 5000
#: the job of the notebook and the public tests
PUBLIC_RECORDS = 12

__all__ = [
    "DRIVER",
    "LIMIT",
    "NAME",
    "REFUSE",
    "difference",
    "every_crash",
    "graph_data",
    "public_recipe",
    "run_sink",
]


def public_recipe(variant: str = "aligned", seed: int = 1) -> dict[str, Any]:
    """The notebook's job: ``word_count(records=12)``, a checkpoint every 10 steps."""
    return {
        "flow": graph_data(word_count(records=PUBLIC_RECORDS)),
        "variant": variant,
        "seed": seed,
        "interval": 10,
    }


def _job(recipe: dict[str, Any], sink: Any) -> StreamJob:
    ttl = recipe.get("ttl")
    return StreamJob(
        flow_of(recipe["flow"]),
        str(recipe.get("variant", "aligned")),
        seed=int(recipe.get("seed", 0)),
        interval=int(recipe.get("interval", 10)),
        ttl=None if ttl is None else int(ttl),
        max_concurrent=int(recipe.get("max_concurrent", 1)),
        sink=sink,
    )


def every_crash(recipe: dict[str, Any], steps: int) -> dict[str, Any]:
    """``recipe`` run once without a crash, then crashed at each step from 1 to
    ``steps`` - 1, the operator that crashes going round the job's operators."""
    processes = [op[0] for op in recipe["flow"]["operators"]]
    crashes: list[Any] = [None]
    crashes += [[step, processes[step % len(processes)]] for step in range(1, steps)]
    return {**recipe, "crashes": crashes}


def clean_steps(recipe: dict[str, Any]) -> int:
    """How many steps ``recipe``'s job takes without a crash (with the engine's
    transactional sink)."""
    return _job(recipe, "transactional").run(max_steps=LIMIT).steps


def _name(origin: tuple[str, int]) -> str:
    return f"{origin[0]}#{origin[1]}"


def _one(answer_class: Any, recipe: dict[str, Any], crash: Any) -> dict[str, Any]:
    report: dict[str, Any] = {"error": None, "finished": False, "writes": [], "completed": {}}
    job = None
    try:
        job = _job(recipe, answer_class)
        job.run(max_steps=LIMIT, crash_at=(int(crash[0]), str(crash[1])) if crash else None)
        report["finished"] = not job.actions() and not job.output.waiting()
    except SinkError as e:
        report["error"] = str(e)
    except Exception as e:
        report["error"] = f"{type(e).__name__}: {e}{_where(e)}"
    if job is None:
        return report
    report["writes"] = [[_name(w.origin), w.arrived, w.visible] for w in job.output.writes]
    report["completed"] = {
        cid: e.ended_at
        for cid, e in job.coordinator.entries.items()
        if e.status == COMPLETED and e.ended_at is not None
    }
    report["aborted"] = job.output.aborted
    return report


def run_sink(answer_class: Any, recipe: dict[str, Any]) -> list[dict[str, Any]]:
    """One report per entry of ``recipe["crashes"]`` (see the module's docstring), with
    ``answer_class`` as the job's sink."""
    if not (isinstance(answer_class, type) and issubclass(answer_class, Sink)):
        return [{"error": f"the sink must be a Sink subclass, got {answer_class!r}"}]
    return [_one(answer_class, recipe, crash) for crash in recipe.get("crashes", [None])]


def _crash_text(crash: Any) -> str:
    return f"crash of {crash[1]} at step {crash[0]}" if crash else "no crash"


def difference(
    got: list[dict[str, Any]], want: list[dict[str, Any]], what: str, recipe: Any = None
) -> str | None:
    """Where the reports ``got`` depart from ``want`` (the engine's transactional sink's,
    for the same recipe), with a hint; None when they agree."""
    crashes = (recipe or {}).get("crashes") or [None] * len(want)
    if len(got) != len(want):
        return f"{what}: {got[0].get('error') if got else 'no report'}"
    for mine, theirs, crash in zip(got, want, crashes, strict=True):
        where = f"{what}, {_crash_text(crash)}"
        problem = _run_difference(mine, theirs, where)
        if problem:
            return problem
    return None


def _run_difference(got: dict[str, Any], want: dict[str, Any], where: str) -> str | None:
    if got["error"]:
        hint = (
            "a restore aborts every transaction not committed (abort() forgets the open "
            "and the pre-committed ones), and commit() writes each pre-committed record once"
            if "not waiting to be written" in got["error"]
            else "the job calls invoke, pre_commit, commit and abort; write with "
            "self.write(origin), the origin invoke was given"
        )
        return f"{where}: the run stopped: {got['error']}. Hint: {hint}"
    shown = Counter(w[0] for w in got["writes"])
    should = Counter(w[0] for w in want["writes"])
    twice = sorted(r for r in shown if shown[r] > should[r])
    if twice:
        r = twice[0]
        return (
            f"{where}: the outside world sees {r} {_times(shown[r])}, not "
            f"{_times(should[r])}. "
            "Hint: write a record only when its checkpoint completes, and after a restore "
            "never write what the restore aborted (it comes again)"
        )
    fewer = sorted(r for r in should if shown[r] < should[r])
    if fewer:
        r = fewer[0]
        hint = (
            "write every record that reaches a sink each time it is committed, even one "
            "written before: under at-least-once some records come twice, and a "
            "transactional sink commits what its checkpoint holds"
            if shown[r]
            else "pre_commit closes the open transaction of that sink only; commit writes "
            "the transactions pre-committed for that checkpoint and for every earlier one "
            "still waiting (a checkpoint whose time-to-live ran out leaves its records to "
            "the next)"
        )
        seen = (
            f"sees {r} {_times(shown[r])}, not {_times(should[r])}"
            if shown[r]
            else f"never sees {r}"
        )
        return f"{where}: the outside world {seen}. Hint: {hint}"
    if not got["finished"] and want["finished"]:
        return (
            f"{where}: records still wait to be written at the end of the run. Hint: when "
            "a checkpoint completes, commit what every sink pre-committed for it and for "
            "every earlier checkpoint still waiting"
        )
    mine = {(r, arrived): visible for r, arrived, visible in got["writes"]}
    for r, arrived, visible in want["writes"]:
        at = mine.get((r, arrived))
        if at is None:
            continue
        if at < visible:
            return (
                f"{where}: {r} became visible at step {at}, before the checkpoint that holds "
                f"it completed (step {visible}): a restore could still take it back. Hint: "
                "write only in commit()"
            )
        if at > visible:
            return (
                f"{where}: {r} became visible at step {at}; it could have been at step "
                f"{visible}, when a checkpoint that holds it completed. Hint: a record "
                "belongs to the first checkpoint whose pre_commit comes after it at its "
                "sink, and commit(checkpoint) writes the transactions of that checkpoint and "
                "of every earlier one, never of a later one"
            )
    if sorted(got["writes"]) != sorted(want["writes"]):
        return f"{where}: the writes were {got['writes']}, not {want['writes']}"
    return None


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")

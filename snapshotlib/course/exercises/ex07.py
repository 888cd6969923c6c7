"""Exercise 7, *Align the barriers*: the driver that runs a learner's barrier class on a
streaming job, and the comparison of its report with the engine's.

A **recipe** is plain data::

    {"flow": graph_data(word_count(records=12)),   # the job's graph, as plain data
     "seed": 1, "interval": 10,                     # scheduler seed, checkpoint interval
     "every": None,                                 # or: a checkpoint every k steps, however
                                                    # many are unfinished (overlapping)
     "crash": [70, "C1"]}                           # or None: crash C1 at step 70, restore

:func:`run_job` runs a recipe under a barrier class (a subclass of
:class:`~snapshotlib.algorithms.barriers.BarrierSnapshot`) and returns a **report**,
plain data only::

    {"error": None,                      # or what stopped the run, as text
     "finished": True,                   # nothing left to do within the step limit
     "steps": 212, "blocked_steps": 31,  # steps taken; channel-steps inputs were blocked
     "checkpoints": {"c1": {"status": "COMPLETED", "ended_at": 40}, ...},
     "in_flight": {"c1": {"L->H": ["S#4"]}, ...},   # recorded in flight, completed ones
     "crossed": {"c1": ["S1#3"]},        # read past a barrier (at-least-once), completed ones
     "waiting": {"c3": {"H": {"got": ["S->H"], "missing": ["L->H"]}}},  # unfinished ones
     "blocked": {"S1->C1": 2},           # inputs still blocked at the end: records waiting
     "read_past_barrier": [...],         # reads after an input's barrier, before the snapshot
     "back_edges": ["L->H"],
     "restores": [{"step": 70, "from": "c2", "predicted_duplicates": ["S1#3"],
                   "predicted_lost": []}],
     "delivered": {"S1#0": 1, ...}, "duplicates": {...}, "missing": [...],
     "counts": {"C1": {"k0": 3}, ...}}

The tests run the same recipe under the engine's own class, in the grader's process, and
:func:`difference` says, with a hint, where a learner's report departs from it.

>>> from snapshotlib.algorithms.barriers import AlignedBarriers
>>> from snapshotlib.dataflow import iteration
>>> report = run_job(AlignedBarriers, {"flow": graph_data(iteration()), "seed": 0})
>>> report["finished"], report["back_edges"], difference(report, report, "iteration()")
(True, ['L->H'], None)
"""

from __future__ import annotations

from typing import Any

from .forms import shown
from .runs import where as _where

NAME = "07_barrier_alignment"
VARIANT = False

#: the engine's barrier classes, which do the work the answers ask for
_BARRIERS = (
    "snapshotlib.algorithms.barriers:AlignedBarriers",
    "snapshotlib.algorithms.barriers:AtLeastOnceBarriers",
    "snapshotlib.algorithms.barriers:UnalignedBarriers",
)
REFUSE: dict[str, tuple[str, ...]] = {"BarrierAlignment": _BARRIERS, "SkipAlignment": _BARRIERS}

DRIVER = f"{__name__}:run_job"
#: steps a job may take (these jobs need a few hundred)
LIMIT = 5000


SEARCH_DRIVER = f"{__name__}:search_job"


def public_search() -> dict[str, Any]:
    """The job the public test searches: word count, one record per source."""
    from ...dataflow import word_count

    return {"flow": graph_data(word_count(records=1))}


def hidden_searches() -> list[dict[str, Any]]:
    """The jobs the hidden test searches: word count with two records per source, a
    random DAG, and a small cycle."""
    from ...dataflow import iteration, random_dag, word_count

    return [
        {"flow": graph_data(word_count(records=2))},
        {"flow": graph_data(random_dag(1, records=1))},
        {"flow": graph_data(iteration(records=2, keys=2, hops=1))},
    ]


def search_system(answer_class: Any, recipe: dict[str, Any]) -> Any:
    """Every schedule of the recipe's job (``"flow"``: :func:`graph_data`): each source
    reads its records whenever the search likes, deliveries in any order, and one
    checkpoint ``c1`` injected at every source (each at a moment of its own)."""
    from ...actions import Internal
    from ...dataflow.app import DataflowApp
    from ...search import SnapshotPlan, System

    flow = flow_of(recipe["flow"])
    sources = tuple(op.name for op in flow.operators if op.name in flow.sources)
    programs = {
        op.name: tuple(Internal(op.name, "read") for _ in op.records)
        for op in flow.operators
        if op.name in sources
    }
    return System(
        flow.network(),
        DataflowApp(flow, 200),
        {},
        answer_class,
        programs=programs,
        snapshots=(SnapshotPlan("c1", sources, "all"),),
        name="the job",
    )


def search_job(answer_class: Any, recipe: dict[str, Any]) -> dict[str, Any]:
    """Search every interleaving of the recipe's job (:func:`search_system`) under
    ``answer_class``; the report of :func:`.searching.search_report`."""
    from .searching import search_report

    if not isinstance(answer_class, type):
        return {"error": f"{answer_class!r} is not a class", "ok": False, "steps": []}
    return search_report(search_system(answer_class, recipe))


def explore_failing_run(answer_class: Any, recipe: dict[str, Any] | None = None) -> Any:
    """In the notebook: the shortest schedule of the recipe's job (the public test's by
    default) whose checkpoint under ``answer_class`` is not a consistent cut (or breaks
    another invariant), opened in the explorer; a line saying so when none does."""
    from .searching import open_failing_run

    return open_failing_run(search_system(answer_class, recipe or public_search()))


def graph_data(flow: Any) -> dict[str, Any]:
    """A :class:`~snapshotlib.dataflow.Dataflow` as plain data (for a recipe)."""
    return {
        "operators": [[op.name, op.kind, [list(r) for r in op.records]] for op in flow.operators],
        "edges": [list(e) for e in flow.edges],
    }


def flow_of(data: dict[str, Any]) -> Any:
    """The :class:`~snapshotlib.dataflow.Dataflow` that :func:`graph_data` gave."""
    from ...dataflow import Operator, dataflow

    ops = [
        Operator(str(n), str(k), tuple((str(key), int(v)) for key, v in recs))
        for n, k, recs in data["operators"]
    ]
    return dataflow(ops, [(str(a), str(b)) for a, b in data["edges"]])


#: the largest job question 3 takes from a learner (the tests run it five times)
MAX_OPERATORS = 12
MAX_RECORDS = 40
MAX_HOPS = 5


def read_job(answer: Any, what: str = "two_logged_edges") -> Any:
    """The :class:`~snapshotlib.dataflow.Dataflow` a learner gave as plain data (question
    3), if it is one the engine can run and within the limits: at most
    :data:`MAX_OPERATORS` operators, :data:`MAX_RECORDS` records per operator, each with
    0 to :data:`MAX_HOPS` hops. Every test of the question reads the answer with it
    first; AssertionError saying what to change otherwise.

    >>> from snapshotlib.dataflow import iteration
    >>> [op.name for op in read_job(graph_data(iteration())).operators]
    ['S', 'H', 'L', 'K']
    >>> read_job(graph_data(iteration(records=50)))
    Traceback (most recent call last):
    AssertionError: S has 50 records: at most 40
    """
    if not isinstance(answer, dict) or set(answer) != {"operators", "edges"}:
        raise AssertionError(
            "give the job as graph_data(dataflow(operators, edges)), a dict with 'operators' "
            f"and 'edges', not {shown(answer)}"
        )
    operators = answer["operators"]
    if isinstance(operators, (list, tuple)) and len(operators) > MAX_OPERATORS:
        raise AssertionError(f"{len(operators)} operators: keep it to {MAX_OPERATORS}")
    for op in operators if isinstance(operators, (list, tuple)) else ():
        records = op[2] if isinstance(op, (list, tuple)) and len(op) == 3 else None
        if isinstance(records, (list, tuple)) and len(records) > MAX_RECORDS:
            raise AssertionError(f"{op[0]} has {len(records)} records: at most {MAX_RECORDS}")
    try:
        flow = flow_of(answer)
        flow.network()
    except Exception as e:
        raise AssertionError(f"this is not a job the engine can run: {e}") from None
    for op in flow.operators:
        if not all(0 <= hops <= MAX_HOPS for _, hops in op.records):
            raise AssertionError(f"{op.name}: a record's hops must be from 0 to {MAX_HOPS}")
    return flow


def _run(job: Any, recipe: dict[str, Any]) -> None:
    crash = recipe.get("crash")
    every = recipe.get("every")
    if every is None:
        job.run(max_steps=LIMIT, crash_at=tuple(crash) if crash else None)
        return
    while job.steps < LIMIT:  # a checkpoint every `every` steps, however many are unfinished
        if crash and job.steps == crash[0] and not job.restores:
            job.crash(crash[1])
            job.restore()
        if job.steps % every == 0 and any(
            job.app.remaining(s, job.sim.states[s]) for s in job.flow.sources
        ):
            job.trigger()
        if job.step() is None:
            break


def _name(payload: Any) -> str:
    origin = getattr(payload, "origin", None)
    return f"{origin[0]}#{origin[1]}" if origin else str(payload)


def run_job(answer_class: Any, recipe: dict[str, Any]) -> dict[str, Any]:
    """Run ``recipe`` (see the module's docstring) with ``answer_class``; the report, with
    what stopped the run in ``"error"``."""
    from ...dataflow import COMPLETED, StreamJob

    report: dict[str, Any] = {"error": None, "finished": False}
    flow = flow_of(recipe["flow"])
    try:
        job = StreamJob(
            flow,
            algorithm=answer_class,
            seed=int(recipe.get("seed", 0)),
            interval=int(recipe.get("interval", 10**6 if recipe.get("every") else 10)),
        )
        _run(job, recipe)
        finished = not job.actions()
    except Exception as e:
        report["error"] = f"{type(e).__name__}: {e}{_where(e)}"
        return report
    sim, net = job.sim, job.network
    trace, algo = sim.trace, sim.algorithm
    channels = [str(c) for c in net.channels]
    back: frozenset[int] = getattr(algo, "back", frozenset())
    entries = job.coordinator.entries
    done = [cid for cid, e in entries.items() if e.status == COMPLETED]
    cuts = {cid: sim.red_from(cid) for cid in sim.snapshot_ids()}
    crossed = getattr(algo, "crossed", {}) or {}
    outcome = job.outcome()
    delivered = {f"{s}#{i}": n for (s, i), n in sorted(outcome.delivered.items())}
    sources = {op.name: len(op.records) for op in flow.operators if op.kind == "source"}
    report.update(
        finished=finished,
        steps=job.steps,
        blocked_steps=job.blocked_steps,
        checkpoints={
            cid: {"status": e.status, "ended_at": e.ended_at} for cid, e in entries.items()
        },
        in_flight={
            cid: {
                name: [_name(m.payload) for m in msgs]
                for name, msgs in entries[cid].snapshot.channels.items()
                if msgs
            }
            for cid in done
            if entries[cid].snapshot is not None
        },
        crossed={
            cid: [_name(trace.messages[m].payload) for m in crossed[cid]]
            for cid in done
            if crossed.get(cid) and not job.restores
        },
        waiting=_waiting(job),
        blocked={channels[c]: len(sim.queues[c]) for c in sorted(sim.blocked)},
        read_past_barrier=_read_past(sim, cuts, back),
        back_edges=[channels[c] for c in sorted(back)],
        restores=[
            {
                "step": r["step"],
                "from": r["from"],
                "predicted_duplicates": [f"{s}#{i}" for s, i in r["predicted_duplicates"]],
                "predicted_lost": [f"{s}#{i}" for s, i in r["predicted_lost"]],
            }
            for r in job.restores
        ],
        delivered=delivered,
        duplicates={k: n for k, n in delivered.items() if n > 1},
        missing=[
            f"{s}#{i}" for s, n in sources.items() for i in range(n) if f"{s}#{i}" not in delivered
        ]
        if finished
        else [],
        counts=outcome.counts,
    )
    return report


def _waiting(job: Any) -> dict[str, dict[str, dict[str, list[str]]]]:
    """For each unfinished checkpoint, the operators that got its barrier on some inputs
    but have not taken their snapshot: on which inputs it came, on which it did not."""
    sim, net = job.sim, job.network
    trace = sim.trace
    out: dict[str, dict[str, dict[str, list[str]]]] = {}
    for entry in job.coordinator.pending():
        if entry.id not in sim.snapshot_ids():
            continue
        red_from = sim.red_from(entry.id)
        came: dict[str, set[int]] = {}
        for a in trace.actions:
            if a.kind == "control" and trace.messages[a.message].tag == entry.id:
                came.setdefault(a.process, set()).add(a.channel)
        for p, got in came.items():
            if p in red_from:
                continue
            ins = sim.input_channels(p)
            out.setdefault(entry.id, {})[p] = {
                "got": [str(net.channels[c]) for c in ins if c in got],
                "missing": [str(net.channels[c]) for c in ins if c not in got],
            }
    return out


def _read_past(sim: Any, cuts: dict[str, dict[str, int]], back: frozenset[int]) -> list[str]:
    """Records an operator read on an input after that input's barrier and before its own
    snapshot (a few of them)."""
    trace, net = sim.trace, sim.network
    came: dict[tuple[str | None, int], int] = {}
    for i, a in enumerate(trace.actions):
        if a.kind == "control":
            came.setdefault((trace.messages[a.message].tag, a.channel), i)
    found = []
    for cid, red_from in cuts.items():
        for p, at in red_from.items():
            for ch in sim.input_channels(p):
                if ch in back or (cid, ch) not in came:
                    continue
                for a in trace.actions[came[(cid, ch)] + 1 : at]:
                    if a.kind == "receive" and a.channel == ch:
                        found.append(
                            f"{p} read {_name(trace.messages[a.message].payload)} on "
                            f"{net.channels[ch]} after the barrier of {cid} came on it, before "
                            f"its own snapshot for {cid}"
                        )
    return found[:5]


# ------------------------------------------------------------------ the comparison

_SNAPSHOT_ON_ALL = (
    "when the barrier has arrived on every input in self.regular[process], take the "
    "snapshot (self.snapshot), which records the state and sends the barrier on"
)


def _diagnose_waiting(got: dict[str, Any], what: str) -> str | None:
    back = set(got.get("back_edges", []))
    for cid, procs in got.get("waiting", {}).items():
        for p, seen in procs.items():
            missing, came = seen["missing"], ", ".join(seen["got"])
            blocked = [c for c in seen["got"] if c in got.get("blocked", {})]
            if missing and all(c in back for c in missing) and blocked:
                return (
                    f"{what}: the job is stuck (deadlock): checkpoint {cid} waits for {p}, "
                    f"which waits for the barrier on {', '.join(missing)}. That input closes a "
                    f"cycle: its barrier comes round only after {p}'s own snapshot. Hint: wait "
                    "only for the inputs in self.regular[process], not for every input"
                )
            if not missing or all(c in back for c in missing):
                return (
                    f"{what}: checkpoint {cid} never completed: {p} never took its snapshot, "
                    f"although the barrier reached it on every input it aligns ({came}). "
                    f"Hint: {_SNAPSHOT_ON_ALL}"
                )
            return (
                f"{what}: checkpoint {cid} never completed: {p} got the barrier on {came} but "
                f"not on {', '.join(missing)}. Hint: barriers move on only when an operator "
                "snapshots, once per checkpoint; keep what has arrived per checkpoint and "
                "operator (self.arrived[(rec.id, process)])"
            )
    return None


def difference(
    got: dict[str, Any],
    want: dict[str, Any],
    what: str,
    aligned: bool = True,
    only: str | None = None,
) -> str | None:
    """Where report ``got`` departs from ``want`` (the engine's, for the same recipe), with
    a hint; None when they agree. ``aligned``: the class is to align its inputs (question
    1); otherwise it is to skip the alignment (question 2). ``only="finish"`` compares only
    whether the job and its checkpoints finished, ``only="aligned"`` also what the
    checkpoints hold."""
    if got.get("error"):
        return (
            f"{what}: the run stopped: {got['error']}. Hint: the engine calls "
            "on_barrier(rec, process, channel, action) for every barrier; keep per checkpoint "
            "what has arrived, in self.arrived[(rec.id, process)]"
        )
    if not got["finished"]:
        return (
            f"{what}: still running after {LIMIT} steps. Hint: a barrier makes an operator "
            "snapshot once per checkpoint, and only the snapshot sends barriers on"
        )
    problem = _diagnose_waiting(got, what)
    if problem:
        return problem
    if got["blocked"] and not want["blocked"]:
        blocked = ", ".join(
            f"{c} ({n} record{'s' * (n != 1)} waiting)" for c, n in got["blocked"].items()
        )
        return f"{what}: the job stopped with input(s) {blocked} still blocked. Hint: " + (
            "once the snapshot is taken, unblock every input in self.regular[process]"
            if aligned
            else "skipping the alignment blocks nothing: never call self.sim.block"
        )
    if not aligned and got["blocked_steps"] and not want["blocked_steps"]:
        return (
            f"{what}: inputs were blocked for {got['blocked_steps']} channel-steps. Hint: "
            "skipping the alignment means every input keeps flowing: never block one"
        )
    if only != "finish" and aligned and got["read_past_barrier"] and not want["read_past_barrier"]:
        return (
            f"{what}: {got['read_past_barrier'][0]}: that record is in the snapshot, and is "
            "read again after a restore (a duplicate). Hint: block an input as soon as its "
            "barrier arrives (self.sim.block), until the snapshot"
        )
    if not aligned and (got["read_past_barrier"] or want["read_past_barrier"]):
        early = [r for r in want["read_past_barrier"] if r not in got["read_past_barrier"]]
        if early:
            return (
                f"{what}: the engine's at-least-once operator reads on: {early[0]}, but yours "
                "took its snapshot earlier. Hint: snapshot when the barrier has arrived on "
                "the last input in self.regular[process], once per checkpoint"
            )
    statuses = {c: e["status"] for c, e in got["checkpoints"].items()}
    expected = {c: e["status"] for c, e in want["checkpoints"].items()}
    if statuses != expected:
        return f"{what}: the checkpoints ended {statuses}, not {expected}. Hint: {_SNAPSHOT_ON_ALL}"
    if only == "finish":
        return None
    if got["in_flight"] != want["in_flight"]:
        for cid, chans in want["in_flight"].items():
            mine = got["in_flight"].get(cid, {})
            if mine != chans:
                back = ", ".join(want["back_edges"]) or "none here"
                return (
                    f"{what}, checkpoint {cid}: recorded in flight {mine or 'nothing'}, not "
                    f"{chans or 'nothing'}. Hint: "
                    + (
                        f"inputs that close a cycle (back edges: {back}) are not waited for "
                        "and are logged from the snapshot on (the base class does it: keep "
                        "calling super().on_app_receive); the other inputs record nothing "
                        "in flight"
                        if aligned
                        else "skipping the alignment records nothing in flight, not even on "
                        f"a back edge ({back}): keep the class's logs_back_edges = False"
                    )
                )
        return f"{what}: recorded in flight {got['in_flight']}, not {want['in_flight']}"
    if only == "aligned":
        return None
    if got["crossed"] != want["crossed"]:
        for cid, names in want["crossed"].items():
            mine = got["crossed"].get(cid, [])
            if mine != names:
                return (
                    f"{what}, checkpoint {cid}: self.crossed[{cid!r}] lists {mine}, but the "
                    f"records read past a barrier before the snapshot are {names}. Hint: on "
                    "each record an operator reads, look at every checkpoint it has not "
                    "snapshotted yet whose barrier has already come on that input"
                )
        return f"{what}: self.crossed lists {got['crossed']}, not {want['crossed']}"
    if got["restores"] != want["restores"]:
        lost = [r.get("predicted_lost") for r in got["restores"]] != [
            r.get("predicted_lost") for r in want["restores"]
        ]
        return f"{what}: the restore was {got['restores']}, not {want['restores']}. Hint: " + (
            "the records a restore loses from a back edge are listed by the base class, "
            "in self.dropped: keep calling super().on_app_receive(channel, message) first"
            if lost
            else "the restore uses the last completed checkpoint, and predicts as "
            "duplicates what self.crossed listed for it"
        )
    if got["duplicates"] != want["duplicates"]:
        twice = ", ".join(sorted(set(got["duplicates"]) - set(want["duplicates"]))[:6])
        return (
            f"{what}: record(s) {twice or got['duplicates']} reached the sink twice. Hint: a "
            "record read on an input after its barrier but before the snapshot is counted in "
            "the snapshot and read again after the restore: block the input until the snapshot"
        )
    if got["missing"] != want["missing"]:
        return (
            f"{what}: record(s) {', '.join(got['missing'][:6])} never reached the sink. Hint: "
            "a record that arrives on an input ahead of its barrier belongs in the snapshot: "
            "wait for the barrier on every input in self.regular[process] before taking it"
        )
    if got["counts"] != want["counts"]:
        return f"{what}: the counts are {got['counts']}, not {want['counts']}"
    if got["steps"] != want["steps"] or got["delivered"] != want["delivered"]:
        return (
            f"{what}: the run took {got['steps']} steps where the engine's took "
            f"{want['steps']}. Hint: block only the input a barrier came on, and unblock "
            "right after the snapshot"
        )
    return None


def with_crash(recipe: dict[str, Any], reference: dict[str, Any], seed: int) -> dict[str, Any]:
    """``recipe`` with a crash: at a step after the first checkpoint of ``reference`` (the
    report of ``recipe`` without a crash) completed, of an operator, both drawn with
    ``seed``."""
    import random

    rng = random.Random(seed)
    ends = [e["ended_at"] for e in reference["checkpoints"].values() if e["status"] == "COMPLETED"]
    first = min(ends, default=0) + 1
    processes = [op[0] for op in recipe["flow"]["operators"]]
    crash = [rng.randint(first, max(first, reference["steps"] - 1)), rng.choice(processes)]
    return {**recipe, "crash": crash}

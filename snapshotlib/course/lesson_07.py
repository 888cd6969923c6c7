"""Lesson 07, barrier snapshots: Chandy–Lamport, aligned, unaligned and at-least-once
checkpoints of one streaming job (07a, the four variants), and what each costs (07b,
measuring the trade-offs).

07a tells one checkpoint at one operator (:func:`story`, re-exported from
:mod:`~snapshotlib.course.dataflow_text` with :func:`recorded_text` and
:func:`flow_text`) and asks which variants store records in flight
(:func:`check_in_flight`, answered by running them: :func:`recorders`).

07b measures. :func:`measure` runs a job under every variant over many seeds, with and
without a crash, and sums the costs up as medians (:class:`Costs`; tables:
:func:`costs_table`, :func:`recovery_table`). :func:`claims` sets the Chandy–Lamport
and ABS rows of a system-design lesson's trade-off table next to those measurements,
claim by claim (:func:`claims_table`). :func:`tradeoff_table` is the corrected table,
built from the same measurements in this one place; more methods join it as
:class:`TradeoffRow` rows. The sizing arithmetic is :class:`~snapshotlib.course.sizing.Sizing`.

>>> from snapshotlib.dataflow import word_count
>>> sorted(recorders(word_count(records=8), seeds=[0]))
['chandy-lamport', 'unaligned']
>>> print(check_node_buffer(54_000_000).message.split(":")[0])
Right, for a node that records on its first marker
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import Network, Simulator, StartSnapshot
from ..dataflow import VARIANTS, Dataflow, StreamJob, iteration, word_count
from ..dataflow.coordinator import COMPLETED
from ..snapshot import GlobalSnapshot
from ..trace import APP
from .dataflow_text import flow_text, recorded_table, recorded_text, story, story_table
from .feedback import Feedback, is_blank, no_answer_yet
from .sizing import Sizing, num
from .sizing import check_node_buffer as _check_node_buffer
from .tables import Table

__all__ = [
    "CYCLIC",
    "DAG",
    "DESIGN_TABLE",
    "FIGURE_METRICS",
    "TRY_IT",
    "Claim",
    "Costs",
    "Sizing",
    "TradeoffRow",
    "as_rows",
    "backpressure",
    "backpressure_table",
    "check_in_flight",
    "check_node_buffer",
    "claims",
    "claims_table",
    "costs_table",
    "flow_text",
    "measure",
    "recorded_table",
    "recorded_text",
    "recorders",
    "recovery_table",
    "story",
    "story_table",
    "tradeoff_rows",
    "tradeoff_table",
    "unreachable_snapshot",
]

#: the lesson's job: two sources partition 20 records each over two keyed counts (keys
#: k0..k3 go to C2, k4..k7 to C1)
DAG = word_count(sources=2, counters=2, records=20, keys=8)
#: the lesson's cyclic job: records go round the loop L -> H until their hops are used
CYCLIC = iteration()


# ------------------------------------------------------------ measurements


@dataclass(frozen=True)
class Costs:
    """What one variant cost on one job, as medians over runs (one run per seed).

    Attributes
    ----------
    latency
        The checkpoint duration: steps from a checkpoint's trigger to its completion.
        (Not the processing latency of a record, which a pause adds to.)
    blocked
        The pause: channel-steps inputs spent blocked by alignment over a run.
    peak_buffered
        The most records and barriers waiting on blocked channels at one moment.
    peak_held
        The most records held for unfinished checkpoints at one moment: recorded as
        channel state (held until the checkpoint completes and is stored), or waiting on
        an input blocked by alignment.
    peak_in_flight
        The most records and barriers in all channels at one moment.
    state_bytes, inflight_bytes, inflight_records
        Stored per completed checkpoint: operator state, and records in flight.
    control
        Barriers (or markers) sent per checkpoint.
    replayed
        Records put back on channels by the restore after a crash.
    duplicates, max_duplicates, runs_with_duplicates
        Records delivered more than once after the crash and restore.
    duplicates_without_crash
        Duplicates over all the failure-free runs.
    same_output
        Runs whose output after a crash equals that of the failure-free run.
    as_predicted
        Runs whose duplicates are exactly the records the engine saw cross a barrier.
    """

    variant: str
    runs: int
    latency: float
    blocked: float
    peak_buffered: float
    peak_in_flight: float
    state_bytes: float
    inflight_bytes: float
    inflight_records: float
    control: float
    completed: float
    replayed: float
    duplicates: float
    max_duplicates: int
    runs_with_duplicates: int
    duplicates_without_crash: int
    same_output: int
    as_predicted: int
    peak_held: float = 0.0
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def held(job: StreamJob) -> int:
    """Records held right now for the job's unfinished checkpoints: recorded as channel
    state and not yet stored, or waiting on an input that alignment blocks.

    >>> job = StreamJob(DAG, "aligned", seed=23)
    >>> _ = job.run(max_steps=20)
    >>> held(job)  # S1#3 and S1#4 wait on the blocked S1->C1
    2
    """
    sim = job.sim
    messages = sim.trace.messages
    waiting = sum(1 for c in sim.blocked for m in sim.queues[c] if messages[m].kind == APP)
    taken = sim.snapshot_ids()
    recorded = 0
    for entry in job.coordinator.pending():
        if entry.id in taken:
            recorded += sum(len(ms) for ms in sim.snapshot(entry.id).channels.values())
    return waiting + recorded


def run_tracking_held(job: StreamJob) -> int:
    """Run ``job`` to the end; the peak of :func:`held` over the run."""
    peak = held(job)
    while job.step() is not None:
        peak = max(peak, held(job))
    return peak


def measure(
    flow: Dataflow,
    seeds: Iterable[int] = range(40),
    crash_at: tuple[int, str] = (100, "C1"),
    variants: Sequence[str] = VARIANTS,
    **options: Any,
) -> list[Costs]:
    """Run ``flow`` under each variant once per seed without failure, and once with
    ``crash_at`` (a crash, then a restore from the last completed checkpoint); options
    go to :class:`~snapshotlib.dataflow.StreamJob` (``interval``, ``capacity``...).

    >>> [c.variant for c in measure(word_count(records=5), seeds=[0], crash_at=(10, "C1"))]
    ['chandy-lamport', 'aligned', 'unaligned', 'at-least-once']
    """
    seeds = list(seeds)
    out = []
    for variant in variants:
        latency, blocked, buffered, peak, completed, kept = [], [], [], [], [], []
        state, inflight, records, control = [], [], [], []
        replayed, dups = [], []
        clean_dups = same = predicted = 0
        for seed in seeds:
            clean = StreamJob(flow, variant, seed=seed, **options)
            kept.append(run_tracking_held(clean))
            m = clean.metrics()
            if m["latency_median"] is not None:
                latency.append(m["latency_median"])
            blocked.append(m["blocked_steps"])
            buffered.append(m["peak_buffered"])
            peak.append(m["peak_in_flight"])
            completed.append(m["completed"])
            clean_dups += m["duplicates"]
            messages = clean.sim.trace.messages
            for e in clean.coordinator.entries.values():
                if e.status == COMPLETED:
                    state.append(e.state_bytes)
                    inflight.append(e.inflight_bytes)
                    records.append(e.inflight_messages)
                    control.append(
                        sum(1 for msg in messages if msg.kind != APP and msg.tag == e.id)
                    )
            crashed = StreamJob(flow, variant, seed=seed, **options).run(crash_at=crash_at)
            found = crashed.outcome().duplicates
            dups.append(sum(n - 1 for n in found.values()))
            same += crashed.outcome() == clean.outcome()
            if crashed.restores:
                replayed.append(crashed.restores[0]["replayed"])
                predicted += sorted(found) == crashed.restores[0]["predicted_duplicates"]
        out.append(
            Costs(
                variant=variant,
                runs=len(seeds),
                latency=_median(latency),
                blocked=_median(blocked),
                peak_buffered=_median(buffered),
                peak_in_flight=_median(peak),
                state_bytes=_median(state),
                inflight_bytes=_median(inflight),
                inflight_records=_median(records),
                control=_median(control),
                completed=_median(completed),
                replayed=_median(replayed),
                duplicates=_median(dups),
                max_duplicates=max(dups, default=0),
                runs_with_duplicates=sum(1 for d in dups if d),
                duplicates_without_crash=clean_dups,
                same_output=same,
                as_predicted=predicted,
                peak_held=_median(kept),
                options=dict(options, crash_at=crash_at),
            )
        )
    return out


#: the panels of lesson 07b's cost figure: (attribute of :class:`Costs`, title), in the
#: lessons' terms (pass to :func:`snapshotlib.viz.costs_figure`)
FIGURE_METRICS = (
    ("latency", "checkpoint duration (steps)"),
    ("blocked", "inputs paused (channel-steps)"),
    ("peak_held", "peak records held for a checkpoint"),
    ("state_bytes", "stored operator state (B)"),
    ("inflight_bytes", "stored in-flight records (B)"),
    ("duplicates", "duplicates after a crash"),
)


def _legend(costs: Sequence[Costs]) -> str:
    return f"Medians over {costs[0].runs if costs else 0} runs (one per seed)."


def costs_table(costs: Sequence[Costs]) -> Table:
    """What a checkpoint costs, one row per variant.

    >>> costs = measure(word_count(records=5), seeds=[0], crash_at=(10, "C1"),
    ...                 variants=["aligned"])
    >>> costs_table(costs).row("aligned")["inputs paused"]
    '22'
    """
    return Table(
        ("variant", "checkpoint duration", "inputs paused", "peak held", "stored state",
         "stored in flight"),
        [
            (c.variant, num(c.latency), num(c.blocked), num(c.peak_held),
             f"{num(c.state_bytes)} B", f"{num(c.inflight_bytes)} B")
            for c in costs
        ],
        notes=(
            _legend(costs),
            "checkpoint duration: steps from trigger to completion. inputs paused: "
            "channel-steps an input was blocked by alignment (whole run). peak held: the "
            "most records kept for unfinished checkpoints at once (recorded as channel "
            "state, or waiting on a blocked input). stored: per completed checkpoint.",
        ),
    )  # fmt: skip


def recovery_table(costs: Sequence[Costs]) -> Table:
    """What a crash and a restore did, one row per variant."""
    crash = costs[0].options.get("crash_at") if costs else None
    where = f"{crash[1]} crashes at step {crash[0]}" if crash else "a crash"
    return Table(
        ("variant", "records replayed", "runs with duplicates", "duplicates (max)",
         "duplicates = crossings", "same output"),
        [
            (c.variant, num(c.replayed), f"{c.runs_with_duplicates}/{c.runs}",
             f"{num(c.duplicates)} ({c.max_duplicates})", f"{c.as_predicted}/{c.runs}",
             f"{c.same_output}/{c.runs}")
            for c in costs
        ],
        notes=(
            f"{where}, then the job is restored from its last completed checkpoint. "
            "records replayed: put back on channels by the restore (median). duplicates: "
            "records delivered twice (median, and the most in one run). duplicates = "
            "crossings: runs whose duplicates are exactly the records that crossed a "
            "barrier of the checkpoint restored. same output: as in the run without a crash.",
            "Without a crash: "
            + "; ".join(f"{c.variant} {c.duplicates_without_crash}" for c in costs)
            + " duplicates in all.",
        ),
    )  # fmt: skip


def backpressure(
    flow: Dataflow,
    capacities: Sequence[int | None] = (None, 8, 4, 2, 1),
    seeds: Iterable[int] = range(20),
    variants: Sequence[str] = VARIANTS,
) -> list[dict[str, Any]]:
    """Medians over ``seeds`` of each variant's buffers when every channel holds at most
    ``capacity`` records (``None``: unbounded): peak records in flight, peak records
    waiting on blocked inputs, peak records held for a checkpoint, stored in-flight bytes
    per checkpoint, and the checkpoint duration (``latency``)."""
    seeds = list(seeds)
    rows = []
    for capacity in capacities:
        for variant in variants:
            runs, kept = [], []
            for s in seeds:
                job = StreamJob(flow, variant, seed=s, capacity=capacity)
                kept.append(run_tracking_held(job))
                runs.append(job)
            ms = [r.metrics() for r in runs]
            inflight = [
                e.inflight_bytes
                for r in runs
                for e in r.coordinator.entries.values()
                if e.status == COMPLETED
            ]
            rows.append(
                {
                    "capacity": capacity,
                    "variant": variant,
                    "peak_in_flight": _median([m["peak_in_flight"] for m in ms]),
                    "peak_buffered": _median([m["peak_buffered"] for m in ms]),
                    "peak_held": _median(kept),
                    "inflight_bytes": _median(inflight),
                    "latency": _median(
                        [m["latency_median"] for m in ms if m["latency_median"] is not None]
                    ),
                    "finished": sum(r.outcome().delivered.total() == _total(flow) for r in runs),
                    "runs": len(runs),
                }
            )
    return rows


def _total(flow: Dataflow) -> int:
    return sum(len(op.records) for op in flow.operators)


#: what :func:`backpressure_table` can show: row key -> (title, unit)
BACKPRESSURE_METRICS = {
    "peak_held": ("peak records held for a checkpoint", ""),
    "inflight_bytes": ("stored in-flight records per checkpoint", " B"),
    "peak_in_flight": ("peak records and barriers in all channels", ""),
}


def backpressure_table(rows: Sequence[Mapping[str, Any]], metric: str = "peak_held") -> Table:
    """One metric of :func:`backpressure`'s rows: a row per channel capacity, a column
    per variant."""
    title, unit = BACKPRESSURE_METRICS[metric]
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    capacities = list(dict.fromkeys(r["capacity"] for r in rows))
    by = {(r["capacity"], r["variant"]): r for r in rows}
    return Table(
        ("channel capacity", *variants),
        [
            ("unbounded" if cap is None else str(cap),
             *(f"{num(by[(cap, v)][metric])}{unit}" for v in variants))
            for cap in capacities
        ],
        notes=(f"{title}; medians over {rows[0]['runs'] if rows else 0} runs.",),
    )  # fmt: skip


# ---------------------------------------------- the system-design lesson's table

#: The trade-off table of a system-design lesson on distributed snapshots (its
#: Chandy–Lamport and ABS rows), as it stands there: (method, latency impact, memory
#: overhead, network overhead, network topology constraint, recovery complexity).
DESIGN_TABLE = (
    ("Standard Chandy-Lamport", "Low (Zero-Pause)", "High (Buffers in-flight channels)",
     "Medium", "Fully Connected FIFO", "Medium"),
    ("Asynchronous Barrier (Flink ABS)", "Low (Zero-Pause)", "Minimal (Uses backpressure)",
     "Low", "Directed Acyclic Graph (DAG)", "Medium"),
)  # fmt: skip


@dataclass(frozen=True)
class Claim:
    """One claim of the system-design lesson, next to what was measured."""

    method: str
    column: str
    says: str
    measured: str
    verdict: str

    def __str__(self) -> str:
        return f'{self.method}, {self.column}: "{self.says}"\n  measured: {self.measured}\n  -> {self.verdict}'  # noqa: E501


def _count(x: float, word: str) -> str:
    return f"{num(x)} {word}{'' if x == 1 else 's'}"


def _by(costs: Sequence[Costs]) -> dict[str, Costs]:
    return {c.variant: c for c in costs}


def unreachable_snapshot() -> GlobalSnapshot:
    """Chandy–Lamport on a directed graph in which one process (``P3``) cannot be reached
    from the initiator ``P1``: P1 ⇄ P2 and P3 → P2. P3 never gets a marker and never
    records, and P2 waits for ever for the marker on P3→P2.

    >>> snap = unreachable_snapshot()
    >>> snap.complete, sorted(snap.processes), snap.pending_channels
    (False, ['P1', 'P2'], ('P3->P2',))
    """
    net = Network(
        ["P1", "P2", "P3"], [("P1", "P2"), ("P2", "P1"), ("P3", "P2")], strongly_connected=False
    )
    sim = Simulator(net, app="tokens", initial={"P1": 1, "P2": 1, "P3": 1})
    sim.step(StartSnapshot("P1", "s1"))
    sim.run()
    return sim.snapshot("s1")


def claims(
    dag: Sequence[Costs],
    cyclic: Sequence[Costs],
    bounded: Sequence[Costs],
    flow: Dataflow = DAG,
) -> list[Claim]:
    """Each claim of :data:`DESIGN_TABLE`, and three claims of the same text's prose,
    checked against the measurements: ``dag`` and ``cyclic`` from :func:`measure` on the
    two jobs, ``bounded`` on the DAG with a channel capacity. Every verdict is computed
    from the numbers."""
    d, c, b = _by(dag), _by(cyclic), _by(bounded)
    cl, al = d["chandy-lamport"], d["aligned"]
    ca = c["aligned"]
    n = len(flow.operators)
    n_channels = len(flow.network().channels)
    cap = b["aligned"].options.get("capacity")
    lost = unreachable_snapshot()
    return [
        Claim(
            "Chandy-Lamport", "latency impact", DESIGN_TABLE[0][1],
            f"inputs paused {num(cl.blocked)} channel-steps",
            "agrees: no input ever waits" if cl.blocked == 0 else "does not hold",
        ),
        Claim(
            "ABS (aligned)", "latency impact", DESIGN_TABLE[1][1],
            f"inputs paused {num(al.blocked)} channel-steps while aligning",
            "does not hold: aligning pauses the inputs whose barrier came first"
            if al.blocked > 0 else "agrees",
        ),
        Claim(
            "Chandy-Lamport", "memory overhead", DESIGN_TABLE[0][2],
            f"holds up to {num(cl.peak_held)} records (recorded, until the checkpoint is "
            f"stored); stores {num(cl.inflight_bytes)} B of them per checkpoint",
            "agrees: recording a channel is buffering it; this is the text's 1.98 GB"
            if cl.peak_held > 0 else "does not hold",
        ),
        Claim(
            "ABS (aligned)", "memory overhead", DESIGN_TABLE[1][2],
            f"stores {num(al.inflight_bytes)} B in flight, but holds up to "
            f"{num(al.peak_held)} records on blocked inputs ({num(b['aligned'].peak_held)} "
            f"with a capacity of {cap} per channel)",
            "half right: nothing in flight is stored, but blocked inputs hold records; "
            "backpressure bounds them, it does not remove them"
            if al.inflight_bytes == 0 and al.peak_held > 0 else "agrees",
        ),
        Claim(
            "ABS (aligned)", "prose",
            "completely eliminating the need to buffer in-flight messages",
            f"holds up to {num(al.peak_held)} records for a checkpoint "
            f"(Chandy-Lamport: {num(cl.peak_held)})",
            "does not hold: alignment removes the need to store them, not to hold them"
            if al.peak_held > 0 else "agrees",
        ),
        Claim(
            "both", "network overhead", f"{DESIGN_TABLE[0][3]} vs {DESIGN_TABLE[1][3]}",
            f"{num(cl.control)} markers and {num(al.control)} barriers per checkpoint (one "
            f"per channel); Chandy-Lamport also ships {num(cl.inflight_bytes)} B of channel "
            f"state to storage per checkpoint, aligned {num(al.inflight_bytes)} B",
            "agrees in direction, for another reason: the control traffic is the same; the "
            "extra traffic is the recorded channel state sent to storage"
            if cl.control == al.control and cl.inflight_bytes > al.inflight_bytes
            else "does not hold",
        ),
        Claim(
            "Chandy-Lamport", "topology", DESIGN_TABLE[0][4],
            f"{_count(cl.completed, 'checkpoint')} completed per run on a job with "
            f"{n_channels} of the {n * (n - 1)} channels a complete graph of {n} operators "
            "would have",
            "does not hold: FIFO, yes; fully connected, no" if cl.completed > 0 else "agrees",
        ),
        Claim(
            "Chandy-Lamport", "prose",
            "designed for any arbitrary directed graph topology (including cycles)",
            f"on P1 ⇄ P2 with P3 → P2, initiated by P1: recorded "
            f"{', '.join(sorted(lost.processes))}; still waiting on "
            f"{', '.join(lost.pending_channels)}; complete: {'yes' if lost.complete else 'no'}",
            "does not hold, and contradicts the table: not every graph, not only complete "
            "ones; every process must be reachable by markers from an initiator"
            if not lost.complete else "agrees",
        ),
        Claim(
            "ABS (aligned)", "topology", DESIGN_TABLE[1][4],
            f"on the cyclic job: {_count(ca.completed, 'checkpoint')} completed per run, "
            f"{num(ca.inflight_bytes)} B stored from the back edge, the failure-free output "
            f"after a crash in {ca.same_output}/{ca.runs} runs",
            "right for Flink in practice, wrong for the ABS paper: the paper handles cycles "
            "by logging the records on back edges, as here"
            if ca.completed > 0 and ca.same_output == ca.runs else "agrees",
        ),
        Claim(
            "both", "recovery complexity", f"{DESIGN_TABLE[0][5]} / {DESIGN_TABLE[1][5]}",
            f"after a crash, Chandy-Lamport replays {num(cl.replayed)} stored records, "
            f"aligned {num(al.replayed)}; both rewind every source and every state; the "
            f"failure-free output in {cl.same_output}/{cl.runs} and "
            f"{al.same_output}/{al.runs} runs",
            "agrees: the same restore, with channel contents to replay for Chandy-Lamport"
            if cl.same_output == cl.runs and al.same_output == al.runs else "does not hold",
        ),
    ]  # fmt: skip


def claims_table(found: Sequence[Claim]) -> Table:
    """The claims as a table: what the text says, what was measured, the verdict."""
    return Table(
        ("claim", "the text says", "measured", "verdict"),
        [(f"{c.method}, {c.column}", c.says, c.measured, c.verdict) for c in found],
    )


# ------------------------------------------------------ the corrected table


@dataclass(frozen=True)
class TradeoffRow:
    """One method of the corrected trade-off table, each cell from a measurement."""

    method: str
    pauses: str
    stores_in_flight: str
    holds: str
    topology: str
    after_a_crash: str


TRADEOFF_COLUMNS = (
    "method",
    "pauses inputs",
    "stores in flight",
    "holds for a checkpoint",
    "topology",
    "after a crash",
)


def _crash_text(c: Costs) -> str:
    if c.runs_with_duplicates:
        return f"duplicates in {c.runs_with_duplicates}/{c.runs} crashed runs"
    return f"exactly once ({c.same_output}/{c.runs} runs as without a crash)"


def tradeoff_rows(
    dag: Sequence[Costs], cyclic: Sequence[Costs], bounded: Sequence[Costs]
) -> list[TradeoffRow]:
    """A row per variant of lesson 07, from the measurements of :func:`claims`."""
    d, c, b = _by(dag), _by(cyclic), _by(bounded)
    rows = []
    for v, costs in d.items():
        paused = f"yes: {num(costs.blocked)} channel-steps" if costs.blocked else "no"
        on_cycle = num(c[v].inflight_bytes) if v in c else "?"
        stored = (
            f"{num(costs.inflight_bytes)} B on the DAG; {on_cycle} B on the cycle"
            if costs.inflight_bytes
            else f"none on the DAG; the back edge on the cycle ({on_cycle} B)"
        )
        kept = f"up to {num(costs.peak_held)} records" if costs.peak_held else "nothing"
        if v in b:
            kept += f" ({num(b[v].peak_held)} with a channel capacity of "
            kept += f"{b[v].options.get('capacity')})"
        topology = {
            "chandy-lamport": "FIFO; every process reachable by markers",
            "aligned": "FIFO; cycles by logging the back edges",
        }.get(v, "FIFO; any graph the barriers reach")
        rows.append(TradeoffRow(v, paused, stored, kept, topology, _crash_text(costs)))
    return rows


def tradeoff_table(
    dag: Sequence[Costs],
    cyclic: Sequence[Costs],
    bounded: Sequence[Costs],
    extra: Sequence[TradeoffRow] = (),
) -> Table:
    """The trade-off table, corrected and measured: one row per variant of lesson 07
    (:func:`tradeoff_rows`), then the ``extra`` rows (other methods, measured
    elsewhere), all with the columns of :data:`TRADEOFF_COLUMNS`."""
    rows = [*tradeoff_rows(dag, cyclic, bounded), *extra]
    runs = dag[0].runs if dag else 0
    return Table(
        TRADEOFF_COLUMNS,
        [(r.method, r.pauses, r.stores_in_flight, r.holds, r.topology, r.after_a_crash)
         for r in rows],
        notes=(f"Medians over {runs} runs per variant on lesson 07's word count (the DAG) "
               "and its cyclic job.",),
    )  # fmt: skip


# -------------------------------------------------------------- the try-its


def recorders(flow: Dataflow, seeds: Iterable[int] = range(5)) -> set[str]:
    """The variants that store records in flight in some checkpoint of ``flow`` (over
    ``seeds``): what the engine does, not what a table says."""
    seeds = list(seeds)
    found = set()
    for variant in VARIANTS:
        for seed in seeds:
            if StreamJob(flow, variant, seed=seed).run().metrics()["inflight_bytes"] > 0:
                found.add(variant)
                break
    return found


#: hints that point at the reasoning, never at a variant's name
_MISSING = (
    "A checkpoint stores a record in flight when the record was sent before the barrier "
    "(or marker) on its channel and read after its receiver recorded its state. Go through "
    "the stories above: under which variants is an operator's state recorded while "
    "records sent before a barrier are still on their way, on its inputs or its outputs?"
)
_EXTRA = (
    "An operator that records its state only once the barrier has arrived on every input "
    "it waits for has nothing left between the barriers to store; and a record read past "
    "a barrier is counted in the operator's state, not stored as channel state."
)
_CYCLE = (
    "On a cycle an operator cannot wait for the barrier on its back edge: that barrier "
    "comes round only after the operator has sent its own. What happens to the records "
    "that arrive there meanwhile, under each variant?"
)


def _in_flight_answer(flow: Dataflow, expected: set[str], cyclic: bool) -> str:
    names = ", ".join(v for v in VARIANTS if v in expected)
    others = ", ".join(v for v in VARIANTS if v not in expected)
    if cyclic:
        return (
            f"{names}: every variant stores the records that arrive on the back edge L->H "
            "after its operator recorded its state, until the barrier comes round."
        )
    return (
        f"{names}. Chandy-Lamport stores what arrives on an input between its operator's "
        "recording and that input's marker; unaligned barriers also store the records they "
        f"overtake. {others} record their operators' state only: an aligned operator has "
        "nothing between its barriers, and at-least-once counts the crossing records in its "
        "state instead."
    )


def check_in_flight(answer: Any, cyclic: bool = False) -> Feedback:
    """Which variants store records in flight on the lesson's job (``cyclic``: on the
    cyclic one)? ``answer`` is a set (or list) of names from ``VARIANTS``.

    A wrong set is told how many variants are missing or extra, and where to look; the
    names are in the folded answer only.

    >>> feedback = check_in_flight({"unaligned"})
    >>> feedback.ok, feedback.message
    (False, 'Not quite: one variant that stores records in flight is missing.')
    """
    flow = CYCLIC if cyclic else DAG
    job = "cyclic job" if cyclic else "job"
    if is_blank(answer):
        return no_answer_yet(
            hint=f"Name the variants, e.g. {{'aligned'}}: any of {', '.join(VARIANTS)}."
        )
    if isinstance(answer, str):
        answer = {answer}
    try:
        names = set(answer)
    except TypeError:
        return Feedback(
            False,
            f"{answer!r} is not a set of variant names.",
            "Write a set such as {'aligned', 'unaligned'}.",
        )
    unknown = sorted(str(n) for n in names if n not in VARIANTS)
    if unknown:
        return Feedback(
            False,
            f"Unknown variant {', '.join(map(repr, unknown))}.",
            f"The variants are {', '.join(VARIANTS)}.",
        )
    expected = recorders(flow)
    if names == expected:
        return Feedback(
            True,
            f"Right: on the {job}, {', '.join(v for v in VARIANTS if v in expected)} store "
            "records in flight; "
            + (
                "the others store operator state only."
                if expected != set(VARIANTS)
                else "every one, because of the back edge L->H."
            ),
        )
    missing = [v for v in VARIANTS if v in expected - names]
    extra = [v for v in VARIANTS if v in names - expected]
    parts = []
    if missing:
        parts.append(
            f"{_count(len(missing), 'variant')} that store{'s' if len(missing) == 1 else ''} "
            f"records in flight {'is' if len(missing) == 1 else 'are'} missing"
        )
    if extra:
        parts.append(
            f"{_count(len(extra), 'variant')} in your set store{'s' if len(extra) == 1 else ''}"
            f" none on the {job}"
        )
    text = "; ".join(parts).replace("1 variant", "one variant")
    hint = (_CYCLE if cyclic else _MISSING) if missing else _EXTRA
    return Feedback(
        False, f"Not quite: {text}.", hint, answer=_in_flight_answer(flow, expected, cyclic)
    )


#: lesson 07b's try-it: fully connected, as in the system-design lesson, but smaller
TRY_IT = Sizing(nodes=20, rate=2_000, record_bytes=500, delay=3)


def check_node_buffer(answer: Any, sizing: Sizing = TRY_IT) -> Feedback:
    """How many bytes must one node of ``sizing`` hold while its markers are held up?
    Either the initiator's or another node's figure is right
    (:func:`snapshotlib.course.sizing.check_node_buffer`).

    >>> feedback = check_node_buffer(60_000_000)
    >>> feedback.message
    '60,000,000 B counts 20 input channels.'
    >>> feedback.hint
    'A node has no channel to itself: how many inputs does it have?'
    """
    return _check_node_buffer(answer, sizing)


def as_rows(costs: Sequence[Costs]) -> list[dict[str, Any]]:
    """The costs as plain dicts (for a figure or a data frame)."""
    return [{k: v for k, v in asdict(c).items() if k != "options"} for c in costs]

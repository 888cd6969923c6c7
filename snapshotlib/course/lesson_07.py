"""Lesson 07, barrier snapshots: Chandy–Lamport, aligned, unaligned and at-least-once
checkpoints of one streaming job, side by side.

The text views print what happens at one operator during one checkpoint
(:func:`story`) and what a completed checkpoint recorded (:func:`recorded_text`).
:func:`measure` runs a job under every variant over many seeds, with and without a
crash, and sums the costs up as medians (:class:`Costs`, :func:`costs_table`);
:func:`claims` puts the qualitative trade-off table of the course's production lesson
next to those measurements and says, claim by claim, whether the numbers agree.
:class:`Sizing` is that lesson's memory arithmetic as a worked computation.

The try-it checks ask the engine, never a hard-coded answer: which variants record
in-flight data is found by running them (:func:`recorders`).

>>> from snapshotlib.dataflow import StreamJob, word_count
>>> job = StreamJob(word_count(records=6), "aligned", seed=1, interval=5)
>>> print(story(job, "C1", "c1").splitlines()[0])
step 13: the barrier of c1 arrives on S1->C1: C1 blocks S1->C1 and waits for the barrier on S2->C1
>>> print(Sizing(nodes=100, rate=50_000, record_bytes=200, delay=2).per_node_bytes)
1980000000
>>> print(check_node_buffer(57_000_000))
✓ Right: 19 input channels × 6,000 records × 500 B = 57,000,000 B (57 MB) per node.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..algorithms.barriers import UnalignedBarriers, back_edges
from ..dataflow import VARIANTS, Dataflow, Record, StreamJob, iteration, word_count
from ..dataflow.coordinator import COMPLETED
from ..trace import APP, CONTROL, RECEIVE
from .feedback import Feedback

__all__ = [
    "CYCLIC",
    "DAG",
    "SEED_TABLE",
    "TRY_IT",
    "Claim",
    "Costs",
    "Sizing",
    "as_rows",
    "backpressure",
    "backpressure_table",
    "check_in_flight",
    "check_node_buffer",
    "claims",
    "claims_text",
    "costs_table",
    "flow_text",
    "measure",
    "recorded_text",
    "recorders",
    "story",
]

#: the lesson's job: two sources partition 20 records each over two keyed counts (keys
#: k0..k3 go to C2, k4..k7 to C1)
DAG = word_count(sources=2, counters=2, records=20, keys=8)
#: the lesson's cyclic job: records go round the loop L -> H until their hops are used
CYCLIC = iteration()


# ------------------------------------------------------------------ as text


def _name(job: StreamJob, channel: int) -> str:
    return str(job.network.channels[channel])


def _names(job: StreamJob, channels: Iterable[int]) -> str:
    return ", ".join(_name(job, c) for c in sorted(channels))


def _record_name(payload: Any) -> str:
    if isinstance(payload, Record):
        return f"{payload.origin[0]}#{payload.origin[1]}"
    return str(payload)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _state_text(job: StreamJob, process: str, state: Any) -> str:
    kind = job.app.kind[process]
    if kind == "source":
        return f"offset {state}"
    if kind == "count":
        return str(dict(state))
    if kind == "sink":
        return _plural(len(state), "record")
    return "no state"


def flow_text(flow: Dataflow) -> str:
    """The operators of ``flow``, its channels and its back edges, in words.

    >>> print(flow_text(word_count(records=3)))
    S1 (source, 3 records), S2 (source, 3 records), C1 (count), C2 (count), K (sink)
    6 channels: S1->C1, S1->C2, S2->C1, S2->C2, C1->K, C2->K
    no cycle
    """
    ops = []
    for op in flow.operators:
        extra = f", {_plural(len(op.records), 'record')}" if op.kind == "source" else ""
        ops.append(f"{op.name} ({op.kind}{extra})")
    net = flow.network()
    back = back_edges(net)
    return "\n".join(
        [
            ", ".join(ops),
            f"{len(net.channels)} channels: {', '.join(str(c) for c in net.channels)}",
            f"back edges: {', '.join(str(net.channels[c]) for c in sorted(back))}"
            if back
            else "no cycle",
        ]
    )


def story(job: StreamJob, process: str, checkpoint: str, *, max_steps: int = 5000) -> str:
    """Step ``job`` until ``process`` has finished its part of ``checkpoint``, telling
    what happens at ``process`` from the moment the first barrier (or marker) of that
    checkpoint reaches it: blocked and unblocked inputs, records read (and whether they
    are recorded in flight, or cross the barrier), records that wait behind a barrier,
    the moment the state is recorded. The job is left where the story ends.
    """
    sim = job.sim
    trace = sim.trace
    word = "marker" if job.variant == "chandy-lamport" else "barrier"
    inputs = set(sim.input_channels(process))
    outputs = sim.output_channels(process)
    lines: list[str] = []
    started = False
    arrived: set[int] = set()
    after = 0  # records read after the snapshot on inputs already closed

    def record() -> Any:
        return sim.algorithm.records.get(checkpoint)

    for _ in range(max_steps):
        rec = record()
        if started and rec is not None and process in rec.red_from and inputs <= rec.closed:
            break
        was_recorded = rec is not None and process in rec.red_from
        blocked_before = set(sim.blocked) & inputs
        actions, messages = len(trace.actions), len(trace.messages)
        if job.step() is None:
            lines.append(f"the job has finished; {process} never completed {checkpoint}")
            break
        rec = record()
        for i in range(actions, len(trace.actions)):
            a = trace.actions[i]
            if a.process != process:
                continue
            msg = trace.messages[a.message] if a.message >= 0 else None
            if a.kind == CONTROL and msg is not None and msg.tag == checkpoint:
                started = True
                arrived.add(a.channel)
                lines.append(
                    f"step {job.steps}: the {word} of {checkpoint} arrives on "
                    f"{_name(job, a.channel)}: "
                    + _on_barrier(job, process, checkpoint, a.channel, was_recorded, arrived,
                                  blocked_before, outputs)
                )  # fmt: skip
            elif a.kind == RECEIVE and started and msg is not None:
                meaning = _on_read(job, process, rec, a.channel, a.message, arrived)
                if meaning is None:
                    after += 1
                    continue
                lines.append(
                    f"step {job.steps}: {process} reads {_record_name(msg.payload)} from "
                    f"{_name(job, a.channel)}{meaning}"
                )
        if started:
            for m in range(messages, len(trace.messages)):
                msg = trace.messages[m]
                if msg.kind == APP and msg.channel in sim.blocked & inputs:
                    waiting = _waiting(job, msg.channel)
                    lines.append(
                        f"step {job.steps}: {_record_name(msg.payload)} is sent on "
                        f"{_name(job, msg.channel)}, which is blocked: it waits there "
                        f"({waiting} waiting)"
                    )
    rec = record()
    if rec is not None and process in rec.red_from and inputs <= rec.closed:
        in_flight = {c: rec.channels.get(c, []) for c in sorted(inputs)}
        held = [f"{_name(job, c)}: {_records(job, ms)}" for c, ms in in_flight.items() if ms]
        lines.append(
            f"{process}'s part of {checkpoint} is complete: state "
            f"{_state_text(job, process, rec.states[process])}; in flight on its inputs: "
            + ("; ".join(held) if held else "nothing")
        )
        if after:
            lines.append(
                f"(meanwhile {process} went on working: {_plural(after, 'record')} read after "
                "its snapshot on inputs already closed, for the next checkpoint)"
            )
    return "\n".join(lines)


def _waiting(job: StreamJob, channel: int) -> int:
    messages = job.sim.trace.messages
    return sum(1 for m in job.sim.queues[channel] if messages[m].kind == APP)


def _records(job: StreamJob, ids: Iterable[int]) -> str:
    messages = job.sim.trace.messages
    return ", ".join(_record_name(messages[m].payload) for m in ids) or "nothing"


def _on_barrier(
    job: StreamJob,
    process: str,
    checkpoint: str,
    channel: int,
    was_recorded: bool,
    arrived: set[int],
    blocked_before: set[int],
    outputs: Sequence[int],
) -> str:
    sim = job.sim
    inputs = sim.input_channels(process)
    rec = sim.algorithm.records.get(checkpoint)
    recorded = rec is not None and process in rec.red_from
    parts: list[str] = []
    newly_blocked = (sim.blocked & set(inputs)) - blocked_before
    if newly_blocked:
        missing = [c for c in inputs if c not in arrived and c not in _back(job)]
        parts.append(
            f"{process} blocks {_names(job, newly_blocked)}"
            + (f" and waits for the barrier on {_names(job, missing)}" if missing else "")
        )
    if recorded and not was_recorded:
        assert rec is not None
        text = (
            f"{process} records its state ({_state_text(job, process, rec.states[process])})"
            + (f" and sends the {'marker' if job.variant == 'chandy-lamport' else 'barrier'}"
               f" on {_names(job, outputs)}" if outputs else "")
        )  # fmt: skip
        algo = sim.algorithm
        if isinstance(algo, UnalignedBarriers):
            overtaken = {c: algo.overtaken.get((checkpoint, c), []) for c in outputs}
            taken = [f"{_name(job, c)}: {_records(job, ms)}" for c, ms in overtaken.items() if ms]
            if taken:
                text += f"; the barrier overtakes what waits on {'; '.join(taken)} (recorded)"
        logging = [c for c in inputs if c not in rec.closed]
        if logging:
            text += f"; it records what arrives on {_names(job, logging)} until its {'marker' if job.variant == 'chandy-lamport' else 'barrier'} comes"  # noqa: E501
        parts.append(text)
    elif was_recorded:
        assert rec is not None
        msgs = rec.channels.get(channel, [])
        parts.append(
            f"{process} stops recording it: {_plural(len(msgs), 'record')} in flight"
            + (f" ({_records(job, msgs)})" if msgs else "")
        )
    released = blocked_before - sim.blocked
    if released:
        waited = sum(_waiting(job, c) for c in released)
        parts.append(f"unblocks {_names(job, released)} ({_plural(waited, 'record')} waited)")
    if not parts:
        if job.variant == "at-least-once" and not recorded:
            missing = [c for c in inputs if c not in arrived and c not in _back(job)]
            parts.append(
                f"{process} keeps reading it (no alignment) and waits for the barrier on "
                f"{_names(job, missing)}"
            )
        else:
            parts.append("nothing to do")
    return "; ".join(parts)


def _back(job: StreamJob) -> frozenset[int]:
    return frozenset(getattr(job.sim.algorithm, "back", frozenset()))


def _on_read(
    job: StreamJob, process: str, rec: Any, channel: int, message: int, arrived: set[int]
) -> str | None:
    """What reading ``message`` means for the checkpoint; ``None``: nothing (a read
    after the snapshot on an input already closed)."""
    word = "marker" if job.variant == "chandy-lamport" else "barrier"
    recorded = rec is not None and process in rec.red_from
    if recorded and message in rec.channels.get(channel, []):
        return f": recorded in flight (sent before the {word}, read after the snapshot)"
    if job.variant == "at-least-once" and not recorded and channel in arrived:
        return (
            f": after the barrier on {_name(job, channel)}, before {process}'s snapshot: "
            "it crosses the barrier (counted in the snapshot, and read again on a restore)"
        )
    if recorded:
        return None
    return ""


def recorded_text(job: StreamJob, checkpoint: str) -> str:
    """What a checkpoint recorded: each operator's state, the records in flight on each
    channel that has any, and the sizes the registry reports."""
    entry = job.coordinator.entry(checkpoint)
    if entry.status != COMPLETED:
        return f"{checkpoint} is {entry.status}: nothing to restore from"
    snap = entry.snapshot
    lines = [
        f"{checkpoint} ({job.variant}): triggered at step {entry.triggered_at}, "
        f"completed at step {entry.ended_at}"
    ]
    states = [f"{p}: {_state_text(job, p, r.state)}" for p, r in snap.processes.items()]
    lines.append("  states: " + "; ".join(states))
    in_flight = [
        f"{name}: {', '.join(_record_name(m.payload) for m in msgs)}"
        for name, msgs in snap.channels.items()
        if msgs
    ]
    lines.append("  in flight: " + ("; ".join(in_flight) if in_flight else "nothing"))
    lines.append(
        f"  size: {entry.state_bytes:,} B of operator state + {entry.inflight_bytes:,} B "
        f"in flight = {entry.size_bytes:,} B"
    )
    return "\n".join(lines)


# ------------------------------------------------------------ measurements


@dataclass(frozen=True)
class Costs:
    """What one variant cost on one job, as medians over runs (one run per seed).

    Attributes
    ----------
    latency
        Steps from a checkpoint's trigger to its completion.
    blocked
        Channel-steps spent blocked by alignment over a run.
    peak_buffered
        The most records waiting on blocked channels at one moment.
    peak_in_flight
        The most records and barriers in all channels at one moment.
    state_bytes, inflight_bytes, inflight_records
        Recorded per checkpoint: operator state, and records in flight.
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
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


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
        latency, blocked, buffered, peak, completed = [], [], [], [], []
        state, inflight, records, control = [], [], [], []
        replayed, dups = [], []
        clean_dups = same = predicted = 0
        for seed in seeds:
            clean = StreamJob(flow, variant, seed=seed, **options).run()
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
                options=dict(options, crash_at=crash_at),
            )
        )
    return out


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


COLUMNS = (
    ("latency", "latency"),
    ("blocked", "blocked"),
    ("peak_buffered", "buffered"),
    ("state_bytes", "state B"),
    ("inflight_bytes", "in-flight B"),
    ("replayed", "replayed"),
)


def costs_table(costs: Sequence[Costs]) -> str:
    """The measured costs as a text table, one row per variant, with a legend.

    >>> costs = measure(word_count(records=5), seeds=[0], crash_at=(10, "C1"),
    ...                 variants=["aligned"])
    >>> costs_table(costs).splitlines()[1].split()[:3]
    ['aligned', '19', '22']
    """
    head = f"{'variant':<15}" + "".join(f"{title:>{len(title) + 2}}" for _, title in COLUMNS)
    head += "  duplicates  same output"
    lines = [head]
    for c in costs:
        row = f"{c.variant:<15}"
        for key, title in COLUMNS:
            row += f"{_num(getattr(c, key)):>{len(title) + 2}}"
        dup = f"{_num(c.duplicates)} (max {c.max_duplicates})"
        row += f"  {dup:>10}  {f'{c.same_output}/{c.runs}':>11}"
        lines.append(row)
    runs = costs[0].runs if costs else 0
    crash = costs[0].options.get("crash_at") if costs else None
    lines += [
        "",
        f"medians over {runs} seeds; latency: steps from trigger to completion; blocked: "
        "channel-steps an input was blocked (whole run);",
        "buffered: peak records waiting on blocked inputs; state B / in-flight B: recorded "
        "per checkpoint;",
        f"replayed, duplicates, same output: after a crash of {crash[1] if crash else '-'} "
        f"at step {crash[0] if crash else '-'} and a restore (same output: as without the crash)",
    ]
    return "\n".join(lines)


def backpressure(
    flow: Dataflow,
    capacities: Sequence[int | None] = (None, 8, 4, 2, 1),
    seeds: Iterable[int] = range(20),
    variants: Sequence[str] = VARIANTS,
) -> list[dict[str, Any]]:
    """Medians over ``seeds`` of each variant's buffers when every channel holds at most
    ``capacity`` records (``None``: unbounded): peak records in flight, peak records
    waiting on blocked inputs, recorded in-flight bytes per checkpoint, and latency."""
    seeds = list(seeds)
    rows = []
    for capacity in capacities:
        for variant in variants:
            runs = [StreamJob(flow, variant, seed=s, capacity=capacity).run() for s in seeds]
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


def backpressure_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """:func:`backpressure`'s rows as a table: one line per capacity, a column group per
    variant (peak in flight / peak buffered / recorded in-flight bytes)."""
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    capacities = list(dict.fromkeys(r["capacity"] for r in rows))
    by = {(r["capacity"], r["variant"]): r for r in rows}
    head = f"{'capacity':<10}" + "".join(f"{v:>22}" for v in variants)
    lines = [head, f"{'':<10}" + "".join(f"{'flight/buffer/rec. B':>22}" for _ in variants)]
    for cap in capacities:
        line = f"{'unbounded' if cap is None else cap:<10}"
        for v in variants:
            r = by[(cap, v)]
            cell = (
                f"{_num(r['peak_in_flight'])} / {_num(r['peak_buffered'])} / "
                f"{_num(r['inflight_bytes'])}"
            )
            line += f"{cell:>22}"
        lines.append(line)
    return "\n".join(lines)


# ------------------------------------------------ the production lesson's table

#: The trade-off table of the course's production lesson (its Chandy–Lamport and ABS
#: rows), as it stands there: (method, latency impact, memory overhead, network overhead,
#: network topology constraint, recovery complexity).
SEED_TABLE = (
    ("Standard Chandy-Lamport", "Low (Zero-Pause)", "High (Buffers in-flight channels)",
     "Medium", "Fully Connected FIFO", "Medium"),
    ("Asynchronous Barrier (Flink ABS)", "Low (Zero-Pause)", "Minimal (Uses backpressure)",
     "Low", "Directed Acyclic Graph (DAG)", "Medium"),
)  # fmt: skip


@dataclass(frozen=True)
class Claim:
    """One cell of the production lesson's table, next to what was measured."""

    method: str
    column: str
    says: str
    measured: str
    verdict: str

    def __str__(self) -> str:
        return f'{self.method}, {self.column}: "{self.says}"\n  measured: {self.measured}\n  -> {self.verdict}'  # noqa: E501


def _count(x: float, word: str) -> str:
    return f"{_num(x)} {word}{'' if x == 1 else 's'}"


def _by(costs: Sequence[Costs]) -> dict[str, Costs]:
    return {c.variant: c for c in costs}


def claims(
    dag: Sequence[Costs],
    cyclic: Sequence[Costs],
    bounded: Sequence[Costs],
    flow: Dataflow = DAG,
) -> list[Claim]:
    """Each claim of :data:`SEED_TABLE` (and the lesson's "completely eliminating the
    need to buffer") checked against the measurements: ``dag`` and ``cyclic`` from
    :func:`measure` on the two jobs, ``bounded`` on the DAG with a channel capacity.
    Every verdict is computed from the numbers."""
    d, c, b = _by(dag), _by(cyclic), _by(bounded)
    cl, al, un = d["chandy-lamport"], d["aligned"], d["unaligned"]
    n = len(flow.operators)
    n_channels = len(flow.network().channels)
    cap = b["aligned"].options.get("capacity")
    out = [
        Claim(
            "Chandy-Lamport", "latency impact", SEED_TABLE[0][1],
            f"{_num(cl.blocked)} channel-steps blocked; a checkpoint takes "
            f"{_num(cl.latency)} steps",
            "agrees: no input ever waits" if cl.blocked == 0 else "does not hold",
        ),
        Claim(
            "ABS (aligned)", "latency impact", SEED_TABLE[1][1],
            f"{_num(al.blocked)} channel-steps blocked while aligning; a checkpoint takes "
            f"{_num(al.latency)} steps (unaligned: {_num(un.latency)})",
            "does not hold: aligning pauses the inputs whose barrier came first"
            if al.blocked > 0 else "agrees",
        ),
        Claim(
            "Chandy-Lamport", "memory overhead", SEED_TABLE[0][2],
            f"{_num(cl.inflight_bytes)} B of in-flight records per checkpoint "
            f"({_num(cl.inflight_records)} records), next to {_num(cl.state_bytes)} B of state",
            "agrees: it records channel contents" if cl.inflight_bytes > 0 else "does not hold",
        ),
        Claim(
            "ABS (aligned)", "memory overhead", SEED_TABLE[1][2],
            f"{_num(al.inflight_bytes)} B recorded in flight; but up to "
            f"{_num(al.peak_buffered)} records wait on blocked inputs, "
            f"{_num(b['aligned'].peak_buffered)} with a capacity of {cap} per channel",
            "half right: nothing in flight is recorded, but the blocked inputs buffer "
            "records; backpressure bounds them, it does not remove them"
            if al.inflight_bytes == 0 and al.peak_buffered > 0 else "agrees",
        ),
        Claim(
            "ABS (aligned)", "text", "completely eliminating the need to buffer in-flight "
            "messages",
            f"peak {_num(al.peak_buffered)} records buffered behind barriers "
            f"(Chandy-Lamport: {_num(cl.peak_buffered)})",
            "does not hold: it eliminates recording them, not buffering them"
            if al.peak_buffered > 0 else "agrees",
        ),
        Claim(
            "both", "network overhead", f"{SEED_TABLE[0][3]} vs {SEED_TABLE[1][3]}",
            f"{_num(cl.control)} markers and {_num(al.control)} barriers per checkpoint "
            f"(one per channel; the job has {n_channels})",
            "does not hold: the same control traffic; what differs is the in-flight data "
            "written to storage" if cl.control == al.control else "agrees",
        ),
        Claim(
            "Chandy-Lamport", "topology", SEED_TABLE[0][4],
            f"{_count(cl.completed, 'checkpoint')} completed per run on a job with "
            f"{n_channels} of the {n * (n - 1)} channels a complete graph of {n} "
            "operators would have",
            "does not hold: FIFO, yes; fully connected, no (any graph in which every "
            "process can be reached by a marker)" if cl.completed > 0 else "agrees",
        ),
        Claim(
            "ABS (aligned)", "topology", SEED_TABLE[1][4],
            f"on the cyclic job: {_count(c['aligned'].completed, 'checkpoint')} completed per run, "
            f"{_num(c['aligned'].inflight_bytes)} B in flight recorded (the back edge), "
            f"output as without the crash in {c['aligned'].same_output}/{c['aligned'].runs} runs",
            "does not hold: cycles work, by recording what arrives on the back edges"
            if c["aligned"].completed > 0 and c["aligned"].same_output == c["aligned"].runs
            else "agrees",
        ),
        Claim(
            "both", "recovery complexity", f"{SEED_TABLE[0][5]} / {SEED_TABLE[1][5]}",
            f"after a crash, Chandy-Lamport replays {_num(cl.replayed)} recorded records, "
            f"aligned {_num(al.replayed)}; both rewind every source and every state; "
            f"same output in {cl.same_output}/{cl.runs} and {al.same_output}/{al.runs} runs",
            "agrees: the same restore, with channel contents to replay for Chandy-Lamport"
            if cl.same_output == cl.runs and al.same_output == al.runs else "does not hold",
        ),
    ]  # fmt: skip
    return out


def claims_text(found: Sequence[Claim]) -> str:
    """The claims, one paragraph each."""
    return "\n".join(str(c) for c in found)


# ------------------------------------------------------------------- sizing


@dataclass(frozen=True)
class Sizing:
    """The production lesson's memory arithmetic: ``nodes`` processes, every pair joined
    both ways, ``rate`` records per second on every channel, ``record_bytes`` each, and
    a marker held up ``delay`` seconds on every input of a node.

    >>> print(Sizing(nodes=100, rate=50_000, record_bytes=200, delay=2))
    channels:             100 × 99 = 9,900
    records per channel:  50,000 /s × 2 s = 100,000
    bytes per channel:    100,000 × 200 B = 20,000,000 B (20 MB)
    per node:             99 input channels × 20,000,000 B = 1,980,000,000 B (1.98 GB)
    whole cluster:        9,900 channels × 20,000,000 B = 198,000,000,000 B (198 GB)
    """

    nodes: int
    rate: float
    record_bytes: float
    delay: float

    @property
    def channels(self) -> int:
        return self.nodes * (self.nodes - 1)

    @property
    def inputs_per_node(self) -> int:
        return self.nodes - 1

    @property
    def records_per_channel(self) -> float:
        return self.rate * self.delay

    @property
    def bytes_per_channel(self) -> float:
        return self.records_per_channel * self.record_bytes

    @property
    def per_node_bytes(self) -> float:
        return self.inputs_per_node * self.bytes_per_channel

    @property
    def cluster_bytes(self) -> float:
        return self.channels * self.bytes_per_channel

    def __str__(self) -> str:
        return "\n".join(
            [
                f"channels:             {self.nodes} × {self.nodes - 1} = {self.channels:,}",
                f"records per channel:  {_num(self.rate)} /s × {_num(self.delay)} s = "
                f"{_num(self.records_per_channel)}",
                f"bytes per channel:    {_num(self.records_per_channel)} × "
                f"{_num(self.record_bytes)} B = {_bytes(self.bytes_per_channel)}",
                f"per node:             {self.inputs_per_node} input channels × "
                f"{_num(self.bytes_per_channel)} B = {_bytes(self.per_node_bytes)}",
                f"whole cluster:        {self.channels:,} channels × "
                f"{_num(self.bytes_per_channel)} B = {_bytes(self.cluster_bytes)}",
            ]
        )


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{_num(n)} B ({n / size:.3g} {unit})"
    return f"{_num(n)} B"


# -------------------------------------------------------------- the try-its


def recorders(flow: Dataflow, seeds: Iterable[int] = range(5)) -> set[str]:
    """The variants that record in-flight records in some checkpoint of ``flow`` (over
    ``seeds``): what the engine does, not what a table says.

    >>> sorted(recorders(word_count(records=8), seeds=[0]))
    ['chandy-lamport', 'unaligned']
    """
    seeds = list(seeds)
    found = set()
    for variant in VARIANTS:
        for seed in seeds:
            if StreamJob(flow, variant, seed=seed).run().metrics()["inflight_bytes"] > 0:
                found.add(variant)
                break
    return found


_WHY = {
    "chandy-lamport": "Chandy-Lamport records the records that arrive on an input after "
    "its process recorded and before the marker on that input.",
    "unaligned": "An unaligned barrier overtakes the records waiting in the channels: "
    "where do those records go?",
    "aligned": "An aligned operator records its state when the barrier has arrived on "
    "every input it waits for, so each of those inputs has delivered exactly the records "
    "sent before the barrier. Which inputs does it not wait for?",
    "at-least-once": "At-least-once never blocks, but it records no channel either (on a "
    "job without cycles); what it gets wrong sits in its operators' states.",
}


def check_in_flight(answer: Any, cyclic: bool = False) -> Feedback:
    """Which variants record in-flight data on the lesson's job (``cyclic``: on the
    cyclic one)? ``answer`` is a set (or list) of names from ``VARIANTS``.

    >>> feedback = check_in_flight({"unaligned"})
    >>> feedback.ok, feedback.message
    (False, 'Not quite: chandy-lamport records in-flight data too.')
    """
    flow = CYCLIC if cyclic else DAG
    job = "cyclic job" if cyclic else "job"
    if answer is None or answer is Ellipsis:
        return Feedback(
            False,
            "No answer yet.",
            f"Name the variants, e.g. {{'aligned'}}: any of {', '.join(VARIANTS)}.",
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
            f"Right: on the {job}, {', '.join(sorted(expected))} record "
            "in-flight data; "
            + (
                "the others record operator state only."
                if expected != set(VARIANTS)
                else "every one, because of the back edge L->H."
            ),
        )
    extra = sorted(names - expected)
    missing = sorted(expected - names)
    if missing:
        hint = _WHY[missing[0]]
        if cyclic and missing[0] in ("aligned", "at-least-once"):
            hint = (
                "On a cycle an operator cannot wait for the barrier on its back edge: that "
                "barrier comes round only after the operator has sent its own. What "
                "arrives there meanwhile?"
            )
        verb = "records" if len(missing) == 1 else "record"
        return Feedback(False, f"Not quite: {', '.join(missing)} {verb} in-flight data too.", hint)
    verb = "records" if len(extra) == 1 else "record"
    return Feedback(
        False,
        f"Not quite: {', '.join(extra)} {verb} no in-flight data on the {job}.",
        _WHY[extra[0]],
    )


#: the try-it's cluster: fully connected, as in the production lesson, but smaller
TRY_IT = Sizing(nodes=20, rate=2_000, record_bytes=500, delay=3)


def check_node_buffer(answer: Any, sizing: Sizing = TRY_IT) -> Feedback:
    """How many bytes must one node of ``sizing`` buffer while the markers on all its
    inputs are held up ``sizing.delay`` seconds?

    >>> print(check_node_buffer(60_000_000))
    ✗ 60,000,000 B is not it. Hint: A node has no channel to itself: how many inputs does it have?
    """
    expected = sizing.per_node_bytes
    s = sizing
    if answer is None or answer is Ellipsis:
        return Feedback(
            False,
            "No answer yet.",
            "Follow the worked computation above, with this cluster's numbers; answer in bytes.",
        )
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return Feedback(
            False, f"{answer!r} is not a number of bytes.", "Answer with a number, e.g. 1_000_000."
        )
    if abs(answer - expected) <= 0.005 * expected:
        return Feedback(
            True,
            f"Right: {s.inputs_per_node} input channels × "
            f"{_num(s.records_per_channel)} records × {_num(s.record_bytes)} B = "
            f"{_bytes(expected)} per node.",
        )
    near = {
        s.nodes * s.bytes_per_channel: "A node has no channel to itself: how many inputs "
        "does it have?",
        s.cluster_bytes: "That is the whole cluster; the question is about one node.",
        s.bytes_per_channel: "That is one channel; a node has many inputs.",
        s.inputs_per_node * s.records_per_channel: "That is a number of records: how many "
        "bytes do they take?",
        s.inputs_per_node * s.rate * s.record_bytes: "That is one second's worth: the "
        "markers are held up longer.",
        expected / 1e6: "Answer in bytes, not megabytes.",
        expected / 1e9: "Answer in bytes, not gigabytes.",
    }
    for value, hint in near.items():
        if abs(answer - value) <= 0.005 * abs(value):
            return Feedback(False, f"{_num(answer)} B is not it.", hint)
    return Feedback(
        False,
        f"{_num(answer)} B is not it.",
        "Multiply: input channels per "
        "node × records per channel during the delay × bytes per record.",
    )


def as_rows(costs: Sequence[Costs]) -> list[dict[str, Any]]:
    """The costs as plain dicts (for a figure or a data frame)."""
    return [{k: v for k, v in asdict(c).items() if k != "options"} for c in costs]

"""How long the dataflow explorer takes from a step to updated views (Python side).

For 10-operator jobs (a word count with 3 sources and 6 counters, 24 channels; a random
layered DAG, 11 channels) under aligned and unaligned barriers, a
:class:`DataflowExplorer` takes ``--steps`` steps one at a time, with a crash and a
restore half-way; each ``step_once`` is timed: the job's step, the status line, both
figures recomputed and copied into the widgets on screen, and the log. Its parts are
timed too, on the same states: computing the graph (``dataflow_spec``) and the registry
(``registry_spec``), and copying them in (``update_in_place``). Medians and 90th
percentiles are printed. Aim: <= 30 ms per step, as for the explorer.

The browser's own rendering is not included: this measures what the kernel does.

    python3 benchmarks/bench_dataflow_explorer.py
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from machine_info import describe as describe_machine

try:
    import snapshotlib  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import plotly.graph_objects as go

from snapshotlib.dataflow import Dataflow, StreamJob, random_dag, word_count
from snapshotlib.viz import dataflow_spec, registry_spec, update_in_place
from snapshotlib.widgets import DataflowExplorer

AIM_MS = 30.0


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def measure(flow: Dataflow, variant: str, steps: int, seed: int) -> dict[str, list[float]]:
    ex = DataflowExplorer(StreamJob(flow, variant, seed=seed, interval=10))
    times: dict[str, list[float]] = {
        k: []
        for k in ("step_once", "graph spec", "registry spec", "graph update", "registry update")
    }
    specs = []
    for k in range(steps):
        if k == steps // 2:
            ex.crash(next(op.name for op in flow.operators if op.kind == "count"))
            ex.restore()
        times["step_once"].append(timed(ex.step_once))
        job = ex.job
        times["graph spec"].append(timed(lambda j=job: dataflow_spec(j, None, ex.positions)))
        times["registry spec"].append(timed(lambda j=job: registry_spec(j)))
        specs.append((dataflow_spec(job, None, ex.positions), registry_spec(job)))
        if job.actions() == []:
            ex.trigger()  # keep the job busy for the whole measurement
    # the updates alone: the same states again, step after step, into fresh widgets
    graph_view = go.FigureWidget(go.Figure(specs[0][0]))
    registry_view = go.FigureWidget(go.Figure(specs[0][1]))
    for graph, registry in specs[1:]:
        times["graph update"].append(timed(lambda g=graph: update_in_place(graph_view, g)))
        times["registry update"].append(timed(lambda r=registry: update_in_place(registry_view, r)))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(describe_machine())
    cases = [
        ("word count 3x6 (10 ops, 24 channels)", word_count(sources=3, counters=6, records=80)),
        (
            "random DAG (10 ops, 11 channels)",
            random_dag(0, sources=3, layers=3, width=3, records=80),
        ),
    ]
    failed = False
    print(f"{'job':38} {'variant':10} {'part':16} {'median ms':>10} {'p90 ms':>8}")
    for name, flow in cases:
        assert len(flow.operators) == 10, name
        for variant in ("aligned", "unaligned"):
            gc.collect()
            times = measure(flow, variant, args.steps, args.seed)
            for part, values in times.items():
                median = statistics.median(values)
                p90 = statistics.quantiles(values, n=10)[-1]
                verdict = ""
                if part == "step_once":
                    met = median <= AIM_MS
                    failed |= not met
                    verdict = f"  aim <= {AIM_MS:.0f} ms: {'met' if met else 'NOT met'}"
                print(f"{name:38} {variant:10} {part:16} {median:10.2f} {p90:8.2f}{verdict}")
    print(f"(over {args.steps} steps of each job, a crash and a restore half-way)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

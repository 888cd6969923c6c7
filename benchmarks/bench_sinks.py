"""What exactly-once output costs: the latency of a transactional sink, and the engine's
time and memory for each sink.

A word count (2 sources, 2 counters, ``--records`` records per source) runs under each
exactly-once variant with a checkpoint every ``interval`` steps (5, 15 and 40), once
with each sink of :mod:`snapshotlib.dataflow.sinks`. Printed per row:

- the mean and longest wait of a record, in steps, from its arrival at the sink to the
  moment the outside world sees it (0 for plain and idempotent sinks; for a
  transactional one, until the next checkpoint completes: on these jobs a checkpoint's
  own duration outweighs the interval, since one checkpoint runs at a time);
- the ratio of the wait to the interval;
- CPU time and peak traced memory of the run, as ratios to the plain sink's in the same
  process (the bookkeeping of the output, not the output itself, is what differs).

Steps are the engine's unit of time, so the waits do not depend on the machine; the
ratios do a little (medians of ``--repeats`` runs).

    python3 benchmarks/bench_sinks.py [--records 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

from machine_info import describe as describe_machine

try:
    import snapshotlib  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from snapshotlib.dataflow import EXACTLY_ONCE, StreamJob, word_count
from snapshotlib.dataflow.sinks import SINKS

INTERVALS = (5, 15, 40)


def measure(variant: str, interval: int, sink: str, records: int) -> tuple[StreamJob, float, int]:
    """One run: the job, its CPU seconds and its peak traced memory in bytes."""
    flow = word_count(records=records)
    tracemalloc.start()
    start = time.process_time()
    job = StreamJob(flow, variant, seed=1, interval=interval, sink=sink).run()
    cpu = time.process_time() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return job, cpu, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(describe_machine())
    print(f"word count, {args.records} records per source, medians of {args.repeats} runs")
    header = ("variant", "interval", "sink", "mean wait", "max wait", "wait/interval",
              "CPU x plain", "memory x plain")  # fmt: skip
    print("  ".join(f"{h:>13}" for h in header))
    for variant in EXACTLY_ONCE:
        for interval in INTERVALS:
            base_cpu = base_mem = 0.0
            for sink in SINKS:
                runs = [measure(variant, interval, sink, args.records) for _ in range(args.repeats)]
                job = runs[0][0]
                cpu = statistics.median(r[1] for r in runs)
                mem = statistics.median(r[2] for r in runs)
                if sink == "plain":
                    base_cpu, base_mem = cpu, mem
                wait = job.output.summary()
                exact = not job.output.duplicates() and len(job.output.visible_output()) == len(
                    job.outcome().delivered
                )
                row = (variant, interval, sink, f"{wait['mean_latency']:.1f}",
                       f"{wait['max_latency']:.0f}",
                       f"{wait['mean_latency'] / interval:.2f}",
                       f"{cpu / base_cpu:.2f}", f"{mem / base_mem:.2f}")  # fmt: skip
                print("  ".join(f"{c!s:>13}" for c in row) + ("" if exact else "  (not exact!)"))


if __name__ == "__main__":
    main()

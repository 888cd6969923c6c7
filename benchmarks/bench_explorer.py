"""How long the explorer takes from a step to updated figures (Python side).

For 3, 10 and 100 processes, a random run (``workloads.random_execution``: token sends,
deliveries, two snapshots) is recorded first; an :class:`Explorer` then takes the same
actions one at a time, and each ``Explorer.take`` is timed: the engine's step, both
figures recomputed and copied into the widgets on screen, the recorded-state table and
the delivery buttons. The median and the 90th percentile over the first ``--steps``
steps are printed. Aims (issue 3): <= 30 ms for 10 processes, <= 150 ms for 100.

The browser's own rendering is not included: this measures what the kernel does, with
views that have drawn (``--undrawn``: before any view has drawn, when every update also
rewrites the whole figure the browser draws new views from; see ``viz/update.py``).

    python3 benchmarks/bench_explorer.py
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

from machine_info import describe as describe_machine

try:
    import snapshotlib  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from snapshotlib.model import Network
from snapshotlib.widgets import Explorer
from snapshotlib.workloads import actions_of, complete, random_execution, ring

AIMS_MS = {10: 30.0, 100: 150.0}


def measure(network: Network, steps: int, seed: int, drawn: bool = True) -> list[float]:
    recorded = random_execution(network, seed=seed, n_actions=steps, snapshots=2)
    actions = actions_of(recorded)[:steps]
    explorer = Explorer(network, app="tokens", initial=recorded.initial, seed=seed)
    if drawn:  # what a browser's view says once it has drawn each figure
        for view in (explorer.network_view, explorer.spacetime_view):
            view._js2py_layoutDelta = {"layout_delta": {}, "layout_edit_id": 0}
    times = []
    for action in actions:
        t0 = time.perf_counter()
        ok = explorer.take(action)
        times.append(time.perf_counter() - t0)
        if not ok:
            raise SystemExit(f"the explorer refused {action}: {explorer.status.value}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--undrawn", action="store_true", help="no view has drawn yet")
    args = parser.parse_args()
    print(describe_machine())
    cases = [
        ("3 processes, complete", complete(3), 3),
        ("10 processes, complete (90 channels)", complete(10), 10),
        ("100 processes, bidirectional ring (200 channels)", ring(100, bidirectional=True), 100),
        ("100 processes, complete (9,900 channels)", complete(100), 100),
    ]
    failed = False
    print(f"{'network':52} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}  aim")
    for name, network, n in cases:
        gc.collect()
        times = [t * 1000 for t in measure(network, args.steps, args.seed, not args.undrawn)]
        median = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1]
        aim = AIMS_MS.get(n)
        verdict = "" if aim is None else f"<= {aim:.0f} ms: {'met' if median <= aim else 'NOT met'}"
        failed |= aim is not None and median > aim
        print(f"{name:52} {median:10.1f} {p90:8.1f} {max(times):8.1f}  {verdict}")
    print(f"(median over the first {args.steps} steps of each run)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

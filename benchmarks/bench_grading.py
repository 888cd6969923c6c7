"""Grading cost: seconds per submission per core, against executing the same notebook.

For exercises 1, 2 and 7, the solution notebook (with its tests, as a submission) is
graded ``--n`` times by ``snapshotlib.grading.grade`` one at a time, and executed ``--n``
times with nbclient alone (a kernel, every cell, no grading), in the same run. Each
grading is the whole of what a class server does per submission: the sandbox process
runs the cells, the trusted judge loads the tests and calls the learner's functions
across the boundary.

Printed per exercise: median seconds of nbclient and of grading, their ratio (aim:
<= 1.5), the peak memory of a submission (all its processes together, as its control
group counts it; "-" where the grader cannot make control groups), and, from a batch of
``--n`` submissions graded two at a time, the projected wall-clock minutes for a class
of 300 on two cores (aim: < 10): the batch's fixed cost plus 300 submissions at the
median, two at a time. ``--class N`` grades a real batch of N copies two at a time as
well, and prints its wall-clock minutes against nbclient executing them two at a time
(projected from its median).

Run from the repository root (after ``make exercises`` or with the tool building them)::

    python3 benchmarks/bench_grading.py
    python3 benchmarks/bench_grading.py --n 3 --exercises 01
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

try:
    import snapshotlib  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from snapshotlib.grading import grade

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))  # tools/ is not a package
import make_exercises  # noqa: E402

EXERCISES = {
    "01": "01_is_this_cut_consistent",
    "02": "02_marker_rules",
    "07": "07_barrier_alignment",
}


def nbclient_seconds(notebook: Path, work: Path) -> float:
    """Execute ``notebook`` with nbclient (a fresh kernel); wall seconds."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    started = time.perf_counter()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    ).execute()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5, help="submissions per exercise (5)")
    parser.add_argument("--exercises", nargs="*", default=list(EXERCISES), choices=list(EXERCISES))
    parser.add_argument("--class", dest="klass", type=int, default=0,
                        help="also grade a real class of this many copies (0: no)")  # fmt: skip
    args = parser.parse_args(argv)
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} cores; n = {args.n} submissions per exercise")  # fmt: skip
    print(f"{'exercise':<28} {'nbclient s':>10} {'grading s':>10} {'ratio':>6} "
          f"{'peak MB':>8} {'class of 300, 2 cores':>22}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        for key in args.exercises:
            name = EXERCISES[key]
            work = Path(tmp) / key
            make_exercises.assign(
                ROOT / "solutions" / f"{name}.ipynb", work / "dist", run_tests=False
            )
            _, zipped = make_exercises.make_exercise(
                ROOT / "solutions" / f"{name}.ipynb", work / "ex", work / "ag", run_tests=False
            )
            solution = work / "dist" / "autograder" / f"{name}.ipynb"
            run_dir = work / "run"
            run_dir.mkdir()
            shutil.copy(solution, run_dir / solution.name)
            executed = [nbclient_seconds(run_dir / solution.name, run_dir) for _ in range(args.n)]
            graded: list[float] = []
            peaks: list[float | None] = []
            for i in range(args.n):
                one = work / f"one{i}"
                one.mkdir()
                shutil.copy(solution, one / f"s{i}.ipynb")
                book = grade(one, name, autograder=zipped, roster={f"s{i}.ipynb": "solution"})
                result = book.results[0]
                assert result.status == "ok" and result.total == result.possible, result
                graded.append(result.seconds)
                peaks.append(result.peak_mb)
            batch = work / "batch"
            batch.mkdir()
            for i in range(args.n):
                shutil.copy(solution, batch / f"s{i:03d}.ipynb")
            roster = {f"s{i:03d}.ipynb": "solution" for i in range(max(args.n, args.klass))}
            started = time.perf_counter()
            book = grade(batch, name, autograder=zipped, jobs=2, roster=roster)
            wall = time.perf_counter() - started
            assert all(r.status == "ok" for r in book.results)
            e, g = statistics.median(executed), statistics.median(graded)
            # the batch's fixed cost (worker start-up, loading the tests) plus 300
            # submissions at the median, two at a time
            fixed = max(0.0, wall - args.n * g / 2)
            class_minutes = (fixed + 300 * g / 2) / 60
            known = [p for p in peaks if p is not None]
            peak = f"{max(known):>8.0f}" if known else f"{'-':>8}"
            print(f"{name:<28} {e:>10.2f} {g:>10.2f} {g / e:>6.2f} {peak} "
                  f"{class_minutes:>18.1f} min   (batch of {args.n}: {wall:.1f} s)")  # fmt: skip
            if args.klass:
                klass = work / "class"
                klass.mkdir()
                for i in range(args.klass):
                    shutil.copy(solution, klass / f"s{i:03d}.ipynb")
                started = time.perf_counter()
                book = grade(klass, name, autograder=zipped, jobs=2, roster=roster)
                minutes = (time.perf_counter() - started) / 60
                assert all(r.status == "ok" and r.total == r.possible for r in book.results)
                nbclient = args.klass * e / 2 / 60
                print(f"  a real class of {args.klass}, graded two at a time: {minutes:.1f} min; "
                      f"nbclient two at a time: {nbclient:.1f} min; ratio "
                      f"{minutes / nbclient:.2f}")  # fmt: skip
    print(json.dumps({"aim": {"ratio": "<= 1.5", "class of 300": "< 10 min"}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

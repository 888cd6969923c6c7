"""Peak memory of every lesson and exercise run top to bottom, against a Binder session.

Each notebook runs in a fresh kernel (nbclient, every cell, errors allowed) while the
memory of the kernel and all its children (Spark's JVM in lesson 09, the live lab's
nodes in lesson 10, the browser that draws the lessons' static pictures where Chromium
is installed) is summed every 0.2 s, as proportional set sizes on Linux (shared pages
count once). The exercises run as their solutions
(every cell answered, every test). Printed per notebook: peak MB, seconds, cells that
raised; then the largest against the budget (1,500 MB: a Binder session has about 2 GB,
and JupyterLab's server needs its share). Also the command line's search of the largest
example scenario at its default limit of states. Exit code 1 over the budget.

Run from the repository root::

    python3 benchmarks/bench_memory.py
    python3 benchmarks/bench_memory.py notebooks/09_cost_at_scale.ipynb
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
BUDGET_MB = 1500
SAMPLE_SECONDS = 0.2
#: proportional set sizes are there to read (Linux)
PSS = hasattr(psutil.Process().memory_full_info(), "pss")


def tree_memory(process: psutil.Process) -> int:
    """Bytes of memory held by ``process`` and all its descendants: their proportional
    set sizes where the system reports them (Linux), so pages that processes share (a
    browser's, a JVM's) count once; else their resident sizes, which count them again."""
    total = 0
    for p in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            info = p.memory_full_info() if PSS else p.memory_info()
            total += getattr(info, "pss", info.rss)
    return total


class Peak:
    """The largest :func:`tree_memory` of a process seen while it runs."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.bytes = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.stop.is_set():
            try:
                self.bytes = max(self.bytes, tree_memory(self.process))
            except psutil.NoSuchProcess:
                return
            self.stop.wait(SAMPLE_SECONDS)

    def end(self) -> float:
        self.stop.set()
        self.thread.join()
        return self.bytes / 2**20


def run_notebook(path: Path) -> tuple[float, float, int]:
    """(peak MB, seconds, cells that raised) of ``path`` run in a fresh kernel."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=1800, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})  # fmt: skip
    started = time.monotonic()
    with client.setup_kernel():
        pid = client.km.provisioner.process.pid  # the kernel's own process
        peak = Peak(pid)
        try:
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
        finally:
            mb = peak.end()
    errors = sum(
        1 for c in nb.cells if c.cell_type == "code"
        for o in c.get("outputs", []) if o.get("output_type") == "error"
    )  # fmt: skip
    return mb, time.monotonic() - started, errors


def search_peak() -> float:
    """Peak MB of ``snapshotlib search concurrent-snapshots`` at its default limit."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "-m", "snapshotlib", "search", "concurrent-snapshots"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    peak = Peak(proc.pid)
    proc.wait()
    return peak.end()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="default: every lesson and every exercise's solution")  # fmt: skip
    args = parser.parse_args()
    notebooks = args.notebooks or [
        *sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")),
        *sorted((ROOT / "solutions").glob("[0-9]*.ipynb")),
    ]
    print(f"{'notebook':<48} {'peak MB':>8} {'seconds':>8} {'errors':>6}", flush=True)
    worst = 0.0
    for path in notebooks:
        mb, seconds, errors = run_notebook(path.resolve())
        worst = max(worst, mb)
        name = f"{path.parent.name}/{path.name}"
        print(f"{name:<48} {mb:8.0f} {seconds:8.1f} {errors:6d}", flush=True)
    search_mb = search_peak()
    print(f"{'snapshotlib search concurrent-snapshots':<48} {search_mb:8.0f}")
    worst = max(worst, search_mb)
    print(f"largest: {worst:.0f} MB against a budget of {BUDGET_MB} MB "
          f"({worst / BUDGET_MB:.2f} of it)")  # fmt: skip
    return 0 if worst <= BUDGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())

"""Execute lesson notebooks in place, storing their outputs without widget state.

The stored outputs are what static viewers show and what nbval compares (the cells
marked ``# NBVAL_CHECK_OUTPUT``), so after changing a lesson or the engine run::

    make notebooks                 # every notebook under notebooks/
    python tools/run_notebooks.py notebooks/03_worked_example.ipynb

Every notebook means the lessons (``00_start_here.ipynb`` ..
``11_rollback_recovery.ipynb``, lessons 05, 06 and 07 in two parts each, ``05a_`` and
``05b_`` and so on) and the course's reference pages
(``errata.ipynb``, ``glossary.ipynb``): :func:`notebooks` lists them.

Widget state is not stored (``store_widget_state=False``) and any left in the metadata
is removed, which keeps the files small; the widgets come back when the notebook runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def run(path: Path, timeout: int) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
    )
    client.execute()
    nb.metadata.pop("widgets", None)
    nbformat.validate(nb)
    nbformat.write(nb, path)


def notebooks(folder: Path = ROOT / "notebooks") -> list[Path]:
    """Every notebook of the course, lessons first (in the order of their numbers), then
    the reference pages."""
    return sorted(folder.glob("*.ipynb"), key=lambda p: (not p.name[:1].isdigit(), p.name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    args = parser.parse_args()
    paths = args.notebooks or notebooks()
    for path in paths:
        print(f"running {path}", flush=True)
        started = time.monotonic()
        run(path, args.timeout)
        print(f"  {path.name}: run top to bottom in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

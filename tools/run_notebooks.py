"""Execute lesson notebooks in place, storing their outputs without widget state.

The stored outputs are what static viewers show and what nbval compares (the cells
marked ``# NBVAL_CHECK_OUTPUT``), so after changing a lesson or the engine run::

    make notebooks                 # every notebook under notebooks/
    python tools/run_notebooks.py notebooks/03_worked_example.ipynb

Widget state is not stored (``store_widget_state=False``) and any left in the metadata
is removed, which keeps the files small; the widgets come back when the notebook runs.
"""

from __future__ import annotations

import argparse
import sys
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        print(f"running {path}", flush=True)
        run(path, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

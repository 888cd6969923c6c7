"""``otter`` with the hidden tests sealed away while the submission's cells run.

The grader runs ``python -m snapshotlib.grading.sealed_otter CELL_TIMEOUT run ...`` in
place of the ``otter`` command. It changes three things about ``otter run``:

- nbclient's per-cell timeout is set and interrupts the cell, so a loop costs one cell;
- before the kernel starts, every test file is read into this process's memory and
  deleted from disk, with the autograder zip it came from: the submission's cells cannot
  find them in any folder. The tests are written back by one cell appended after the
  last cell of the submission, just before otter's own cell that runs them;
- so all tests run at the end (otter's per-question checks are not inserted), and this
  process is made non-dumpable, so the kernel (same user) cannot read its memory.

What it cannot stop: code the submission leaves behind in its own kernel (an audit hook,
a patched ``otter``) still runs when the tests do; see ``runner.CONTAINMENT``.
"""

from __future__ import annotations

import ctypes
import shutil
import sys
from pathlib import Path
from typing import Any

CELL_TIMEOUT_MARK = "SNAPSHOTLIB-CELL-TIMEOUT"
_PR_SET_DUMPABLE = 4

_RESTORE_CELL = """\
import os as _os
for _path, _source in {tests}.items():
    _os.makedirs(_os.path.dirname(_path), exist_ok=True)
    with open(_path, "w", encoding="utf-8") as _f:
        _f.write(_source)
del _os, _path, _source, _f
"""


def seal(test_dir: str, copies: list[Path]) -> dict[str, str]:
    """Read every file under ``test_dir`` into memory, then delete it and the ``copies``
    of the tests (files or folders)."""
    tests = {}
    for path in sorted(Path(test_dir).resolve().rglob("*")):
        if path.is_file():
            tests[str(path)] = path.read_text(encoding="utf-8")
    for path in [Path(test_dir), *copies]:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    return tests


def _patch_otter(zip_path: Path) -> None:
    import nbformat
    from otter.execute.preprocessor import GradingPreprocessor

    add_init_and_export = GradingPreprocessor.add_init_and_export_cells

    def sealed(self: Any, nb: Any) -> None:
        # otter run copies the tests into the submission folder (test_dir) from ../source
        tests = seal(self.test_dir, [zip_path, Path("../source/tests").resolve()])
        restore = nbformat.v4.new_code_cell(_RESTORE_CELL.format(tests=repr(tests)))  # type: ignore[no-untyped-call]
        nb.cells.append(restore)
        add_init_and_export(self, nb)

    GradingPreprocessor.add_init_and_export_cells = sealed
    # the per-question checks would run while the tests are sealed: all run at the end
    GradingPreprocessor.add_checks = lambda self, nb: None


def _patch_nbclient(cell_timeout: int) -> None:
    from nbclient import NotebookClient

    traits = NotebookClient.class_traits()
    traits["timeout"].default_value = cell_timeout
    traits["interrupt_on_timeout"].default_value = True
    original = NotebookClient._async_handle_timeout

    async def handle(self: Any, timeout: int, cell: Any = None) -> Any:
        print(CELL_TIMEOUT_MARK, file=sys.__stderr__, flush=True)
        return await original(self, timeout, cell)

    NotebookClient._async_handle_timeout = handle  # type: ignore[method-assign]


def main(argv: list[str]) -> None:
    cell_timeout, otter_args = int(argv[0]), argv[1:]
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    zip_path = Path(otter_args[otter_args.index("-a") + 1]).resolve()
    _patch_nbclient(cell_timeout)
    _patch_otter(zip_path)
    from otter.cli import cli

    sys.argv = ["otter", *otter_args]
    cli()


if __name__ == "__main__":
    main(sys.argv[1:])

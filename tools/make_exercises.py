"""Generate exercises/ (what learners get) from solutions/ with ``otter assign``.

For every ``solutions/NN_name.ipynb`` (otter assign notebook format v1) this runs
``otter assign`` into a scratch directory, then

* writes the student notebook to ``exercises/NN_name.ipynb`` (outputs cleared, volatile
  metadata dropped, so the file only changes when the solution notebook does); its
  public tests travel inside it (``tests: files: false``), so it needs no other file;
* copies the autograder zip (every test, hidden ones included) to
  ``build/autograder/NN_name.zip``, which git ignores, adding the engine's package to
  its ``files/`` so that otter's own runners (``otter run -a ZIP``, Gradescope) grade
  it with nothing but otter-grader installed.

The student notebook's first cell makes its ``grader`` with
:class:`snapshotlib.course.checking.Notebook` (otter's, which also says what staff
grading will make of an answer), and its metadata says what each question is: its
points, the points of its public tests and how many hidden tests it has.

Before writing anything it checks that the student notebook holds no hidden test and no
solution cell, so a mistake in a solution notebook (a solution outside a
``# BEGIN SOLUTION`` raw-cell block is *not* stripped by otter) fails loudly instead of
publishing the answer.

Usage::

    python tools/make_exercises.py                  # every solution notebook
    python tools/make_exercises.py --out DIR        # somewhere else (the tests do this)
    python tools/make_exercises.py solutions/01_is_this_cut_consistent.ipynb
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
AUTOGRADER = ROOT / "build" / "autograder"

#: notebook-level metadata kept in the student notebook; the rest (language_info's
#: version, widget state, editor settings) depends on who ran the notebook last
KEEP_METADATA = ("kernelspec", "otter", "snapshotlib")

_HIDDEN_TEST = re.compile(r"@test_case\([^)]*hidden=True[^)]*\)\s*\ndef (\w+)")
_OTTER_INIT = re.compile(r"import otter\ngrader = otter\.Notebook\(")
PACKAGE = ROOT / "snapshotlib"


class LeakError(RuntimeError):
    """The student notebook would contain a hidden test or a solution."""


def hidden_test_names(autograder_zip: Path) -> list[str]:
    """Names of the hidden test functions in an autograder zip (exception-based tests)."""
    names = []
    with zipfile.ZipFile(autograder_zip) as z:
        for member in z.namelist():
            if member.startswith("tests/") and member.endswith(".py"):
                names += _HIDDEN_TEST.findall(z.read(member).decode())
    return names


def normalise(nb: dict[str, Any]) -> dict[str, Any]:
    """The student notebook without outputs, execution counts or volatile metadata."""
    for cell in nb["cells"]:
        cell.pop("id", None)
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k != "execution"}
    nb["metadata"] = {k: nb["metadata"][k] for k in KEEP_METADATA if k in nb["metadata"]}
    nb["nbformat"], nb["nbformat_minor"] = 4, 4
    return nb


def questions(autograder_zip: Path) -> dict[str, dict[str, float]]:
    """What each question of an autograder zip is: its points, the points of its public
    tests, and how many hidden tests it has (read as the grader reads them)."""
    from snapshotlib.grading.judge import load_questions

    return {q.name: {"points": q.points, "public_points": q.public_points, "hidden": q.hidden}
            for q in load_questions(autograder_zip)}  # fmt: skip


def with_course_grader(nb: dict[str, Any], autograder_zip: Path, name: str) -> dict[str, Any]:
    """The student notebook with the course's ``grader`` and its questions' metadata."""
    first = nb["cells"][0]
    source = "".join(first["source"])
    if not _OTTER_INIT.search(source):
        raise RuntimeError(f"{name}: the first cell is not otter's init cell: {source[:80]!r}")
    source = _OTTER_INIT.sub(
        "from snapshotlib.course.checking import Notebook\ngrader = Notebook(", source
    )
    first["source"] = source.splitlines(keepends=True)
    nb["metadata"]["snapshotlib"] = {"exercise": name, "questions": questions(autograder_zip)}
    return nb


def add_package(autograder_zip: Path) -> None:
    """Put the engine's package into the zip's ``files/``, which otter's runners copy
    beside the submission before they run it."""
    with zipfile.ZipFile(autograder_zip, "a", zipfile.ZIP_DEFLATED) as z:
        present = set(z.namelist())
        for path in sorted(PACKAGE.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                member = f"files/snapshotlib/{path.relative_to(PACKAGE).as_posix()}"
                if member not in present:
                    z.write(path, member)


def check_no_leak(nb: dict[str, Any], hidden: list[str]) -> None:
    """Raise :class:`LeakError` if ``nb`` holds a hidden test or a solution cell."""
    text = json.dumps(nb)
    leaked = [name for name in hidden if name in text]
    if leaked:
        raise LeakError(f"hidden test(s) {', '.join(leaked)} in the student notebook")
    if "hidden=True" in text:
        raise LeakError("a hidden test case is in the student notebook")
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if "otter_assign_solution_cell" in cell.get("metadata", {}).get("tags", []):
            raise LeakError(f"a solution cell is in the student notebook: {source[:60]!r}")
        if re.search(r"#\s*(BEGIN|END) SOLUTION|#\s*SOLUTION\b", source):
            raise LeakError(f"a solution marker is left in the student notebook: {source[:60]!r}")


def assign(solution: Path, workdir: Path, *, run_tests: bool = True) -> tuple[Path, Path]:
    """Run ``otter assign`` on ``solution`` into ``workdir``; the student notebook and the
    autograder zip it made."""
    cmd = [sys.executable, "-m", "otter", "assign", str(solution), str(workdir)]
    if not run_tests:
        cmd.append("--no-run-tests")
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=solution.parent)
    log = done.stdout + done.stderr
    if done.returncode != 0 or re.search(r"Test case failed|Traceback", log):
        raise RuntimeError(f"otter assign {solution.name} failed:\n{log}")
    student = workdir / "student" / solution.name
    zips = sorted((workdir / "autograder").glob("*-autograder_*.zip"))
    if not student.exists() or len(zips) != 1:
        raise RuntimeError(
            f"otter assign {solution.name} did not make a student notebook and a zip"
        )
    return student, zips[0]


def make_exercise(
    solution: Path,
    out: Path,
    autograder_out: Path,
    *,
    run_tests: bool = True,
    dist: Path | None = None,
) -> tuple[Path, Path]:
    """Generate one exercise; the paths of the student notebook and the autograder zip.

    ``dist``: the folder otter assign writes into, kept (its ``autograder/`` holds the
    solution with every test, which the tests grade), instead of a temporary one.
    """
    with tempfile.TemporaryDirectory(prefix="otter-assign-") as tmp:
        student, zipped = assign(solution, dist or Path(tmp) / "dist", run_tests=run_tests)
        add_package(zipped)
        nb = json.loads(student.read_text())
        nb = normalise(with_course_grader(nb, zipped, solution.stem))
        check_no_leak(nb, hidden_test_names(zipped))
        out.mkdir(parents=True, exist_ok=True)
        autograder_out.mkdir(parents=True, exist_ok=True)
        target = out / solution.name
        target.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
        zip_target = autograder_out / f"{solution.stem}.zip"
        shutil.copyfile(zipped, zip_target)
    return target, zip_target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("solutions", nargs="*", type=Path, help="solution notebooks (default: all)")
    parser.add_argument("--out", type=Path, default=EXERCISES)
    parser.add_argument("--autograder-out", type=Path, default=AUTOGRADER)
    parser.add_argument(
        "--no-run-tests", action="store_true", help="skip running the tests on the solutions"
    )
    args = parser.parse_args(argv)
    solutions = [p.resolve() for p in args.solutions] or sorted(SOLUTIONS.glob("[0-9]*.ipynb"))
    if not solutions:
        print("no solution notebooks found", file=sys.stderr)
        return 1
    for solution in solutions:
        student, zipped = make_exercise(
            solution, args.out, args.autograder_out, run_tests=not args.no_run_tests
        )
        print(f"{solution.name}: {_rel(student)}, {_rel(zipped)}")
    return 0


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())

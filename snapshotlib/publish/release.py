"""Writing the course out: a learner's own copy (``course init``), the tree staff publish
to learners (``course release --student``) and the one they keep (``--instructor``).

Nothing is overwritten: a destination that already holds any file to be written is
refused before anything is written, naming the file.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from .material import Material, MaterialError, material

#: what a learner's course folder says about itself (``course init`` and the student release)
LEARNER_README = """\
# Distributed snapshots: the course

Lessons on the Chandy–Lamport snapshot algorithm, Dijkstra's proof of it, consistent
cuts and the barrier snapshots of stream processors, with exercises you check as you go.

- `notebooks/00_start_here.ipynb` is the start: it links every lesson and exercise.
- `exercises/`: the graded exercises. `grader.check("q1")` checks an answer as you work;
  hand in the notebook as your course says.
- `examples/scenarios/` and `examples/sweeps/`: the runs and sweeps the lessons use.
  `snapshotlib examples` lists them; `snapshotlib run worked-example` runs one by name.

Open it with `jupyter lab notebooks/00_start_here.ipynb` in an environment where
`pip install "snapshotlib[course]"` was run (Python 3.10 or newer; in a course's release,
which holds the engine's source, `pip install -e ".[course]"` there), or on Binder where
your course links it. Lesson 09 runs its
sweep on Spark when a Java 17 runtime is there, in the notebook's own process otherwise.
The live lab (lesson 10) and the course's grader need Linux or macOS.
"""

#: the files of a source checkout that make the package installable in a student release
PACKAGE_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "LICENSE")


class ReleaseError(RuntimeError):
    """The course cannot be written there, or is not all there to write."""


def _refuse_existing(dest: Path, names: Iterable[str]) -> None:
    if dest.exists() and not dest.is_dir():
        raise ReleaseError(f"{dest} is a file, not a folder: nothing was written")
    there = [n for n in names if (dest / n).exists() or (dest / n).is_symlink()]
    if there:
        more = f" and {len(there) - 1} more" if len(there) > 1 else ""
        raise ReleaseError(f"{dest / there[0]} already exists{more}: nothing was written "
                           "(choose an empty folder)")  # fmt: skip


def _write(dest: Path, files: dict[str, Path], texts: dict[str, str]) -> list[Path]:
    _refuse_existing(dest, [*files, *texts])
    written = []
    for name, source in files.items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        written.append(target)
    for name, text in texts.items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def _material() -> Material:
    try:
        return material()
    except MaterialError as e:
        raise ReleaseError(str(e)) from None


def init(dest: Path) -> list[Path]:
    """A learner's own copy of the course in ``dest``: lessons, glossary, errata, reading
    list, exercises, example scenarios and sweeps, and a README."""
    return _write(dest, _material().learner_files(), {"README.md": LEARNER_README})


def _checkout() -> tuple[Material, Path]:
    found = _material()
    if found.checkout is None:
        raise ReleaseError("a release is written from the course's source checkout (its "
                           "solutions/ and build/ are not in an installed package): run "
                           "this from a checkout's environment")  # fmt: skip
    return found, found.checkout


def _package_files(root: Path) -> dict[str, Path]:
    """The engine's source, as a student release installs it (binder/postBuild)."""
    files = {}
    for path in sorted((root / "snapshotlib").rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and "__pycache__" not in rel.parts and rel.parts[1] != "_course":
            files[rel.as_posix()] = path
    files |= {name: root / name for name in PACKAGE_FILES if (root / name).is_file()}
    return files


def student(dest: Path) -> list[Path]:
    """What a course publishes to learners (and points Binder at): the learner's course,
    binder/, the engine's source to install, a learner README. No solutions, hidden tests
    or expected answers."""
    found, root = _checkout()
    files = found.learner_files()
    files |= {f"binder/{p.name}": p for p in sorted((root / "binder").iterdir()) if p.is_file()}
    files |= _package_files(root)
    written = _write(dest, files, {"README.md": LEARNER_README})
    (dest / "binder" / "postBuild").chmod(0o755)
    return written


#: what the instructor tree holds beside its files
INSTRUCTOR_README = """\
# The course, for its staff

- `solutions/`: every exercise with its solution and hidden tests, and the marks the
  solution gets (`*.expected.json`). Never publish this folder.
- `autograder/`: one otter-compatible zip per exercise, for `snapshotlib grade
  --autograder ZIP` or any otter runner.
- `GUIDE.md`: the instructor guide (term plan, what to project, releasing, grading,
  hosting).
"""


def instructor(dest: Path, zips: Path | None = None) -> list[Path]:
    """The staff's tree: solutions with hidden tests, the autograder zips (from ``zips``,
    default the checkout's ``build/autograder``, where ``make exercises`` writes them),
    the guide."""
    _, root = _checkout()
    solutions = sorted((root / "solutions").glob("[0-9]*"))
    zips = zips or root / "build" / "autograder"
    files = {f"solutions/{p.name}": p for p in solutions if p.is_file()}
    missing = []
    for notebook in (p for p in solutions if p.suffix == ".ipynb"):
        zipped = zips / f"{notebook.stem}.zip"
        if not zipped.is_file() or zipped.stat().st_mtime < notebook.stat().st_mtime:
            missing.append(zipped.name)
        files[f"autograder/{zipped.name}"] = zipped
    if missing:
        raise ReleaseError(f"{zips / missing[0]} is missing or older than its solution "
                           f"({len(missing)} such): run `make exercises` first")  # fmt: skip
    files["GUIDE.md"] = root / "docs" / "instructor-guide.md"
    return _write(dest, files, {"README.md": INSTRUCTOR_README})

"""Shared pytest configuration: hypothesis profiles, and how ``make test`` shares the
tests between its two workers (pytest-xdist; see :func:`pytest_xdist_make_scheduler`).

``ci`` (the default) makes every property test deterministic: examples are derived from
the test itself (``derandomize``), nothing is read from or written to an example
database, and there is no deadline (timings on shared CI machines vary). ``explore``
draws fresh random examples on each run and keeps failures in the local database; use
it to hunt for new counterexamples: ``HYPOTHESIS_PROFILE=explore python3 -m pytest``.
Tests that pin their own ``settings`` keep them whatever the profile.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: the suites that run in one worker, in order, each as one unit (a path prefix, or the
#: files that make one suite): the browser walks share one JupyterLab; the live-lab
#: tests their PostgreSQL and S3 servers; the Spark tests one Spark session. (The tests
#: that grade may run beside each other: each grader's submissions have user ids of its
#: own, and the check for processes left behind passes over the other workers'.)
TOGETHER: dict[str, tuple[str, ...]] = {
    "browser": ("tests/browser/",),
    "live": ("tests/live/",),
    "spark": ("tests/spark/",),
}


#: the units that take longest (the browser walks about 25 minutes of one worker on a
#: busy day; the Spark tests, and each file that grades, 5 to 12), started first in
#: this order: the longest first keeps the two workers' ends close
LONGEST = (
    "browser",
    "spark",
    "tests/test_exercise_checks.py",
    "tests/test_exercises.py",
    "tests/test_otter_compatible.py",
    "live",
    "tests/test_grading.py",
    "tests/test_publish.py",
)


def work_unit(nodeid: str) -> str:
    """The unit of work of test ``nodeid`` under ``make test``'s two workers: its
    :data:`TOGETHER` suite, else its file (a notebook's cells share its kernel; a
    module's fixtures are made once)."""
    path = nodeid.split("::", 1)[0]
    for unit, prefixes in TOGETHER.items():
        if path.startswith(prefixes):
            return unit
    return path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist (``make test``) hands out whole units (:func:`work_unit`): the
    :data:`LONGEST` first, then the others by their count of tests, each to the worker
    that is free. (Its own ``--dist loadgroup`` cannot keep a notebook's cells together:
    it marks only plain test functions.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):  # type: ignore[misc]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # the longest suites first, one to each worker: by their count of tests
            # they would come late, and could land in one worker's queue together
            if not self.ordered:
                for unit in reversed(LONGEST):
                    if unit in self.workqueue:
                        self.workqueue.move_to_end(unit, last=False)
                self.ordered = True
            super()._assign_work_unit(node)

    return ByUnit(config, log)


class BuiltExercises(Mapping[str, dict[str, Path]]):
    """Every exercise, built as ``make exercises`` builds it into ``folder`` the first time a
    test asks for it: its student notebook, its autograder zip, and otter's autograder
    notebook (the solution with every test). Built on demand because one ``otter assign``
    takes about 20 s: a run that grades one exercise (``make versions``) builds that one.
    Under ``make test`` the first worker that asks builds it, under that exercise's lock, and
    the other reads it."""

    def __init__(self, root: Path, folder: Path) -> None:
        self._root = root
        self._folder = folder
        self._names = [p.stem for p in sorted((root / "solutions").glob("[0-9]*.ipynb"))]

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __getitem__(self, name: str) -> dict[str, Path]:
        if name not in self._names:
            raise KeyError(name)
        work = self._folder / name
        built = {
            "student": work / "exercises" / f"{name}.ipynb",
            "zip": work / "autograder" / f"{name}.zip",
            "solution": work / "dist" / "autograder" / f"{name}.ipynb",
        }
        with (self._folder / f"{name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            failed = self._folder / f"{name}.failed"
            if failed.exists():  # one failed build fails every test of it, at once
                raise RuntimeError(f"building {name} failed earlier:\n{failed.read_text()}")
            if not (work / "done").exists():
                from support import make_exercises_tool

                shutil.rmtree(work, ignore_errors=True)
                try:
                    student, zipped = make_exercises_tool().make_exercise(
                        self._root / "solutions" / f"{name}.ipynb", work / "exercises",
                        work / "autograder", run_tests=False, dist=work / "dist",
                    )  # fmt: skip
                except Exception as e:
                    failed.write_text(f"{type(e).__name__}: {e}")
                    raise
                assert (student, zipped) == (built["student"], built["zip"])
                (work / "done").touch()
        return built


@pytest.fixture(scope="session")
def built_exercises(tmp_path_factory: pytest.TempPathFactory) -> BuiltExercises:
    """The exercises as ``make exercises`` builds them, each built once per test run, in a
    folder both ``make test`` workers share."""
    from support import require_otter

    require_otter("tests of the built exercises")
    base = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:  # the folder the workers' own folders are in
        base = base.parent
    folder = base / "built-exercises"
    folder.mkdir(exist_ok=True)
    return BuiltExercises(Path(__file__).resolve().parents[1], folder)

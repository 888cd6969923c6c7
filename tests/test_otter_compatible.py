"""The autograder zips work with otter's own runners: ``otter run -a ZIP NOTEBOOK`` in a
fresh environment that has otter-grader (with its grading extra, which brings a Jupyter
kernel) and nothing of this project gives every exercise's solution full marks and its
unmodified notebook 0, because each zip carries the engine's package in its ``files/``.

It makes a virtual environment and installs otter-grader from the package index, then
runs otter on 24 notebooks, so it is slow. Without otter-grader it is skipped locally
and fails under CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import venv
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support import in_ci, require_otter

ROOT = Path(__file__).resolve().parents[1]
NAMES = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9]*.ipynb"))
#: wall-clock seconds one `otter run` may take (it takes seconds: a backstop for a hang)
OTTER_RUN_BACKSTOP = 600

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def otter_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment with otter-grader[grading] and nothing else of ours: the
    ``otter`` program in it."""
    require_otter("the otter-compatibility tests")
    import importlib.metadata

    folder = tmp_path_factory.mktemp("otter-only") / "venv"
    python = folder / "bin" / "python"
    version = importlib.metadata.version("otter-grader")  # the one this project tests with
    requirement = f"otter-grader[grading]=={version}"
    uv = Path(sys.executable).with_name("uv")  # the dev extra's: installs in seconds
    if uv.is_file():
        made = subprocess.run([str(uv), "venv", "--quiet", "--python", sys.executable,
                               str(folder)], capture_output=True, text=True,
                              check=False)  # fmt: skip
        done = made if made.returncode else subprocess.run(
            [str(uv), "pip", "install", "--quiet", "--python", str(python), requirement],
            capture_output=True, text=True, check=False)  # fmt: skip
    else:
        venv.EnvBuilder(with_pip=True).create(folder)
        done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", requirement],
                              capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        message = f"cannot install otter-grader into a fresh environment:\n{done.stderr[-2000:]}"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    found = subprocess.run([str(python), "-c", "import snapshotlib"], capture_output=True,
                           cwd=folder, check=False)  # fmt: skip
    assert found.returncode != 0, "the fresh environment must not have snapshotlib"
    subprocess.run([str(python), "-m", "ipykernel", "install", "--sys-prefix"],
                   capture_output=True, check=True)  # fmt: skip
    return folder / "bin" / "otter"


#: seconds otter's process may take to end once it has written its results
EXIT_GRACE = 60
#: where a thread of otter's own log server waits, in a dump of its threads
LOG_SERVER_WAIT = "otter/execute/logging.py"


def otter_run(otter: Path, zipped: Path, notebook: Path, work: Path) -> dict[str, Any]:
    """``otter run`` on a copy of ``notebook``; its results as ``{test: (score, of)}``.

    otter listens on a TCP port of 127.0.0.1 for the kernel's log lines and serves each
    connection in a thread that its process waits for on exit. A stranger connecting to
    that port (another test's client polling a port it was given, while the tests run in
    parallel) keeps ``otter run`` from ending after it has graded and written its results.
    That is recognised in a dump of otter's threads (faulthandler, on SIGABRT), said as a
    warning, and the results are judged; any other failure to end fails the test.
    """
    work.mkdir()
    shutil.copy(notebook, work / notebook.name)
    out = work / "out"
    out.mkdir()
    log = work / "otter.log"
    with log.open("wb") as said_to:  # a file: nothing that outlives otter can hold it up
        run = subprocess.Popen(
            [str(otter), "run", "-a", str(zipped), "-o", str(out), notebook.name],
            cwd=work, stdout=said_to, stderr=subprocess.STDOUT,
            env={"PATH": f"{otter.parent}:/usr/bin:/bin", "HOME": str(work), "LANG": "C.UTF-8",
                 "PYTHONFAULTHANDLER": "1"},
            start_new_session=True,
        )  # fmt: skip
    results = out / "results.json"
    started, graded_at = time.monotonic(), None
    while run.poll() is None:
        now = time.monotonic()
        if graded_at is None and results.is_file():
            graded_at = now
        if graded_at is not None and now - graded_at > EXIT_GRACE:
            os.kill(run.pid, signal.SIGABRT)  # faulthandler writes every thread's stack
            with contextlib.suppress(subprocess.TimeoutExpired):
                run.wait(timeout=10)
            with contextlib.suppress(ProcessLookupError):  # SIGABRT has usually ended it
                os.killpg(run.pid, signal.SIGKILL)
            run.wait()
            dump = log.read_text(errors="replace")[-4000:]
            assert LOG_SERVER_WAIT in dump, f"otter run did not end after grading:\n{dump}"
            stuck = f"otter run {notebook.name} graded, then waited on a connection to its log"
            warnings.warn(f"{stuck} server from elsewhere; ended it:\n{dump}", stacklevel=2)
            break
        if now - started > OTTER_RUN_BACKSTOP:  # a far backstop: each run takes seconds
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
            raise AssertionError(f"otter run {notebook.name} did not end in {OTTER_RUN_BACKSTOP}"
                                 f" s:\n{log.read_text(errors='replace')[-3000:]}")  # fmt: skip
        time.sleep(0.5)
    said = log.read_text(errors="replace")
    assert results.is_file(), f"otter run wrote no results:\n{said[-3000:]}"
    tests = json.loads(results.read_text())["tests"]
    return {
        t["name"]: (t["score"], t["max_score"]) for t in tests if t.get("name", "").startswith("q")
    }


@pytest.mark.parametrize("name", NAMES)
def test_otter_run_gives_the_solution_full_marks_and_a_blank_notebook_zero(
    name: str, otter_only: Path, built_exercises: Mapping[str, dict[str, Path]], tmp_path: Path
) -> None:
    built = built_exercises[name]
    full = json.loads((ROOT / "solutions" / f"{name}.expected.json").read_text())["full_marks"]
    solution = otter_run(otter_only, built["zip"], built["solution"], tmp_path / "solution")
    assert {q: score for q, (score, _) in solution.items()} == full, solution
    blank = otter_run(otter_only, built["zip"], built["student"], tmp_path / "blank")
    assert {q: score for q, (score, _) in blank.items()} == dict.fromkeys(full, 0.0), blank


def test_the_zip_carries_the_package_and_no_compiled_files(
    built_exercises: Mapping[str, dict[str, Path]],
) -> None:
    import zipfile

    names = zipfile.ZipFile(built_exercises[NAMES[0]]["zip"]).namelist()
    assert "files/snapshotlib/__init__.py" in names
    assert "files/snapshotlib/course/exercises/ex01.py" in names
    assert not [n for n in names if n.endswith(".pyc") or "__pycache__" in n]

"""The course on the versions its bounds allow, besides the newest on the main Python:
the lowest versions of every direct requirement (uv's lowest-direct resolution) and the
newest on Python 3.10 and 3.13.

Each environment gets ``.[course]`` and the test runner, then a smoke subset: a lesson
with its widgets under nbval, the widget tests, a sweep in this process, and exercise 1
graded (its solution full marks, its blank notebook zero), the live lab's API reached
through a hub session's Jupyter server. A table of what ran, with the
versions that matter, is printed; the exit code is 1 if any environment failed.

    python tools/smoke_versions.py            # all three (make versions)
    python tools/smoke_versions.py lowest     # one

An interpreter this machine does not have (``python3.10``, say) is reported as skipped,
with why; uv is the dev extra's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the runner of the smoke subset, at bounds of its own (the dev extra's)
RUNNER = ("pytest>=8", "nbval>=0.11", "hypothesis>=6.100", "httpx>=0.27")
SMOKE_TESTS = (
    "notebooks/00_start_here.ipynb",
    "notebooks/02_chandy_lamport.ipynb",
    "tests/test_widgets.py",
    # the live lab's API pages through a hub session's Jupyter server (uvicorn's root
    # path, jupyter-server-proxy at their lowest)
    "tests/live/test_through_jupyter.py",
    "tests/test_exercises.py::test_solution_scores_full_marks[01_is_this_cut_consistent]",
    "tests/test_exercises.py::test_unmodified_exercise_scores_zero[01_is_this_cut_consistent]",
)
#: the versions worth naming in the table
SHOWN = ("numpy", "pandas", "pyarrow", "pyspark", "plotly", "ipywidgets", "jupyterlab",
         "otter-grader", "grpcio", "uvicorn", "jupyter-server-proxy")  # fmt: skip


@dataclass(frozen=True)
class Environment:
    name: str
    python: str  # a version, e.g. "3.10"
    lowest: bool = False


ENVIRONMENTS = (
    Environment("lowest", f"{sys.version_info.major}.{sys.version_info.minor}", lowest=True),
    Environment("python3.10", "3.10"),
    Environment("python3.13", "3.13"),
)


def interpreter(version: str) -> str | None:
    """A ``pythonX.Y`` that runs: one of pyenv's versions, or one on PATH (a pyenv shim
    on PATH is there even when its version is not selected, and then fails)."""
    pyenv = sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    for candidate in [*map(str, pyenv), shutil.which(f"python{version}")]:
        if candidate and subprocess.run([candidate, "--version"], capture_output=True,
                                        check=False).returncode == 0:  # fmt: skip
            return candidate
    return None


def uv() -> str:
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.is_file() else shutil.which("uv")
    if not found:
        raise SystemExit("smoke_versions: needs uv (pip install uv, or make env)")
    return found


def run(cmd: list[str], log: Path, **kwargs: object) -> bool:
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False,
                              **kwargs)  # type: ignore[call-overload]  # fmt: skip
    return done.returncode == 0


def smoke(env: Environment, work: Path) -> tuple[str, str, float]:
    """(result, versions, seconds) of one environment."""
    started = time.monotonic()
    python = interpreter(env.python)
    if python is None:
        return f"skipped: no python{env.python} on this machine", "", 0.0
    venv = work / env.name
    log = work / f"{env.name}.log"
    install = [uv(), "pip", "install", "--python", str(venv / "bin" / "python"),
               "-e", f"{ROOT}[course]", *RUNNER]  # fmt: skip
    if env.lowest:
        install[3:3] = ["--resolution", "lowest-direct"]
    if not (run([uv(), "venv", "--quiet", "--python", python, str(venv)], log)
            and run(install, log)):  # fmt: skip
        return f"failed to install (see {log})", "", time.monotonic() - started
    bin_ = venv / "bin"
    versions = subprocess.run(
        [str(bin_ / "python"), "-c", "import importlib.metadata as m, sys; print(' '.join("
         "f'{d}={m.version(d)}' for d in sys.argv[1:]))", *SHOWN],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    env_vars = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}"}
    ok = run([str(bin_ / "snapshotlib"), "sweep", "small", "--local", "--quiet",
              "--out", str(work / f"{env.name}-sweep")], log, env=env_vars)  # fmt: skip
    ok = ok and run(
        [str(bin_ / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "--nbval-lax", "--nbval-current-env", "--nbval-sanitize-with",
         "notebooks/sanitize.cfg", *SMOKE_TESTS],
        log, cwd=ROOT, env=env_vars,
    )  # fmt: skip
    result = "passed" if ok else f"failed (see {log})"
    return result, versions, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="environments (default: all): "
                        + ", ".join(e.name for e in ENVIRONMENTS))  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the environments and logs")
    args = parser.parse_args()
    chosen = [e for e in ENVIRONMENTS if not args.names or e.name in args.names]
    work = Path(tempfile.mkdtemp(prefix="snapshotlib-versions-"))
    failed = False
    print(f"{'environment':<12} {'python':<7} {'seconds':>7}  result")
    for env in chosen:
        result, versions, seconds = smoke(env, work)
        failed |= not (result == "passed" or result.startswith("skipped"))
        print(f"{env.name:<12} {env.python:<7} {seconds:7.0f}  {result}", flush=True)
        if versions:
            print(f"{'':<29}{versions}", flush=True)
        if result != "passed" and (work / f"{env.name}.log").is_file():
            print((work / f"{env.name}.log").read_text()[-3000:], flush=True)
    if not args.keep and not failed:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""An installed package works on its own, away from the repository it was built from.

The package is built and installed (``pip install --target``) from a copy of what a
source distribution holds, and imported in a process whose current folder is outside
the repository: every lesson module imports, every example scenario ships as package
data and runs, the lessons that read examples find them, and ``python -m snapshotlib``
is the command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECK = r"""
import importlib, json, pathlib, sys
import snapshotlib
from snapshotlib.formats.scenario import EXAMPLES, load_scenario, run_scenario

home = pathlib.Path(snapshotlib.__file__).resolve().parent
assert home.is_relative_to(pathlib.Path(sys.argv[1]).resolve()), home
names = sorted(p.name for p in EXAMPLES.glob("*.json"))
for name in names:
    run_scenario(load_scenario(EXAMPLES / name))
lessons = sorted(p.stem for p in (home / "course").glob("lesson_*.py"))
for lesson in lessons:
    importlib.import_module(f"snapshotlib.course.{lesson}")
from snapshotlib.course import lesson_03
lesson_03.worked_example()
print(json.dumps({"home": str(home), "examples": names, "lessons": lessons}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package installed into a folder of its own, from a copy of the sources."""
    work = tmp_path_factory.mktemp("installed")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "snapshotlib", source / "snapshotlib",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )  # fmt: skip
    target = work / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--target", str(target), str(source)],
        check=False, cwd=work, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, f"pip install failed:\n{done.stderr}"
    return target


def _python(installed: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """This interpreter with the installed copy first on the path (the dependencies come
    from this environment's site-packages), run from a folder outside the repository."""
    path = os.pathsep.join([str(installed), sysconfig.get_path("purelib")])
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, *args], cwd=installed.parent, env=env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip


def test_every_lesson_imports_and_every_example_loads_from_the_installed_package(
    installed: Path,
) -> None:
    done = _python(installed, "-c", CHECK, str(installed))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    shipped = sorted(p.name for p in (ROOT / "examples" / "scenarios").glob("*.json"))
    assert found["examples"] == shipped
    assert len(found["lessons"]) == len(list((ROOT / "snapshotlib" / "course").glob("lesson_*.py")))


def test_python_dash_m_snapshotlib_is_the_command_line(installed: Path) -> None:
    example = installed / "snapshotlib" / "examples" / "scenarios" / "non-fifo-breaks.json"
    done = _python(installed, "-m", "snapshotlib", "check", str(example))
    assert done.returncode == 1, done.stderr
    assert "inconsistent" in done.stdout
    assert "message late" in done.stdout

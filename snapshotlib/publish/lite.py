"""``snapshotlib course lite OUT``: the student release as a static site whose lessons run
in the learner's browser (JupyterLite, on Pyodide's Python), with no server behind it.

The site is built from the registries alone, from scratch every time (no cache of an
earlier build can point the kernel elsewhere): Pyodide's core from npm, every package
the lessons import from PyPI (:mod:`.lite_packages`), JupyterLite's pages from its
Python package. Once built, nothing it loads comes from another host; any static host
serves it.

The lessons and exercises sit under ``notebooks/`` and ``exercises/`` as in the release.
Those that need what a browser lacks (processes, sockets, a Java runtime) open with one
line on top saying what and where to run them; exercises also say where ``grader.check``
runs, since otter-grader does not run in the browser.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import lite_packages as packages
from .lite_packages import LiteBuildError
from .release import ReleaseError, _checkout, _refuse_existing

#: what runs only outside the browser, and why: each opens in the site with this line
#: on top (tests/test_lite.py checks that every notebook which imports what a browser
#: cannot run is named here)
NEEDS_ELSEWHERE = {
    "notebooks/09_cost_at_scale.ipynb": "runs a sweep, whose results are written with "
    "pyarrow and read with pandas, which have no build for the browser on PyPI",
    "notebooks/10_live_lab_under_failure.ipynb": "starts the live lab's processes, which "
    "talk over sockets",
}
#: the import names that mark such a notebook (what a browser's Python cannot run: no
#: build on PyPI, or processes; the engine's sweeps run, without their Parquet files)
ELSEWHERE_IMPORTS = (
    "snapshotlib.live",
    "snapshotlib.spark",
    "snapshotlib.grading",
    "pyspark",
    "pyarrow",
    "pandas",
    "subprocess",
    "multiprocessing",
)
#: the kernel the site's notebooks ask for: JupyterLite's Pyodide kernel is named
#: "python" (a notebook asking for "python3" would stop at a Select Kernel dialog)
KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
#: the packages Pyodide loads as the kernel starts: the course (and, through the lock's
#: dependencies, plotly, networkx and the widgets) and what the kernel would otherwise
#: install one by one
PRELOADED = ["snapshotlib", *packages.KERNEL_PACKAGES]
#: the JupyterLab extensions the site carries, each taken from the wheel the kernel loads,
#: so that the page's side and the kernel's side of a widget are the same version.
#: Not plotly's: plain figures are figure widgets (snapshotlib.widgets.plain_figures)
LAB_EXTENSIONS = ("jupyterlab-widgets", "anywidget")
#: a notebook cell the build adds, marked so a reader (and a test) can tell it apart
NOTE_TAG = "browser-note"


def _elsewhere(binder: str | None) -> str:
    where = f"[on Binder]({binder})" if binder else "on Binder"
    return (
        f"{where}, or in JupyterLab on your own machine "
        '(`pip install "snapshotlib[course]"`, then `snapshotlib course init DIR`)'
    )


def check_binder(binder: str | None) -> None:
    """Refuse a ``--binder`` that is not a web address a note can link."""
    if binder is not None and not (
        re.fullmatch(r"https?://[^\s()<>\[\]]+", binder) and urlsplit(binder).hostname
    ):
        raise LiteBuildError(
            f"--binder {binder!r}: expected the course's Binder address, "
            "https://... with no spaces or brackets"
        )


def browser_note(path: str, binder: str | None) -> str | None:
    """The line a notebook opens with in the site, or ``None`` where it needs none."""
    elsewhere = _elsewhere(binder)
    if path in NEEDS_ELSEWHERE:
        return (
            f"**In the browser this notebook cannot run:** it {NEEDS_ELSEWHERE[path]}. "
            f"Read it here; run it {elsewhere}."
        )
    if path.startswith("exercises/"):
        return (
            "**In the browser you can write and run your answers, but `grader.check` "
            "cannot check them** (otter-grader, which runs the tests, does not run "
            f"here). To check and hand in, open this exercise {elsewhere}."
        )
    return None


def browser_notebook(source: Path, path: str, binder: str | None) -> dict[str, Any]:
    """The site's copy of a lesson or exercise: the browser's kernel, and its note."""
    nb: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    nb.setdefault("metadata", {})["kernelspec"] = dict(KERNELSPEC)
    note = browser_note(path, binder)
    if note is not None:
        cell: dict[str, Any] = {"cell_type": "markdown", "source": note}
        cell["metadata"] = {"tags": [NOTE_TAG]}
        if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) >= (4, 5):
            cell["id"] = NOTE_TAG  # cells have ids from format 4.5 on, and only there
        nb["cells"].insert(0, cell)
    return nb


def _contents(files: dict[str, Path], dest: Path, binder: str | None) -> None:
    for name, source in files.items():
        if not name.startswith(("notebooks/", "exercises/", "examples/")):
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".ipynb"):
            nb = browser_notebook(source, name, binder)
            target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", "utf-8")
        else:
            shutil.copyfile(source, target)


def _config() -> dict[str, Any]:
    kernel = {"disablePyPIFallback": True, "loadPyodideOptions": {"packages": PRELOADED}}
    return {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "Distributed snapshots",
            "litePluginSettings": {"@jupyterlite/pyodide-kernel-extension:kernel": kernel},
        },
    }


def _kernel_extension() -> Path:
    """The Pyodide kernel's JupyterLab extension, where its Python package installed it
    (this environment's, the user's or the system's Jupyter folders)."""
    from jupyter_core.paths import jupyter_path

    folders = [Path(p) for p in jupyter_path("labextensions")]
    for folder in folders:
        found = folder / "@jupyterlite" / "pyodide-kernel-extension"
        if (found / "package.json").is_file():
            return found
    raise LiteBuildError(
        "the Pyodide kernel's JupyterLab extension is in none of "
        f"{', '.join(map(str, folders))}: pip install 'snapshotlib[lite]'"
    )


def _jupyter_lite_build(stage: Path, out: Path, extensions: list[Path]) -> None:
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lite",
        "build",
        "--lite-dir",
        str(stage),
        "--output-dir",
        str(out),
        "--contents",
        str(stage / "files"),
        "--apps",
        "lab",
        "--no-sourcemaps",
        "--no-unused-shared-packages",
        # only the extensions named here, not every one this environment has
        "--ignore-sys-prefix",
    ]
    command += [f"--LiteBuildConfig.federated_extensions={e}" for e in extensions]
    packages.run_client(command, "jupyter lite build", cwd=stage)


def build(dest: Path, binder: str | None = None) -> list[Path]:
    """Write the browser-only site of the student release into ``dest`` (new or empty);
    return the files written."""
    check_binder(binder)
    _refuse_existing(dest, [p.name for p in dest.iterdir()] if dest.is_dir() else [])
    found, root = _checkout()
    version = packages.kernel_pyodide_version()
    extension = _kernel_extension()
    with tempfile.TemporaryDirectory(prefix="snapshotlib-lite-") as tmp:
        work = Path(tmp)
        core = packages.fetch_pyodide(work / "npm", version)
        wheels = packages.browser_wheels(root, core, work)
        stage = work / "stage"
        pyodide = stage / "static" / "pyodide"
        pyodide.mkdir(parents=True)
        for name in packages.CORE_FILES:
            if name != "pyodide-lock.json":  # the site's own lock is written below
                shutil.copyfile(core / name, pyodide / name)
        for wheel in wheels:
            shutil.copyfile(wheel.path, pyodide / wheel.path.name)
        core_lock = json.loads((core / "pyodide-lock.json").read_text(encoding="utf-8"))
        packages.write_lock(core_lock, wheels, pyodide / "pyodide-lock.json")
        _contents(found.learner_files(), stage / "files", binder)
        shutil.copyfile(found.jupyter / "overrides.json", stage / "overrides.json")
        (stage / "jupyter-lite.json").write_text(json.dumps(_config(), indent=1), "utf-8")
        by_name = {w.name: w.source for w in wheels}
        # built aside and moved in whole: a build that fails leaves ``dest`` as it was
        site = work / "site"
        _jupyter_lite_build(stage, site, [extension, *(by_name[n] for n in LAB_EXTENSIONS)])
        shutil.copytree(site, dest, dirs_exist_ok=True)
    return sorted(p for p in dest.rglob("*") if p.is_file())


def build_or_say(dest: Path, binder: str | None) -> list[Path]:
    """:func:`build`, with its errors as the release's (printed in one line by the CLI)."""
    try:
        return build(dest, binder)
    except LiteBuildError as e:
        raise ReleaseError(str(e)) from None
    except OSError as e:  # the folder could not be written: no room, no permission
        raise ReleaseError(f"writing the site in {dest}: {e}") from None

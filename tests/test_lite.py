"""The browser-only site's parts that need no browser: the lock file Pyodide loads the
course's packages by, the notebooks as the site holds them, figures without numpy or
nbformat, and ``grader.check`` without otter-grader.

tests/browser/test_lite_site.py builds the whole site and runs lessons in Chromium.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from snapshotlib.publish import lite, lite_packages

REPO = Path(__file__).resolve().parents[1]

COMPILED = """\
anywidget==0.11.0
    # via snapshotlib
comm==0.2.3
    # via
    #   -r /tmp/browser.in
    #   ipywidgets
ipywidgets==8.1.9
    # via
    #   anywidget
    #   snapshotlib
snapshotlib @ file:///tmp/w/snapshotlib-0.1.0-py3-none-any.whl
    # via -r /tmp/browser.in
typing-extensions==4.16.0
    # via anywidget
"""


def test_the_resolved_list_gives_each_package_its_version_and_what_needs_it() -> None:
    assert lite_packages.parse_compiled(COMPILED) == {
        "anywidget": ("0.11.0", ["snapshotlib"]),
        "comm": ("0.2.3", ["ipywidgets"]),
        "ipywidgets": ("8.1.9", ["anywidget", "snapshotlib"]),
        "snapshotlib": ("(local)", []),
        "typing-extensions": ("4.16.0", ["anywidget"]),
    }


def _wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as whl:
        for member, text in files.items():
            whl.writestr(member, text)
        whl.writestr(f"{name}-{version}.dist-info/METADATA", f"Name: {name}\n")
        whl.writestr(f"{name}-{version}.data/data/share/jupyter/labextensions/x.js", "")
    return path


def test_the_lock_names_each_shipped_wheel_by_the_checksum_of_its_file(tmp_path: Path) -> None:
    widget = _wheel(tmp_path, "tinywidget", "1.0", {"tinywidget/__init__.py": "", "tw.py": ""})
    helper = _wheel(tmp_path, "helper", "2.0", {"helper/__init__.py": ""})
    wheels = [
        lite_packages.Wheel(widget, widget, "tinywidget", "1.0", ("helper",)),
        lite_packages.Wheel(helper, helper, "helper", "2.0", ()),
    ]
    core = {
        "info": {"python": "3.14.2", "abi_version": "2026_0"},
        "packages": {"numpy": {"file_name": "numpy.whl"}},
    }
    written = lite_packages.write_lock(core, wheels, tmp_path / "pyodide-lock.json")

    lock = json.loads((tmp_path / "pyodide-lock.json").read_text())
    assert lock == json.loads(json.dumps(written))
    assert lock["info"] == core["info"]
    # only what the site ships: a package it lacks would fail in the browser, not here
    assert sorted(lock["packages"]) == ["helper", "tinywidget"]
    entry = lock["packages"]["tinywidget"]
    assert entry["sha256"] == hashlib.sha256(widget.read_bytes()).hexdigest()
    assert entry["file_name"] == widget.name
    assert entry["imports"] == ["tinywidget", "tw"]
    assert entry["depends"] == ["helper"]


def test_the_shipped_wheel_leaves_out_its_copies_of_the_lab_extension(tmp_path: Path) -> None:
    source = _wheel(
        tmp_path,
        "tinywidget",
        "1.0",
        {
            "tinywidget/__init__.py": "",
            "tinywidget/labextension/static/big.js": "x" * 1000,
            "tinywidget-1.0.dist-info/RECORD": "tinywidget/__init__.py,,\n"
            "tinywidget/labextension/static/big.js,,\ntinywidget-1.0.data/data/share/jupyter/labextensions/x.js,,\n",
        },
    )
    slim = lite_packages.for_the_browser(source, tmp_path / "slim")
    with zipfile.ZipFile(slim) as whl:
        assert sorted(whl.namelist()) == [
            "tinywidget-1.0.dist-info/METADATA",
            "tinywidget-1.0.dist-info/RECORD",
            "tinywidget/__init__.py",
        ]
        assert whl.read("tinywidget-1.0.dist-info/RECORD") == b"tinywidget/__init__.py,,\n"
    assert slim.name == source.name


def test_the_engines_wheel_leaves_out_its_copy_of_the_course(tmp_path: Path) -> None:
    source = _wheel(
        tmp_path,
        "snapshotlib",
        "0.1.0",
        {
            "snapshotlib/__init__.py": "",
            "snapshotlib/_course/notebooks/00_start_here.ipynb": "{}",
            "snapshotlib/examples/scenarios/a.json": "{}",
        },
    )
    with zipfile.ZipFile(lite_packages.for_the_browser(source, tmp_path / "slim")) as whl:
        kept = whl.namelist()
    assert "snapshotlib/examples/scenarios/a.json" in kept and "snapshotlib/__init__.py" in kept
    assert not [m for m in kept if "_course" in m]


def _npm_pack_writing(members: dict[str, bytes] | None) -> Any:
    """A stand-in for ``npm pack``: a tarball of ``members`` (or a file that is none)."""

    def run_client(command: list[str], what: str, cwd: Path | None = None) -> str:
        tarball = Path(command[command.index("--pack-destination") + 1]) / "pyodide-1.0.tgz"
        if members is None:
            tarball.write_bytes(b"not a tarball")
        else:
            with tarfile.open(tarball, "w:gz") as tar:
                for name, data in members.items():
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        return json.dumps([{"filename": tarball.name}])

    return run_client


@pytest.mark.parametrize(
    ("members", "said"),
    [
        ({"package/pyodide.mjs": b"", "package/pyodide-lock.json": b"{}"}, "has no pyodide.asm"),
        (None, "not a readable tarball"),
    ],
)
def test_a_pyodide_package_that_lacks_the_core_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, members: dict[str, bytes] | None, said: str
) -> None:
    monkeypatch.setattr(lite_packages.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(lite_packages, "run_client", _npm_pack_writing(members))
    with pytest.raises(lite_packages.LiteBuildError, match=said):
        lite_packages.fetch_pyodide(tmp_path / "npm", "1.0")


def test_the_pyodide_core_is_taken_from_the_package_folder_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    members = {f"package/{name}": name.encode() for name in lite_packages.CORE_FILES}
    members["package/nested/pyodide.mjs"] = b"not this one"
    members["elsewhere.txt"] = b"nor this"
    monkeypatch.setattr(lite_packages.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(lite_packages, "run_client", _npm_pack_writing(members))
    core = lite_packages.fetch_pyodide(tmp_path / "npm", "1.0")
    assert sorted(p.name for p in core.iterdir()) == sorted(lite_packages.CORE_FILES)
    assert (core / "pyodide.mjs").read_bytes() == b"pyodide.mjs"


def _code(nb: dict[str, object]) -> str:
    cells = nb["cells"]
    assert isinstance(cells, list)
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_the_sites_notebooks_ask_for_the_browsers_kernel_and_say_what_runs_elsewhere() -> None:
    lesson = lite.browser_notebook(
        REPO / "notebooks/02_chandy_lamport.ipynb", "notebooks/02_chandy_lamport.ipynb", None
    )
    assert lesson["metadata"]["kernelspec"]["name"] == "python"
    assert lite.NOTE_TAG not in json.dumps(lesson["cells"][0]["metadata"])

    live = "notebooks/10_live_lab_under_failure.ipynb"
    note = lite.browser_notebook(REPO / live, live, "https://binder.example/course")["cells"][0]
    assert note["metadata"]["tags"] == [lite.NOTE_TAG]
    assert "cannot run" in note["source"] and "(https://binder.example/course)" in note["source"]
    assert note["id"] == lite.NOTE_TAG  # the lesson is in format 4.5, whose cells have ids

    exercise = "exercises/01_is_this_cut_consistent.ipynb"
    nb = lite.browser_notebook(REPO / exercise, exercise, None)
    note = nb["cells"][0]
    assert "grader.check" in note["source"] and "Binder" in note["source"]
    if nb["nbformat_minor"] < 5:  # cells of format 4.4 have no ids
        assert "id" not in note


@pytest.mark.parametrize(
    "path",
    sorted(
        p.relative_to(REPO).as_posix()
        for p in [*REPO.glob("notebooks/*.ipynb"), *REPO.glob("exercises/*.ipynb")]
    ),
)
def test_a_notebook_that_uses_what_a_browser_lacks_says_so_in_the_site(path: str) -> None:
    code = _code(json.loads((REPO / path).read_text()))
    uses = [
        m
        for m in lite.ELSEWHERE_IMPORTS
        if re.search(rf"^\s*(from|import)\s+{re.escape(m)}\b", code, re.M)
    ]
    if uses:
        assert path in lite.NEEDS_ELSEWHERE, f"{path} imports {uses[0]}"


def test_every_notebook_named_as_running_elsewhere_exists() -> None:
    for path in lite.NEEDS_ELSEWHERE:
        assert (REPO / path).is_file(), path


def test_a_site_is_not_written_over_a_folder_that_holds_files(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("mine")
    done = subprocess.run(
        [sys.executable, "-m", "snapshotlib", "course", "lite", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "index.html already exists" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "index.html").read_text() == "mine"


@pytest.mark.parametrize(
    "binder",
    ["mybinder.org/v2/gh/o/r/HEAD", "https://x.org/a) [evil](https://y", "ftp://x", "https:///"],
)
def test_a_binder_link_that_is_not_a_web_address_is_refused_before_any_download(
    tmp_path: Path, binder: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "snapshotlib", "course", "lite", str(tmp_path / "site"),
         "--binder", binder],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--binder" in done.stderr and "https://" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "site").exists()


# ----------------------------------------------------------------------------- the kernel


def _in_a_python_without(missing: list[str], code: str, browser: bool = True) -> str:
    """Run ``code`` in a fresh interpreter where the modules ``missing`` cannot be imported
    and, with ``browser``, whose ``sys.platform`` is the browser's (as in Pyodide); its
    output. Unset ``PLOTLY_RENDERER``, a learner's own choice of renderer."""
    hide = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in missing)
    if browser:
        hide += "sys.platform = 'emscripten'\n"
    env = {k: v for k, v in os.environ.items() if k != "PLOTLY_RENDERER"}
    done = subprocess.run(
        [sys.executable, "-c", hide + code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


_CHECK_Q1 = (
    "from snapshotlib.course.checking import Notebook\n"
    "grader = Notebook('01_is_this_cut_consistent.ipynb')\n"
    "for result in (grader.check('q1'), grader.check_all(), grader.export()):\n"
    "    print(result.verdict, result.passed, '|', result.text)\n"
)


def test_in_the_browser_a_check_checks_nothing_and_says_where_to_check() -> None:
    lines = _in_a_python_without(["otter"], _CHECK_Q1).splitlines()
    assert len(lines) == 3
    for line in lines:
        assert line.startswith("unchecked False |")
        assert "not checked" in line and "browser" in line and "Binder" in line


def test_where_otter_is_not_installed_a_check_says_how_to_install_it() -> None:
    lines = _in_a_python_without(["otter"], _CHECK_Q1, browser=False).splitlines()
    assert lines[0].startswith("unchecked False |")
    assert 'pip install "snapshotlib[course]"' in lines[0] and "browser" not in lines[0]


def test_without_numpy_the_networks_are_still_drawn_on_a_circle() -> None:
    out = _in_a_python_without(
        ["numpy"],
        (
            "from snapshotlib.formats.scenario import load_scenario, run_scenario\n"
            "from snapshotlib.viz import network_figure, network_layout\n"
            "sim = run_scenario(load_scenario('token-ring'))\n"
            "print(network_layout(sim.network))\nnetwork_figure(sim)\n"
        ),
    )
    assert "'P1': (0.0, 1.0)" in out


@pytest.mark.parametrize("n", range(13))
def test_the_circle_is_the_one_networkx_draws(n: int) -> None:
    nx = pytest.importorskip("networkx")
    pytest.importorskip("numpy")
    from snapshotlib.viz.network import circular_positions

    nodes = [f"P{i}" for i in range(1, n + 1)]
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    theirs = nx.circular_layout(graph)
    ours = circular_positions(nodes)
    assert sorted(ours) == sorted(theirs)
    for p in nodes:  # networkx computes the angles in 32-bit floats
        assert ours[p] == pytest.approx(tuple(theirs[p]), abs=1e-6)


_SHOW_A_FIGURE = (
    "import IPython.display\n"
    "shown = []\n"
    "IPython.display.display = lambda *objs, **kw: shown.extend(objs)\n"
    "import plotly.graph_objects as go, plotly.io as pio\n"
    "import snapshotlib.widgets\n"
    "print(pio.renderers.default)\n"
)


def test_in_the_browser_a_plain_figure_is_shown_as_a_figure_widget() -> None:
    out = _in_a_python_without(
        ["nbformat"],
        _SHOW_A_FIGURE
        + "go.Figure(go.Scatter(x=[1], y=[2])).show()\n"
        + "print(type(shown[0]).__name__, shown[0].data[0].y)\n",
    )
    default, shown = out.splitlines()[:2]
    assert default == "snapshotlib_figure_widget"
    assert shown == "CourseFigureWidget (2,)"


@pytest.mark.parametrize("missing", [[], ["nbformat"]])
def test_outside_the_browser_plotlys_own_renderers_stay(missing: list[str]) -> None:
    out = _in_a_python_without(missing, _SHOW_A_FIGURE, browser=False)
    assert "snapshotlib" not in out

"""Dependency rules (README, "What is where") and the runnable examples in the docstrings.

* ``import snapshotlib`` must not pull in plotly, ipywidgets, networkx, pyspark or the
  live lab's gRPC, FastAPI, uvicorn and SQLAlchemy;
* the core (model, simulator, schedulers, trace, apps, actions, snapshot, colouring,
  algorithms, checks, formats) imports only the standard library and the core itself;
* every docstring example of every snapshotlib module runs.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "snapshotlib"
HEAVY = (
    "plotly",
    "ipywidgets",
    "networkx",
    "pyspark",
    "anywidget",
    "grpc",
    "fastapi",
    "uvicorn",
    "sqlalchemy",
)
CORE = [
    "model",
    "simulator",
    "schedulers",
    "trace",
    "apps",
    "actions",
    "snapshot",
    "colouring",
    "algorithms",
    "checks",
    "formats",
    "search",
]
#: snapshotlib parts the core may not import (they sit on top of it)
ADAPTERS = ("viz", "widgets", "spark", "cli", "live")
#: the live lab's modules that need nothing but the standard library (a cluster's spec,
#: a node's host, reading and checking its logs, checkpoint files)
LIVE_PLAIN = ["spec", "host", "runlog", "storage", "lifetime"]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_files() -> list[Path]:
    files = []
    for name in CORE:
        single = PACKAGE / f"{name}.py"
        package = PACKAGE / name
        assert single.exists() or package.is_dir(), f"core module snapshotlib.{name} is missing"
        files += [single] if single.exists() else sorted(package.rglob("*.py"))
    return files


def all_modules() -> list[str]:
    return sorted(module_name(p) for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")


def imports_of(path: Path) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in ``path``."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# ----------------------------------------------------------- heavy imports


def test_import_snapshotlib_does_not_import_heavy_optional_dependencies():
    out = run_python(
        "import json, sys, snapshotlib\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))"
    )
    assert json.loads(out) == []


def test_importing_every_core_module_and_the_cli_does_not_import_heavy_dependencies():
    names = [module_name(p) for p in core_files()]
    if (PACKAGE / "cli.py").exists():
        names.append("snapshotlib.cli")
    out = run_python(
        "import importlib, json, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))"
    )
    assert json.loads(out) == []


# ------------------------------------------------------------- core rules


def test_the_import_reader_resolves_relative_imports_against_the_package():
    names = {name for _, name in imports_of(PACKAGE / "checks" / "commutation.py")}
    assert {"snapshotlib.colouring", "snapshotlib.algorithms.base", "dataclasses"} <= names
    names = {name for _, name in imports_of(PACKAGE / "algorithms" / "__init__.py")}
    assert "snapshotlib.algorithms.base" in names


@pytest.mark.parametrize("path", core_files(), ids=[str(p.relative_to(ROOT)) for p in core_files()])
def test_core_module_imports_only_the_standard_library_and_the_core(path):
    bad = []
    for line, name in imports_of(path):
        top = name.split(".")[0]
        if top == "snapshotlib":
            part = name.split(".")[1] if "." in name else ""
            if part in ADAPTERS:
                bad.append(f"line {line}: {name} (an adapter, not core)")
        elif top != "__future__" and top not in sys.stdlib_module_names:
            bad.append(f"line {line}: {name}")
    assert bad == [], f"{path.relative_to(ROOT)} imports outside the stdlib: {bad}"


@pytest.mark.parametrize("name", LIVE_PLAIN)
def test_the_live_lab_s_plain_modules_import_only_the_standard_library(name):
    path = PACKAGE / "live" / f"{name}.py"
    bad = [
        f"line {line}: {imported}"
        for line, imported in imports_of(path)
        if imported.split(".")[0] not in ("snapshotlib", "__future__")
        and imported.split(".")[0] not in sys.stdlib_module_names
    ]
    assert bad == [], f"{path.relative_to(ROOT)} imports outside the stdlib: {bad}"


# ---------------------------------------------------------------- doctests


@pytest.mark.parametrize("name", all_modules())
def test_docstring_examples_run(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] != "snapshotlib":
            pytest.skip(f"{name} needs the optional dependency {e.name!r}")
        raise
    result = doctest.testmod(module, report=True, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_the_package_docstrings_have_examples():
    import snapshotlib

    finder = doctest.DocTestFinder()
    examples = sum(len(t.examples) for t in finder.find(snapshotlib))
    assert examples > 0

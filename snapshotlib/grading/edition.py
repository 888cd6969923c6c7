"""The learner edition of the engine: the package a graded submission runs against.

Where an exercise asks a learner to write something the engine already has (its
``REFUSE``, in :mod:`snapshotlib.course.exercises`), watching the submission for calls
into the engine's version cannot work: the watch would run in the submission's own
process, which can switch it off. So the engine's version is not there at all. The
edition is a copy of this package in which every refused function or class is replaced,
in its source, by a stand-in of the same name that holds none of its code
(:mod:`snapshotlib.absent`): calling it, or making or subclassing the class, raises
``NotInThisExercise``, saying the exercise asks you to write it. Everything else is the
real engine, compiled once per grading run.

The sandbox puts the edition first on its path; as root it is also mounted over the
installed package, so the real source cannot be read there either.
"""

from __future__ import annotations

import ast
import compileall
import importlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import snapshotlib

from ..course.exercises import rules_for

#: the installed package the edition is copied from
PACKAGE = Path(snapshotlib.__file__).resolve().parent


_NOTE = "# not in this edition: the exercise asks the learner for it"


class EditionError(ValueError):
    """An exercise refuses something the engine does not define as a function or class."""


def refused_targets(exercise: str) -> tuple[str, ...]:
    """Every ``module:qualname`` that ``exercise`` refuses, in a stable order."""
    rules = rules_for(exercise)
    refuse = getattr(rules, "REFUSE", None) or {}
    return tuple(sorted({t for targets in refuse.values() for t in targets}))


def build(targets: Iterable[str], folder: Path) -> Path:
    """Write the edition without ``targets`` into ``folder`` (as ``folder/snapshotlib``),
    compiled, readable by every user; ``folder`` (the entry for the import path)."""
    package = folder / "snapshotlib"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    by_file: dict[Path, list[str]] = {}
    for target in targets:
        module, qualname = defined_at(target)
        by_file.setdefault(_source_file(package, module), []).append(f"{module}:{qualname}")
    for path, file_targets in by_file.items():
        path.write_text(without(path.read_text(encoding="utf-8"), file_targets), encoding="utf-8")
    compileall.compile_dir(str(package), quiet=2, workers=1)
    for root, _, files in os.walk(folder):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return folder


def defined_at(target: str) -> tuple[str, str]:
    """The module and qualified name where ``target`` (``module:qualname``, which may be a
    re-export) is defined.

    >>> defined_at("snapshotlib.checks:check_frontier")
    ('snapshotlib.checks.cut', 'check_frontier')
    """
    module, _, qualname = target.partition(":")
    if not module.startswith("snapshotlib.") or not qualname:
        raise EditionError(f"{target!r} is not a module:qualname of snapshotlib")
    obj: object = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise EditionError(f"{target}: snapshotlib has no {part!r} there")
    home, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not (isinstance(home, str) and isinstance(name, str) and home.startswith("snapshotlib.")):
        raise EditionError(f"{target} is not a function or class defined in snapshotlib")
    return home, name


def _source_file(package: Path, module: str) -> Path:
    parts = module.split(".")[1:]
    for candidate in (package.joinpath(*parts).with_suffix(".py"),
                      package.joinpath(*parts, "__init__.py")):  # fmt: skip
        if candidate.is_file():
            return candidate
    raise EditionError(f"no source for module {module}")


def _find(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef:
    body: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in qualname.split("."):
        node = next(
            (n for n in reversed(body)
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
             and n.name == part),
            None,
        )  # fmt: skip
        if node is None:
            raise EditionError(f"{qualname}: no function or class {part!r} defined there")
        body = node.body
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    return node


def without(source: str, targets: list[str]) -> str:
    """``source`` with each of ``targets`` (all in this module) replaced by a stand-in.

    >>> print(without("def f(x):\\n    return x + 1\\n", ["snapshotlib.m:f"]))
    def f(*args, **kwargs):  # not in this edition: the exercise asks the learner for it
        import snapshotlib.absent
        snapshotlib.absent.refuse('snapshotlib.m:f')
    <BLANKLINE>
    """
    tree = ast.parse(source)
    found = [(_find(tree, t.partition(":")[2]), t) for t in targets]
    spans = []
    for node, target in found:
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        spans.append((start, node.end_lineno or node.lineno, node, target))
    # a target inside another target's span (a method of a refused class) goes with it
    spans = [s for s in spans if not any(o is not s and o[0] <= s[0] and s[1] <= o[1]
                                         for o in spans)]  # fmt: skip
    lines = source.splitlines(keepends=True)
    for start, end, node, target in sorted(spans, key=lambda s: s[0], reverse=True):
        decorators = "".join(lines[start - 1 : node.lineno - 1])
        stand_in = decorators + _stand_in(node, target, " " * node.col_offset)
        lines[start - 1 : end] = [stand_in]
    return "".join(lines)


def _stand_in(node: ast.stmt, target: str, indent: str) -> str:
    refuse = f"import snapshotlib.absent\nsnapshotlib.absent.refuse({target!r})"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
        head = f"{keyword} {node.name}(*args, **kwargs):  {_NOTE}"
        return _block(head, [refuse], indent)
    assert isinstance(node, ast.ClassDef)
    bases = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
    head = f"class {node.name}({', '.join(bases)}):  {_NOTE}"
    kept = [ast.unparse(s) for s in node.body if _plain_data(s)]
    subclass = (
        f"import snapshotlib.absent\nsnapshotlib.absent.refuse_subclass({target!r}, cls)\n"
        "super().__init_subclass__(**kwargs)"
    )
    body = [
        *kept,
        f"def __new__(cls, *args, **kwargs):\n{_indent(refuse)}",
        f"def __init_subclass__(cls, **kwargs):\n{_indent(subclass)}",
    ]
    return _block(head, body, indent)


def _plain_data(statement: ast.stmt) -> bool:
    """A class attribute holding plain data (a name, a tuple of numbers...), which the
    engine may read at import; code (methods, lambdas) is never kept."""
    named = (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)) or (
        isinstance(statement, ast.Assign)
        and all(isinstance(t, ast.Name) for t in statement.targets)
    )
    if not named:
        return False
    value: ast.expr | None = getattr(statement, "value", None)
    if value is None:
        return True
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _indent(text: str, by: str = "    ") -> str:
    return "".join(by + line if line.strip() else line for line in text.splitlines(keepends=True))


def _block(head: str, body: list[str], indent: str) -> str:
    return _indent(head + "\n" + _indent("\n".join(body)) + "\n", indent)

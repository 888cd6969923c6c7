"""A notebook's code as the grader reads it: each cell parsed (IPython's magics read as
the code they run), and every top-level name with the statements that bound it, in the
order the cells ran, so that what a name held at any statement can be followed back.

Only the standard library; nothing here runs a learner's code. :mod:`.refusals` uses it
to find what an answer's code really references.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

_MAGIC = re.compile(r"^(\s*)(%{1,2}|!)")
_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try)


def parse_cell(source: str) -> ast.Module | None:
    """A cell's code as Python; IPython's magics and shell escapes are read as the code
    they run (``%time x = f()`` as ``x = f()``, a ``%%time`` cell as its body), other
    lines as ``pass``. None if it is not Python even then."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        lines = ["pass", *lines[1:]]  # a cell magic runs the rest of the cell
    out = []
    for line in lines:
        magic = _MAGIC.match(line)
        if magic:
            indent, rest = magic.group(1), line[magic.end() :]
            code = rest.split(None, 1)[1] if magic.group(2) != "!" and " " in rest else ""
            line = indent + (code if code and _parses(code) else "pass")
        elif line.rstrip().endswith("?") and _parses(line.rstrip().rstrip("?")):
            line = line.rstrip().rstrip("?")
        out.append(line)
    try:
        return ast.parse("\n".join(out))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _parses(code: str) -> bool:
    try:
        ast.parse(code.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# ------------------------------------------------------------------ the notebook's names


@dataclass
class Binding:
    """One way a top-level name got its value."""

    position: int
    kind: str  # "engine" (an import), "def" (function or class), "stmt" (anything else)
    node: ast.AST
    cell: int
    kills: bool  # replaces every earlier binding of the name
    controls: tuple[tuple[ast.expr, int], ...] = ()  # (loop or condition, cell) around it
    engine: tuple[str, tuple[str, ...]] | None = None  # module, attributes


@dataclass
class NotebookCode:
    cells: list[ast.Module | None]
    lines: list[list[str]]
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    stars: list[tuple[int, str]] = field(default_factory=list)  # (position, module)

    def bound_before(self, name: str, position: int) -> list[Binding]:
        found: list[Binding] = []
        for b in self.bindings.get(name, []):
            if b.position >= position:
                break
            found = [b] if b.kills else [*found, b]
        return found

    def star_module(self, name: str, position: int) -> str | None:
        for at, module in reversed(self.stars):
            if at < position and hasattr(import_quietly(module), name):
                return module
        return None


def import_quietly(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except Exception:
        return None


def is_engine_module(name: str | None) -> bool:
    return bool(name) and (name == "snapshotlib" or str(name).startswith("snapshotlib."))


def bound_targets(node: ast.AST) -> Iterator[str]:
    """Top-level names a statement binds (``x``, ``x[k]``, ``x.a`` and unpacking)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from bound_targets(element)
    elif isinstance(node, (ast.Starred, ast.Subscript, ast.Attribute)):
        yield from bound_targets(node.value)


def read_code(cells: Sequence[str]) -> NotebookCode:
    trees = [parse_cell(c) for c in cells]
    nb = NotebookCode(trees, [c.splitlines() for c in cells])
    position = 0

    def bind(name: str, binding: Binding) -> None:
        nb.bindings.setdefault(name, []).append(binding)

    def walk(
        statements: list[ast.stmt], cell: int, controls: tuple[tuple[ast.expr, int], ...]
    ) -> None:
        nonlocal position
        for s in statements:
            position += 1
            plain = not controls
            if isinstance(s, ast.Import):
                for alias in s.names:
                    if alias.asname:
                        engine: tuple[str, tuple[str, ...]] = (alias.name, ())
                        bind(
                            alias.asname,
                            Binding(position, "engine", s, cell, plain, engine=engine),
                        )
                    else:
                        root = alias.name.split(".")[0]
                        bind(root, Binding(position, "engine", s, cell, plain, engine=(root, ())))
                        import_quietly(alias.name) if is_engine_module(alias.name) else None
            elif isinstance(s, ast.ImportFrom):
                module = s.module or ""
                for alias in s.names:
                    if s.level:
                        continue
                    if alias.name == "*":
                        if is_engine_module(module):
                            nb.stars.append((position, module))
                        continue
                    engine = (module, (alias.name,))
                    bind(alias.asname or alias.name,
                         Binding(position, "engine", s, cell, plain, engine=engine))  # fmt: skip
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bind(s.name, Binding(position, "def", s, cell, plain, controls))
            else:
                names: list[str] = []
                kills = False
                if isinstance(s, ast.Assign):
                    for t in s.targets:
                        names += bound_targets(t)
                    kills = plain and all(isinstance(t, ast.Name) for t in s.targets)
                elif isinstance(s, ast.AnnAssign) and s.value is not None:
                    names += bound_targets(s.target)
                    kills = plain and isinstance(s.target, ast.Name)
                elif isinstance(s, (ast.AugAssign, ast.For, ast.AsyncFor)):
                    names += bound_targets(s.target)
                elif isinstance(s, (ast.With, ast.AsyncWith)):
                    for item in s.items:
                        if item.optional_vars is not None:
                            names += bound_targets(item.optional_vars)
                elif (
                    isinstance(s, ast.Expr)
                    and isinstance(s.value, ast.Call)
                    and isinstance(s.value.func, ast.Attribute)
                ):  # x.append(...), x.update(...)
                    names += bound_targets(s.value.func)
                if not isinstance(s, _COMPOUND):
                    names += [t for n in ast.walk(s) if isinstance(n, ast.NamedExpr)
                              for t in bound_targets(n.target)]  # fmt: skip
                for name in dict.fromkeys(names):
                    bind(name, Binding(position, "stmt", s, cell, kills, controls))
            # the bodies of compound statements run at the top level too
            header: list[ast.expr] = []
            if isinstance(s, (ast.For, ast.AsyncFor)):
                header = [s.iter]
            elif isinstance(s, (ast.While, ast.If)):
                header = [s.test]
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                header = [i.context_expr for i in s.items]
            inner = controls + tuple((h, cell) for h in header)
            for block in ("body", "orelse", "finalbody"):
                walk(getattr(s, block, []) or [], cell, inner)
            for handler in getattr(s, "handlers", []) or []:
                walk(handler.body, cell, inner)

    for number, tree in enumerate(trees, start=1):
        if tree is not None:
            walk(tree.body, number, ())
    return nb


# ------------------------------------------------------------------ references


def names_bound_in(node: ast.AST) -> set[str]:
    """Names a function, lambda or comprehension binds for itself."""
    names: set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None:
                names.add(arg.arg)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        for comp in node.generators:
            names.update(bound_targets(comp.target))
        return names
    body = (
        node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else []
    )
    declared_global: set[str] = set()
    for stmt in body if isinstance(body, list) else []:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Global):
                declared_global.update(n.names)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                names.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
            elif isinstance(n, ast.alias):
                names.add(n.asname or n.name.split(".")[0])
            elif isinstance(n, ast.ExceptHandler) and n.name:
                names.add(n.name)
    return names - declared_global


def local_imports(node: ast.AST) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Names a function binds by importing, and what they import."""
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            for alias in n.names:
                if alias.asname:
                    found[alias.asname] = (alias.name, ())
                else:
                    found[alias.name.split(".")[0]] = (alias.name.split(".")[0], ())
                    import_quietly(alias.name) if is_engine_module(alias.name) else None
        elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
            for alias in n.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = (n.module, (alias.name,))
    return found


def chains(node: ast.AST, hidden: frozenset[str]) -> Iterator[tuple[str, list[str], ast.AST]]:
    """Every name read in ``node`` with the attributes read from it (``a.b.c``), except
    names that a lambda or comprehension inside binds."""
    if isinstance(node, ast.Attribute):
        attrs: list[str] = []
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            attrs.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name):
            if base.id not in hidden:
                yield base.id, attrs[::-1], node
            return
        yield from chains(base, hidden)
        return
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id not in hidden:
            yield node.id, [], node
        return
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        hidden = hidden | names_bound_in(node)
    for child in ast.iter_child_nodes(node):
        yield from chains(child, hidden)

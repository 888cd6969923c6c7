"""Which answers use the engine's own implementation of what their question asks for,
read from a notebook's code.

Where an exercise asks the learner to write something the engine has (the exercise's
``REFUSE``), an answer whose code *really references* one of those engine objects
scores 0 for its question. The same rule runs in the learner's ``grader.check`` and in
staff grading, on the code of the notebook's cells:

* a function or class answer: its (last) definition. Every name its body reads that is
  not one of its own local names is looked up in the notebook: through its imports and
  assignments to an engine object, and from an engine module or class through its
  attributes (``checks.check_frontier``). A function or value of the learner's that it
  reads is followed in turn.
* a data answer: the statements that assign or change it (``x = ...``, ``x += ...``,
  ``x[k] = ...``, ``x.append(...)``), the loops and conditions around them, and what they
  read, followed the same way, each as the notebook stood at that statement.

So a local variable that happens to share a refused name, hand arithmetic, or a cell
that checks an answer with the engine afterwards is never refused. A refusal names the
engine object and quotes the line that reaches it. Names built at run time
(``getattr(m, "check_" + ...)``) are not followed here: in staff grading the refused
objects are absent altogether (:mod:`snapshotlib.grading.edition`).

>>> cells = ["from snapshotlib.checks import check_frontier",
...          "def offending_message(trace, frontier):\\n"
...          "    return None if check_frontier(trace, frontier).ok else 'x'"]
>>> found = refusals(cells, {"offending_message": ["snapshotlib.checks.cut:check_frontier"]})
>>> print(found["offending_message"].message())  # doctest: +NORMALIZE_WHITESPACE
offending_message uses snapshotlib.checks.cut.check_frontier, the engine's own
implementation of what this question asks you to write (code cell 2, line 2:
`return None if check_frontier(trace, frontier).ok else 'x'`): the question scores 0.
Write it yourself.
>>> refusals(["check_frontier = []\\noffending_message = len(check_frontier)"],
...          {"offending_message": ["snapshotlib.checks.cut:check_frontier"]})
{}
"""

from __future__ import annotations

import ast
import importlib
import re
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: how many learner definitions and statements one answer's search may follow
_MAX_FOLLOWED = 2000

_MAGIC = re.compile(r"^(\s*)(%{1,2}|!)")
_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try)


@dataclass(frozen=True)
class Refusal:
    """An answer that references a refused engine object, and where."""

    answer: str
    target: str  # as the exercise names it, ``module:qualname``
    cell: int  # 1-based, counting code cells
    line: int  # 1-based, in that cell
    code: str  # the line, stripped
    via: tuple[str, ...] = ()  # learner names followed to get there
    where: str = "code cell {cell}"  # how the cell is named to the reader

    def message(self) -> str:
        through = f", through {', '.join(self.via)}" if self.via else ""
        place = self.where.format(cell=self.cell)
        return (
            f"{self.answer} uses {self.target.replace(':', '.')}, the engine's own "
            f"implementation of what this question asks you to write ({place}, "
            f"line {self.line}{through}: `{self.code}`): the question scores 0. "
            "Write it yourself."
        )


# ------------------------------------------------------------------ reading cells


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
class _Binding:
    """One way a top-level name got its value."""

    position: int
    kind: str  # "engine" (an import), "def" (function or class), "stmt" (anything else)
    node: ast.AST
    cell: int
    kills: bool  # replaces every earlier binding of the name
    controls: tuple[tuple[ast.expr, int], ...] = ()  # (loop or condition, cell) around it
    engine: tuple[str, tuple[str, ...]] | None = None  # module, attributes


@dataclass
class _Notebook:
    cells: list[ast.Module | None]
    lines: list[list[str]]
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)
    stars: list[tuple[int, str]] = field(default_factory=list)  # (position, module)

    def bound_before(self, name: str, position: int) -> list[_Binding]:
        found: list[_Binding] = []
        for b in self.bindings.get(name, []):
            if b.position >= position:
                break
            found = [b] if b.kills else [*found, b]
        return found

    def star_module(self, name: str, position: int) -> str | None:
        for at, module in reversed(self.stars):
            if at < position and hasattr(_import(module), name):
                return module
        return None


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except Exception:
        return None


def _engine_module(name: str | None) -> bool:
    return bool(name) and (name == "snapshotlib" or str(name).startswith("snapshotlib."))


def _targets(node: ast.AST) -> Iterator[str]:
    """Top-level names a statement binds (``x``, ``x[k]``, ``x.a`` and unpacking)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _targets(element)
    elif isinstance(node, (ast.Starred, ast.Subscript, ast.Attribute)):
        yield from _targets(node.value)


def _read(cells: Sequence[str]) -> _Notebook:
    trees = [parse_cell(c) for c in cells]
    nb = _Notebook(trees, [c.splitlines() for c in cells])
    position = 0

    def bind(name: str, binding: _Binding) -> None:
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
                            _Binding(position, "engine", s, cell, plain, engine=engine),
                        )
                    else:
                        root = alias.name.split(".")[0]
                        bind(root, _Binding(position, "engine", s, cell, plain, engine=(root, ())))
                        _import(alias.name) if _engine_module(alias.name) else None
            elif isinstance(s, ast.ImportFrom):
                module = s.module or ""
                for alias in s.names:
                    if s.level:
                        continue
                    if alias.name == "*":
                        if _engine_module(module):
                            nb.stars.append((position, module))
                        continue
                    engine = (module, (alias.name,))
                    bind(alias.asname or alias.name,
                         _Binding(position, "engine", s, cell, plain, engine=engine))  # fmt: skip
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bind(s.name, _Binding(position, "def", s, cell, plain, controls))
            else:
                names: list[str] = []
                kills = False
                if isinstance(s, ast.Assign):
                    for t in s.targets:
                        names += _targets(t)
                    kills = plain and all(isinstance(t, ast.Name) for t in s.targets)
                elif isinstance(s, ast.AnnAssign) and s.value is not None:
                    names += _targets(s.target)
                    kills = plain and isinstance(s.target, ast.Name)
                elif isinstance(s, (ast.AugAssign, ast.For, ast.AsyncFor)):
                    names += _targets(s.target)
                elif isinstance(s, (ast.With, ast.AsyncWith)):
                    for item in s.items:
                        if item.optional_vars is not None:
                            names += _targets(item.optional_vars)
                elif (
                    isinstance(s, ast.Expr)
                    and isinstance(s.value, ast.Call)
                    and isinstance(s.value.func, ast.Attribute)
                ):  # x.append(...), x.update(...)
                    names += _targets(s.value.func)
                if not isinstance(s, _COMPOUND):
                    names += [t for n in ast.walk(s) if isinstance(n, ast.NamedExpr)
                              for t in _targets(n.target)]  # fmt: skip
                for name in dict.fromkeys(names):
                    bind(name, _Binding(position, "stmt", s, cell, kills, controls))
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


def _bound_in(node: ast.AST) -> set[str]:
    """Names a function, lambda or comprehension binds for itself."""
    names: set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None:
                names.add(arg.arg)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        for comp in node.generators:
            names.update(_targets(comp.target))
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


def _local_imports(node: ast.AST) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Names a function binds by importing, and what they import."""
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            for alias in n.names:
                if alias.asname:
                    found[alias.asname] = (alias.name, ())
                else:
                    found[alias.name.split(".")[0]] = (alias.name.split(".")[0], ())
                    _import(alias.name) if _engine_module(alias.name) else None
        elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
            for alias in n.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = (n.module, (alias.name,))
    return found


def _chains(node: ast.AST, hidden: frozenset[str]) -> Iterator[tuple[str, list[str], ast.AST]]:
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
        yield from _chains(base, hidden)
        return
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id not in hidden:
            yield node.id, [], node
        return
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        hidden = hidden | _bound_in(node)
    for child in ast.iter_child_nodes(node):
        yield from _chains(child, hidden)


class _Search:
    """Looks for a refused object behind one answer."""

    def __init__(self, nb: _Notebook, refused: list[tuple[str, Any]]) -> None:
        self.nb = nb
        self.refused = refused
        self.seen: set[int] = set()

    def target_of(self, obj: Any) -> str | None:
        candidates = [obj, getattr(obj, "__func__", None)]
        for target, bad in self.refused:
            if any(c is bad for c in candidates if c is not None):
                return target
            if isinstance(bad, type) and isinstance(obj, type) and obj is not bad:
                try:
                    if issubclass(obj, bad):
                        return target
                except TypeError:
                    pass
        if isinstance(obj, (dict, list, tuple, set, frozenset)) and len(obj) < 10_000:
            values = obj.values() if isinstance(obj, dict) else obj
            for value in values:
                for target, bad in self.refused:
                    if value is bad:
                        return target
        return None

    def resolve(self, engine: tuple[str, tuple[str, ...]], attrs: list[str]) -> str | None:
        module, first = engine
        if not _engine_module(module):
            return None
        obj = _import(module)
        for name in [*first, *attrs]:
            if obj is None:
                return None
            found = self.target_of(obj)
            if found:
                return found
            if isinstance(obj, types.ModuleType):
                nxt = getattr(obj, name, None)
                if nxt is None and _engine_module(obj.__name__):
                    nxt = _import(f"{obj.__name__}.{name}")
                obj = nxt
            elif isinstance(obj, type):
                try:
                    obj = getattr(obj, name, None)
                except Exception:
                    return None
            else:
                return None
        return self.target_of(obj) if obj is not None else None

    def code(self, node: ast.AST, cell: int, local: frozenset[str],
             imports: Mapping[str, tuple[str, tuple[str, ...]]], position: int,
             via: tuple[str, ...]) -> Refusal | None:  # fmt: skip
        """The first refused object ``node``'s code reaches, or None."""
        for root, attrs, where in _chains(node, frozenset()):
            hit: Refusal | None = None
            if root in imports:
                target = self.resolve(imports[root], attrs)
                hit = self.at(target, where, cell, via) if target else None
            elif root in local:
                continue
            else:
                hit = self.name(root, attrs, where, cell, position, via)
            if hit:
                return hit
        return None

    def at(self, target: str, where: ast.AST, cell: int, via: tuple[str, ...]) -> Refusal:
        line = getattr(where, "lineno", 1)
        lines = self.nb.lines[cell - 1]
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return Refusal("", target, cell, line, text[:200], via)

    def name(self, name: str, attrs: list[str], where: ast.AST, cell: int, position: int,
             via: tuple[str, ...]) -> Refusal | None:  # fmt: skip
        """A top-level name read at ``position``: what it was bound to, followed."""
        bindings = self.nb.bound_before(name, position)
        if not bindings:
            star = self.nb.star_module(name, position)
            target = self.resolve((star, (name,)), attrs) if star else None
            return self.at(target, where, cell, via) if target else None
        for b in bindings:
            if b.kind == "engine":
                assert b.engine is not None
                target = self.resolve(b.engine, attrs)
                if target:
                    return self.at(target, where, cell, via)
                continue
            hit = self.follow(name, b, (*via, name))
            if hit:
                return hit
        return None

    def follow(self, name: str, b: _Binding, via: tuple[str, ...]) -> Refusal | None:
        """What a learner's definition or statement binding ``name`` reaches."""
        if id(b) in self.seen or len(self.seen) > _MAX_FOLLOWED:
            return None
        self.seen.add(id(b))
        end = 10**12  # a function reads the notebook's names when called: after every cell
        if b.kind == "def":
            assert isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            return self.definition(b.node, b.cell, end, via)
        for header, cell in b.controls:
            hit = self.code(header, cell, frozenset(), {}, b.position, via)
            if hit:
                return hit
        node = b.node
        parts: list[ast.AST] = [node]
        if isinstance(node, (ast.For, ast.AsyncFor)):
            parts = [node.target, node.iter]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            parts = [i.context_expr for i in node.items]
        for part in parts:
            hit = self.code(part, b.cell, frozenset(), {}, b.position, via)
            if hit:
                return hit
        return None

    def definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, cell: int,
                   position: int, via: tuple[str, ...], enclosing: frozenset[str] = frozenset(),
                   outer_imports: Mapping[str, tuple[str, tuple[str, ...]]] | None = None,
                   ) -> Refusal | None:  # fmt: skip
        outer: list[ast.AST] = list(node.decorator_list)
        if isinstance(node, ast.ClassDef):
            outer += [*node.bases, *(k.value for k in node.keywords)]
        else:
            outer += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        outer_imports = outer_imports or {}
        for part in outer:
            hit = self.code(part, cell, enclosing, outer_imports, position, via)
            if hit:
                return hit
        imports = {**outer_imports, **_local_imports(node)}
        local = enclosing | _bound_in(node)
        # a class body's names are not seen by its methods; a function's are by its inner ones
        inner = enclosing if isinstance(node, ast.ClassDef) else local
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                hit = self.definition(stmt, cell, position, via, inner, imports)
            else:
                hit = self.code(stmt, cell, local, imports, position, via)
            if hit:
                return hit
        return None

    def answer(self, name: str) -> Refusal | None:
        end = 10**12
        for b in self.nb.bound_before(name, end):
            if b.kind == "engine":
                assert b.engine is not None
                target = self.resolve(b.engine, [])
                hit = self.at(target, b.node, b.cell, ()) if target else None
            else:
                hit = self.follow(name, b, ())
            if hit:
                return hit
        return None


def resolve_target(target: str) -> Any:
    """The object ``module:qualname`` names (None if there is none)."""
    module, _, qualname = target.partition(":")
    obj = _import(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def refusals(
    cells: Sequence[str], refuse: Mapping[str, Sequence[str]], where: str = "code cell {cell}"
) -> dict[str, Refusal]:
    """``{answer: Refusal}`` for each answer of ``refuse`` (answer name -> refused
    ``module:qualname`` targets) whose code in ``cells`` (the notebook's code cells, in
    order) references one of its refused objects; ``where`` names a cell by its number
    (a kernel's history: ``"In [{cell}]"``)."""
    nb = _read(cells)
    found: dict[str, Refusal] = {}
    for answer, targets in refuse.items():
        refused = [(t, resolve_target(t)) for t in targets]
        refused = [(t, obj) for t, obj in refused if obj is not None]
        hit = _Search(nb, refused).answer(answer)
        if hit is not None:
            found[answer] = Refusal(
                answer, hit.target, hit.cell, hit.line, hit.code, hit.via, where
            )
    return found

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
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .notebook_code import (
    Binding,
    NotebookCode,
    chains,
    import_quietly,
    is_engine_module,
    local_imports,
    names_bound_in,
    read_code,
)

#: how many learner definitions and statements one answer's search may follow
_MAX_FOLLOWED = 2000


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


class _Search:
    """Looks for a refused object behind one answer."""

    def __init__(self, nb: NotebookCode, refused: list[tuple[str, Any]]) -> None:
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
        if not is_engine_module(module):
            return None
        obj = import_quietly(module)
        for name in [*first, *attrs]:
            if obj is None:
                return None
            found = self.target_of(obj)
            if found:
                return found
            if isinstance(obj, types.ModuleType):
                nxt = getattr(obj, name, None)
                if nxt is None and is_engine_module(obj.__name__):
                    nxt = import_quietly(f"{obj.__name__}.{name}")
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
        for root, attrs, where in chains(node, frozenset()):
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

    def follow(self, name: str, b: Binding, via: tuple[str, ...]) -> Refusal | None:
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
        imports = {**outer_imports, **local_imports(node)}
        local = enclosing | names_bound_in(node)
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
    obj = import_quietly(module)
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
    nb = read_code(cells)
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

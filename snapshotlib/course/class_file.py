"""A class a learner wrote in a notebook cell, saved as a Python file another process can
load: what takes exercise 2's class to the live lab's nodes
(``snapshotlib live lab --algorithm marker_rules.py:MarkerRules``).

A notebook's kernel keeps each cell's code where :mod:`linecache` finds it, under the
file name its functions were compiled with; ``inspect.getsource`` cannot find a class
defined in ``__main__`` on every Python this course supports, but the class's methods
name their cell. The class's definition is cut out of that cell with :mod:`ast`, so the
rest of the cell (a call that runs it, a print) stays behind.
"""

from __future__ import annotations

import ast
import builtins
import dis
import linecache
from pathlib import Path
from types import CodeType

HEADER = '"""{name}, saved from a notebook for the live lab."""\n\n{imports}\n\n\n'


def class_source(cls: type) -> str:
    """The source of ``cls``'s ``class`` statement; :class:`ValueError` when it cannot
    be found (a class made otherwise than by a ``class`` statement in a cell or file)."""
    cells = {
        member.__code__.co_filename
        for member in vars(cls).values()
        if callable(member) and hasattr(member, "__code__")
    }
    for filename in sorted(cells):
        text = "".join(linecache.getlines(filename))
        if not text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                segment = ast.get_source_segment(text, node, padded=False)
                if segment is not None:
                    decorators = "".join(
                        f"@{ast.get_source_segment(text, d)}\n" for d in node.decorator_list
                    )
                    return decorators + segment + "\n"
    raise ValueError(
        f"the source of {cls.__name__} cannot be found: run the cell that defines it, then this one"
    )


def save_class(cls: type, path: str | Path, imports: str) -> Path:
    """Write ``cls``'s source to ``path``, after ``imports`` (what it needs to be
    defined: its base class, say); the file's path."""
    path = Path(path)
    source = HEADER.format(name=cls.__name__, imports=imports.strip()) + class_source(cls)
    code = compile(source, str(path), "exec")  # a file that does not even parse is not written
    defined = _names(code, ("STORE_NAME", "STORE_GLOBAL", "IMPORT_NAME"), nested=False)
    used = _names(code, ("LOAD_GLOBAL", "LOAD_NAME"), nested=True)
    missing = sorted(used - defined - set(vars(builtins)) - {"__name__"})
    if missing:
        raise ValueError(
            f"{cls.__name__} uses {', '.join(missing)}, which the file would not define: "
            "put what it needs inside the class, or import it there"
        )
    path.write_text(source, encoding="utf-8")
    return path


def _names(code: CodeType, opnames: tuple[str, ...], nested: bool) -> set[str]:
    """The names the instructions ``opnames`` of ``code`` (and of the code inside it,
    if ``nested``) take; an import of ``a.b`` defines ``a``."""
    names = {
        str(i.argval).split(".")[0]
        for i in dis.get_instructions(code)
        if i.opname in opnames and isinstance(i.argval, str)
    }
    if nested:
        for const in code.co_consts:
            if isinstance(const, CodeType):
                names |= _names(const, opnames, nested)
    return names

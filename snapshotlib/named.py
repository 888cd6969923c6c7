"""Objects named on a command line or in a file as ``MODULE:NAME`` or ``FILE.py:NAME``.

What a learner writes lives in their own files: an invariant for ``snapshotlib
search``, an algorithm class for the live lab. Either way it is named by where it is
and what it is called, and loaded here, with an error that says which part is wrong.
A name read in another process (a live node) must mean the same there: see
:func:`portable`.

Standard library only.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path


class NamedObjectError(ValueError):
    """A ``MODULE:NAME`` that cannot be loaded, saying why."""


def split(reference: str, what: str) -> tuple[str, str]:
    """(where, name) of ``reference``; :class:`NamedObjectError` naming ``what`` when it
    is not of the form ``MODULE:NAME`` or ``FILE.py:NAME``."""
    where, sep, name = reference.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise NamedObjectError(
            f"{what} {reference!r}: expected MODULE:NAME or FILE.py:NAME (e.g. "
            "my_markers.py:MarkerRules)"
        )
    return where, name


def portable(reference: str, base: Path, what: str = "name") -> tuple[str, str]:
    """``reference`` as another process started elsewhere loads it: a file's path made
    absolute against ``base``, and the folder a module is imported from (``base``)."""
    where, name = split(reference, what)
    if where.endswith(".py"):
        return f"{(base / where).resolve()}:{name}", ""
    return reference, str(base.resolve())


def load(reference: str, what: str, search_path: str = "") -> object:
    """The object ``reference`` names. A module is imported with ``search_path`` (or the
    working folder) first on ``sys.path``; a ``.py`` file is run as a module of its own,
    its folder on ``sys.path`` (for the modules beside it it imports).
    :class:`NamedObjectError` says which part failed, and how."""
    where, name = split(reference, what)
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise NamedObjectError(f"{what} {reference!r}: there is no file {where}")
            folder = str(path.resolve().parent)  # its own modules beside it import too
            if folder not in sys.path:
                sys.path.insert(0, folder)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise NamedObjectError(f"{what} {reference!r}: {where} cannot be loaded")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            folder = search_path or str(Path.cwd())
            if folder not in sys.path:
                sys.path.insert(0, folder)
            module = importlib.import_module(where)
    except NamedObjectError:
        raise
    except Exception as e:  # the learner's module itself failed: say how
        raise NamedObjectError(
            f"{what} {reference!r}: cannot load {where}: {type(e).__name__}: {e}"
        ) from None
    found = getattr(module, name, None)
    if found is None:
        raise NamedObjectError(f"{what} {reference!r}: {where} has no {name}")
    return found

"""The example scenarios and sweep configurations that ship inside the package, found by
name from any folder: ``snapshotlib run worked-example``, ``load_scenario("token-ring")``,
``snapshotlib sweep small --local``.

A name is looked up only when no file of that name exists, so a learner's own
``token-ring.json`` beside them still wins over the shipped one.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

#: the course's example scenarios (``examples/scenarios/`` in the repository)
SCENARIOS = Path(str(resources.files("snapshotlib") / "examples" / "scenarios"))
#: the course's sweep configurations (``examples/sweeps/`` in the repository)
SWEEPS = Path(str(resources.files("snapshotlib") / "examples" / "sweeps"))

_SUFFIX = {SCENARIOS: ".json", SWEEPS: ".toml"}


def _bare_name(path: Path) -> bool:
    """A name with no folder in it and no file of its own: one to look up."""
    return path.parent == Path(".") and not path.exists()


def names(folder: Path) -> list[str]:
    """The shipped examples of one kind (:data:`SCENARIOS` or :data:`SWEEPS`), by name."""
    return sorted(p.stem for p in folder.glob(f"*{_SUFFIX[folder]}"))


def find(given: str | Path, folder: Path) -> Path:
    """The file ``given`` names: the file itself if it exists, else the shipped example
    of that name in ``folder`` (with or without its suffix). A path that names neither
    comes back unchanged, for the reader to say it cannot be read."""
    path = Path(given)
    if not _bare_name(path):
        return path
    for candidate in (folder / path.name, folder / f"{path.name}{_SUFFIX[folder]}"):
        if candidate.is_file():
            return candidate
    return path


def not_shipped(path: Path) -> str:
    """What to add to "cannot read" for a bare name that is no shipped example either."""
    if not _bare_name(path):
        return ""
    return " (no such file here, nor a shipped example: `snapshotlib examples` lists them)"


def scenario_lines() -> list[str]:
    """One line per shipped scenario: its name and the first sentence of its description."""
    lines = []
    for name in names(SCENARIOS):
        try:
            about = str(json.loads((SCENARIOS / f"{name}.json").read_text("utf-8"))["description"])
        except (OSError, ValueError, KeyError):
            about = ""
        about = about.split(". ")[0].rstrip(".")
        lines.append(f"  {name:<30} {about if len(about) <= 70 else about[:69] + '…'}")
    return lines

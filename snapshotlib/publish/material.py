"""Where the course's files are: in a source checkout, its folders; in an installed
wheel, the copy the build put inside the package (``snapshotlib/_course``).

Learner material only ever ships in the wheel: lessons, glossary, errata, reading list,
exercises in learner form, example scenarios and sweeps, the JupyterLab settings. Solutions and
hidden tests exist only in the staff's checkout (``solutions/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..shipped import SCENARIOS, SWEEPS

PACKAGE = Path(__file__).resolve().parents[1]
#: where the wheel's build copies the learner material (setup.py)
IN_WHEEL = PACKAGE / "_course"


class MaterialError(RuntimeError):
    """The course's files are not where they should be."""


@dataclass(frozen=True)
class Material:
    """The folders of one copy of the course."""

    notebooks: Path  # lessons, glossary, errata, reading list
    exercises: Path  # learner form
    jupyter: Path  # overrides.json: the course's JupyterLab settings
    checkout: Path | None  # the staff's source checkout, if this is one

    def learner_files(self) -> dict[str, Path]:
        """Every file of the learner's course, by its place in a course folder."""
        files = {f"notebooks/{p.name}": p for p in sorted(self.notebooks.glob("*.ipynb"))}
        # how the lessons look on RISE's slides (RISE reads it beside the notebooks)
        files |= {f"notebooks/{p.name}": p for p in sorted(self.notebooks.glob("*.css"))}
        files |= {f"exercises/{p.name}": p for p in sorted(self.exercises.glob("*.ipynb"))}
        # the examples ship as package data in a checkout and a wheel alike
        files |= {f"examples/scenarios/{p.name}": p for p in sorted(SCENARIOS.glob("*.json"))}
        files |= {f"examples/sweeps/{p.name}": p for p in sorted(SWEEPS.glob("*.toml"))}
        files["jupyter/overrides.json"] = self.jupyter / "overrides.json"
        return files


def checkout() -> Path | None:
    """The source checkout this package runs from (an editable install), if it is one."""
    root = PACKAGE.parent
    if (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir():
        return root
    return None


def material() -> Material:
    """The course's files, from the checkout when running from one, else from the wheel."""
    root = checkout()
    if root is not None:
        return Material(root / "notebooks", root / "exercises", root / "jupyter", root)
    if (IN_WHEEL / "notebooks").is_dir():
        return Material(IN_WHEEL / "notebooks", IN_WHEEL / "exercises", IN_WHEEL / "jupyter",
                        None)  # fmt: skip
    raise MaterialError(
        f"the course's lessons are not in this installation ({IN_WHEEL} is missing): "
        "install snapshotlib from its wheel or a source checkout"
    )

"""Helpers shared by several test modules."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from snapshotlib import Simulator


def whole(sim: Simulator) -> tuple[Any, ...]:
    """Everything observable about a run: the whole trace, states, queues and snapshots."""
    t = sim.trace
    return (
        list(t.actions),
        list(t.messages),
        list(t.received_by),
        dict(sim.states),
        [list(q) for q in sim.queues],
        sim.snapshots(),
    )


ROOT = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    """Whether the tests run under CI, where nothing may be skipped for lack of a tool."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_otter(what: str) -> None:
    """Skip ``what`` without otter-grader locally; fail under CI, which must not skip."""
    if importlib.util.find_spec("otter") is None:
        reason = "needs otter-grader (pip install -e '.[grading]')"
        if in_ci():
            pytest.fail(f"{reason}; CI is set, so {what} may not be skipped", pytrace=False)
        pytest.skip(reason)


def make_exercises_tool() -> Any:
    """``tools/make_exercises.py`` as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "make_exercises", ROOT / "tools" / "make_exercises.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fill_in(exercise: dict[str, Any], answers: dict[str, str]) -> dict[str, Any]:
    """A copy of the notebook ``exercise`` with each code cell that starts with a key of
    ``answers`` replaced by its value, as a learner's submission; every key must match."""
    nb: dict[str, Any] = json.loads(json.dumps(exercise))
    used = set()
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        for start, answer in answers.items():
            if cell["cell_type"] == "code" and source.startswith(start):
                cell["source"] = answer.strip("\n")
                used.add(start)
    assert used == set(answers), f"no answer cell starts with {set(answers) - used}"
    return nb

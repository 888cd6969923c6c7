"""The learner edition of the engine: what an exercise asks a learner to write is absent
from the package a graded submission runs against, whichever way it is reached; the
rest of the engine is the real one (snapshotlib.grading.edition)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from snapshotlib.course.exercises import rules_for
from snapshotlib.grading.edition import EditionError, build, defined_at, refused_targets, without

EXERCISES = [
    p.stem.split("_")[0] for p in (Path(__file__).parents[1] / "solutions").glob("[0-9]*.ipynb")
]


def in_edition(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter that has the edition in ``folder`` on its path."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"}, cwd=folder, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def edition01(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(refused_targets("01"), tmp_path_factory.mktemp("edition01"))


@pytest.mark.parametrize(
    "reach",
    [
        "from snapshotlib.checks import check_frontier as f",  # re-exported
        "from snapshotlib.checks.cut import check_frontier as f",  # where it is defined
        "import snapshotlib.course.lesson_01 as m; f = m.offending_messages",
        "import importlib; f = getattr(importlib.import_module('snapshotlib.' + 'checks'), "
        "'check_' + 'frontier')",  # a name built at run time
        "import importlib, snapshotlib.checks.cut as c; importlib.reload(c); f = c.check_frontier",
        "import snapshotlib.checks.cut as c, types; f = types.FunctionType("
        "c.check_frontier.__code__, c.__dict__)",  # rebuilt from its code object
    ],
)
def test_a_refused_function_is_absent_whichever_way_it_is_reached(
    edition01: Path, reach: str
) -> None:
    done = in_edition(
        edition01,
        f"""
        {reach}
        from snapshotlib.workloads import random_execution, ring
        sim = random_execution(ring(3), seed=1, n_actions=10)
        try:
            f(sim.trace, {{"P1": 1, "P2": 1, "P3": 1}})
        except Exception as e:
            print(type(e).__name__, e)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert "NotInThisExercise" in done.stdout and "asks you to write it" in done.stdout


def test_the_rest_of_the_engine_is_the_real_one(edition01: Path) -> None:
    from snapshotlib.course.lesson_01 import describe_execution
    from snapshotlib.workloads import random_execution, ring

    done = in_edition(
        edition01,
        """
        import snapshotlib
        from snapshotlib.course.lesson_01 import describe_execution
        from snapshotlib.workloads import random_execution, ring
        print(snapshotlib.__file__)
        print(describe_execution(random_execution(ring(3), seed=1, n_actions=10)))
        """,
    )
    assert done.returncode == 0, done.stderr
    where, told = done.stdout.split("\n", 1)
    assert where.startswith(str(edition01))
    assert told.strip() == describe_execution(random_execution(ring(3), seed=1, n_actions=10))


def test_a_refused_class_cannot_be_made_or_built_on(tmp_path: Path) -> None:
    folder = build(refused_targets("02"), tmp_path)
    done = in_edition(
        folder,
        """
        from snapshotlib.algorithms import ChandyLamport, ALGORITHMS
        print(ChandyLamport.name)  # its plain data stays: the engine reads it at import
        for attempt in ("ChandyLamport()", "type('Mine', (ChandyLamport,), {})"):
            try:
                eval(attempt)
            except Exception as e:
                print(type(e).__name__)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["chandy-lamport", "NotInThisExercise", "NotInThisExercise"]


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_every_exercises_edition_imports_and_holds_none_of_what_it_refuses(
    exercise: str, tmp_path: Path
) -> None:
    targets = refused_targets(exercise)
    folder = build(targets, tmp_path)
    for target in targets:
        module, qualname = defined_at(target)
        source = (folder / Path(*module.split("."))).with_suffix(".py").read_text()
        assert f"snapshotlib.absent.refuse({module + ':' + qualname!r})" in source or (
            f"refuse_subclass({module + ':' + qualname!r}" in source
        ), target
    imports = "".join(f"import {t.partition(':')[0]}\n" for t in targets) or "import snapshotlib\n"
    done = in_edition(folder, imports)
    assert done.returncode == 0, done.stderr
    assert rules_for(exercise) is not None or not targets


def test_a_target_that_is_not_defined_is_an_error() -> None:
    with pytest.raises(EditionError, match="no function or class"):
        without("def f():\n    pass\n", ["snapshotlib.m:g"])
    with pytest.raises(EditionError, match="has no 'nothing'"):
        defined_at("snapshotlib.checks:nothing")


@pytest.mark.parametrize("number", range(1, 17))
def test_the_sandbox_is_handed_no_refused_function_and_no_answer(number: int) -> None:
    """What the grader computes for a sandbox (each precomputed setup, for the learner's
    variant) is handed to it as data that any code there can read. So no refused
    function may be precomputed (a stand-in would still return what it was handed), and
    a setup hands over the run, never what the tests compare answers with."""
    import json

    from snapshotlib.course.exercises.precomputed import compute, key_of, setups

    rules = rules_for(f"{number:02d}")
    assert rules is not None
    refused = {t for targets in rules.REFUSE.values() for t in targets}
    for setup in setups(rules):
        assert key_of(setup) not in refused, key_of(setup)
    handed = json.dumps(compute(rules, 7 if rules.VARIANT else None))
    truths = {"times", "misleading", "line", "registry", "expected", "answer"}
    leaked = [t for t in truths if f'"{t}"' in handed]
    assert not leaked, f"exercise {number} hands the sandbox {leaked}"

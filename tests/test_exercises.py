"""The graded exercises: exercises/ is generated from solutions/, leaks nothing, grades right.

Each check runs ``otter assign`` or the grader (a few seconds each), so the module is
marked slow. Without otter-grader (the ``grading`` extra) it is skipped locally and
fails under CI, which must not skip.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support import fill_in, make_exercises_tool, require_otter

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
NAMES = sorted(p.stem for p in SOLUTIONS.glob("[0-9]*.ipynb"))

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _needs_otter() -> None:
    require_otter("exercise tests")


@pytest.fixture(scope="module")
def built(built_exercises: Mapping[str, dict[str, Path]]) -> Mapping[str, dict[str, Path]]:
    return built_exercises


#: who every submission here is, as course staff would say (the solution's learner id)
LEARNER = "solution"


def graded_scores(notebook: Path, autograder: Path, learner: str = LEARNER) -> dict[str, float]:
    """Grade ``notebook`` as ``snapshotlib grade`` does (its cells in a sandbox, every test
    in the grader's own process on its answers as data), as the work of ``learner``;
    score per question."""
    from snapshotlib.grading.runner import grade_one

    result = grade_one(notebook, autograder, learner_id=learner)
    assert result.status == "ok", result.detail
    return {t.test: t.score for t in result.scores}


def solution_lines(name: str) -> list[str]:
    """The distinctive lines of a solution notebook's answers: inside ``# BEGIN SOLUTION``
    ... ``# END SOLUTION`` comment blocks, and lines marked ``# SOLUTION``."""
    nb = json.loads((SOLUTIONS / f"{name}.ipynb").read_text())
    lines = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        inside = False
        for line in "".join(cell["source"]).splitlines():
            if re.match(r"\s*# END SOLUTION", line):
                inside = False
            elif re.match(r"\s*# BEGIN SOLUTION", line):
                inside = True
            elif inside or re.search(r"# SOLUTION\s*$", line):
                line = re.sub(r"\s*# SOLUTION\s*$", "", line).strip()
                if len(line) > 12 and line not in ("return None",):
                    lines.append(line)
    return lines


def test_there_are_exercises() -> None:
    assert NAMES, "no solutions/NN_*.ipynb"
    assert sorted(p.stem for p in EXERCISES.glob("*.ipynb")) == NAMES, (
        "exercises/ and solutions/ hold different notebooks: run `make exercises`"
    )


@pytest.mark.parametrize("name", NAMES)
def test_every_refused_engine_name_exists(name: str) -> None:
    """A refusal that names nothing would let the engine's own code run unseen while an
    answer runs: each ``module:qualname`` of an exercise's REFUSE must resolve."""
    import importlib

    from snapshotlib.course.exercises import rules_for

    rules = rules_for(name)
    for answer, targets in (getattr(rules, "REFUSE", None) or {}).items():
        for target in targets:
            module, _, qualname = target.partition(":")
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                assert hasattr(obj, part), f"{name}: REFUSE[{answer!r}] names {target}, absent"
                obj = getattr(obj, part)


@pytest.mark.parametrize("name", NAMES)
def test_exercise_is_up_to_date_with_its_solution(
    name: str, built: Mapping[str, dict[str, Path]]
) -> None:
    committed = json.loads((EXERCISES / f"{name}.ipynb").read_text())
    fresh = json.loads(built[name]["student"].read_text())
    assert committed == fresh, f"exercises/{name}.ipynb is stale: run `make exercises`"


@pytest.mark.parametrize("name", NAMES)
def test_no_solution_or_hidden_test_under_exercises(
    name: str, built: Mapping[str, dict[str, Path]]
) -> None:
    hidden = make_exercises_tool().hidden_test_names(built[name]["zip"])
    secrets = solution_lines(name)
    assert secrets, "nothing to look for: the search would prove nothing"
    for path in EXERCISES.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for line in secrets:
            assert line not in text and json.dumps(line)[1:-1] not in text, (
                f"{path.relative_to(ROOT)} holds solution line {line!r}"
            )
        for test in hidden:
            assert test not in text, f"{path.relative_to(ROOT)} holds hidden test {test}"


@pytest.mark.parametrize("name", NAMES)
def test_solution_scores_full_marks(name: str, built: Mapping[str, dict[str, Path]]) -> None:
    """Full marks, and every test passed: those of practice questions too, which carry no
    points."""
    from snapshotlib.grading.runner import grade_one

    result = grade_one(built[name]["solution"], built[name]["zip"], learner_id=LEARNER)
    assert result.status == "ok", result.detail
    assert {t.test: t.score for t in result.scores} == expected(name)["full_marks"]
    assert all(t.passed for t in result.scores), [t.message for t in result.scores]


@pytest.mark.parametrize("name", NAMES)
def test_unmodified_exercise_scores_zero(name: str, built: Mapping[str, dict[str, Path]]) -> None:
    scores = graded_scores(EXERCISES / f"{name}.ipynb", built[name]["zip"])
    assert scores == dict.fromkeys(expected(name)["full_marks"], 0.0)


# ------------------------------------------------------------- expectations
#
# solutions/NN_name.expected.json says what each exercise must score: full marks per
# question, and a hand-made wrong submission (answer cells replaced, matched by how
# they start) with the partial scores it must get and why.


def expected(name: str) -> dict[str, Any]:
    return json.loads((SOLUTIONS / f"{name}.expected.json").read_text())  # type: ignore[no-any-return]


def learner_id_cell(name: str) -> str | None:
    """The solution's ``learner_id = ...`` cell, if the exercise has variants."""
    nb = json.loads((SOLUTIONS / f"{name}.ipynb").read_text())
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return next((c for c in cells if c.startswith("learner_id")), None)


def fill_in_as_solution(exercise: Path, answers: dict[str, str], out: Path) -> Path:
    """The exercise with answer cells replaced and the solution's learner id (so that the
    answers are for the solution's variant), written to ``out``."""
    given = learner_id_cell(exercise.stem)
    if given is not None:
        answers = {"learner_id": given, **answers}
    nb = fill_in(json.loads(exercise.read_text()), answers)
    out.write_text(json.dumps(nb))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_wrong_submission_gets_partial_credit(
    name: str, built: Mapping[str, dict[str, Path]], tmp_path: Path
) -> None:
    wrong = expected(name)["wrong_submission"]
    submission = fill_in_as_solution(
        EXERCISES / f"{name}.ipynb", wrong["answers"], tmp_path / f"{name}.ipynb"
    )
    assert graded_scores(submission, built[name]["zip"]) == wrong["scores"]


@pytest.mark.parametrize("name", [n for n in NAMES if learner_id_cell(n) is not None])
def test_answers_of_another_learner_do_not_score(
    name: str, built: Mapping[str, dict[str, Path]], tmp_path: Path
) -> None:
    """Each learner's variant has runs of its own: the solution's answers, submitted under
    another learner's id, lose marks (the grader derives the variant from the id), or, where
    the questions about the learner's own runs are practice (no marks to lose), fail
    their tests all the same."""
    from snapshotlib.grading.runner import grade_one

    nb = json.loads(built[name]["solution"].read_text())
    for cell in nb["cells"]:
        if "".join(cell["source"]).startswith("learner_id"):
            cell["source"] = 'learner_id = "another-learner"'
    other = tmp_path / f"{name}.ipynb"
    other.write_text(json.dumps(nb))
    result = grade_one(other, built[name]["zip"], learner_id="another-learner")
    assert result.status == "ok", result.detail
    lost = sum(t.score for t in result.scores) < sum(expected(name)["full_marks"].values())
    assert lost or not all(t.passed for t in result.scores)


# ------------------------------------------------------- forged search reports
#
# Exercise 2's searches run the learner's class in the sandbox and send back a report,
# which the grader compares with the engine's. A submission may replace the function
# that makes the report (here in the cell after its class, which is not part of the
# answer's code): whatever it sends back, it earns what its class earns, and the engine's
# own class is not there to search in its place.
_FORGE = (
    "\nimport snapshotlib.course.exercises.searching as searching\n"
    "_real = searching.search_report\n"
)
FORGED_SEARCHES = {
    # the engine's own class searched in place of the learner's: an exact report (its
    # refusal also shows that the replaced function is the one the grader's calls reach)
    "engine_in_place": _FORGE + "import dataclasses\n"
    "from snapshotlib.algorithms.chandy_lamport import ChandyLamport\n"
    "searching.search_report = lambda system, max_states=60_000: _real(\n"
    "    dataclasses.replace(system, algorithm=ChandyLamport), max_states)\n",
    # a made-up report for each search, in turn: all is well (with no outcome), and
    # shapes the grader's comparison could trip over
    "made_up": _FORGE + "import itertools\n"
    "_lies = itertools.cycle([\n"
    "    {'error': None, 'ok': True, 'exhaustive': True, 'invariant': None, 'reason': None,\n"
    "     'steps': [], 'states': 1, 'outcomes': [], 'control': 'marker'},\n"
    "    [1, 2], {'ok': True, 'exhaustive': True, 'outcomes': 5},\n"
    "    {'error': None, 'ok': False, 'exhaustive': True, 'invariant': 'x', 'reason': 'y',\n"
    "     'steps': [{'do': 5}, 'z'], 'states': 1, 'outcomes': [], 'control': 'marker'}])\n"
    "searching.search_report = lambda system, max_states=60_000: next(_lies)\n",
}


@pytest.mark.parametrize("forgery", sorted(FORGED_SEARCHES))
def test_a_forged_search_report_earns_nothing(
    forgery: str, built: Mapping[str, dict[str, Path]], tmp_path: Path
) -> None:
    name = next(n for n in NAMES if n.startswith("02_"))
    wrong = expected(name)["wrong_submission"]
    answers = dict(wrong["answers"])
    second = next(k for k in answers if not k.startswith("class MarkerRules"))
    answers[second] += FORGED_SEARCHES[forgery]
    submission = fill_in_as_solution(
        EXERCISES / f"{name}.ipynb", answers, tmp_path / f"{name}.ipynb"
    )
    from snapshotlib.grading.runner import grade_one

    result = grade_one(submission, built[name]["zip"], learner_id=LEARNER)
    assert result.status == "ok", result.detail
    got = {t.test: t.score for t in result.scores}
    if forgery == "engine_in_place":
        # the engine's class is absent from the submission's engine: the search fails
        assert got["q1"] <= wrong["scores"]["q1"] and got["q2"] == wrong["scores"]["q2"]
        q1 = next(t.message for t in result.scores if t.test == "q1")
        assert "NotInThisExercise" in q1, q1
    else:
        assert got == wrong["scores"]


# ------------------------------------------------------- learner data beyond the limits
#
# Where a test runs the engine on what a learner wrote, learner-sized data would keep the
# grader busy for minutes (a scenario of 100 fully connected processes took 163 s before
# the limits): it is refused, saying what the limit is, before any test plays it.
_HUGE_SCENARIO = {
    "processes": [f"P{i}" for i in range(1, 101)],
    "fifo": False,
    "app": "tokens",
    "initial": {f"P{i}": 5 for i in range(1, 101)},
    "steps": [{"do": "snapshot", "at": "P1", "id": "s1"},
              *({"do": "send", "from": f"P{i}", "to": f"P{j}", "payload": 1}
                for i in range(1, 101) for j in range(1, 4) if i != j),
              {"do": "run"}],
}  # fmt: skip
_HUGE_JOB = (
    "two_logged_edges = {'operators': [[f'O{i}', 'map', list(range(1000))] for i in range(200)],\n"
    "                    'edges': [[f'O{i}', f'O{i + 1}'] for i in range(199)]}\n"
)
LEARNER_DATA = {
    "04_never_occurred": ("my_scenario", f"my_scenario = {_HUGE_SCENARIO!r}", "q1"),
    "06_break_it": ("my_scenario", f"my_scenario = {_HUGE_SCENARIO!r}", "q1"),
    "07_barrier_alignment": ("two_logged_edges", _HUGE_JOB, "q3"),
    "15_recovery_line": ("my_run", f"my_run = {_HUGE_SCENARIO!r}\nmy_checkpoints = {{}}", "q2"),
}


@pytest.mark.parametrize("name", sorted(LEARNER_DATA))
def test_learner_data_far_beyond_the_questions_limits_is_refused_before_it_is_played(
    name: str, built: Mapping[str, dict[str, Path]], tmp_path: Path
) -> None:
    from snapshotlib.grading.runner import grade_one

    start, cell, question = LEARNER_DATA[name]
    submission = fill_in_as_solution(EXERCISES / f"{name}.ipynb", {start: cell},
                                     tmp_path / f"{name}.ipynb")  # fmt: skip
    result = grade_one(submission, built[name]["zip"], learner_id=LEARNER)
    assert result.status == "ok", result.detail
    score = next(s for s in result.scores if s.test == question)
    assert score.score == 0.0
    assert re.search(r"at most \d+|keep it to \d+", score.message), score.message

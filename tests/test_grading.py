"""`snapshotlib grade`: a folder of submissions graded with otter run, hostile ones contained.

Runs ``otter run`` once per submission (two at a time, about ten seconds each), so the module
is marked slow. Without otter-grader it is skipped locally and fails under CI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import make_exercises_tool, require_otter

ROOT = Path(__file__).resolve().parents[1]
NAME = "01_is_this_cut_consistent"
SOLUTION = ROOT / "solutions" / f"{NAME}.ipynb"
EXPECTED = json.loads((ROOT / "solutions" / f"{NAME}.expected.json").read_text())
WRONG = EXPECTED["wrong_submission"]
Q1, Q2 = "def offending_message", "smallest_cut_with_c3"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _needs_otter() -> None:
    require_otter("grading tests")


def fill_in(exercise: dict[str, Any], answers: dict[str, str]) -> dict[str, Any]:
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


def answer_cell(nb: dict[str, Any], start: str) -> str:
    return next(
        "".join(c["source"]) for c in nb["cells"]
        if c["cell_type"] == "code" and "".join(c["source"]).startswith(start)
    )  # fmt: skip


def hostile(first_cell: str) -> dict[str, str]:
    """The wrong submission (q1 3 points, q2 1 point) with its first answer cell hostile."""
    return {Q1: first_cell, Q2: WRONG["answers"][Q2]}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from snapshotlib.grading import grade

    work = tmp_path_factory.mktemp("grading")
    student, zipped = make_exercises_tool().make_exercise(
        SOLUTION, work / "exercises", work / "autograder", run_tests=False
    )
    make_exercises_tool().assign(SOLUTION, work / "dist", run_tests=False)
    solution = work / "dist" / "autograder" / f"{NAME}.ipynb"
    exercise = json.loads(student.read_text())
    outside = work / "outside"
    outside.mkdir()
    sentinel = outside / "sentinel.txt"
    sentinel.write_text("untouched\n")
    subs = work / "submissions"
    subs.mkdir()
    notebooks = {
        "solution": json.loads(solution.read_text()),
        "unmodified": exercise,
        "wrong": fill_in(exercise, WRONG["answers"]),
        "loop": fill_in(exercise, hostile("while True:\n    pass")),
        "stubborn_loop": fill_in(
            exercise,
            hostile(
                "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
            ),
        ),
        "memory": fill_in(
            exercise,
            hostile(
                "def hog():\n    blob = []\n    while True:\n"
                "        blob.append(bytearray(2**26))\nhog()"
            ),
        ),
        "exit": fill_in(exercise, hostile("import sys\nsys.exit(0)")),
        "deleter": fill_in(
            exercise,
            hostile(
                "import os, shutil, subprocess\n"
                "os.remove('submission.ipynb')\n"
                f"for p in [{str(sentinel)!r}, {str(subs / 'solution.ipynb')!r}]:\n"
                "    try:\n        os.remove(p)\n    except OSError as e:\n        print(e)\n"
                f"subprocess.run(['rm', '-rf', {str(outside)!r}, {str(subs)!r}])\n"
                f"open({str(outside / 'planted.txt')!r}, 'w').write('x')\n"
            ),
        ),
    }
    solution_q1 = answer_cell(notebooks["solution"], Q1)
    notebooks["reader"] = fill_in(
        exercise,
        hostile(
            "import os\nfound = []\n"
            # where the grader's copies are (scratch, temporary folders, the zip's folder,
            # the course), not other world-readable copies a machine may hold
            f"for top in ['/tmp', '/var/tmp', '/dev/shm', os.path.expanduser('~'), '..',\n"
            f"            '../..', {str(zipped.parent)!r}, {str(ROOT)!r}]:\n"
            "    for path, dirs, files in os.walk(top):\n"
            "        dirs[:] = [d for d in dirs if d != '.venv']\n"
            "        found += [f for f in files if f in ('q1.py', 'q2.py')\n"
            f"                  or f.endswith('.zip') and {NAME!r} in f]\n"
            f"if found:  # had it read a hidden test, it would answer q1 right\n"
            f"    exec({solution_q1!r})\n"
        ),
    )
    notebooks["escapee"] = fill_in(
        exercise,
        hostile(
            "import os, subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)'],\n"
            "                 start_new_session=True)\n"
            "while True:  # a fork bomb of sleepers, stopped by the process limit\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(900)\n"
            "        os._exit(0)\n"
        ),
    )
    notebooks["kernel_death"] = fill_in(exercise, hostile("import os\nos._exit(1)"))
    for name, nb in notebooks.items():
        (subs / f"{name}.ipynb").write_text(json.dumps(nb))
    before = sorted(p.name for p in subs.iterdir())
    out = work / "grades.csv"
    # Two at a time on CI's two cores: the limits below must hold for a fair submission
    # graded beside another, yet catch the loops (30 s a cell, 90 s a submission).
    book = grade(subs, NAME, out, autograder=zipped, timeout=90, cell_timeout=30,
                 memory_mb=1536, jobs=2)  # fmt: skip
    return {"book": book, "csv": out, "sentinel": sentinel, "outside": outside,
            "subs": subs, "before": before}  # fmt: skip


def scores(graded: dict[str, Any], name: str) -> dict[str, float]:
    return graded["book"].scores(f"{name}.ipynb")  # type: ignore[no-any-return]


def status(graded: dict[str, Any], name: str) -> str:
    return graded["book"].by_submission()[f"{name}.ipynb"].status  # type: ignore[no-any-return]


def test_solution_scores_full_marks(graded: dict[str, Any]) -> None:
    assert scores(graded, "solution") == EXPECTED["full_marks"]
    assert status(graded, "solution") == "ok"


def test_unmodified_exercise_scores_zero(graded: dict[str, Any]) -> None:
    assert scores(graded, "unmodified") == dict.fromkeys(EXPECTED["full_marks"], 0.0)


def test_wrong_submission_gets_partial_credit(graded: dict[str, Any]) -> None:
    assert scores(graded, "wrong") == WRONG["scores"]


@pytest.mark.parametrize("name", ["loop", "memory", "exit", "deleter", "reader", "escapee"])
def test_hostile_first_cell_loses_only_its_question(graded: dict[str, Any], name: str) -> None:
    result = graded["book"].by_submission()[f"{name}.ipynb"]
    assert result.status == "ok", result.detail
    assert scores(graded, name) == {"q1": 0.0, "q2": WRONG["scores"]["q2"]}


def test_a_dead_kernel_scores_nothing_and_says_why(graded: dict[str, Any]) -> None:
    result = graded["book"].by_submission()["kernel_death.ipynb"]
    assert result.status == "crashed"
    assert result.total == 0.0
    assert "DeadKernelError" in result.detail or "died" in result.detail, result.detail


def submission_processes() -> list[int]:
    """Processes running under a submission's own user id (see runner._UID_BASE)."""
    from snapshotlib.grading.runner import _UID_BASE

    left = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
        except (OSError, ValueError):
            continue  # ended meanwhile
        zombie = fields["State"].split()[0] == "Z"  # killed, waiting for init to reap it
        if int(fields["Uid"].split()[0]) >= _UID_BASE and not zombie:
            left.append(int(status.parent.name))
    return left


@pytest.mark.skipif(os.geteuid() != 0, reason="submissions get their own user id only as root")
def test_no_process_of_a_submission_outlives_it(graded: dict[str, Any]) -> None:
    # the escapee left a process in a session of its own and many forked sleepers
    assert submission_processes() == []


def test_looping_cell_is_interrupted(graded: dict[str, Any]) -> None:
    assert graded["book"].by_submission()["loop.ipynb"].cell_timeouts >= 1


def test_loop_ignoring_interrupts_is_killed_at_the_time_limit(graded: dict[str, Any]) -> None:
    result = graded["book"].by_submission()["stubborn_loop.ipynb"]
    assert result.status == "timeout"
    assert result.total == 0.0
    assert result.seconds < 105


def test_nothing_outside_the_scratch_folder_changes(graded: dict[str, Any]) -> None:
    assert graded["sentinel"].read_text() == "untouched\n"
    assert sorted(p.name for p in graded["outside"].iterdir()) == ["sentinel.txt"]
    assert sorted(p.name for p in graded["subs"].iterdir()) == graded["before"]


@pytest.mark.skipif(os.geteuid() != 0, reason="writes outside are only contained as root")
def test_deleter_could_not_write_outside(graded: dict[str, Any]) -> None:
    assert not (graded["outside"] / "planted.txt").exists()


def test_csv_has_a_row_per_submission_and_test_with_totals(graded: dict[str, Any]) -> None:
    import csv

    rows = list(csv.DictReader(graded["csv"].open()))
    assert len(rows) == len(graded["before"]) * 3
    total = next(r for r in rows if r["submission"] == "solution.ipynb" and r["test"] == "TOTAL")
    assert float(total["score"]) == sum(EXPECTED["full_marks"].values())


def test_cli_rejects_a_missing_autograder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from snapshotlib.cli import main

    (tmp_path / "a.ipynb").write_text("{}")
    code = main(["grade", str(tmp_path), "--exercise", "99", "--out", str(tmp_path / "g.csv")])
    assert code == 2
    assert "no exercise 99" in capsys.readouterr().err


def test_cli_rejects_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from snapshotlib.cli import main

    code = main(["grade", str(tmp_path / "nope"), "--exercise", "1", "--out", "g.csv"])
    assert code == 2
    assert "no such folder" in capsys.readouterr().err

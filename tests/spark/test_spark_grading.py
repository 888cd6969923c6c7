"""`snapshotlib grade --spark`: a Spark task per submission (local[2]), graded with the local
grader's limits and sandbox; the same gradebook as the local grader, as CSV and Parquet;
the attacks on the grader score what their answers earn beside the honest solution, and
hostile submissions and a lost worker cost only their own submission.

Grades two dozen submissions, some of which run into their CPU limits, so the module is
marked slow. Without otter-grader, pyspark or Java it is skipped locally and fails under CI.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_support import need
from support import fill_in, make_exercises_tool, require_otter
from test_grading import (
    STUB,
    attacks,
    ipc_keys_left,
    submission_processes,
    unpickling_listeners,
    with_learner_id,
)

from snapshotlib.cli import main
from snapshotlib.grading import GradingError, grade

pq = need("pyarrow.parquet")
spark_grading = need("snapshotlib.spark.grading")

ROOT = Path(__file__).resolve().parents[2]
NAME = "01_is_this_cut_consistent"
SOLUTION = ROOT / "solutions" / f"{NAME}.ipynb"
EXPECTED = json.loads((ROOT / "solutions" / f"{NAME}.expected.json").read_text())
WRONG = EXPECTED["wrong_submission"]
Q1, Q2 = list(WRONG["answers"])  # the answer cells of q1 and q2, by how they start
# CPU limits for work (a busy machine slows a fair submission down but does not make it
# use more CPU time), and a wall-clock backstop far beyond what a fair one needs.
LIMITS = {"cpu_seconds": 20, "cell_cpu": 5, "timeout": 600, "memory_mb": 1536}
#: the submission whose Spark worker the test kills while it is graded
DOOMED_MARK = "doomed-submission-runs"
DOOMED = (
    "# snapshotlib test: this submission's Spark worker is killed\n"
    f"open({DOOMED_MARK!r}, 'w').close()\nimport time\ntime.sleep(20)"
)
#: the attack classes also graded on Spark, beside the honest solution
ATTACKS = ("hooks", "runner_patch", "service", "ipc", "disk_and_files")
#: who each submission is, as course staff say: all answer for the solution's learner
ROSTER = {
    f"{name}.ipynb": "solution"
    for name in ("solution", "wrong", "stubborn_loop", "kernel_death", "stub", "doomed", *ATTACKS)
}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _needs_otter() -> None:
    require_otter("Spark grading tests")


def answer_cell(nb: dict[str, Any], start: str) -> str:
    return next(
        "".join(c["source"]) for c in nb["cells"]
        if c["cell_type"] == "code" and "".join(c["source"]).startswith(start)
    )  # fmt: skip


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The exercise built as `make exercises` does, and two folders of submissions."""
    work = tmp_path_factory.mktemp("spark-grading")
    student, zipped = make_exercises_tool().make_exercise(
        SOLUTION, work / "exercises", work / "build" / "autograder", run_tests=False
    )
    exercise = with_learner_id(json.loads(student.read_text()))
    source = json.loads(SOLUTION.read_text())
    right = {q: answer_cell(source, q) for q in (Q1, Q2)}
    stubborn = (
        "import signal\nfor s in (signal.SIGINT, signal.SIGPROF):\n"
        "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass"
    )
    listeners = unpickling_listeners(work)
    ctx = listeners.__enter__()
    ctx["solution_q1"] = right[Q1]
    hostile = {k: v for k, v in attacks(exercise, ctx).items() if k in ATTACKS}
    folders = {
        "subs": {
            "solution": fill_in(exercise, right),
            "wrong": fill_in(exercise, WRONG["answers"]),
            "stubborn_loop": fill_in(exercise, {Q1: stubborn, Q2: WRONG["answers"][Q2]}),
            "kernel_death": fill_in(exercise, {Q1: "import os\nos._exit(1)"}),
            "stub": fill_in(exercise, {Q1: STUB, Q2: WRONG["answers"][Q2]}),
            **hostile,
        },
        "lost": {
            "solution": fill_in(exercise, right),
            "doomed": fill_in(exercise, {Q1: f"{DOOMED}\n{right[Q1]}", Q2: right[Q2]}),
        },
    }
    for folder, notebooks in folders.items():
        (work / folder).mkdir()
        for name, nb in notebooks.items():
            (work / folder / f"{name}.ipynb").write_text(json.dumps(nb))
    try:
        yield {"dir": work, "zip": zipped, "subs": work / "subs", "lost": work / "lost",
               "ctx": ctx}  # fmt: skip
    finally:
        listeners.__exit__(None, None, None)


@pytest.fixture(scope="module")
def local(work: dict[str, Any]) -> Any:
    """The reference: the local grader, two at a time."""
    out = work["dir"] / "local" / "grades.csv"
    out.parent.mkdir()
    return grade(work["subs"], NAME, out, autograder=work["zip"], jobs=2, roster=ROSTER, **LIMITS)


@pytest.fixture(scope="module")
def on_spark(work: dict[str, Any], spark: Any) -> Any:
    out = work["dir"] / "spark" / "grades.csv"
    out.parent.mkdir()
    return spark_grading.grade_on_spark(
        work["subs"], NAME, out, autograder=work["zip"], spark=spark, roster=ROSTER, **LIMITS
    )


def outcome(book: Any) -> list[tuple[Any, ...]]:
    return [(r.submission, r.status, r.scores, r.cell_timeouts) for r in book.results]


def test_spark_grades_every_submission_as_the_local_grader_does(local: Any, on_spark: Any) -> None:
    assert (on_spark.exercise, on_spark.tests) == (local.exercise, local.tests)
    assert outcome(on_spark) == outcome(local)
    assert on_spark.scores("solution.ipynb") == EXPECTED["full_marks"]
    assert on_spark.scores("wrong.ipynb") == WRONG["scores"]


def test_a_loop_ignoring_interrupts_is_stopped_by_its_cpu_limit_in_its_task(
    on_spark: Any,
) -> None:
    result = on_spark.by_submission()["stubborn_loop.ipynb"]
    assert (result.status, result.total) == ("cpu-limit", 0.0), result.detail


@pytest.mark.parametrize("name", ATTACKS)
def test_an_attack_scores_what_its_answers_earn_on_spark(on_spark: Any, name: str) -> None:
    stub = on_spark.scores("stub.ipynb")
    assert stub["q1"] < EXPECTED["full_marks"]["q1"]
    assert on_spark.by_submission()[f"{name}.ipynb"].status == "ok"
    assert on_spark.scores(f"{name}.ipynb") == stub


def test_no_service_of_the_spark_grader_was_reached(work: dict[str, Any], on_spark: Any) -> None:
    if os.geteuid() != 0:
        pytest.skip("submissions get a network namespace of their own only as root")
    assert work["ctx"]["received"] == []
    assert not work["ctx"]["planted"].exists()


def test_a_dead_kernel_is_reported_crashed_by_its_task(on_spark: Any) -> None:
    result = on_spark.by_submission()["kernel_death.ipynb"]
    assert (result.status, result.total) == ("crashed", 0.0)
    assert "process ended" in result.detail, result.detail


def test_the_csv_is_the_local_graders_and_the_parquet_holds_the_same_rows(
    work: dict[str, Any], local: Any, on_spark: Any
) -> None:
    written = work["dir"] / "spark" / "grades.csv"
    assert written.read_text() == (work["dir"] / "local" / "grades.csv").read_text()
    rows = list(csv.DictReader(written.open()))
    assert len(rows) == len(on_spark.results) * (len(on_spark.tests) + 1)
    parquet = pq.read_table(spark_grading.parquet_path(written))
    assert parquet.column_names == [name for name, _ in spark_grading.COLUMNS]
    assert parquet.to_pylist() == on_spark.rows()
    as_text = [{k: str(v) for k, v in row.items()} for row in parquet.to_pylist()]
    assert as_text == rows


def test_a_task_that_cannot_grade_reports_crashed(tmp_path: Path) -> None:
    limits = {**LIMITS, "hide": [], "contain": True, "fsize_mb": 64, "workdir": str(tmp_path)}
    row = spark_grading.grade_bytes(0, "a.ipynb", b"{}", "x.zip", b"not a zip", limits)
    assert (row["submission"], row["status"]) == ("a.ipynb", "crashed")
    assert "not an otter autograder zip" in row["detail"]
    assert list(tmp_path.iterdir()) == []  # its temporary folder is gone


def test_a_missing_folder_is_a_grading_error(work: dict[str, Any], spark: Any) -> None:
    with pytest.raises(GradingError, match="no such folder"):
        spark_grading.grade_on_spark(work["dir"] / "nope", NAME, spark=spark)


# ------------------------------------------------------------- a lost worker, via the CLI


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan may wait for an init that does not reap)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class WorkerKiller(threading.Thread):
    """Kills the Spark Python worker whose task grades the notebook holding ``DOOMED``, as
    soon as its sandbox runs the doomed cell: a worker lost in the middle of a task."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.supervisor: int | None = None

    def run(self) -> None:
        while not self.stop.wait(0.1):
            for status in Path("/proc").glob("[0-9]*/cmdline"):
                try:
                    if b"snapshotlib.grading.sandboxed" not in status.read_bytes():
                        continue
                    pid = int(status.parent.name)
                    if not Path(f"/proc/{pid}/cwd/{DOOMED_MARK}").exists():
                        continue
                    supervisor = parent(pid)
                    worker = parent(supervisor)
                except (OSError, ValueError):
                    continue
                # the supervisor: the first process up from the sandbox whose parent is not
                # one of its own (the judging process it forks shares its command line)
                while b"snapshotlib.spark.grading" in cmdline(worker):
                    supervisor, worker = worker, parent(worker)
                # never anything but the worker of a Spark task grading the doomed notebook
                assert b"snapshotlib.spark.grading" in cmdline(supervisor)
                assert b"pyspark" in cmdline(worker) or b"pyspark" in cmdline(parent(worker))
                os.kill(worker, signal.SIGKILL)
                self.supervisor = supervisor
                return


@pytest.fixture(scope="module")
def lost(work: dict[str, Any], spark: Any) -> dict[str, Any]:
    """``snapshotlib grade --spark --master local[2]`` while the doomed one's worker dies."""
    out = work["dir"] / "cli" / "grades.csv"
    books = []

    def grade_on_spark(*args: Any, **kw: Any) -> Any:  # the CLI's, keeping its gradebook
        books.append(real(*args, **kw))
        return books[-1]

    real = spark_grading.grade_on_spark
    roster = work["dir"] / "roster.csv"
    roster.write_text("submission,learner_id\nsolution.ipynb,solution\ndoomed.ipynb,solution\n")
    argv = ["grade", str(work["lost"]), "--exercise", "1", "--out", str(out), "--roster",
            str(roster), "--timeout", str(LIMITS["timeout"]), "--spark",
            "--master", "local[2]"]  # fmt: skip
    killer = WorkerKiller()
    killer.start()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spark_grading, "grade_on_spark", grade_on_spark)
        mp.chdir(work["dir"])  # where build/autograder/ holds the exercise's zip
        try:
            code = main(argv)
        finally:
            killer.stop.set()
            killer.join()
    return {"code": code, "out": out, "book": books[0], "supervisor": killer.supervisor}


def test_the_cli_grades_on_spark_and_writes_csv_parquet_and_report(lost: dict[str, Any]) -> None:
    assert lost["code"] == 0
    out = lost["out"]
    for path in (out, out.with_suffix(".parquet"), out.with_name("grades-report.html")):
        assert path.is_file(), path
    rows = pq.read_table(out.with_suffix(".parquet")).to_pylist()
    assert [{k: str(v) for k, v in r.items()} for r in rows] == list(csv.DictReader(out.open()))
    solution = {r["test"]: r["score"] for r in rows if r["submission"] == "solution.ipynb"}
    assert solution == {**EXPECTED["full_marks"], "TOTAL": sum(EXPECTED["full_marks"].values())}


def test_a_lost_worker_costs_only_its_submission(lost: dict[str, Any]) -> None:
    assert lost["supervisor"] is not None, "the doomed submission's worker was not found"
    rows = list(csv.DictReader(lost["out"].open()))
    doomed = {r["test"]: (float(r["score"]), r["status"]) for r in rows
              if r["submission"] == "doomed.ipynb"}  # fmt: skip
    assert doomed == {"q1": (0.0, "crashed"), "q2": (0.0, "crashed"), "TOTAL": (0.0, "crashed")}
    detail = lost["book"].by_submission()["doomed.ipynb"].detail
    assert "its Spark task failed" in detail and "Python worker exited unexpectedly" in detail
    assert {r["status"] for r in rows if r["submission"] == "solution.ipynb"} == {"ok"}


def supervisor_ended(lost: dict[str, Any]) -> bool:
    """Whether the doomed one's supervisor ended, waiting for it up to its time limit."""
    deadline = time.monotonic() + LIMITS["timeout"] + 15
    while running(lost["supervisor"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not running(lost["supervisor"])


def test_the_grading_of_a_lost_task_still_ends_within_its_limits(lost: dict[str, Any]) -> None:
    # the supervisor outlives the worker, grades on within the limits and cleans up
    assert supervisor_ended(lost)


def test_nothing_of_a_submission_outlives_it(lost: dict[str, Any], on_spark: Any) -> None:
    if os.geteuid() != 0:
        pytest.skip("submissions get their own user id and namespaces only as root")
    assert supervisor_ended(lost)
    assert submission_processes() == []
    assert ipc_keys_left() == set()


def test_cli_rejects_a_master_that_is_not_a_spark_url(
    work: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work["dir"])
    code = main(["grade", str(work["lost"]), "--exercise", "1", "--out", "g.csv",
                 "--master", "localhost"])  # fmt: skip
    assert code == 2
    assert "not a Spark master" in capsys.readouterr().err

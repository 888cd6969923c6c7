"""Grade a folder of submitted notebooks on Spark, one Spark task per submission.

The driver reads every submission (its bytes; a link, a folder or another non-regular
file is refused there, as the local grader refuses it) and names its learner (a roster
or the file name, as the local grader does), and ships the autograder zip to the
executors once (a broadcast variable), so the submissions folder need not be on a file
system the workers see. Each submission is one partition of an RDD and is graded by a
Spark job of its own. Its task writes the notebook and the zip into a temporary folder
of its worker and starts a supervisor process in a session of its own, which grades it
with :func:`snapshotlib.grading.grade_one`: the limits and the containment of the local
grader (its own judging process and sandbox, its own scratch folder and session; time,
CPU, memory and file-size limits; as root a control group, a private read-only mount
namespace and a user id of its own, numbered by the submission's position so that
tasks running at once never share one). The supervisor outlives a task whose worker
Spark kills, so the limits still hold and the temporary files still go. The task hands
back the result as plain data, and the driver writes it to the gradebook as it comes,
the same :class:`~snapshotlib.grading.Gradebook` as the local grader's.

A job of its own per submission means that a task that fails outright (its Python
worker killed, an executor lost, an exception) fails that job only: the submission gets
the status ``"crashed"`` and the reason, and every other submission is graded as usual.

Output: the gradebook files exactly as the local grader writes them (written again as
each submission is graded; ``resume`` keeps what an earlier run graded), and the rows of
the long CSV (one per submission and question, with a ``TOTAL`` row per submission) as
Parquet beside it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from ..grading.gradebook import Gradebook, GradebookFiles, SubmissionResult
from ..grading.judge import Question, failed, load_questions
from ..grading.runner import GradingError, autograder_tests, course_folder, find_inputs, grade_one
from ..grading.submissions import Identities, RosterError, SubmissionError, read_bytes
from .session import SparkStartError

#: the columns of the gradebook, in the long CSV and the Parquet file alike
COLUMNS = (
    ("submission", "str"),
    ("learner_id", "str"),
    ("test", "str"),
    ("score", "float"),
    ("possible", "float"),
    ("status", "str"),
    ("formative", "bool"),
    ("passed", "bool"),
    ("message", "str"),
)

_runs = itertools.count(1)


def grade_on_spark(
    submissions_dir: str | Path,
    exercise: str,
    out_csv: str | Path | None = None,
    *,
    autograder: str | Path | None = None,
    course: str | Path | None = None,
    spark: Any = None,
    master: str | None = None,
    cpu_seconds: int = 300,
    cell_cpu: float = 60,
    call_cpu: float = 60,
    test_cpu: float = 120,
    timeout: float = 900,
    memory_mb: int = 2048,
    fsize_mb: int = 64,
    scratch_mb: int = 256,
    open_files: int = 256,
    hide: Sequence[str | Path] = (),
    contain: bool = True,
    workdir: str | Path | None = None,
    roster: str | Path | dict[str, str] | None = None,
    id_pattern: str | None = None,
    resume: bool = False,
) -> Gradebook:
    """Grade every ``*.ipynb`` in ``submissions_dir`` on Spark; see the module docstring.

    The parameters are those of :func:`snapshotlib.grading.grade`, with ``spark`` (a
    running session) or ``master`` (``local[*]`` by default, ``spark://HOST:7077``...)
    in place of ``jobs``: as many submissions are graded at once as Spark has cores.
    ``course``, ``hide`` and ``workdir`` are paths on the workers (``course`` here too).
    With ``out_csv``, the gradebook is written there and as Parquet to :func:`parquet_path` of it.
    """
    submissions, zipped = find_inputs(submissions_dir, exercise, autograder, course_folder(course))
    tests = autograder_tests(zipped)
    questions = load_questions(zipped)
    try:
        identities = Identities(roster, id_pattern)
    except RosterError as e:
        raise GradingError(str(e)) from None
    limits: dict[str, Any] = {
        "exercise": exercise,
        "cpu_seconds": cpu_seconds,
        "cell_cpu": cell_cpu,
        "call_cpu": call_cpu,
        "test_cpu": test_cpu,
        "timeout": timeout,
        "memory_mb": memory_mb,
        "fsize_mb": fsize_mb,
        "scratch_mb": scratch_mb,
        "open_files": open_files,
        "course": None if course is None else str(course),
        "hide": [str(h) for h in hide],
        "contain": contain,
        "workdir": None if workdir is None else str(workdir),
    }
    book = Gradebook(exercise, list(tests))
    files = GradebookFiles(book, out_csv, resume=resume) if out_csv is not None else None
    items: list[tuple[int, str, str, str, bytes]] = []
    for i, path in enumerate(submissions):
        try:
            identity = identities.of(path.name)
            data = read_bytes(path)
        except SubmissionError as e:  # refused here, as the local grader refuses it
            _add(book, files, failed(path.name, questions, "invalid", str(e), 0.0))
            continue
        kept = (
            files.already(path.name, hashlib.sha256(data).hexdigest()) if files and resume else None
        )
        if kept is not None:
            book.results.append(kept)
            continue
        items.append((i, path.name, identity.learner_id, identity.source, data))
    if items:
        if spark is None:
            spark = _session(master)
        _grade_items(spark, items, zipped, limits, questions, lambda r: _add(book, files, r))
    book.results.sort(key=lambda r: r.submission)
    if out_csv is not None:
        write_gradebook(book, out_csv)
    return book


def _add(book: Gradebook, files: GradebookFiles | None, result: SubmissionResult) -> None:
    if files is not None:
        files.add(result)
    else:
        book.results.append(result)


def _grade_items(
    spark: Any, items: list[tuple[int, str, str, str, bytes]], zipped: Path,
    limits: dict[str, Any], questions: list[Question], add: Any,
) -> None:  # fmt: skip
    sc = spark.sparkContext
    rdd = sc.parallelize(items, len(items))  # one partition per submission
    shipped = sc.broadcast((zipped.name, zipped.read_bytes()))
    task = functools.partial(_grade_partition, shipped, limits)
    group = f"snapshotlib-grade-{os.getpid()}-{next(_runs)}"

    def run(i: int) -> SubmissionResult:
        sc.setJobGroup(group, f"grade {items[i][1]}", interruptOnCancel=True)
        started = time.monotonic()
        try:
            (row,) = sc.runJob(rdd, task, [i])
            return _result(row, questions)
        except Exception as e:  # the task, its worker or its executor failed
            seconds = round(time.monotonic() - started, 2)
            detail = f"{items[i][1]}: its Spark task failed: {_reason(e)}"
            return _result(_row(items[i][1], "crashed", seconds, detail, items[i][2]), questions)

    # a job waiting in line for every core, so none stays idle between two submissions
    pool = ThreadPoolExecutor(
        min(len(items), 2 * max(1, sc.defaultParallelism)), thread_name_prefix="grade"
    )
    try:
        for future in as_completed([pool.submit(run, i) for i in range(len(items))]):
            add(future.result())
    except BaseException:
        sc.cancelJobGroup(group)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        shipped.destroy()


def parquet_path(out_csv: str | Path) -> Path:
    """Where the Parquet gradebook goes, beside the CSV.

    >>> parquet_path("out/grades.csv")
    PosixPath('out/grades.parquet')
    """
    return Path(out_csv).with_suffix(".parquet")


def write_gradebook(book: Gradebook, out_csv: str | Path) -> tuple[Path, Path]:
    """Write ``book`` as the local grader does (CSV) and its long rows as Parquet; the
    paths of the long CSV and of the Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .output import arrow_schema

    csv = book.to_csv(out_csv)
    parquet = parquet_path(out_csv)
    pq.write_table(pa.Table.from_pylist(book.rows(), schema=arrow_schema(COLUMNS)), parquet)
    return csv, parquet


# ------------------------------------------------------------------ driver side


def _session(master: str | None) -> Any:
    missing = [m for m in ("pyspark", "pyarrow") if importlib.util.find_spec(m) is None]
    if missing:
        raise SparkStartError(
            f"grading on Spark needs {', '.join(missing)}: pip install 'snapshotlib[spark]'"
        )
    from .session import spark_session

    return spark_session(master, app_name="snapshotlib-grade")


def _result(row: dict[str, Any], questions: list[Question]) -> SubmissionResult:
    """A task's row as a :class:`SubmissionResult` with a score for every question."""
    if "result" in row:
        return SubmissionResult.from_dict(row["result"])
    return failed(row["submission"], questions, row["status"], row["detail"], row["seconds"],
                  row.get("learner_id", ""))  # fmt: skip


def _reason(error: BaseException) -> str:
    """The gist of a failed Spark job: the first lines of its message, no stack frames."""
    java = getattr(error, "java_exception", None)
    text = str(java.getMessage()) if java is not None else f"{type(error).__name__}: {error}"
    lines = []
    for line in text.splitlines():
        if line.startswith("Driver stacktrace"):
            break
        if line.strip() and not line.lstrip().startswith(("at ", "... ")):
            lines.append(line.strip())
    return "\n".join(lines[:8])


# ------------------------------------------------------------------ task side


def _row(submission: str, status: str, seconds: float, detail: str,
         learner_id: str = "") -> dict[str, Any]:  # fmt: skip
    """What a task hands back for a submission it could not grade: plain values only
    (one it graded comes back as ``{"result": SubmissionResult.to_dict()}``)."""
    return {"submission": submission, "status": status, "seconds": seconds,
            "detail": detail, "learner_id": learner_id}  # fmt: skip


def _grade_partition(
    shipped: Any, limits: dict[str, Any], part: Iterable[tuple[int, str, str, str, bytes]]
) -> Iterator[dict[str, Any]]:
    """The function a Spark task runs: its submissions in, their rows out."""
    name, zipped = shipped.value
    for index, submission, learner_id, source, notebook in part:
        yield grade_bytes(index, submission, notebook, name, zipped, limits, learner_id, source)


def grade_bytes(
    index: int,
    submission: str,
    notebook: bytes,
    autograder_name: str,
    autograder: bytes,
    limits: dict[str, Any],
    learner_id: str | None = None,
    identity: str = "file name",
) -> dict[str, Any]:
    """Grade one submission given as bytes, on this machine; its row.

    ``index`` is the submission's position in the folder (it sets its user id as root);
    ``limits`` are keywords of :func:`~snapshotlib.grading.grade`; ``learner_id`` and
    ``identity`` who it is and where that came from. The grading runs in
    a supervisor process of its own session (``python -m snapshotlib.spark.grading``),
    which enforces the limits and removes the temporary files even if Spark kills this
    task's worker meanwhile. Never raises: an error becomes the status ``"crashed"``.
    """
    started = time.monotonic()
    try:
        folder = Path(tempfile.mkdtemp(prefix="snapshotlib-spark-grade-", dir=limits["workdir"]))
        # the zip in a folder of its own: the grader hides the zip's folder
        (folder / "autograder").mkdir()
        (folder / "submission").mkdir()
        (folder / "autograder" / autograder_name).write_bytes(autograder)
        (folder / "submission" / submission).write_bytes(notebook)
        job = {"folder": str(folder), "submission": submission, "autograder": autograder_name,
               "index": index, "limits": limits, "learner_id": learner_id,
               "identity": identity}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "snapshotlib.spark.grading"], input=json.dumps(job).encode(),
            capture_output=True, start_new_session=True, check=False,
        )  # fmt: skip
        if done.returncode == 0:
            row: dict[str, Any] = json.loads(done.stdout)
            return row
        what = f"its grading process ended with code {done.returncode}"
        output = done.stderr.decode(errors="replace")
    except Exception:
        what, output = "grading failed on its worker", traceback.format_exc()
    seconds = round(time.monotonic() - started, 2)
    tail = "\n".join(output.strip().splitlines()[-15:])
    return _row(submission, "crashed", seconds, f"{submission}: {what}:\n{tail}", learner_id or "")


def _supervise() -> int:
    """``python -m snapshotlib.spark.grading``: grade the job read from standard input,
    remove its folder, print its row (JSON)."""
    job = json.load(sys.stdin)
    folder = Path(job["folder"])
    try:
        notebook = folder / "submission" / job["submission"]
        zipped = folder / "autograder" / job["autograder"]
        r = grade_one(notebook, zipped, index=job["index"], learner_id=job.get("learner_id"),
                      in_process=True, **job["limits"])  # fmt: skip
        r = dataclasses.replace(r, identity=str(job.get("identity") or r.identity))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(BrokenPipeError):  # the task that asked may be gone
        json.dump({"result": r.to_dict()}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(_supervise())

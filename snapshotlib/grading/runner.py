"""Grade a folder of submitted notebooks, each judged from outside its sandbox.

Each submission's cells run in a sandboxed process of their own (:mod:`.jail`,
:mod:`.sandboxed`) that holds nothing secret; the tests run in a trusted process
(:mod:`.judge`) that reaches the learner's answers only as data. Submissions are judged
``jobs`` at a time, in worker processes (each loads otter-grader's test classes once).
See :data:`CONTAINMENT` for what this does and does not prevent.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

from . import jail
from .gradebook import Gradebook, SubmissionResult
from .judge import Settings, judge, load_questions

CONTAINMENT = """\
judged from outside: the tests run in a trusted process where no code of the submission
has run; they reach its answers only as plain data (JSON: values, and the learner's
functions called in the sandbox with data in and data out), so hooks, patched test
classes or results left in the submission's process cannot see or change a verdict;
scores are computed by the grader (finite, clamped to each question's points).
contained everywhere: CPU time per cell, per call and per submission; memory (address
space), file size, open files, core files; a wall-clock backstop per submission; an
answer that calls or subclasses the engine's own implementation of what it asks for
scores 0 for its question.
as root (Linux): a private mount namespace, every mount read-only except a private tmpfs
of limited size as the scratch folder, empty private /tmp, /var/tmp and /dev/shm, the
course's solutions/, build/autograder/ and .git covered (and the paths given as `hide`);
private IPC and network namespaces (System V objects die with the submission, no
network, not the grader's loopback nor its abstract sockets); a user id of its own (no
reach into other submissions; every process left with that id is killed when it ends);
at most 256 processes.
not contained: reading other world-readable files on the machine; a submission that
hides its use of the engine from the delegation checks (they look at its code and watch
its calls, but run where it runs); without root, everything listed under "as root"."""


class GradingError(ValueError):
    """Bad input to :func:`grade` (no submissions, no autograder zip...)."""


def autograder_tests(autograder: str | Path) -> dict[str, float]:
    """``{test name: points}`` of the tests in an autograder zip (``tests/NAME.py``)."""
    try:
        questions = load_questions(Path(autograder))
    except (OSError, zipfile.BadZipFile, SyntaxError, ValueError, TypeError) as e:
        raise GradingError(f"{autograder}: not an otter autograder zip ({e})") from None
    if not questions:
        raise GradingError(f"{autograder}: holds no tests/*.py")
    return {q.name: q.points for q in questions}


def course_folder(course: str | Path | None = None) -> Path | None:
    """The course being graded: ``course`` when given, else the source checkout this
    package runs from when it is one (it holds ``solutions/``), else none (an installed
    package grading with an autograder zip given by path)."""
    if course is not None:
        path = Path(course)
        if not (path / "solutions").is_dir() and not (path / "build" / "autograder").is_dir():
            raise GradingError(f"{path}: not a course folder (no solutions/ or build/autograder/)")
        return path.resolve()
    checkout = Path(__file__).resolve().parents[2]
    return checkout if (checkout / "solutions").is_dir() else None


def _always_hidden(zipped: Path, scratch_base: Path, course: Path | None) -> list[Path]:
    """The autograder zip's folder and the course's solutions, built autograders and
    version-control history; not a folder that holds the scratch folders."""
    candidates = [zipped.resolve().parent]
    if course is not None:
        candidates += [course / "solutions", course / "build" / "autograder", course / ".git"]
    base = scratch_base.resolve()
    return [c for c in candidates if c.is_dir() and not base.is_relative_to(c)]


def containment_warning() -> str:
    """What :func:`grade` says at start where the sandbox is incomplete ("" if whole)."""
    missing = jail.missing_capabilities()
    if not missing:
        return ""
    return ("note: not running as root on Linux, so submissions are NOT contained by: "
            + "; ".join(missing) + ". See README (Grading) for what holds.")  # fmt: skip


# ----------------------------------------------------------------- grading


def _judge_one(
    index: int, notebook: str, exercise: str, zipped: str, base: str, settings: Settings,
    hide: list[str], uid: int,
) -> SubmissionResult:  # fmt: skip
    """One submission, in a worker process (or in the caller's)."""
    questions = _questions(zipped)
    scratch = Path(base) / f"{index:04d}"
    try:
        return judge(Path(notebook), Path(notebook).name, exercise, questions,
                     scratch=scratch, settings=settings, hide=[Path(h) for h in hide], uid=uid,
                     empty=Path(base) / ".empty")  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


_loaded: dict[str, list] = {}  # type: ignore[type-arg]


def _questions(zipped: str) -> list:  # type: ignore[type-arg]
    if zipped not in _loaded:
        _loaded[zipped] = load_questions(Path(zipped))
    return _loaded[zipped]


def find_inputs(
    submissions_dir: str | Path, exercise: str, autograder: str | Path | None,
    course: Path | None = None,
) -> tuple[list[Path], Path]:  # fmt: skip
    """The submitted notebooks and the autograder zip (by default the course's
    ``build/autograder/{exercise}.zip``, or that path under the current folder when there
    is no course); :class:`GradingError` if either is missing."""
    folder = Path(submissions_dir)
    if not folder.is_dir():
        raise GradingError(f"{folder}: no such folder")
    submissions = sorted(folder.glob("*.ipynb"))
    if not submissions:
        raise GradingError(f"{folder}: no *.ipynb submissions")
    built = (course or Path()) / "build" / "autograder" / f"{exercise}.zip"
    zipped = Path(autograder) if autograder else built
    if not zipped.is_file():
        raise GradingError(f"{zipped}: no autograder zip (run `make exercises`)")
    return submissions, zipped


def grade(
    submissions_dir: str | Path,
    exercise: str,
    out_csv: str | Path | None = None,
    *,
    autograder: str | Path | None = None,
    course: str | Path | None = None,
    cpu_seconds: int = 300,
    cell_cpu: float = 60,
    call_cpu: float = 60,
    timeout: float = 900,
    memory_mb: int = 2048,
    fsize_mb: int = 64,
    scratch_mb: int = 256,
    open_files: int = 256,
    jobs: int = 1,
    hide: Sequence[str | Path] = (),
    contain: bool = True,
    workdir: str | Path | None = None,
    first_index: int = 0,
) -> Gradebook:
    """Grade every ``*.ipynb`` in ``submissions_dir`` against an otter autograder zip.

    Parameters
    ----------
    submissions_dir : folder of submitted notebooks (not searched recursively)
    exercise : exercise name, e.g. ``"01_is_this_cut_consistent"``
    out_csv : where to write the gradebook (one row per submission and test, with totals)
    autograder : the autograder zip (default ``build/autograder/{exercise}.zip`` of the
        course)
    course : the course folder, whose ``solutions/``, ``build/autograder/`` and ``.git``
        submissions never see (default: the source checkout of this package, if it is one)
    cpu_seconds : CPU seconds for all of a submission's work (its processes are killed)
    cell_cpu, call_cpu : CPU seconds per notebook cell and per call of a learner's
        function by a test, before it is interrupted (the submission goes on)
    timeout : wall-clock seconds per submission, a far backstop only: a busy machine
        slows a submission down but does not make it use more CPU time
    memory_mb : address-space limit of each of the submission's processes
    fsize_mb, scratch_mb, open_files : largest file, size of the scratch folder (as root),
        open files per process
    jobs : submissions graded at once (each in a worker process of its own)
    hide : paths the submission must not read (root only: covered by an empty folder);
        the autograder zip's folder and the course's solutions/, build/autograder/ and
        .git are always among them
    contain : use the namespaces and a user id per submission when running as root
    workdir : where the scratch folders go
    first_index : the number of the first submission, from which (as root) its user id
        derives: gradings running at once in processes whose ids agree modulo 10,000
        need disjoint numbers

    Examples
    --------
    >>> grade("no/such/folder", "01")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    GradingError: no/such/folder: no such folder
    """
    folder = course_folder(course)
    submissions, zipped = find_inputs(submissions_dir, exercise, autograder, folder)
    tests = autograder_tests(zipped)
    limits = jail.Limits(cpu_seconds=int(cpu_seconds), memory_mb=memory_mb, fsize_mb=fsize_mb,
                         scratch_mb=scratch_mb, open_files=open_files)  # fmt: skip
    settings = Settings(limits, float(cell_cpu), float(call_cpu), float(timeout), contain)
    book = Gradebook(exercise, list(tests))
    base = Path(tempfile.mkdtemp(prefix="snapshotlib-grade-", dir=workdir))
    os.chmod(base, 0o711)
    (base / ".empty").mkdir(mode=0o555)
    (base / "logs").mkdir(mode=0o700)  # the grader's only: no submission reads another's
    hidden = [str(h) for h in [*hide, *_always_hidden(zipped, base, folder)]]
    args = [
        (i, str(sub), exercise, str(zipped.resolve()), str(base), settings, hidden,
         jail.submission_uid(first_index + i) if contain else 0)
        for i, sub in enumerate(submissions)
    ]  # fmt: skip
    try:
        if jobs <= 1:
            results = [_judge_one(*a) for a in args]
        else:
            context = multiprocessing.get_context("forkserver")
            with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                futures: list[Future[SubmissionResult]] = [
                    pool.submit(_judge_one, *a) for a in args
                ]
                results = [f.result() for f in futures]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    book.results = [replace(r, scores=tuple(r.scores)) for r in results]
    if out_csv is not None:
        book.to_csv(out_csv)
    return book


def grade_one(
    notebook: str | Path, autograder: str | Path, *, index: int = 0, exercise: str | None = None,
    **kw: object,
) -> SubmissionResult:  # fmt: skip
    """Grade a single notebook (see :func:`grade` for the keywords); ``index`` is its
    ``first_index``: calls running at once need distinct ones. ``exercise`` defaults to
    the autograder zip's name."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copyfile(notebook, Path(tmp) / Path(notebook).name)
        name = exercise or Path(autograder).stem
        book = grade(tmp, name, autograder=autograder, first_index=index, **kw)  # type: ignore[arg-type]
        return book.results[0]

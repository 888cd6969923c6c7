"""Grade a folder of submitted notebooks, each judged from outside its sandbox.

Each submission is judged in a process of its own (:mod:`.judge`), forked for it by a
worker that has loaded the grader once (:mod:`.worker`), under limits of its own: whatever a
submission is or does (an odd file, a crash, garbage on the grader's channel, data
that makes the tests slow or large), its failure ends that process only and becomes
its own status and reason; the batch always finishes with a gradebook. Results are
written as each submission finishes (:class:`~.gradebook.GradebookFiles`); ``resume``
skips what was graded before. See :data:`CONTAINMENT` for what the sandbox does and
does not prevent.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import time
import zipfile
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import edition, jail
from .gradebook import Gradebook, GradebookFiles, SubmissionResult
from .judge import Batch, Settings, load_questions
from .limits import Groups
from .pool import job_for, run_all
from .submissions import Identities, RosterError, SubmissionError, candidates, read_bytes

CONTAINMENT = """\
judged from outside: the tests run in a trusted process where no code of the submission
has run; they reach its answers only as plain data (JSON: values, and the learner's
functions called in the sandbox with data in and data out), so hooks, patched test
classes, forged replies or results left in the submission's process cannot see or
change a verdict; scores are computed by the grader (finite, clamped to each question's
points); each test runs under a CPU budget of the grader's own.
the engine as the exercise allows it: where an exercise asks the learner to write part
of the engine, the cells run against a learner edition in which that part is absent
(a stand-in says the exercise asks for it), and an answer whose code references the
engine's version scores 0 for its question, with the line quoted.
who it is: the variant comes from course staff (a roster, or the file name), never from
the notebook; a typed id that disagrees is reported.
contained everywhere: CPU time per cell, per call and per submission; memory (address
space), file size, open files, core files; a wall-clock backstop per submission; the
submission's sandbox gets its cells through a pipe and the grader's environment is not
passed on; links, folders and other non-regular files are refused.
all of a submission's processes together: where control groups can be made (as root on
Linux, usually), its memory, processes and CPU time are limited as a whole; elsewhere it
runs as one process that cannot fork or start threads.
as root (Linux): a private mount namespace, every mount read-only except a private tmpfs
of limited size as the scratch folder, empty private /tmp, /var/tmp and /dev/shm, the
course's solutions/, build/, .git and the submissions folder covered (and the paths
given as `hide`), the engine's real package covered by the learner edition, a /proc
that shows only its own processes (Linux 5.8 and later); private IPC and network
namespaces (System V objects die with the submission, no network, not the grader's
loopback nor its abstract sockets); a user id of its own (no reach into other
submissions; every process left with that id is killed when it ends).
not contained: reading other world-readable files on the machine; without root,
everything listed under "as root" (then a submission can read the engine's real source,
other submissions and the grader's command line)."""


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


def _always_hidden(zipped: Path, scratch_base: Path, course: Path | None,
                   submissions: Path) -> list[Path]:  # fmt: skip
    """The autograder zip's folder, the submissions folder, and the course's solutions,
    builds and version-control history; never a folder that holds the scratch folders."""
    candidates = [zipped.resolve().parent, submissions.resolve()]
    if course is not None:
        candidates += [course / "solutions", course / "build", course / "dist", course / ".git"]
    base = scratch_base.resolve()
    return [c for c in candidates if c.is_dir() and not base.is_relative_to(c)]


def containment_warning() -> str:
    """What :func:`grade` says at start where the sandbox is incomplete ("" if whole)."""
    missing = jail.missing_capabilities()
    if not missing:
        return ""
    return ("note: submissions are NOT contained here by: " + "; ".join(missing)
            + ". See README (Grading) for what holds.")  # fmt: skip


def find_inputs(
    submissions_dir: str | Path, exercise: str, autograder: str | Path | None,
    course: Path | None = None,
) -> tuple[list[Path], Path]:  # fmt: skip
    """The submitted notebooks (every ``*.ipynb`` entry, whatever it is) and the
    autograder zip (by default the course's ``build/autograder/{exercise}.zip``, or that
    path under the current folder when there is no course); :class:`GradingError` if
    either is missing."""
    folder = Path(submissions_dir)
    if not folder.is_dir():
        raise GradingError(f"{folder}: no such folder")
    submissions = candidates(folder)
    if not submissions:
        raise GradingError(f"{folder}: no *.ipynb submissions")
    built = (course or Path()) / "build" / "autograder" / f"{exercise}.zip"
    zipped = Path(autograder) if autograder else built
    if not zipped.is_file():
        raise GradingError(f"{zipped}: no autograder zip (run `make exercises`)")
    return submissions, zipped


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(read_bytes(path)).hexdigest()
    except SubmissionError:
        return ""


class _Progress:
    """Count, rate and time left on standard error (tqdm where installed)."""

    def __init__(self, total: int, done: int, show: bool) -> None:
        self.bar: Any = None
        self.show = show
        self.total, self.done, self.started = total, done, time.monotonic()
        if show:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, initial=done, unit="submission", file=sys.stderr,
                                dynamic_ncols=True)  # fmt: skip
            except ImportError:
                self.bar = None

    def step(self, result: SubmissionResult) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(f"{result.submission}: {result.status}", refresh=False)
            self.bar.update(1)
        elif self.show:
            elapsed = time.monotonic() - self.started
            rate = (self.done) / elapsed if elapsed > 0 else 0.0
            left = (self.total - self.done) / rate if rate else 0.0
            print(f"graded {self.done}/{self.total} ({rate * 60:.1f}/min, about {left:.0f} s "
                  f"left): {result.submission} {result.status}", file=sys.stderr)  # fmt: skip

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


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
    test_cpu: float = 120,
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
    roster: str | Path | dict[str, str] | None = None,
    id_pattern: str | None = None,
    resume: bool = False,
    progress: bool = False,
    on_result: Callable[[SubmissionResult], None] | None = None,
    in_process: bool = False,
) -> Gradebook:
    """Grade every ``*.ipynb`` in ``submissions_dir`` against an otter autograder zip.

    Parameters
    ----------
    submissions_dir : folder of submitted notebooks (not searched recursively)
    exercise : exercise name, e.g. ``"01_is_this_cut_consistent"``
    out_csv : where to write the gradebook (the long CSV; the wide one and the results
        as JSON Lines go beside it), written again as each submission is graded
    autograder : the autograder zip (default ``build/autograder/{exercise}.zip`` of the
        course)
    course : the course folder, whose ``solutions/``, ``build/`` and ``.git`` submissions
        never see (default: the source checkout of this package, if it is one)
    cpu_seconds : CPU seconds for all of a submission's work (its processes are killed)
    cell_cpu, call_cpu : CPU seconds per notebook cell and per call of a learner's
        function by a test, before it is interrupted (the submission goes on)
    test_cpu : CPU seconds of the grader's own work per test (a test over it fails)
    timeout : wall-clock seconds per submission, a far backstop only: a busy machine
        slows a submission down but does not make it use more CPU time
    memory_mb : memory of a submission: all its processes together where control groups
        can be made, else its one process
    fsize_mb, scratch_mb, open_files : largest file, size of the scratch folder (as root),
        open files per process
    jobs : submissions graded at once (each in a process of its own)
    hide : paths the submission must not read (root only: covered by an empty folder);
        the autograder zip's folder, the submissions folder and the course's solutions/,
        build/, dist/ and .git are always among them
    contain : use the namespaces and a user id per submission when running as root
    workdir : where the scratch folders go
    first_index : the number of the first submission, from which (as root) its user id
        derives: gradings running at once in processes whose ids agree modulo 10,000
        need disjoint numbers
    roster : a CSV file (columns ``submission`` and ``learner_id``), or such a mapping,
        naming each submission's learner; else the file name does
    id_pattern : a regular expression whose first group picks the learner id out of a
        file name (as a learning platform's export names files)
    resume : keep the results of ``out_csv``'s earlier run for files unchanged since
    progress : show count, rate and time left on standard error
    on_result : called with each result as it is graded
    in_process : fork each submission's judging process from this one rather than from
        worker processes (for a process that does nothing else: a Spark task's supervisor)

    Examples
    --------
    >>> grade("no/such/folder", "01")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    GradingError: no/such/folder: no such folder
    """
    folder = course_folder(course)
    submissions, zipped = find_inputs(submissions_dir, exercise, autograder, folder)
    tests = autograder_tests(zipped)
    try:
        identities = Identities(roster, id_pattern)
    except RosterError as e:
        raise GradingError(str(e)) from None
    limits = jail.Limits(cpu_seconds=int(cpu_seconds), memory_mb=memory_mb, fsize_mb=fsize_mb,
                         scratch_mb=scratch_mb, open_files=open_files)  # fmt: skip
    settings = Settings(limits, float(cell_cpu), float(call_cpu), float(timeout), contain,
                        float(test_cpu))  # fmt: skip
    book = Gradebook(exercise, list(tests))
    files = GradebookFiles(book, out_csv, resume=resume) if out_csv is not None else None
    base = Path(tempfile.mkdtemp(prefix="snapshotlib-grade-", dir=workdir))
    os.chmod(base, 0o711)
    (base / ".empty").mkdir(mode=0o555)
    (base / "logs").mkdir(mode=0o700)  # the grader's only: no submission reads another's
    groups = Groups() if contain else None
    try:
        refused = edition.refused_targets(exercise)
        learner_edition = edition.build(refused, base / "edition") if refused else None
        hidden = [Path(h) for h in [*hide, *_always_hidden(zipped, base, folder,
                                                           Path(submissions_dir))]]  # fmt: skip
        batch = Batch(exercise, load_questions(zipped), settings, hidden, base / ".empty",
                      base / "logs", learner_edition, groups)  # fmt: skip
        todo: deque[tuple[int, Path]] = deque()
        for i, path in enumerate(submissions):
            kept = files.already(path.name, _digest(path)) if files and resume else None
            if kept is not None:
                book.results.append(kept)
            else:
                todo.append((i, path))
        shown = _Progress(len(submissions), len(book.results), progress)

        def add(result: SubmissionResult) -> None:
            if files is not None:
                files.add(result)
            else:
                book.results.append(result)
            shown.step(result)
            if on_result is not None:
                on_result(result)

        try:
            if in_process:
                from .worker import run_job  # (not at the top: `-m ...worker` runs it)

                for index, path in todo:
                    add(run_job(job_for(index, path, batch, identities, base, first_index,
                                        contain), batch))  # fmt: skip
            else:
                run_all(todo, batch, identities, base, jobs, first_index, contain, add)
        finally:
            shown.close()
    finally:
        if groups is not None:
            groups.close()
        shutil.rmtree(base, ignore_errors=True)
    book.results.sort(key=lambda r: r.submission)
    if files is not None:
        files.write()
    return book


def grade_one(
    notebook: str | Path, autograder: str | Path, *, index: int = 0, exercise: str | None = None,
    learner_id: str | None = None, **kw: Any,
) -> SubmissionResult:  # fmt: skip
    """Grade a single notebook (see :func:`grade` for the keywords); ``index`` is its
    ``first_index``: calls running at once need distinct ones. ``exercise`` defaults to
    the autograder zip's name; ``learner_id``, to the file name's stem."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(notebook)
        shutil.copyfile(source, Path(tmp) / source.name)
        name = exercise or Path(autograder).stem
        roster = {source.name: learner_id} if learner_id is not None else None
        book = grade(tmp, name, autograder=autograder, first_index=index, roster=roster, **kw)
        return book.results[0]

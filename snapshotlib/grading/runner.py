"""Run ``otter run`` on untrusted submissions, one child process each.

Each submission is copied into its own scratch directory and graded by
``python -m snapshotlib.grading.sealed_otter CELL_TIMEOUT run -a ZIP -o results
submission.ipynb`` with ``cwd`` there, a new session (the whole process group is killed on
the wall-clock limit), resource limits (``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_FSIZE``, no
core files) and a minimal environment whose ``HOME`` and ``TMPDIR`` are inside the scratch
directory, so otter's temporary ``autograder/`` folder and anything the submission writes
to relative paths or ``TMPDIR`` stay there. ``sealed_otter`` interrupts a looping cell
and keeps the hidden tests off the disk while the submission's cells run.

When run as root on Linux, each child also gets a private mount namespace in which every
mount is read-only except the scratch directory, selected paths (``hide``) are covered
by an empty directory, and the child then drops to a user id of its own (so it cannot
undo the mounts, nor reach another submission's folder or processes); every process
left with that id is killed when the submission ends. See :data:`CONTAINMENT` for what
this does and does not prevent.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .gradebook import Gradebook, SubmissionResult, TestScore
from .sealed_otter import CELL_TIMEOUT_MARK

CONTAINMENT = """\
contained: wall-clock time (process group killed), CPU time, address space, file size,
core files; relative-path writes and TMPDIR/HOME writes (inside the scratch folder);
reading the hidden tests or the autograder zip from disk while the submission's cells
run (they are deleted before its kernel starts and written back for the final checks);
as root: every other write (all mounts read-only in a private mount namespace, with
empty private /tmp, /var/tmp and /dev/shm), reading the paths given as `hide` and the
course's solutions/ and build/autograder/, other submissions (each runs under a user id of its own,
and every process left with that id is killed when it ends), more than 256 processes.
not contained: code the submission leaves running in its own kernel (an audit hook, a
patched otter) sees the tests when they run and can change the scores they report
(scores are clamped to each test's points, so at worst full marks); reading other
world-readable files; the network.
without root: writes to absolute paths the grading user may write are NOT contained."""


class GradingError(ValueError):
    """Bad input to :func:`grade` (no submissions, no autograder zip...)."""


def autograder_tests(autograder: str | Path) -> dict[str, float]:
    """``{test name: points}`` of the tests in an autograder zip (``tests/NAME.py``)."""
    tests: dict[str, float] = {}
    try:
        with zipfile.ZipFile(autograder) as z:
            for member in sorted(z.namelist()):
                m = re.fullmatch(r"tests/([^/]+)\.py", member)
                if not m:
                    continue
                source = z.read(member).decode()
                points = re.search(r"^points\s*=\s*(.+)$", source, re.M)
                value = ast.literal_eval(points.group(1)) if points else 1
                tests[m.group(1)] = float(sum(value) if isinstance(value, list) else value)
    except (OSError, zipfile.BadZipFile, SyntaxError, ValueError) as e:
        raise GradingError(f"{autograder}: not an otter autograder zip ({e})") from None
    if not tests:
        raise GradingError(f"{autograder}: holds no tests/*.py")
    return tests


# ----------------------------------------------------------------- containment

_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18


@dataclass(frozen=True)
class _Jail:
    """What the child does before exec, all prepared in the parent (no imports or
    allocation-heavy work after fork)."""

    scratch: bytes
    mounts: tuple[bytes, ...]
    hide: tuple[tuple[bytes, bytes], ...]  # (empty dir, path to cover)
    root_fix: tuple[bytes, bytes, bytes] | None  # (pyenv-like dir, its stand-in, /root)
    uid: int
    gid: int
    covers: tuple[bytes, ...]  # shared temporary folders, replaced by a private tmpfs
    keep: tuple[bytes, ...]  # folders inside those that must stay (scratch, the venv...)


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            point = line.split()[4].encode().decode("unicode_escape")
            points.append(point)
    return points


_SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")

# Each submission runs under a user id of its own, from a range no account uses, so that
# it cannot reach another's folder or processes and everything it leaves can be killed.
_UID_BASE = 1_700_000_000


def _submission_uid(index: int) -> int:
    uid = _UID_BASE + (os.getpid() % 10_000) * 10_000 + index % 10_000
    try:
        import pwd

        pwd.getpwuid(uid)
    except KeyError:
        return uid
    raise GradingError(f"user id {uid} belongs to an account: cannot isolate submissions")


def _prepare_jail(scratch: Path, hide: Sequence[Path], uid: int) -> _Jail | None:
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return None
    # World-readable leftovers (an instructor's otter assign output, say) live in the
    # shared temporary folders: the submission gets empty private ones instead.
    covers = [Path(d).resolve() for d in _SHARED_TMP if os.path.isdir(d)]
    covers = [d for i, d in enumerate(covers) if d not in covers[:i]]
    import snapshotlib

    needed = [scratch, Path(sys.prefix), Path(sys.base_prefix),
              Path(os.path.realpath(sys.executable)).parent,
              Path(snapshotlib.__file__).resolve().parents[1]]  # fmt: skip
    keep = [k.resolve() for k in needed if any(k.resolve().is_relative_to(d) for d in covers)]
    keep = [k for k in keep if not any(k != o and k.is_relative_to(o) for o in keep)]
    skip = ("/proc", "/sys", "/dev", *map(str, covers))
    s = str(scratch)
    mounts = tuple(
        m.encode() for m in _mount_points()
        if not m.startswith(skip) and not (m == s or m.startswith(s + "/"))
    )  # fmt: skip
    empty = scratch / ".hidden"
    empty.mkdir(mode=0o555, exist_ok=True)
    hidden = tuple((bytes(empty), bytes(Path(p).resolve())) for p in hide if Path(p).exists())
    # nobody must reach the interpreter: if a parent of it is closed (e.g. /root is 0700),
    # cover that parent with an open stand-in holding only the interpreter's tree
    root_fix = None
    base = Path(os.path.realpath(sys.executable)).parent
    for parent in [base, *base.parents]:
        if parent.parent == parent:
            break
        if not os.stat(parent).st_mode & 0o001 and parent.parent != parent:
            child = base.relative_to(parent).parts[0]
            stand_in = scratch / ".root"
            (stand_in / child).mkdir(parents=True, exist_ok=True)
            os.chmod(stand_in, 0o755)
            root_fix = (bytes(parent / child), bytes(stand_in / child), bytes(parent))
            break
    return _Jail(bytes(scratch), mounts, hidden, root_fix, uid, uid,
                 tuple(map(bytes, covers)), tuple(map(bytes, dict.fromkeys(keep))))  # fmt: skip


def _preexec(
    memory_mb: int, cpu_seconds: int, fsize_mb: int, jail: _Jail | None
) -> Callable[[], None]:
    libc = ctypes.CDLL(None, use_errno=True) if jail else None

    def check(rc: int, what: str) -> None:
        if rc != 0:
            raise OSError(ctypes.get_errno(), what)

    def apply() -> None:
        mem = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        size = fsize_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if jail is None or libc is None:
            return
        check(libc.unshare(_CLONE_NEWNS), "unshare")
        check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "private /")
        held = [os.open(k, os.O_PATH) for k in jail.keep]  # reachable once covered
        for folder in jail.covers:
            check(libc.mount(b"tmpfs", folder, b"tmpfs", 0, b"mode=1777,size=64m"), "tmpfs")
        for k, fd in zip(jail.keep, held, strict=True):
            os.makedirs(k, exist_ok=True)
            check(libc.mount(b"/proc/self/fd/%d" % fd, k, None, _MS_BIND | _MS_REC, None), "keep")
            os.close(fd)
        if jail.scratch not in jail.keep:
            check(libc.mount(jail.scratch, jail.scratch, None, _MS_BIND, None), "bind scratch")
        if jail.root_fix:
            real, stand_in, closed = jail.root_fix
            check(libc.mount(real, stand_in, None, _MS_BIND | _MS_REC, None), "bind")
            check(
                libc.mount(os.path.dirname(stand_in), closed, None, _MS_BIND | _MS_REC, None),
                "cover",
            )
        for empty, path in jail.hide:  # those in a covered folder are gone already
            if os.path.exists(path):
                check(libc.mount(empty, path, None, _MS_BIND, None), "hide")
        for point in jail.mounts + tuple(k for k in jail.keep if k != jail.scratch):
            flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
            libc.mount(None, point, None, flags, None)  # some (e.g. overlay lower) may refuse
        libc.mount(None, b"/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None)
        if jail.root_fix:
            libc.mount(None, jail.root_fix[2], None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None)
        resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))
        os.setgroups([])
        os.setgid(jail.gid)
        os.setuid(jail.uid)

    return apply


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    os.chown(path, uid, gid)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)


def _always_hidden(zipped: Path, scratch_base: Path) -> list[Path]:
    """The autograder zip's folder and, in a source checkout of the course, its solutions
    and built autograders; not a folder that holds the scratch folders."""
    root = Path(__file__).resolve().parents[2]
    candidates = [zipped.resolve().parent]
    if (root / "solutions").is_dir():
        candidates += [root / "solutions", root / "build" / "autograder"]
    base = scratch_base.resolve()
    return [c for c in candidates if c.is_dir() and not base.is_relative_to(c)]


# ----------------------------------------------------------------- grading


@dataclass
class _Job:
    name: str
    scratch: Path
    proc: subprocess.Popen[bytes]
    log: Path
    started: float
    uid: int | None  # the submission's own user id (as root), whose processes end with it


def _start(
    submission: Path, autograder: Path, scratch: Path, *, cell_timeout: int,
    memory_mb: int, cpu_seconds: int, fsize_mb: int, hide: Sequence[Path], contain: bool,
    uid: int,
) -> _Job:  # fmt: skip
    scratch.mkdir(parents=True)
    for sub in ("home", "tmp", "results"):
        (scratch / sub).mkdir()
    shutil.copyfile(submission, scratch / "submission.ipynb")
    shutil.copyfile(autograder, scratch / "autograder.zip")
    jail = _prepare_jail(scratch, hide, uid) if contain else None
    if jail:
        _chown_tree(scratch, jail.uid, jail.gid)
        os.chmod(scratch, 0o700)
    env = {
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch / "home"),
        "TMPDIR": str(scratch / "tmp"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    log = scratch.parent / f"{scratch.name}.log"
    cmd = [sys.executable, "-m", "snapshotlib.grading.sealed_otter", str(cell_timeout), "run",
           "-a", "autograder.zip", "-o", "results", "--no-logo", "submission.ipynb"]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=scratch, env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_preexec(memory_mb, cpu_seconds, fsize_mb, jail),
        )  # fmt: skip
    return _Job(submission.name, scratch, proc, log, time.monotonic(), jail.uid if jail else None)


def _kill(job: _Job) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(job.proc.pid, signal.SIGKILL)
    job.proc.wait()
    _kill_user(job.uid)


def _kill_user(uid: int | None) -> None:
    """Kill every process of ``uid``, including any that left the process group."""
    if uid is None:
        return
    pid = os.fork()
    if pid == 0:  # the child takes the id, so kill(-1) reaches exactly that id's processes
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _collect(job: _Job, tests: dict[str, float], timed_out: bool) -> SubmissionResult:
    seconds = time.monotonic() - job.started
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(job.proc.pid, signal.SIGKILL)  # the kernel may have left processes behind
    _kill_user(job.uid)
    output = job.log.read_text(errors="replace")
    cell_timeouts = output.count(CELL_TIMEOUT_MARK)
    code = job.proc.returncode
    got: dict[str, float] = {}
    results = job.scratch / "results" / "results.json"
    if timed_out:
        status = "timeout"
    elif code == -signal.SIGXCPU or (code == -signal.SIGKILL and "SIGXCPU" in output):
        status = "cpu-limit"
    elif code != 0 or not results.is_file():
        status = "memory" if "MemoryError" in output else "crashed"
    else:
        status = "ok"
        try:
            for t in json.loads(results.read_text())["tests"]:
                if t.get("name") in tests and isinstance(t.get("score"), (int, float)):
                    got[t["name"]] = float(t["score"])
        except (ValueError, KeyError, TypeError):
            status = "crashed"
    scores = tuple(
        TestScore(name, min(max(got.get(name, 0.0), 0.0), points), points)
        for name, points in tests.items()
    )  # the submission runs where it could forge results.json: clamp to the test's points
    detail = "" if status == "ok" else "\n".join(output.strip().splitlines()[-15:])
    return SubmissionResult(job.name, status, scores, round(seconds, 2), cell_timeouts, detail)


def find_inputs(
    submissions_dir: str | Path, exercise: str, autograder: str | Path | None
) -> tuple[list[Path], Path]:
    """The submitted notebooks and the autograder zip; :class:`GradingError` if either
    is missing."""
    folder = Path(submissions_dir)
    if not folder.is_dir():
        raise GradingError(f"{folder}: no such folder")
    submissions = sorted(folder.glob("*.ipynb"))
    if not submissions:
        raise GradingError(f"{folder}: no *.ipynb submissions")
    zipped = Path(autograder) if autograder else Path("build/autograder") / f"{exercise}.zip"
    if not zipped.is_file():
        raise GradingError(f"{zipped}: no autograder zip (run `make exercises`)")
    return submissions, zipped


def grade(
    submissions_dir: str | Path,
    exercise: str,
    out_csv: str | Path | None = None,
    *,
    autograder: str | Path | None = None,
    timeout: float = 300,
    memory_mb: int = 2048,
    cell_timeout: int | None = None,
    fsize_mb: int = 64,
    jobs: int = 1,
    hide: Sequence[str | Path] = (),
    contain: bool = True,
    workdir: str | Path | None = None,
    keep: bool = False,
    first_index: int = 0,
) -> Gradebook:
    """Grade every ``*.ipynb`` in ``submissions_dir`` against an otter autograder zip.

    Parameters
    ----------
    submissions_dir : folder of submitted notebooks (not searched recursively)
    exercise : exercise name, e.g. ``"01_is_this_cut_consistent"``
    out_csv : where to write the gradebook (one row per submission and test, with totals)
    autograder : the autograder zip (default ``build/autograder/{exercise}.zip``)
    timeout : wall-clock seconds per submission; then its process group is killed
    memory_mb : address-space limit of each process (otter and the kernel each)
    cell_timeout : seconds per notebook cell before it is interrupted (default timeout/3)
    jobs : submissions graded at once
    hide : paths the submission must not read (root only: covered by an empty folder);
        the autograder zip's folder and the course's solutions/ and build/autograder/
        are always among them
    contain : use the mount namespace and a user id per submission when running as root
    workdir, keep : where the scratch folders go, and whether to keep them
    first_index : the number of the first submission, from which (as root) its user id
        derives: gradings running at once in processes whose ids agree modulo 10,000
        need disjoint numbers

    Examples
    --------
    >>> grade("no/such/folder", "01")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    GradingError: no/such/folder: no such folder
    """
    submissions, zipped = find_inputs(submissions_dir, exercise, autograder)
    tests = autograder_tests(zipped)
    cell = cell_timeout or max(5, int(timeout / 3))
    book = Gradebook(exercise, list(tests))
    base = Path(tempfile.mkdtemp(prefix="snapshotlib-grade-", dir=workdir))
    os.chmod(base, 0o711)
    hide = [*hide, *_always_hidden(zipped, base)]
    pending = list(enumerate(submissions))
    running: list[tuple[int, _Job]] = []
    done: dict[int, SubmissionResult] = {}
    cpu = int(timeout) + 5
    try:
        while pending or running:
            while pending and len(running) < max(1, jobs):
                i, sub = pending.pop(0)
                job = _start(sub, zipped, base / f"{i:04d}", cell_timeout=cell, memory_mb=memory_mb,
                             cpu_seconds=cpu, fsize_mb=fsize_mb, hide=[Path(h) for h in hide],
                             contain=contain, uid=_submission_uid(first_index + i))  # fmt: skip
                running.append((i, job))
            time.sleep(0.1)
            for i, job in list(running):
                late = time.monotonic() - job.started > timeout
                if job.proc.poll() is None and not late:
                    continue
                if late and job.proc.poll() is None:
                    _kill(job)
                done[i] = _collect(job, tests, timed_out=late and job.proc.returncode < 0)
                running.remove((i, job))
    finally:
        for _, job in running:
            _kill(job)
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    book.results = [done[i] for i in sorted(done)]
    if out_csv is not None:
        book.to_csv(out_csv)
    return book


def grade_one(
    notebook: str | Path, autograder: str | Path, *, index: int = 0, **kw: object
) -> SubmissionResult:
    """Grade a single notebook (see :func:`grade` for the keywords); ``index`` is its
    ``first_index``: calls running at once need distinct ones."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copyfile(notebook, Path(tmp) / Path(notebook).name)
        stem = Path(notebook).stem
        book = grade(tmp, stem, autograder=autograder, first_index=index, **kw)  # type: ignore[arg-type]
        return book.results[0]

"""The sandbox a submission runs in: limits, namespaces and a user id of its own.

Every process of a submission gets resource limits (CPU seconds, address space, file
size, open files, no core files), and the submission as a whole a control group where
the machine allows one (:mod:`.limits`: memory, processes and CPU time of all its
processes together); without one it runs as a single process. Run as root on Linux it
also gets private mount, IPC and network namespaces: every mount is read-only except a
size-limited private tmpfs for its scratch folder, the shared temporary folders are
empty private ones, hidden paths (the course's solutions, built autograders,
version-control history and the submissions folder) are covered by an empty folder, the
engine's real package by the learner edition it runs against, ``/proc`` shows only its
own processes, there is no network (not even the grader's loopback), System V IPC
objects die with the namespace, and the process drops to a user id no account uses, so
it cannot undo any of this nor reach another submission. :func:`capabilities` says which
of these hold on this machine.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import snapshotlib

from . import limits as group_limits

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWNET = 0x00020000, 0x08000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18

_SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")

# Each submission runs under a user id of its own, from a range no account uses, so that
# it cannot reach another's folder or processes and everything it leaves can be killed.
_UID_BASE = 1_700_000_000


class JailError(ValueError):
    """The sandbox cannot be set up as asked."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of every process of a submission."""

    cpu_seconds: int = 300
    memory_mb: int = 2048
    fsize_mb: int = 64
    scratch_mb: int = 256
    open_files: int = 256


@dataclass(frozen=True)
class Jail:
    """What the child does before exec, all prepared in the parent (no imports or
    allocation-heavy work after fork)."""

    scratch: bytes
    mounts: tuple[bytes, ...]
    hide: tuple[tuple[bytes, bytes], ...]  # (empty dir, path to cover)
    root_fix: tuple[bytes, bytes, bytes] | None  # (pyenv-like dir, its stand-in, /root)
    uid: int
    gid: int
    covers: tuple[bytes, ...]  # shared temporary folders, replaced by a private tmpfs
    keep: tuple[bytes, ...]  # folders inside those that must stay (the venv...)
    subdirs: tuple[bytes, ...]  # made in the scratch tmpfs (home, tmp)
    package: tuple[bytes, bytes] | None = None  # (learner edition, real package it covers)


def capabilities(groups: bool | None = None) -> list[tuple[str, bool]]:
    """What the sandbox contains on this machine: (what, whether it holds); ``groups``:
    whether control groups can be made (found out if not given)."""
    root = os.geteuid() == 0 and sys.platform.startswith("linux")
    if groups is None:
        probe = group_limits.Groups()
        groups = probe.available
        probe.close()
    return [
        ("CPU time, memory, file size, open files, no core files (resource limits)", True),
        (
            "memory, processes and CPU time of all a submission's processes together "
            "(a control group; without one, a submission is one process)",
            groups,
        ),
        ("a scratch folder of limited size (private tmpfs)", root),
        (
            "read-only file system; hidden solutions, autograders, .git, other submissions "
            "and the engine's real source; /proc shows only its own processes",
            root,
        ),
        ("private System V IPC (shared memory and queues die with the submission)", root),
        ("no network, not even the grader's loopback (network namespace)", root),
        ("a user id of its own: no reach into other submissions, all processes killed", root),
    ]


def missing_capabilities() -> list[str]:
    """What the sandbox cannot contain here (run as an unprivileged user)."""
    return [what for what, holds in capabilities() if not holds]


def submission_uid(index: int) -> int:
    uid = _UID_BASE + (os.getpid() % 10_000) * 10_000 + index % 10_000
    try:
        import pwd

        pwd.getpwuid(uid)
    except KeyError:
        return uid
    raise JailError(f"user id {uid} belongs to an account: cannot isolate submissions")


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            point = line.split()[4].encode().decode("unicode_escape")
            points.append(point)
    return points


def prepare(
    scratch: Path, hide: Sequence[Path], uid: int, empty: Path, edition: Path | None = None
) -> Jail | None:
    """The jail for a submission whose scratch folder is ``scratch``; ``empty`` is an
    empty folder (outside the scratch folder) that covers the ``hide`` paths, and the
    package in ``edition`` (a learner edition, :mod:`.edition`) covers the real one. None
    where namespaces are not available (not root, not Linux)."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return None
    # World-readable leftovers (an instructor's otter assign output, say) live in the
    # shared temporary folders: the submission gets empty private ones instead.
    covers = [Path(d).resolve() for d in _SHARED_TMP if os.path.isdir(d)]
    covers = [d for i, d in enumerate(covers) if d not in covers[:i]]
    needed = [Path(sys.prefix), Path(sys.base_prefix),
              Path(os.path.realpath(sys.executable)).parent,
              Path(snapshotlib.__file__).resolve().parents[1], empty.parent]  # fmt: skip
    keep = [k.resolve() for k in needed if any(k.resolve().is_relative_to(d) for d in covers)]
    keep = [k for k in keep if not any(k != o and k.is_relative_to(o) for o in keep)]
    skip = ("/proc", "/sys", "/dev", *map(str, covers))
    s = str(scratch)
    mounts = tuple(
        m.encode() for m in _mount_points()
        if not m.startswith(skip) and not (m == s or m.startswith(s + "/"))
    )  # fmt: skip
    hidden = tuple(
        (bytes(empty), bytes(Path(p).resolve())) for p in hide if Path(p).is_dir()
    )  # fmt: skip
    # nobody must reach the interpreter: if a parent of it is closed (e.g. /root is 0700),
    # cover that parent with an open stand-in holding only the interpreter's tree
    root_fix = None
    base = Path(os.path.realpath(sys.executable)).parent
    for parent in [base, *base.parents]:
        if parent.parent == parent:
            break
        if not os.stat(parent).st_mode & 0o001:
            child = base.relative_to(parent).parts[0]
            stand_in = empty.parent / ".root"
            (stand_in / child).mkdir(parents=True, exist_ok=True)
            os.chmod(stand_in, 0o755)
            root_fix = (bytes(parent / child), bytes(stand_in / child), bytes(parent))
            break
    subdirs = (bytes(scratch / "home"), bytes(scratch / "tmp"))
    kept = tuple(map(bytes, dict.fromkeys(keep)))
    package = None
    if edition is not None:
        real = Path(snapshotlib.__file__).resolve().parent
        package = (bytes(edition / "snapshotlib"), bytes(real))
    return Jail(bytes(scratch), mounts, hidden, root_fix, uid, uid,
                tuple(map(bytes, covers)), kept, subdirs, package)  # fmt: skip


def preexec(limits: Limits, jail: Jail | None, group: tuple[bytes, ...] = ()) -> Callable[[], None]:
    """The function the child runs between fork and exec; ``group``: the ``cgroup.procs``
    files of the submission's control group (none: it runs as one process)."""
    processes = group_limits.GROUP_PROCESSES if group else group_limits.ONE_PROCESS
    libc = ctypes.CDLL(None, use_errno=True) if jail else None
    tmpfs_options = b"mode=0700,size=%dm,uid=%d,gid=%d" % (
        limits.scratch_mb,
        jail.uid if jail else 0,
        jail.gid if jail else 0,
    )

    def check(rc: int, what: str) -> None:
        if rc != 0:
            raise OSError(ctypes.get_errno(), what)

    def apply() -> None:
        if group:
            group_limits.join(group)
        mem = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        size = limits.fsize_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        if jail is None or libc is None:
            # no user id of its own: the limit counts every process of this user, so one
            # means the submission cannot fork or start a thread
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
            return
        check(libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWNET), "unshare")
        check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "private /")
        held = [os.open(k, os.O_PATH) for k in jail.keep]  # reachable once covered
        for folder in jail.covers:
            check(libc.mount(b"tmpfs", folder, b"tmpfs", 0, b"mode=1777,size=16m"), "tmpfs")
        for k, fd in zip(jail.keep, held, strict=True):
            os.makedirs(k, exist_ok=True)
            check(libc.mount(b"/proc/self/fd/%d" % fd, k, None, _MS_BIND | _MS_REC, None), "keep")
            os.close(fd)
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
        covered: tuple[bytes, ...] = ()
        if jail.package and jail.package[0] != jail.package[1]:
            check(libc.mount(jail.package[0], jail.package[1], None, _MS_BIND | _MS_REC, None),
                  "edition")  # fmt: skip
            covered = (jail.package[1],)
        # a /proc of its own that lists only the processes of its own user id; where the
        # kernel refuses (before Linux 5.8 or in some containers) the machine's stays
        libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"hidepid=2")
        for point in jail.mounts + covered + tuple(k for k in jail.keep if k != jail.scratch):
            flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
            libc.mount(None, point, None, flags, None)  # some (e.g. overlay lower) may refuse
        libc.mount(None, b"/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None)
        if jail.root_fix:
            libc.mount(None, jail.root_fix[2], None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None)
        # the scratch folder: a private tmpfs of limited size, owned by the submission
        os.makedirs(jail.scratch, exist_ok=True)
        check(libc.mount(b"tmpfs", jail.scratch, b"tmpfs", _MS_NOSUID | _MS_NODEV,
                         tmpfs_options), "scratch")  # fmt: skip
        for sub in jail.subdirs:
            os.mkdir(sub, 0o700)
            os.chown(sub, jail.uid, jail.gid)
        os.chdir(jail.scratch)
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
        os.setgroups([])
        os.setgid(jail.gid)
        os.setuid(jail.uid)

    return apply


def kill_user(uid: int | None) -> None:
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

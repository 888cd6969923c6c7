"""Limits that bind a whole submission, all its processes together.

Resource limits (``setrlimit``) bind each process on its own: a submission that forks
three workers would get three times the memory and CPU. Where the machine lets the
grader make control groups (cgroup v2 with the memory and pids controllers, or the
memory, pids and cpuacct hierarchies of cgroup v1; as root, usually), each submission
gets a group of its own: its memory (``memory_mb``, all processes together), its number
of processes and threads, and its CPU time, which the grader reads while the submission
runs and which ends it (:meth:`Group.cpu_seconds`). Elsewhere a submission runs as one
process and one thread: it cannot fork or start threads, so the per-process limits are
its limits (:data:`ONE_PROCESS`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

#: processes and threads a submission may have at once, in a group of its own
GROUP_PROCESSES = 64
#: the process-count limit where there is no group: the submission's one process
ONE_PROCESS = 1

_V2_ROOT = Path("/sys/fs/cgroup")
_V1_ROOT = Path("/sys/fs/cgroup")


@dataclass
class Group:
    """The control group(s) of one submission: one folder in cgroup v2, or one per
    hierarchy (memory, pids, cpuacct) in cgroup v1."""

    version: int
    folders: tuple[Path, ...]  # v2: (group,); v1: (memory, pids, cpuacct)

    @property
    def procs_files(self) -> tuple[bytes, ...]:
        """The files a process writes its id to, to join (before it drops root)."""
        return tuple(bytes(f / "cgroup.procs") for f in self.folders)

    def cpu_seconds(self) -> float:
        """CPU time used by every process that has been in the group."""
        try:
            if self.version == 2:
                for line in (self.folders[0] / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) / 1e6
                return 0.0
            return int((self.folders[2] / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError):
            return 0.0

    def memory_peak(self) -> int | None:
        """The most memory the group held at once, in bytes (None where not told)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        with contextlib.suppress(OSError, ValueError):
            return int((self.folders[0] / name).read_text())
        return None

    def out_of_memory(self) -> bool:
        """Whether a process of the group was killed for the group's memory limit."""
        try:
            if self.version == 2:
                events = (self.folders[0] / "memory.events").read_text().split()
                return (
                    int(dict(zip(events[::2], events[1::2], strict=False)).get("oom_kill", 0)) > 0
                )
            text = (self.folders[0] / "memory.oom_control").read_text().split()
            counts = dict(zip(text[::2], text[1::2], strict=False))
            if "oom_kill" in counts:
                return int(counts["oom_kill"]) > 0
            return int((self.folders[0] / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return sorted(found)

    def kill(self) -> None:
        """Kill every process in the group."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                (self.folders[0] / "cgroup.kill").write_text("1")
        for _ in range(50):
            left = self.pids()
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    def remove(self) -> None:
        """Kill what is left and remove the group's folders."""
        self.kill()
        for folder in self.folders:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    if e.errno != errno.EBUSY:
                        break
                    time.sleep(0.02)


def _v2_parent(name: str) -> Path | None:
    """A parent group for the submissions' groups in cgroup v2, with the memory and pids
    controllers on for its children; None where that cannot be made here."""
    root = _V2_ROOT
    if not (root / "cgroup.controllers").is_file():
        return None
    try:
        available = (root / "cgroup.controllers").read_text().split()
        if not {"memory", "pids"} <= set(available):
            return None
        on = (root / "cgroup.subtree_control").read_text().split()
        for controller in ("memory", "pids"):
            if controller not in on:
                (root / "cgroup.subtree_control").write_text(f"+{controller}")
        parent = root / name
        parent.mkdir()
        (parent / "cgroup.subtree_control").write_text("+memory +pids")
        return parent
    except OSError:
        return None


def _v1_parents(name: str) -> tuple[Path, ...] | None:
    folders = []
    try:
        for hierarchy in ("memory", "pids", "cpuacct"):
            base = _V1_ROOT / hierarchy
            if not (base / "cgroup.procs").is_file():
                return None
            folders.append(base / name)
        for folder in folders:
            folder.mkdir()
        return tuple(folders)
    except OSError:
        for folder in folders:
            with contextlib.suppress(OSError):
                folder.rmdir()
        return None


class Groups:
    """Makes a group per submission under a parent of this grading run's own; ``None``
    from :meth:`make` where the machine does not allow it (see the module docstring)."""

    def __init__(self) -> None:
        self.name = f"snapshotlib-grade.{os.getpid()}.{time.monotonic_ns()}"
        self.version = 0
        self.parents: tuple[Path, ...] = ()
        if os.geteuid() != 0:
            return
        v2 = _v2_parent(self.name)
        if v2 is not None:
            self.version, self.parents = 2, (v2,)
            return
        v1 = _v1_parents(self.name)
        if v1 is not None:
            self.version, self.parents = 1, v1

    @property
    def available(self) -> bool:
        return bool(self.parents)

    def make(self, label: str, memory_mb: int) -> Group | None:
        if not self.parents:
            return None
        folders = tuple(p / label for p in self.parents)
        try:
            for folder in folders:
                folder.mkdir()
            limit = str(memory_mb * 1024 * 1024)
            if self.version == 2:
                (folders[0] / "memory.max").write_text(limit)
                with contextlib.suppress(OSError):  # no swap where swap is accounted
                    (folders[0] / "memory.swap.max").write_text("0")
                (folders[0] / "pids.max").write_text(str(GROUP_PROCESSES))
            else:
                (folders[0] / "memory.limit_in_bytes").write_text(limit)
                with contextlib.suppress(OSError):
                    (folders[0] / "memory.memsw.limit_in_bytes").write_text(limit)
                (folders[1] / "pids.max").write_text(str(GROUP_PROCESSES))
        except OSError:
            Group(self.version, folders).remove()
            return None
        return Group(self.version, folders)

    def close(self) -> None:
        for parent in self.parents:
            for child in parent.iterdir() if parent.is_dir() else []:
                if child.is_dir():
                    Group(self.version, (child,)).remove()
            with contextlib.suppress(OSError):
                parent.rmdir()
        self.parents = ()


def join(procs_files: tuple[bytes, ...]) -> None:
    """Put the calling process in a group (run in the child between fork and exec)."""
    pid = str(os.getpid()).encode()
    for path in procs_files:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, pid)
        finally:
            os.close(fd)

"""Which process is ``snapshotlib live up``: the record it leaves in its folder, so that
``live down`` signals that process and no other.

A process id alone is not an identity: once ``up`` has gone (killed, the machine
restarted) the id may belong to any later process, and signalling it would stop
something that is not the cluster. So the record holds the id with the process's start
time (Linux: ``/proc/PID/stat``; elsewhere what ``ps`` says), and a process counts as
``up`` only while both agree.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: the file holding the identity of ``snapshotlib live up``
UP_RECORD = "up.pid"


@dataclass(frozen=True)
class UpRecord:
    """A process id and the start time that tells it from a later process of that id."""

    pid: int
    started: str

    def running(self) -> bool:
        """Whether this very process still runs (not an exited one, not another one
        that has been given the same id since)."""
        return alive(self.pid) and start_time(self.pid) == self.started


def record_file(folder: Path) -> Path:
    """Where ``up`` keeps its record in ``folder``."""
    return folder / UP_RECORD


def write_record(folder: Path) -> UpRecord:
    """Record this process as the folder's ``up``."""
    pid = os.getpid()
    record = UpRecord(pid, start_time(pid) or "")
    text = json.dumps({"pid": record.pid, "started": record.started}) + "\n"
    record_file(folder).write_text(text, encoding="utf-8")
    return record


def read_record(folder: Path) -> UpRecord | None:
    """The folder's record, or None when there is none or it is not one ``up`` wrote
    (an older release's bare process id included: it says nothing of whose it is)."""
    try:
        data = json.loads(record_file(folder).read_text(encoding="utf-8"))
        pid, started = data["pid"], data["started"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if not isinstance(started, str) or not started:
        return None
    return UpRecord(pid, started)


def start_time(pid: int) -> str | None:
    """When process ``pid`` started, as the system says it (None: no such process)."""
    try:  # Linux: field 22 of stat, in clock ticks since boot; the name may hold spaces
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
        return "ticks " + stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        pass
    try:
        shown = subprocess.run(
            ["ps", "-o", "lstart=", "-p", str(pid)],
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return shown.stdout.strip() or None


def alive(pid: int) -> bool:
    """Whether a process of this id runs (an exited one not yet reaped does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # an exited process its parent has not reaped yet is gone too (Linux)
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"

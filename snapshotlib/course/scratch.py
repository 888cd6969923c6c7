"""Temporary folders for a lesson's files (a sweep's results, a live cluster's logs).

A folder is removed when the kernel exits, but a kernel killed (Jupyter's shutdown
gives up after a few seconds; Binder culls idle sessions) never runs its exit handlers.
So each folder's name carries the process id of the kernel that made it, and making a
new one removes the folders of the same lesson whose kernel is gone.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path


def lesson_folder(prefix: str, *, remove_at_exit: bool = True) -> Path:
    """A new folder ``TMP/{prefix}{pid}-XXXXXX`` for this kernel's files, after removing
    the ``prefix`` folders of kernels no longer running. Unless ``remove_at_exit`` is
    false (the caller removes it itself), it goes when this process exits."""
    remove_orphans(prefix)
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    if remove_at_exit:
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def remove_orphans(prefix: str) -> list[Path]:
    """Remove the ``prefix`` folders in the temporary folder whose kernel is gone; the
    folders removed. A folder of a running process, or not named as
    :func:`lesson_folder` names them, stays."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = folder.name[len(prefix) :].partition("-")[0]
        if folder.is_dir() and pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _running(pid: int) -> bool:
    if os.name != "posix":  # Windows' os.kill ends the process: keep its folders
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True

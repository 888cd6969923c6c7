"""A lesson's temporary folder goes when its kernel exits, and a kernel killed before
it could remove its folder has it removed by the next kernel that makes one."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from snapshotlib.course.scratch import lesson_folder, remove_orphans

PREFIX = "snapshotlib-scratch-test-"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="orphans are found by pid on POSIX")


def _folder_of_a_process(code: str) -> Path:
    made = subprocess.run(
        [sys.executable, "-c", f"from snapshotlib.course.scratch import lesson_folder\n{code}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(made.stdout.strip())


def test_a_folder_is_removed_when_its_kernel_exits() -> None:
    folder = _folder_of_a_process(
        f"f = lesson_folder({PREFIX!r}); (f / 'x').write_text('1'); print(f)"
    )
    assert folder.name.startswith(PREFIX) and not folder.exists()


def test_a_killed_kernel_s_folder_is_removed_by_the_next_and_a_running_one_s_stays() -> None:
    # os._exit skips the exit handlers, as a kernel killed by SIGKILL does
    orphan = _folder_of_a_process(
        f"import os; f = lesson_folder({PREFIX!r}); print(f, flush=True); os._exit(0)"
    )
    assert orphan.is_dir()
    mine = lesson_folder(PREFIX, remove_at_exit=False)
    try:
        assert not orphan.exists()
        assert mine.name.startswith(f"{PREFIX}{os.getpid()}-")
        assert remove_orphans(PREFIX) == []  # this process runs: its folder stays
        assert mine.is_dir()
    finally:
        mine.rmdir()


def test_folders_not_named_by_a_pid_are_left_alone() -> None:
    other = Path(tempfile.mkdtemp(prefix=f"{PREFIX}notapid-"))
    try:
        assert remove_orphans(PREFIX) == [] and other.is_dir()
    finally:
        other.rmdir()

"""``live down`` signals the process ``live up`` was, never one that has its id since."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from snapshotlib.live.up_record import (
    UpRecord,
    read_record,
    record_file,
    start_time,
    write_record,
)


def snapshotlib(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snapshotlib", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A process that is not a cluster: it must outlive every `live down` below."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield proc
    proc.kill()
    proc.wait()


def test_the_record_names_this_very_process(tmp_path: Path) -> None:
    record = write_record(tmp_path)
    assert record.pid == os.getpid() and record.running()
    assert read_record(tmp_path) == record
    assert json.loads(record_file(tmp_path).read_text()) == {
        "pid": record.pid,
        "started": record.started,
    }


def test_a_process_that_has_the_id_since_is_not_the_one_recorded(
    bystander: subprocess.Popen[bytes],
) -> None:
    started = start_time(bystander.pid)
    assert started is not None
    assert UpRecord(bystander.pid, started).running()
    assert not UpRecord(bystander.pid, started + "0").running()


@pytest.mark.parametrize(
    "stale",
    [
        "{pid}\n",  # an older release's bare id: it says nothing of whose it is
        '{{"pid": {pid}, "started": "ticks 1"}}\n',  # that id, started at another time
        "not a record\n",
        '{{"pid": true, "started": "x"}}\n',
    ],
)
def test_down_does_not_signal_a_process_the_record_does_not_name(
    tmp_path: Path, bystander: subprocess.Popen[bytes], stale: str
) -> None:
    record_file(tmp_path).write_text(stale.format(pid=bystander.pid))
    down = snapshotlib("live", "down", "--workdir", str(tmp_path))
    assert down.returncode == 2, down.stdout
    assert "no live cluster runs" in down.stderr and "Traceback" not in down.stderr
    assert "stopped" not in down.stdout
    assert bystander.poll() is None, "live down signalled a process that is not the cluster"
    assert not record_file(tmp_path).exists(), "the stale record is cleared"


def test_a_record_of_an_exited_process_is_not_running(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    started = start_time(gone.pid) or "ticks 0"
    gone.wait()
    assert not UpRecord(gone.pid, started).running()

"""``snapshotlib live lab``: a learner's class on real processes, graded.

What is specified: exercise 2's class, as its solution writes it, passes every snapshot
of a lab run with a crash and a restore, and the run had messages in transit to record;
a class that records no channel state fails, each failure naming the message; a class
that raises on a node has what it raised shown, and the lab fails; the command's exit
status says whether the lab passed. Times are wall-clock backstops, never limits.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from learner_classes import write_learner_files
from live_support import require_live

require_live()

from snapshotlib.live.lab import run_lab  # noqa: E402


@pytest.fixture(scope="module")
def learner(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_learner_files(tmp_path_factory.mktemp("learner"))


def test_exercise_2s_class_passes_the_lab_through_a_crash_and_a_restore(
    learner: Path, tmp_path: Path
) -> None:
    said: list[str] = []
    report = run_lab(
        f"{learner / 'marker_rules.py'}:MarkerRules",
        snapshots=4,
        nodes=3,
        seed=2,
        workdir=tmp_path,
        say=said.append,
    )
    assert report.ok, report.summary()
    assert report.crashed is not None
    assert {s.epoch for s in report.snapshots} == {0, 1}, "snapshots before and after"
    assert report.tested_channels
    assert any(line.startswith(f"crashing {report.crashed}") for line in said)
    assert report.summary().startswith(f"4 of 4 snapshots passed, {report.crashed} crashed")


def test_a_class_recording_no_channel_fails_the_lab_naming_each_message(
    learner: Path, tmp_path: Path
) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "snapshotlib", "live", "lab", "--algorithm",
         "buggy.py:ForgetsChannels", "--snapshots", "3", "--nodes", "3", "--no-crash",
         "--workdir", str(tmp_path)],
        capture_output=True, text=True, cwd=learner, timeout=600,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    failed = [line for line in run.stdout.splitlines() if "FAILED" in line]
    assert failed, run.stdout
    assert all("missing from the recorded state of" in line for line in failed), failed
    assert "snapshots passed" in run.stdout.splitlines()[-1]


def test_what_a_class_raised_on_a_node_is_shown_and_fails_the_lab(
    learner: Path, tmp_path: Path
) -> None:
    # true in the simulator, false on a node: a process that did not start the snapshot
    # has no record of it before its first marker
    report = run_lab(
        f"{learner / 'buggy.py'}:KnowsOnlyItsOwn",
        snapshots=1,
        nodes=3,
        crash=False,
        workdir=tmp_path,
        say=lambda line: None,
    )
    assert not report.ok
    assert report.raised
    assert all("KnowsOnlyItsOwn.on_control raised KeyError" in r for r in report.raised)
    assert "your class, on the nodes:" in report.summary()


def test_a_class_whose_start_raises_fails_the_lab_saying_so(learner: Path, tmp_path: Path) -> None:
    report = run_lab(
        f"{learner / 'buggy.py'}:StartRaises",
        snapshots=1,
        nodes=2,
        crash=False,
        workdir=tmp_path,
        say=lambda line: None,
    )
    assert not report.ok
    (snapshot,) = report.snapshots
    assert snapshot.reason.startswith("could not start:"), snapshot.reason
    assert "StartRaises.start raised RuntimeError: not written yet" in snapshot.reason
    assert any("StartRaises.start raised RuntimeError" in r for r in report.raised)

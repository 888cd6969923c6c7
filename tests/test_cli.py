"""The command line contract (README, "A short tour"): run --json, check exit codes, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from snapshotlib.cli import main

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snapshotlib.cli", *args], capture_output=True, text=True
    )


def test_run_json_has_the_contract_fields() -> None:
    done = run_cli("run", str(SCENARIOS / "token-ring.json"), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (snap,) = doc["snapshots"]
    assert snap["id"] == "s1"
    assert snap["initiators"] == ["P2"]
    assert snap["complete"] is True
    assert snap["processes"]["P1"] == {"events": ["pass1"], "state": 0, "done": True}
    assert snap["channels"]["P1->P2"] == [{"label": "pass1", "payload": 1}]
    assert doc["checks"]["s1"]["consistent"] is True
    assert doc["checks"]["s1"]["dijkstra"]["holds"] is True
    assert doc["checks"]["s1"]["conservation"]["holds"] is True


def test_check_exits_zero_on_a_correct_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SCENARIOS / "worked-example.json")]) == 0
    assert capsys.readouterr().out.startswith("ok:")


def test_check_exits_one_naming_the_offending_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SCENARIOS / "non-fifo-breaks.json")]) == 1
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1
    assert "message late" in out


def test_check_exits_two_on_bad_input_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"processes": ["a", "b"],\n "steps": [{"do": "fly"}]}')
    done = run_cli("check", str(bad))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{bad}: step 1" in done.stderr and "unknown 'do' 'fly'" in done.stderr


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"processes": ["a", "b"],\n "steps": [}\n')
    done = run_cli("run", str(bad))
    assert done.returncode == 2
    assert "line 2, column" in done.stderr


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    done = run_cli("run", str(tmp_path / "nope.json"))
    assert done.returncode == 2
    assert "cannot read" in done.stderr


def test_shiviz_writes_a_log_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "run.log"
    assert main(["shiviz", str(SCENARIOS / "worked-example.json"), "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[:3] == [
        r"(?<host>\S+) (?<clock>\{\S*\}) (?<event>.*)",
        "",
        'P1 {"P1":1} internal A',
    ]


def test_text_report_lists_recorded_states(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(SCENARIOS / "worked-example.json")]) == 0
    out = capsys.readouterr().out
    assert "P1: events A, B;" in out
    assert "P2->P1: H" in out


def test_python_dash_m_snapshotlib_is_the_same_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "snapshotlib", "check", str(SCENARIOS / "non-fifo-breaks.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "inconsistent" in done.stdout


def test_version_is_the_packages(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.metadata

    from snapshotlib import __version__
    from snapshotlib.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"snapshotlib {__version__}"
    assert importlib.metadata.version("snapshotlib") == __version__

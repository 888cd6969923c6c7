"""``snapshotlib search``: exit 0 when every interleaving holds, 1 with the shortest
counterexample (written as a scenario that replays), 2 on bad input, 3 when it stopped at
its limit of states, 130 on Ctrl-C with the statistics so far."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snapshotlib", *args], capture_output=True, text=True, cwd=cwd
    )


def write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc))
    return path


NON_FIFO = {
    "name": "three-non-fifo",
    "processes": ["P1", "P2", "P3"],
    "fifo": False,
    "app": "tokens",
    "initial": {"P1": 3, "P2": 3, "P3": 3},
    "search": {"sends": 1, "snapshots": [{"id": "s1", "at": "any"}]},
}


def test_every_interleaving_of_the_token_ring_holds() -> None:
    done = cli("search", str(SCENARIOS / "token-ring.json"))
    assert done.returncode == 0, done.stderr
    assert "OK: every interleaving satisfies consistent, dijkstra, conservation" in done.stdout
    assert "states:" in done.stdout and "states/s" in done.stdout


def test_a_violation_exits_1_and_writes_a_scenario_that_replays(tmp_path: Path) -> None:
    scenario = write(tmp_path / "nf.json", NON_FIFO)
    out = tmp_path / "cex.json"
    done = cli("search", str(scenario), "--out", str(out))
    assert done.returncode == 1, done.stderr
    assert "VIOLATED consistent" in done.stdout
    assert "the shortest failing run:" in done.stdout
    assert "P2 receives the marker of s1 from P1" in done.stdout
    check = cli("check", str(out))
    assert check.returncode == 1
    assert "missing from the recorded state" in check.stdout + check.stderr
    assert cli("shiviz", str(out)).returncode == 0


def test_json_names_the_violation_and_its_steps(tmp_path: Path) -> None:
    done = cli("search", str(write(tmp_path / "nf.json", NON_FIFO)), "--json")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert doc["ok"] is False and doc["violation"]["invariant"] == "consistent"
    assert doc["violation"]["shortest"] is True
    assert len(doc["violation"]["steps"]) == doc["violation"]["length"]
    assert doc["stats"]["distinct"] > 0


def test_only_the_invariants_asked_for_are_checked(tmp_path: Path) -> None:
    scenario = str(write(tmp_path / "nf.json", NON_FIFO))
    done = cli("search", scenario, "--invariant", "completes")
    assert done.returncode == 0, done.stdout  # markers overtake, yet every snapshot completes
    assert "OK: every interleaving satisfies completes" in done.stdout
    done = cli("search", scenario, "--invariant", "dijkstra", "--invariant", "completes")
    assert done.returncode == 1  # a red message overtakes a marker: an orphan
    assert "VIOLATED dijkstra: snapshot s1: a red message is accepted in a white action" in (
        done.stdout
    )


def test_an_invariant_of_your_own_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(
        "def p2_recorded_a_token(sim):\n"
        "    return sim.snapshot('s1').states['P2'] > 0 or 'P2 recorded no token'\n"
    )
    doc = {**NON_FIFO, "initial": {"P1": 1, "P2": 1, "P3": 1}, "fifo": True}
    scenario = str(write(tmp_path / "f.json", doc))
    done = cli("search", scenario, "--invariant", "mine.py:p2_recorded_a_token", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "VIOLATED p2_recorded_a_token: P2 recorded no token" in done.stdout


def test_no_reduction_and_a_depth_bound(tmp_path: Path) -> None:
    scenario = str(SCENARIOS / "worked-example.json")
    done = cli("search", scenario, "--no-reduction", "--depth", "4")
    assert done.returncode == 0
    assert "partial-order reduction: off" in done.stdout
    assert "no violation within the depth bound (4 actions)" in done.stdout


def test_a_search_stops_at_its_limit_of_states_and_says_what_to_do() -> None:
    """A state waiting to be expanded holds a whole run: a search that would fill the
    memory stops at --max-states (50,000 by default) and says so, with exit 3."""
    scenario = str(SCENARIOS / "concurrent-snapshots.json")  # millions of states whole
    done = cli("search", scenario, "--max-states", "300")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "STOPPED after 300 states: no violation so far" in done.stdout
    assert "not every schedule was checked" in done.stdout and "--depth" in done.stdout
    doc = json.loads(cli("search", scenario, "--max-states", "300", "--json").stdout)
    assert doc["limited"] is True and doc["exhaustive"] is False and doc["ok"] is True
    # bounded by depth instead, the same scenario is searched whole
    bounded = cli("search", scenario, "--depth", "3", "--quiet")
    assert bounded.returncode == 0, bounded.stdout
    assert "no violation within the depth bound (3 actions)" in bounded.stdout


def test_bad_input_exits_2_with_one_line_naming_it(tmp_path: Path) -> None:
    cases = [
        (tmp_path / "missing.json", "cannot read"),
        (write(tmp_path / "a.json", {**NON_FIFO, "search": {"sends": "two"}}), "search.sends"),
        (
            write(tmp_path / "b.json", {**NON_FIFO, "search": {"depht": 3}}),
            "unknown field(s) depht",
        ),
    ]
    for path, words in cases:
        done = cli("search", str(path))
        assert done.returncode == 2, (path, done.stdout)
        assert words in done.stderr and str(path) in done.stderr
        assert "Traceback" not in done.stderr
    for bad in ("consistant", "nomodule:f", "nofile.py:f", "os:nothing_here"):
        done = cli("search", str(SCENARIOS / "token-ring.json"), "--invariant", bad)
        assert done.returncode == 2, bad
        assert bad in done.stderr and "Traceback" not in done.stderr
    assert cli("search", str(SCENARIOS / "token-ring.json"), "--depth", "-1").returncode == 2


def test_ctrl_c_stops_with_the_statistics_so_far(tmp_path: Path) -> None:
    big = {
        **NON_FIFO,
        "fifo": True,
        "search": {"sends": 3, "snapshots": [{"id": "s1"}, {"id": "s2"}]},
    }
    scenario = str(write(tmp_path / "big.json", big))
    proc = subprocess.Popen(
        [sys.executable, "-m", "snapshotlib", "search", scenario, "--max-states", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()  # the first progress line: the search is under way
    assert line.startswith("searching: depth"), line
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 130
    assert "INTERRUPTED" in out and "states:" in out

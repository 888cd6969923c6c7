"""Recording runs as scenarios (one JSON line each) for ``check-traces``: from the CLI,
from the explorer, and from any simulator; replaying a record gives the same run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapshotlib.formats.record import append_record, recorded_scenario
from snapshotlib.formats.scenario import (
    ScenarioError,
    load_scenario,
    parse_scenario,
    run_scenario,
)
from snapshotlib.sweeps.traces import check_record, failing
from snapshotlib.workloads import random_execution, random_strongly_connected

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "examples" / "scenarios").glob("*.json"))


def replayed(data: dict[str, object]) -> object:
    return run_scenario(parse_scenario(json.loads(json.dumps(data))))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_a_recorded_scenario_replays_the_same_run(path: Path) -> None:
    sim = run_scenario(load_scenario(path))
    try:
        data = recorded_scenario(sim, path.stem)
    except ScenarioError as e:  # the clock algorithm has no plain name in the format
        assert sim.algorithm.name == "clock", e
        return
    again = replayed(data)
    assert again.trace.actions == sim.trace.actions  # type: ignore[attr-defined]
    assert again.snapshots() == sim.snapshots()  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", range(20))
def test_random_runs_round_trip(seed: int) -> None:
    sim = random_execution(random_strongly_connected(4, seed=seed), seed=seed, n_actions=30)
    assert replayed(recorded_scenario(sim)).trace.actions == sim.trace.actions  # type: ignore[attr-defined]


def test_a_non_fifo_delivery_without_a_label_of_its_own_is_refused() -> None:
    from snapshotlib import Network, Send, Simulator

    sim = Simulator(Network(["A", "B"], fifo=False))
    sim.step(Send("A", "B", None))
    sim.step(Send("A", "B", None))
    sim.run()
    with pytest.raises(ScenarioError, match="no label of its own"):
        recorded_scenario(sim)


def test_the_cli_appends_runs_that_check_traces_checks(tmp_path: Path) -> None:
    from snapshotlib.cli import main

    out = tmp_path / "runs.jsonl"
    for name in ("token-ring", "non-fifo-breaks"):
        assert main(["run", str(ROOT / "examples" / "scenarios" / f"{name}.json"),
                     "--record", str(out)]) == 0  # fmt: skip
    lines = out.read_text().splitlines()
    assert len(lines) == 2
    rows = [row for k, line in enumerate(lines, 1) for row in check_record(str(out), k, line)]
    assert all(row["error"] is None for row in rows)
    assert {row["line"] for row in rows if failing(row)} == {2}  # the non-FIFO run breaks


def test_the_explorer_records_its_run(tmp_path: Path) -> None:
    pytest.importorskip("ipywidgets", reason="the explorer needs the widgets extra")
    from snapshotlib.widgets import Explorer

    ex = Explorer(str(ROOT / "examples" / "scenarios" / "token-ring.json"))
    for _ in range(5):
        ex.step_once()
    out = tmp_path / "explorer.jsonl"
    assert ex.record(out)
    (row, *_) = check_record(str(out), 1, out.read_text().splitlines()[0])
    assert row["error"] is None
    assert replayed(json.loads(out.read_text())).trace.actions == ex.sim.trace.actions  # type: ignore[attr-defined]


def test_append_record_adds_one_line_per_run(tmp_path: Path) -> None:
    sim = random_execution(random_strongly_connected(3, seed=1), seed=1, n_actions=10)
    out = tmp_path / "a.jsonl"
    append_record(sim, out)
    append_record(sim, out)
    assert [json.loads(line)["steps"] for line in out.read_text().splitlines()].count(
        recorded_scenario(sim)["steps"]
    ) == 2

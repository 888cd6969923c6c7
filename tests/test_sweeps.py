"""Sweeps without Spark: the TOML configuration, one execution per point, the summary,
bulk trace checking, and the command line's --local runs and bad-input errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snapshotlib.cli import main
from snapshotlib.sweeps import (
    COLUMN_NAMES,
    SUMMARY_COLUMNS,
    SweepConfigError,
    check_lines,
    load_config,
    parse_config,
    run_point,
    summarize,
    tally,
)
from snapshotlib.sweeps.execute import register
from snapshotlib.sweeps.params import CHECKS, METRICS, PARAMETER

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "sweeps"
SCENARIOS = ROOT / "examples" / "scenarios"


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ configuration


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[grid]\ntopology = ["ring", "star"]',
            "sweep.toml: [grid] topology: expected one of ring, complete, random, dataflow; "
            "got 'star'",
        ),
        ("[grid]\nsize = [4, 1]", "sweep.toml: [grid] size: expected a number >= 2; got 1"),
        ("[grid]\nsize = [4.5]", "sweep.toml: [grid] size: expected a whole number; got 4.5"),
        ("[grid]\nrate = 0", "sweep.toml: [grid] rate: expected a number > 0; got 0.0"),
        ("[grid]\nfifo = ['yes']", "sweep.toml: [grid] fifo: expected true or false; got 'yes'"),
        ("[grid]\ndrift = [0.1, 0.1]", "sweep.toml: [grid] drift: expected each value once"),
        ("[grid]\nsize = []", "sweep.toml: [grid] size: expected a value or a non-empty list"),
        ("[grid]\ncolour = 1", "sweep.toml: [grid] colour: unknown parameter; expected one of"),
        ("[sweep]\nseeds = 0", "sweep.toml: [sweep] seeds: expected a whole number >= 1"),
        ("[sweep]\nseeds = [1, -2]", "sweep.toml: [sweep] seeds: expected a whole number"),
        ("[sweep]\nsize = [3, 4]", "sweep.toml: [sweep] size: expected one value (put lists"),
        ("[sweep]\nmood = 1", "sweep.toml: [sweep] mood: unknown key; expected name, seeds"),
        ("[grids]\nsize = 3", "sweep.toml: [grids]: unknown table; expected [sweep] and [grid]"),
        ("[grid]\nsize = [3,", "sweep.toml: invalid TOML: "),
        (
            "[[grid]]\nsize = 3\n[[grid]]\nmarker_delay = 0",
            "sweep.toml: [grid 2] marker_delay: expected a number >= 1; got 0",
        ),
    ],
)
def test_a_bad_config_names_the_file_the_key_and_what_was_expected(tmp_path, text, message):
    with pytest.raises(SweepConfigError) as err:
        load_config(write(tmp_path, text))
    assert str(err.value).startswith(str(tmp_path / message)), str(err.value)


def test_a_missing_config_file_is_named():
    with pytest.raises(SweepConfigError, match=r"nowhere\.toml: cannot read"):
        load_config("nowhere.toml")


def test_an_algorithm_without_an_executor_is_refused_as_not_available(tmp_path, monkeypatch):
    from snapshotlib.sweeps import execute

    monkeypatch.setattr(execute, "_plugins_loaded", True)  # nothing left to import
    monkeypatch.delitem(execute.EXECUTORS, "unaligned", raising=False)
    path = write(tmp_path, '[grid]\ntopology = "dataflow"\nalgorithm = "unaligned"')
    with pytest.raises(SweepConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(
        f"{path}: [grid] algorithm: algorithm 'unaligned' is not available in this version "
        "(available: "
    )


def test_a_marker_algorithm_is_refused_on_a_dataflow_graph_with_a_hint():
    with pytest.raises(SweepConfigError) as err:
        parse_config({"grid": {"topology": "dataflow"}}, "x.toml")
    assert "does not run on topology 'dataflow'" in str(err.value)
    assert "give dataflow runs a [[grid]] of their own" in str(err.value)


def test_the_grid_is_the_product_of_its_lists_times_the_seeds_seed_major():
    sweep = parse_config(
        {
            "sweep": {"name": "demo", "seeds": [7, 9], "duration": 12},
            "grid": {"size": [3, 5], "algorithm": ["chandy-lamport", "clock"], "drift": 0.1},
        }
    )
    assert len(sweep) == 8 and len(sweep.cells) == 4
    points = list(sweep.points())
    assert [p["point"] for p in points] == list(range(8))
    assert [p["seed"] for p in points] == [7] * 4 + [9] * 4
    assert {(p["size"], p["algorithm"]) for p in points[:4]} == {
        (3, "chandy-lamport"),
        (3, "clock"),
        (5, "chandy-lamport"),
        (5, "clock"),
    }
    assert all(p["duration"] == 12 and p["drift"] == 0.1 and p["sweep"] == "demo" for p in points)
    assert points[0]["rate"] == PARAMETER["rate"].default


def test_several_grids_make_a_union_and_the_name_defaults_to_the_file_name(tmp_path):
    path = write(
        tmp_path,
        '[sweep]\nseeds = 3\n[[grid]]\nalgorithm = "clock"\ndrift = [0.0, 0.2]\n'
        '[[grid]]\nalgorithm = "lai-yang"\nfifo = false\n',
        "mixed.toml",
    )
    sweep = load_config(path)
    assert sweep.name == "mixed"
    assert [(c["algorithm"], c["drift"], c["fifo"]) for c in sweep.cells] == [
        ("clock", 0.0, True),
        ("clock", 0.2, True),
        ("lai-yang", 0.0, False),
    ]
    assert len(sweep) == 9


@pytest.mark.parametrize("name", ["small.toml", "lesson-09.toml"])
def test_the_example_configs_load(name):
    sweep = load_config(EXAMPLES / name)
    assert len(sweep) > 0


# ------------------------------------------------------------------ one execution

OUTCOME_COLUMNS = [name for name, _ in CHECKS + METRICS]


def test_a_row_has_every_documented_column_with_sane_values():
    row = run_point({"seed": 3, "topology": "complete", "size": 4, "marker_delay": 2})
    assert list(row) == list(COLUMN_NAMES)
    assert row["error"] is None and row["reason"] is None
    assert all(row[c] is not None for c in OUTCOME_COLUMNS)
    assert row["channels"] == 12
    assert row["recorded_bytes"] == row["recorded_messages"] * 200
    assert row["messages"] > 0 and row["markers"] == 12  # one marker per channel
    assert 0 <= row["latency"] < row["ticks"]
    assert 0 <= row["peak_buffered"] <= row["recorded_messages"]
    assert row["blocked_time"] == 0
    # a send and a receive per message, a delivery per marker, and the initiation
    assert row["actions"] == 2 * row["messages"] + row["markers"] + 1


def test_the_same_point_gives_the_same_row():
    point = {"seed": 11, "topology": "random", "size": 6, "fifo": False, "rate": 1.5}
    assert run_point(point) == run_point(dict(point))


@settings(max_examples=60)
@given(
    topology=st.sampled_from(["ring", "complete", "random"]),
    size=st.integers(2, 6),
    rate=st.sampled_from([0.2, 0.5, 1.0, 2.5]),
    message_delay=st.integers(1, 6),
    marker_delay=st.integers(1, 10),
    initiators=st.integers(1, 3),
    start=st.sampled_from([0.0, 0.3, 1.0]),
    seed=st.integers(0, 10**6),
)
def test_chandy_lamport_on_fifo_channels_always_records_a_consistent_snapshot(**point):
    row = run_point({**point, "algorithm": "chandy-lamport", "fifo": True, "duration": 15})
    assert row["error"] is None
    assert row["complete"] and row["consistent"] and row["dijkstra_holds"] and row["conserved"]
    assert row["duplicates_after_restore"] == 0 and row["lost_after_restore"] == 0


@settings(max_examples=40)
@given(
    size=st.integers(2, 6),
    message_delay=st.integers(1, 8),
    marker_delay=st.integers(1, 8),
    seed=st.integers(0, 10**6),
)
def test_lai_yang_is_consistent_even_on_non_fifo_channels(**point):
    row = run_point({**point, "algorithm": "lai-yang", "fifo": False, "topology": "complete"})
    assert row["consistent"] and row["dijkstra_holds"] and row["conserved"], row["reason"]


@settings(max_examples=40)
@given(seed=st.integers(0, 10**6), size=st.integers(2, 6), fifo=st.booleans())
def test_the_clock_snapshot_without_drift_is_consistent(seed, size, fifo):
    row = run_point({"algorithm": "clock", "drift": 0.0, "seed": seed, "size": size, "fifo": fifo})
    assert row["consistent"] and row["markers"] == 0


def test_the_clock_snapshot_is_inconsistent_for_some_seed_once_clocks_drift():
    rows = [run_point({"algorithm": "clock", "drift": 0.3, "seed": s}) for s in range(20)]
    bad = [r for r in rows if not r["consistent_cut"]]
    assert bad, "20 seeds at 30 % drift gave no inconsistent cut"
    assert all(r["duplicates_after_restore"] > 0 for r in bad)  # received, and sent again
    assert "received inside the cut but sent outside it" in bad[0]["reason"]


def test_chandy_lamport_breaks_on_non_fifo_channels_when_markers_are_slow():
    rows = [
        run_point({"fifo": False, "marker_delay": 4, "topology": "complete", "seed": s})
        for s in range(10)
    ]
    assert any(not r["dijkstra_holds"] for r in rows)


def test_a_slower_marker_records_more_bytes():
    def median_bytes(delay: int) -> float:
        rows = [run_point({"marker_delay": delay, "seed": s}) for s in range(30)]
        values = sorted(r["recorded_bytes"] for r in rows)
        return (values[14] + values[15]) / 2

    assert median_bytes(1) < median_bytes(8)


def test_an_engine_failure_gives_an_error_row_not_a_crash():
    def broken(point):
        raise RuntimeError("boom")

    register("broken-test", broken, ["ring"])
    try:
        row = run_point({"algorithm": "broken-test", "seed": 1, "size": 3})
    finally:
        from snapshotlib.sweeps.execute import EXECUTORS

        del EXECUTORS["broken-test"]
    assert row["error"] == "RuntimeError: boom"
    assert row["size"] == 3 and row["consistent"] is None


# ------------------------------------------------------------------ summary


def test_the_summary_has_one_row_per_cell_with_rates_and_medians():
    sweep = parse_config({"sweep": {"seeds": 5}, "grid": {"algorithm": ["clock", "lai-yang"]}})
    rows = [run_point(p) for p in sweep.points()]
    table = summarize(rows)
    assert [r["algorithm"] for r in table] == ["clock", "lai-yang"]
    assert list(table[0]) == [name for name, _ in SUMMARY_COLUMNS]
    lai_yang = table[1]
    assert lai_yang["executions"] == 5 and lai_yang["errors"] == 0
    assert lai_yang["consistent_rate"] == 1.0 and lai_yang["duplicates_rate"] == 0.0
    latencies = sorted(r["latency"] for r in rows if r["algorithm"] == "lai-yang")
    assert lai_yang["median_latency"] == latencies[2]


def test_the_summary_leaves_error_rows_out_of_rates():
    good = run_point({"seed": 1})
    bad = {**good, "error": "boom", **dict.fromkeys(OUTCOME_COLUMNS)}
    (cell,) = summarize([good, bad])
    assert cell["executions"] == 2 and cell["errors"] == 1
    assert cell["consistent_rate"] == 1.0
    assert cell["median_latency"] == good["latency"]


def test_a_cell_of_only_errors_has_no_rates():
    row = {**run_point({"seed": 1}), "error": "boom", **dict.fromkeys(OUTCOME_COLUMNS)}
    (cell,) = summarize([row])
    assert cell["consistent_rate"] is None and cell["median_latency"] is None


# ------------------------------------------------------------------ recorded traces


def scenario_line(name: str) -> str:
    return json.dumps(json.loads((SCENARIOS / name).read_text(encoding="utf-8")))


def test_every_line_is_checked_and_a_corrupt_one_is_reported_and_skipped():
    lines = [
        scenario_line("worked-example.json"),
        '{"processes": ["P1", "P2"], "steps": [',
        "",
        scenario_line("non-fifo-breaks.json"),
        b"\xff\xfe",
        '{"processes": ["P1", "P2"], "steps": [{"do": "deliver", "from": "P1", "to": "P2"}]}',
        '{"snapshots": [], "checks": {}}',
        '{"processes": ["P1", "P2"], "steps": [{"do": "internal", "at": "P1"}]}',
    ]
    rows = list(check_lines(("t.jsonl", n, text) for n, text in enumerate(lines, start=1)))
    by_line = {r["line"]: r for r in rows}
    assert sorted(by_line) == [1, 2, 4, 5, 6, 7, 8]  # every non-blank line has a row
    assert by_line[1]["consistent"] and by_line[1]["dijkstra_holds"]
    assert by_line[2]["error"].startswith("t.jsonl, line 2: invalid JSON")
    assert not by_line[4]["consistent"] and by_line[4]["error"] is None
    assert by_line[5]["error"] == "t.jsonl, line 5: not UTF-8 text (byte 0)"
    assert by_line[6]["error"].startswith("t.jsonl, line 6: step 1: cannot deliver P1->P2")
    assert "run --json` result, not a recorded execution" in by_line[7]["error"]
    assert by_line[8]["reason"] == "no snapshot was taken"
    assert tally(rows) == {"records": 7, "snapshots": 2, "failed": 1, "corrupt": 4}


# ------------------------------------------------------------------ command line, no Spark


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep", "nowhere.toml", "--out", "x", "--local"], "nowhere.toml: cannot read"),
        (["check-traces", "nowhere.jsonl", "--local"], "nowhere.jsonl: no such file"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, message, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_sweep_with_a_bad_config_exits_2_before_starting_spark(tmp_path, capsys):
    path = write(tmp_path, '[grid]\nalgorithm = "chandy-lamport"\ntopology = "dataflow"')
    assert main(["sweep", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "does not run on topology 'dataflow'" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ import rules


def test_the_sweeps_package_is_core_standard_library_and_core_only():
    from test_imports import ADAPTERS, PACKAGE, imports_of

    bad = []
    for path in sorted((PACKAGE / "sweeps").glob("*.py")):
        for line, name in imports_of(path):
            top, _, rest = name.partition(".")
            part = rest.split(".")[0]
            if top == "snapshotlib" and part not in ADAPTERS:
                continue
            if top != "snapshotlib" and (top == "__future__" or top in sys.stdlib_module_names):
                continue
            if name == "tomli":  # the TOML reader of Python 3.10 (the spark extra has it)
                continue
            bad.append(f"{path.name}:{line}: {name}")
    assert bad == []


def test_two_grids_that_repeat_a_cell_are_refused() -> None:
    from snapshotlib.sweeps import SweepConfigError, parse_config

    grids = [
        {"algorithm": "chandy-lamport", "marker_delay": [1, 3]},
        {"algorithm": "chandy-lamport", "marker_delay": 3},
    ]
    with pytest.raises(SweepConfigError, match=r"x.toml: \[grid 2\] repeats a cell of \[grid 1\]"):
        parse_config({"grid": grids}, "x.toml")

"""Sweeps and bulk trace checks on an embedded Spark (local[2]): the same rows as a plain
loop, Parquet that reads back, a summary equal to the reference, corrupt records
reported and skipped, and the command line's exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from spark_support import need

from snapshotlib.cli import main
from snapshotlib.spark.progress import Ticker
from snapshotlib.sweeps import load_config, parse_config, run_point, summarize

pq = need("pyarrow.parquet")
spark_sweep = need("snapshotlib.spark.sweep")
spark_traces = need("snapshotlib.spark.traces")

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "examples" / "scenarios"
SMALL = ROOT / "examples" / "sweeps" / "small.toml"

GRID = {
    "sweep": {"name": "spark-test", "seeds": 6, "duration": 15},
    "grid": {
        "algorithm": ["chandy-lamport", "lai-yang", "clock"],
        "topology": ["ring", "random"],
        "fifo": [True, False],
        "drift": 0.2,
    },
}


def read_rows(folder: Path) -> list[dict]:
    rows = pq.read_table(folder).to_pylist()
    return sorted(rows, key=lambda r: r["point"])


@pytest.fixture(scope="module")
def plain():
    """The sweep and its rows from a plain loop in this process."""
    sweep = parse_config(GRID, "grid.toml")
    return sweep, [run_point(p) for p in sweep.points()]


def test_a_spark_sweep_writes_the_rows_of_a_plain_loop(spark, plain, tmp_path):
    sweep, rows = plain
    result = spark_sweep.run_sweep(sweep, tmp_path, spark=spark, partitions=3, progress=False)
    assert (result.executions, result.errors, result.master) == (72, 0, "local[2]")
    assert sorted(p.name for p in result.rows.iterdir() if p.is_dir()) == [
        "algorithm=chandy-lamport",
        "algorithm=clock",
        "algorithm=lai-yang",
    ]
    assert read_rows(result.rows) == rows


def test_a_sweep_gives_the_same_rows_however_it_is_split(spark, plain, tmp_path):
    sweep, rows = plain
    spark_sweep.run_sweep(sweep, tmp_path, spark=spark, partitions=1, progress=False)
    spark_sweep.run_sweep(sweep, tmp_path, spark=spark, partitions=7, progress=False)
    assert read_rows(tmp_path / "rows") == rows  # and the second run replaced the first


def test_the_spark_summary_equals_the_reference_summary(spark, plain, tmp_path):
    sweep, rows = plain
    out = tmp_path / "local[2]"  # Spark's readers would take the brackets for a glob
    result = spark_sweep.run_sweep(sweep, out, spark=spark, progress=False)
    table = pq.read_table(result.summary).to_pylist()
    assert table == summarize(rows)
    csv_lines = (out / "summary.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + len(sweep.cells)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["executions"] == 72 and manifest["cells"] == 12 and manifest["seeds"] == 6


def test_a_long_sweep_shows_its_progress(spark, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(spark_sweep, "PROGRESS_EVERY", 0.0)
    sweep = parse_config({"sweep": {"name": "p", "seeds": 40}, "grid": {"size": [3, 4, 5]}})
    spark_sweep.run_sweep(sweep, tmp_path, spark=spark, partitions=6)
    err = capsys.readouterr().err
    assert "sweep p: " in err and " of 6 tasks" in err, err


def test_the_ticker_prints_at_most_once_per_period():
    out = io.StringIO()
    ticker = Ticker("sweep x", 200, "executions", every=3600, stream=out)
    ticker.update(100)
    assert out.getvalue() == ""
    ticker.every = 0
    ticker.update(150)
    assert out.getvalue().startswith("sweep x: 150 of 200 executions (75%), ")


# ------------------------------------------------------------------ recorded traces


def one_line(path: Path) -> str:
    """A scenario file as one line of JSON Lines."""
    return json.dumps(json.loads(path.read_text(encoding="utf-8")))


def trace_file(folder: Path) -> Path:
    good = one_line(SCENARIOS / "worked-example.json")
    broken = one_line(SCENARIOS / "non-fifo-breaks.json")
    path = folder / "runs[1].jsonl"
    path.write_bytes(
        "\n".join([good, "{not json", good, "", broken]).encode() + b"\n\xff\xfe bytes\n"
    )
    return path


def test_spark_checks_every_line_and_reports_corrupt_ones(spark, tmp_path):
    path = trace_file(tmp_path)
    report = spark_traces.check_traces([path], tmp_path / "out", spark=spark)
    assert report.counts == {"records": 5, "snapshots": 3, "failed": 1, "corrupt": 2}
    assert [(r["line"], r["error"] is None) for r in report.problems] == [
        (2, False),
        (5, True),
        (6, False),
    ]
    assert report.problems[0]["error"] == f"{path}, line 2: invalid JSON: " + (
        "Expecting property name enclosed in double quotes (column 2)"
    )
    assert report.problems[2]["error"] == f"{path}, line 6: not UTF-8 text (byte 0)"
    local = spark_traces.check_traces_local([path])
    assert report == local
    written = pq.read_table(tmp_path / "out" / "rows").to_pylist()
    assert sorted(r["line"] for r in written) == [1, 2, 3, 5, 6]  # corrupt ones too


# ------------------------------------------------------------------ command line


def test_the_sweep_command_runs_on_spark(spark, tmp_path, capsys):
    config = tmp_path / "s.toml"
    config.write_text('[sweep]\nseeds = 4\n[grid]\nalgorithm = ["clock", "lai-yang"]\n')
    code = main(["sweep", str(config), "--out", str(tmp_path / "o"), "--master", "local[2]"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("sweep s: 8 executions (2 cells x 4 seeds) in ")
    assert read_rows(tmp_path / "o" / "rows") == [
        run_point(p) for p in load_config(config).points()
    ]


def test_the_check_traces_command_exits_1_on_a_failing_snapshot(spark, tmp_path, capsys):
    path = trace_file(tmp_path)
    assert main(["check-traces", str(path), "--master", "local[2]"]) == 1
    out, err = capsys.readouterr()
    assert f"{path}, line 5, s1: message late" in out
    assert "checked 5 record(s) in 1 file(s): 3 snapshot(s), 1 failing a check; 2 corrupt" in out
    assert err.count("corrupt record skipped") == 2


# ------------------------------------------------------------------ command line, --local


def test_sweep_local_writes_rows_summary_and_manifest(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", str(SMALL), "--out", str(out), "--local"]) == 0
    said = capsys.readouterr().out
    assert "sweep small: 160 executions (8 cells x 20 seeds)" in said
    rows = pq.read_table(out / "rows").to_pylist()
    assert len(rows) == 160
    assert {Path(p).name for p in (out / "rows").iterdir()} == {
        "algorithm=chandy-lamport",
        "algorithm=clock",
    }
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    assert len(summary) == 8
    assert (out / "summary.csv").read_text().splitlines()[0].startswith("sweep,topology,size,")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["executions"] == 160 and manifest["errors"] == 0
    plain = [run_point(p) for p in load_config(SMALL).points()]
    assert sorted(rows, key=lambda r: r["point"]) == plain


def test_check_traces_local_exits_1_and_reports_each_problem(tmp_path, capsys):
    traces = tmp_path / "runs.jsonl"
    good = one_line(SCENARIOS / "worked-example.json")
    broken = one_line(SCENARIOS / "non-fifo-breaks.json")
    traces.write_text(f"{good}\n{{oops\n{broken}\n", encoding="utf-8")
    assert main(["check-traces", str(traces), "--local"]) == 1
    out, err = capsys.readouterr()
    assert f"{traces}, line 3, s1: message late" in out
    assert "checked 3 record(s) in 1 file(s): 2 snapshot(s), 1 failing a check; 1 corrupt" in out
    assert f"corrupt record skipped: {traces}, line 2: invalid JSON" in err


def test_check_traces_local_exits_0_when_all_is_well(tmp_path, capsys):
    traces = tmp_path / "runs.jsonl"
    traces.write_text(one_line(SCENARIOS / "worked-example.json") + "\n", encoding="utf-8")
    assert main(["check-traces", str(traces), "--local"]) == 0
    assert "0 failing a check; 0 corrupt" in capsys.readouterr().out


def test_a_bad_master_exits_2_before_starting_spark(tmp_path, capsys):
    assert main(["sweep", str(SMALL), "--out", str(tmp_path), "--master", "localhost"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "snapshotlib: error: not a Spark master: 'localhost' "
        "(expected local[*], local[N], spark://HOST:PORT, yarn or k8s://URL)\n"
    )


def test_without_java_the_sweep_exits_2_saying_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert main(["sweep", str(SMALL), "--out", str(tmp_path), "--master", "local[1]"]) == 2
    assert "Spark needs a Java 17 runtime: none found" in capsys.readouterr().err


def test_a_local_session_talks_to_its_jvm_over_unix_sockets(spark):
    # no loopback port for a stray client (a Jupyter kernel's, reconnecting to a port its
    # ended kernel had) to reach before the driver does
    from snapshotlib.spark.session import unix_sockets_supported

    if not unix_sockets_supported():
        pytest.skip("PySpark before 4.1, or no Unix sockets here: loopback ports it is")
    assert spark.conf.get("spark.python.unix.domain.socket.enabled") == "true"
    assert spark.range(5).groupBy().sum().collect()[0][0] == 10  # a collect over the socket

"""A sweep on a real standalone cluster: a master and two workers on 127.0.0.1, started
from the pyspark distribution, reached with ``--master spark://...`` and with
``spark-submit``, and stopped by PID at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster import StandaloneCluster, spark_home
from spark_support import need, require_spark

from snapshotlib.sweeps import load_config, run_point

pq = need("pyarrow.parquet")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 300

CONFIG = """
[sweep]
name = "cluster"
seeds = 8
duration = 15
[grid]
algorithm = ["chandy-lamport", "lai-yang", "clock"]
fifo = [true, false]
drift = 0.2
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    require_spark()
    spark_cluster = StandaloneCluster(tmp_path_factory.mktemp("cluster"))
    try:
        spark_cluster.start()
        yield spark_cluster
    finally:
        spark_cluster.stop()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-4000:]}"
    return done


def assert_rows_of_a_plain_loop(out: Path, config: Path) -> None:
    rows = sorted(pq.read_table(out / "rows").to_pylist(), key=lambda r: r["point"])
    assert rows == [run_point(p) for p in load_config(config).points()]


def test_a_sweep_runs_on_a_standalone_cluster_with_two_workers(cluster, config, tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "snapshotlib.spark", "sweep", str(config)]
    done = run([*command, "--out", str(out), "--master", cluster.url])
    assert f"on {cluster.url}" in done.stdout
    assert_rows_of_a_plain_loop(out, config)
    assert json.loads((out / "manifest.json").read_text())["master"] == cluster.url
    for log in cluster.worker_logs():  # each worker ran an executor for the sweep
        assert "Asked to launch executor" in log


def test_spark_submit_runs_the_same_sweep_on_the_cluster(cluster, config, tmp_path):
    out = tmp_path / "out"
    submit = str(spark_home() / "bin" / "spark-submit")
    script = str(ROOT / "snapshotlib" / "spark" / "__main__.py")
    done = run([submit, "--master", cluster.url, script, "sweep", str(config), "--out", str(out)])
    assert f"on {cluster.url}" in done.stdout
    assert_rows_of_a_plain_loop(out, config)

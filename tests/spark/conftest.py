"""Spark tests: sweeps and bulk trace checks on an embedded Spark and on a standalone cluster.

Every test here is marked ``spark``. They need pyspark, pyarrow and a Java runtime;
without them they are skipped, except when the ``CI`` environment variable is set:
there they fail, so CI never passes by skipping them.

Fixtures
--------
``spark`` (session)
    One embedded ``local[2]`` SparkSession for the whole run (starting Spark takes
    seconds): tests share it and must not stop it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_support import require_spark

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.resolve().parents:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    require_spark()
    from snapshotlib.spark.session import spark_session

    session = spark_session("local[2]", app_name="snapshotlib-tests")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _needs_spark() -> None:
    require_spark()

"""Result files: rows as (partitioned) Parquet, small tables as Parquet and CSV, via Arrow.

A sweep's output folder::

    OUT/rows/algorithm=chandy-lamport/part-....parquet   one row per execution
    OUT/summary.parquet, OUT/summary.csv                 one row per grid cell
    OUT/manifest.json                                    what ran, where, how long

``pandas.read_parquet("OUT/rows")`` reads every row back (the partition column comes
back as a category). Needs pyarrow, not pyspark.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ARROW_TYPES = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
SPARK_TYPES = {"str": "STRING", "int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN"}

Columns = Sequence[tuple[str, str]]


def arrow_schema(columns: Columns) -> pa.Schema:
    """The Arrow schema of ``(name, type)`` columns.

    >>> arrow_schema([("point", "int"), ("fifo", "bool")]).types
    [DataType(int64), DataType(bool)]
    """
    return pa.schema([(name, ARROW_TYPES[kind]) for name, kind in columns])


def spark_ddl(columns: Columns) -> str:
    """The same columns as a Spark DDL schema string.

    >>> spark_ddl([("point", "int"), ("sweep", "str")])
    'point BIGINT, sweep STRING'
    """
    return ", ".join(f"{name} {SPARK_TYPES[kind]}" for name, kind in columns)


def hadoop_path(path: str | Path) -> str:
    r"""``path`` for Spark's readers, which take ``[``, ``*``, ``?`` and ``{`` as globs.

    >>> print(hadoop_path("out/local[2]/rows"))
    out/local\[2\]/rows
    """
    return re.sub(r"([\[\]*?{}\\])", r"\\\1", str(path))


def record_batch(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    """Rows (dicts) as one Arrow record batch of ``schema``."""
    return pa.RecordBatch.from_pylist(list(rows), schema=schema)


def write_rows(
    rows: Iterable[Mapping[str, Any]], folder: Path, columns: Columns, partition: str | None
) -> None:
    """Replace ``folder`` with the rows as a Parquet dataset, split by ``partition``."""
    if folder.exists():
        shutil.rmtree(folder)
    table = pa.Table.from_pylist(list(rows), schema=arrow_schema(columns))
    pq.write_to_dataset(
        table,
        folder,
        partition_cols=[partition] if partition else None,
        basename_template="part-{i}.parquet",
    )


def write_table(rows: Sequence[Mapping[str, Any]], stem: Path, columns: Columns) -> list[Path]:
    """Write ``stem.parquet`` and ``stem.csv`` (empty cells for ``None``); the paths."""
    names = [name for name, _ in columns]
    parquet, text = stem.with_suffix(".parquet"), stem.with_suffix(".csv")
    pq.write_table(pa.Table.from_pylist(list(rows), schema=arrow_schema(columns)), parquet)
    with text.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, names, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return [parquet, text]


def write_manifest(out: Path, info: Mapping[str, Any]) -> Path:
    path = out / "manifest.json"
    path.write_text(json.dumps(info, indent=2, default=str) + "\n", encoding="utf-8")
    return path

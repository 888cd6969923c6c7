"""A quiet SparkSession for sweeps and bulk checks.

:func:`spark_session` starts (or returns the running) session: embedded ``local[*]``
unless told otherwise, no web UI, no console progress bar, driver logging at ERROR
(``log4j2.properties`` beside this module), and Python workers that run this very
interpreter, so they import the same snapshotlib. Under ``spark-submit`` the master
comes from ``spark-submit``.

A local master, or a standalone one on a loopback address, binds the driver to
127.0.0.1: nothing listens on the machine's other interfaces, and a host name that
resolves oddly cannot get in the way.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

DEFAULT_MASTER = "local[*]"
#: the driver's heap, unless spark-submit says otherwise (Spark's default is 1 GB, and
#: the JVM takes more beside its heap): lesson 09's kernel, its JVM and Python workers
#: share a Binder session's 2 GB, and the driver only gathers summaries
DRIVER_MEMORY = "768m"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")


class SparkStartError(RuntimeError):
    """Spark could not start (no Java, a master that cannot be reached, ...)."""


def spark_session(master: str | None = None, app_name: str = "snapshotlib") -> Any:
    """The SparkSession to run on; see the module docstring.

    Parameters
    ----------
    master
        ``local[*]`` (the default), ``local[N]``, ``spark://HOST:PORT``, ...
    app_name
        Shown by the cluster's master.
    """
    from pyspark.sql import SparkSession

    if master is not None:
        check_master(master)
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise SparkStartError(
            "Spark needs a Java 17 runtime: none found (no java on PATH, no JAVA_HOME)"
        )
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started this process
    builder = SparkSession.builder.appName(app_name)
    settings = {}
    if master is not None or not submitted:
        master = master or DEFAULT_MASTER
        builder = builder.master(master)
        settings["spark.driver.memory"] = DRIVER_MEMORY
    settings |= {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}",
    }
    if master is not None and is_loopback(master) and unix_sockets_supported():
        # on this machine, the driver's exchanges with its JVM (collecting a result,
        # accumulators, Python workers) go over Unix sockets in /tmp instead of loopback
        # ports: a stray client (a Jupyter kernel's, reconnecting to the port its ended
        # kernel had) that reaches such a port before the driver does fails the job with
        # CANNOT_OPEN_SOCKET. (Elsewhere, a cluster's executors may have a temporary
        # folder too deep for a socket's path.)
        settings["spark.python.unix.domain.socket.enabled"] = "true"
    cores = local_cores(master)
    if cores is not None:
        # a summary's group-by has few groups: a handful of partitions per core is plenty
        settings["spark.sql.shuffle.partitions"] = str(2 * cores)
    if master is not None and is_loopback(master):
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
        settings["spark.driver.host"] = "127.0.0.1"
        settings["spark.driver.bindAddress"] = "127.0.0.1"
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as e:
        raise SparkStartError(f"cannot start Spark on {master or 'spark-submit'}: {e}") from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def unix_sockets_supported() -> bool:
    """Whether this PySpark can talk to its JVM over Unix sockets (Spark 4.1 and later,
    on a system that has them)."""
    import pyspark

    found = re.match(r"(\d+)\.(\d+)", pyspark.__version__)
    return hasattr(socket, "AF_UNIX") and found is not None and (
        int(found.group(1)), int(found.group(2))) >= (4, 1)  # fmt: skip


def check_master(master: str) -> None:
    """:class:`SparkStartError` unless ``master`` has the form of a Spark master URL.

    >>> check_master("spark://10.0.0.5:7077")
    >>> check_master("localhost")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    snapshotlib.spark.session.SparkStartError: not a Spark master: 'localhost' (expected ...)
    """
    if not re.fullmatch(
        r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[.*\]|yarn|(spark|k8s)://.+", master
    ):
        raise SparkStartError(
            f"not a Spark master: {master!r} "
            "(expected local[*], local[N], spark://HOST:PORT, yarn or k8s://URL)"
        )


def local_cores(master: str | None) -> int | None:
    """Cores of a ``local`` master (``None`` for a cluster).

    >>> local_cores("local[3]"), local_cores("local"), local_cores("spark://h:7077")
    (3, 1, None)
    """
    if master is None or not master.startswith("local"):
        return None
    if master == "local":
        return 1
    inner = master[master.index("[") + 1 : master.index("]")].split(",")[0]
    return (os.cpu_count() or 1) if inner == "*" else int(inner)


def is_loopback(master: str) -> bool:
    """Whether the driver should bind to 127.0.0.1 for ``master``.

    >>> is_loopback("local[2]"), is_loopback("spark://127.0.0.1:7077")
    (True, True)
    >>> is_loopback("spark://cluster.example:7077")
    False
    """
    if master.startswith("local"):
        return True
    host = urlparse(master).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

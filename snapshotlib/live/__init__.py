"""The live lab: the snapshot service of the system-design text on real processes.

Nodes are OS processes (``node.py``) running a bank and the engine's own Chandy–Lamport
through the host protocol (``host.py``), joined by one ordered gRPC stream per channel
(``snapshot.proto``, loaded by ``rpc.py``). A FastAPI controller (``controller.py``,
served by ``serve.py``) triggers snapshots and keeps their metadata in a registry
(``registry.py``: SQLite or PostgreSQL); nodes write their parts, and the controller the
manifest, to checkpoint storage (``storage.py``: ``file://`` directories, or ``s3://``
buckets through ``s3.py``). ``runlog.py`` assembles the nodes'
logs into one run of the engine and checks what the nodes recorded against it;
``cluster.py`` starts and stops a whole cluster from Python (:class:`LiveCluster`);
``spec.py`` describes one.

Needs the ``live`` extra (grpcio, grpcio-tools, fastapi, uvicorn, sqlalchemy, psycopg,
boto3); ``spec``,
``host``, ``runlog`` and ``storage`` use the standard library only.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cluster import LiveCluster

__all__ = ["EXTRA_MODULES", "LiveCluster", "missing_modules"]

#: what a cluster's processes import (the ``live`` extra's packages)
EXTRA_MODULES = ("grpc", "grpc_tools", "fastapi", "uvicorn", "sqlalchemy")


def missing_modules() -> list[str]:
    """The modules of :data:`EXTRA_MODULES` that are not installed here."""
    return [m for m in EXTRA_MODULES if importlib.util.find_spec(m) is None]


def __getattr__(name: str) -> Any:
    # the cluster pulls in gRPC: only when asked for
    if name == "LiveCluster":
        from .cluster import LiveCluster

        return LiveCluster
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Lesson 05b on real processes: the live lab's snapshots with markers in band and out of band.

:func:`compare_marker_transports` starts a small live cluster (OS processes speaking
gRPC, :mod:`snapshotlib.live`) once with every marker on its channel's ordered stream
and once with the system-design text's ``SendMarker`` call on a connection of its own,
takes a few snapshots of each, and tabulates the engine's verdict on each one. Without
the ``live`` extra it says what to install instead of failing.
"""

from __future__ import annotations

import tempfile
import time
from types import ModuleType

from ..tables import Table

#: transfers each node starts per second
RATE = 100.0
#: how long a marker is held up before it goes out, in both runs
DELAY_MS = 300


def compare_marker_transports(nodes: int = 3, snapshots: int = 2) -> Table | str:
    """One row per snapshot: transport, verdict, money recorded, and the engine's reason."""
    from ... import live as lab

    missing = lab.missing_modules()
    if missing:
        return (
            f"This part needs the live lab's extra ({', '.join(missing)} not installed): "
            "pip install 'snapshotlib[live]' (make lab installs it)."
        )
    from ...live import cluster as live

    try:
        rows = [
            row
            for markers in ("in-band", "out-of-band")
            for row in _snapshots(live, markers, nodes, snapshots)
        ]
    except live.LiveClusterError as e:  # no processes or ports for it here
        return f"The live cluster could not run here: {e}"
    return Table(
        ("markers", "initiator", "snapshot", "money recorded", "the engine says"),
        rows,
        notes=(
            f"{nodes} processes, each sending money {RATE:.0f} times a second to a random "
            f"neighbour; every marker held up {DELAY_MS} ms before it goes out",
        ),
    )


def _snapshots(live: ModuleType, markers: str, nodes: int, snapshots: int) -> list[tuple[str, ...]]:
    """Take ``snapshots`` snapshots on a cluster with ``markers``; a row for each."""
    rows: list[tuple[str, ...]] = []
    with (
        tempfile.TemporaryDirectory(prefix="lesson05-live-") as folder,
        live.LiveCluster(
            nodes, rate=RATE, markers=markers, marker_delay_ms=DELAY_MS, workdir=folder
        ) as cluster,
    ):
        time.sleep(0.5)  # money on the move before the first snapshot
        for k in range(snapshots):
            initiator = f"P{k % nodes + 1}"
            sid = cluster.trigger(initiator)
            cluster.wait(sid)
            check = cluster.check(sid)
            verdict = "right" if check.ok else "WRONG"
            money = f"{check.recorded_total:,} of {check.expected_total:,}"
            reason = check.reason or "consistent cut, money conserved"
            rows.append((markers, initiator, verdict, money, reason))
    return rows

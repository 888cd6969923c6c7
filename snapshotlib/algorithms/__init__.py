"""Snapshot algorithms, all behind :class:`SnapshotAlgorithm` (:mod:`.base`).

A new algorithm goes in a module of its own here: subclass :class:`SnapshotAlgorithm`,
answer its calls (``start``, ``on_control``, ``on_app_receive``...) through its
:class:`~.host.Host` only (``emit``, ``block``/``unblock``, ``pause``/``resume``,
``event`` and a few queries: :mod:`.host`), so that it runs in the simulator and on a
real process alike, keep what it records in :class:`SnapshotRecord` objects, and add it to
:data:`ALGORITHMS` under its ``name``, the one name scenarios, sweeps and recorded runs
use. Algorithms are given to a run as a class or factory: an instance holds one run.
"""

from .barriers import (
    BARRIER_VARIANTS,
    AlignedBarriers,
    AtLeastOnceBarriers,
    BarrierSnapshot,
    UnalignedBarriers,
    back_edges,
)
from .base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from .chandy_lamport import ChandyLamport
from .clock import ClockSnapshot
from .host import Host
from .lai_yang import LaiYang
from .stop_the_world import StopTheWorld

#: every algorithm by its ``name``, the name scenarios, sweeps and recorded runs use
ALGORITHMS: dict[str, type[SnapshotAlgorithm]] = {
    cls.name: cls
    for cls in (
        ChandyLamport,
        LaiYang,
        ClockSnapshot,
        AlignedBarriers,
        UnalignedBarriers,
        AtLeastOnceBarriers,
        StopTheWorld,
    )
}


def algorithm_class(name: str) -> type[SnapshotAlgorithm]:
    """The algorithm called ``name``; :class:`SnapshotError` naming the known ones.

    >>> algorithm_class("lai-yang").__name__
    'LaiYang'
    """
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise SnapshotError(
            f"unknown algorithm {name!r}; expected one of {', '.join(ALGORITHMS)}"
        ) from None


__all__ = [
    "ALGORITHMS",
    "BARRIER_VARIANTS",
    "AlignedBarriers",
    "AtLeastOnceBarriers",
    "BarrierSnapshot",
    "ChandyLamport",
    "ClockSnapshot",
    "Host",
    "LaiYang",
    "SnapshotAlgorithm",
    "SnapshotError",
    "SnapshotRecord",
    "StopTheWorld",
    "UnalignedBarriers",
    "algorithm_class",
    "back_edges",
]

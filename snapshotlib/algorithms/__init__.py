"""Snapshot algorithms, all behind :class:`SnapshotAlgorithm`."""

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
from .lai_yang import LaiYang
from .stop_the_world import StopTheWorld

__all__ = [
    "BARRIER_VARIANTS",
    "AlignedBarriers",
    "AtLeastOnceBarriers",
    "BarrierSnapshot",
    "ChandyLamport",
    "ClockSnapshot",
    "LaiYang",
    "SnapshotAlgorithm",
    "SnapshotError",
    "SnapshotRecord",
    "StopTheWorld",
    "UnalignedBarriers",
    "back_edges",
]

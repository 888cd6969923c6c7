"""Snapshot algorithms, all behind :class:`SnapshotAlgorithm`."""

from .base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from .chandy_lamport import ChandyLamport
from .clock import ClockSnapshot
from .lai_yang import LaiYang

__all__ = [
    "ChandyLamport",
    "ClockSnapshot",
    "LaiYang",
    "SnapshotAlgorithm",
    "SnapshotError",
    "SnapshotRecord",
]

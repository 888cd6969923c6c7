"""Snapshot algorithms, all behind :class:`SnapshotAlgorithm`."""

from .base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from .chandy_lamport import ChandyLamport
from .clock import ClockSnapshot

__all__ = ["ChandyLamport", "ClockSnapshot", "SnapshotAlgorithm", "SnapshotError", "SnapshotRecord"]

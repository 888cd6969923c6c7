"""The first lines every benchmark prints: the machine and the Python a figure was
measured on (machines here differ several times over in speed, so a figure without
them says little)."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def describe() -> str:
    """``machine: <platform>; <cpu>; nproc N (of M); load average a b c`` and
    ``python: <implementation> <version>``, on two lines."""
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        cpu = platform.processor()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 0
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"machine: {platform.platform()}; {cpu}; nproc {usable} (of {os.cpu_count()}); "
        f"load average {load}\n"
        f"python: {platform.python_implementation()} {platform.python_version()}"
    )

"""What the Spark tests need, and how they skip (locally) or fail (under CI) without it."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
from typing import Any

import pytest
from support import in_ci


def skip_or_fail(reason: str, module: bool = False) -> None:
    """Skip for a missing piece, or fail under CI, which must not skip."""
    if in_ci():
        pytest.fail(f"{reason}; CI is set, so Spark tests may not be skipped", pytrace=False)
    pytest.skip(reason, allow_module_level=module)


def require_spark(module: bool = False) -> None:
    """pyspark, pyarrow and ``java``, or skip (fail under CI); ``module``: at import time."""
    missing = [m for m in ("pyspark", "pyarrow") if importlib.util.find_spec(m) is None]
    if missing:
        skip_or_fail(
            f"needs {', '.join(missing)} (pip install -e '.[spark]'; make test does)", module
        )
    if shutil.which("java") is None:
        skip_or_fail("needs a Java 17 runtime on PATH (Debian: openjdk-17-jre-headless)", module)


def need(name: str) -> Any:
    """Module ``name``, imported once :func:`require_spark` passed (for a test module's
    top level, where a missing pyarrow must skip the module, or fail it under CI)."""
    require_spark(module=True)
    return importlib.import_module(name)

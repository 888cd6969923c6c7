"""Shared pytest configuration: hypothesis profiles, and how ``make test`` shares the
tests between its two workers (pytest-xdist, ``--dist loadgroup``).

``ci`` (the default) makes every property test deterministic: examples are derived from
the test itself (``derandomize``), nothing is read from or written to an example
database, and there is no deadline (timings on shared CI machines vary). ``explore``
draws fresh random examples on each run and keeps failures in the local database; use
it to hunt for new counterexamples: ``HYPOTHESIS_PROFILE=explore python3 -m pytest``.
Tests that pin their own ``settings`` keep them whatever the profile.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


ROOT = Path(__file__).resolve().parents[1]
#: suites that must run in one worker, in order: the browser walks share one JupyterLab;
#: the live-lab tests their PostgreSQL and S3 servers; the Spark tests their session
TOGETHER = ("tests/browser", "tests/live", "tests/spark")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``-n`` (``make test``), a file's tests run in one worker, in order (a
    notebook's cells share its kernel; a module's fixtures are made once), and each
    suite of :data:`TOGETHER` in a single worker; without ``-n`` the marks do nothing."""
    for item in items:
        path = item.path.resolve()
        where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
        group = next((t for t in TOGETHER if where.startswith(t + "/")), where)
        item.add_marker(pytest.mark.xdist_group(group))

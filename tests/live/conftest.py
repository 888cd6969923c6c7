"""Live-lab tests: real node and controller processes on 127.0.0.1.

Every test here is marked ``live``. They need the ``live`` extra (grpcio, grpcio-tools,
fastapi, uvicorn, sqlalchemy; httpx for FastAPI's test client); without it they are
skipped, except when the ``CI`` environment variable is set: there they fail, so CI
never passes by skipping them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.resolve().parents:
            item.add_marker(pytest.mark.live)

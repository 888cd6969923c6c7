"""Times as the registry and the REST answers give them: ISO 8601 UTC, to the second."""

from __future__ import annotations

import time
from datetime import datetime, timezone


def iso(time_ns: int) -> str:
    """``time_ns`` as ISO 8601 UTC, to the second, with ``Z``."""
    moment = datetime.fromtimestamp(time_ns // 1_000_000_000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso() -> str:
    return iso(time.time_ns())

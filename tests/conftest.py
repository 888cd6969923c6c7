"""Shared pytest configuration: hypothesis profiles.

``ci`` (the default) makes every property test deterministic: examples are derived from
the test itself (``derandomize``), nothing is read from or written to an example
database, and there is no deadline (timings on shared CI machines vary). ``explore``
draws fresh random examples on each run and keeps failures in the local database; use
it to hunt for new counterexamples: ``HYPOTHESIS_PROFILE=explore python3 -m pytest``.
Tests that pin their own ``settings`` keep them whatever the profile.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

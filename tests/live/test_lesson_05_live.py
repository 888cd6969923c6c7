"""Lesson 05b's run on real processes: markers in band give right snapshots, out of band
wrong ones, and without the live extra the lesson says what to install."""

from __future__ import annotations

import pytest
from live_support import require_live

require_live()

import snapshotlib.live  # noqa: E402
from snapshotlib.course.lesson_05 import compare_marker_transports  # noqa: E402
from snapshotlib.course.tables import Table  # noqa: E402


def test_in_band_snapshots_are_right_and_out_of_band_ones_are_named_wrong() -> None:
    table = compare_marker_transports(nodes=3, snapshots=2)
    assert isinstance(table, Table), table
    verdicts = {(row[0], row[2]) for row in table.rows}
    assert [row[0] for row in table.rows] == ["in-band"] * 2 + ["out-of-band"] * 2
    assert ("in-band", "WRONG") not in verdicts
    assert ("out-of-band", "WRONG") in verdicts, table  # markers 300 ms late: overtaken
    for row in table.rows:
        if row[2] == "WRONG":
            assert row[4].startswith("message P"), row
            # the lesson's words: late markers are overtaken by red messages, accepted in
            # white actions, so money is counted twice (not a white message missed)
            assert "received inside the cut but sent outside it" in row[4], row
            recorded, total = (int(n.replace(",", "")) for n in row[3].split(" of "))
            assert recorded > total, row


def test_without_the_extra_the_lesson_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(snapshotlib.live, "EXTRA_MODULES", ("grpc", "no_such_module_here"))
    said = compare_marker_transports()
    assert isinstance(said, str)
    assert "no_such_module_here not installed" in said
    assert "pip install 'snapshotlib[live]'" in said

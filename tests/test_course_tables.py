"""A lesson's table shown in parts: ``Table.select`` keeps the rows' names and the
columns asked for, in that order."""

from __future__ import annotations

import pytest

from snapshotlib.course.tables import Table

WIDE = Table(
    ("method", "pauses", "stores", "topology"),
    [("aligned", "yes", "none", "DAG"), ("unaligned", "no", "2,200 B", "any")],
    notes=("Medians over 40 runs.",),
)


def test_a_part_keeps_the_row_names_and_the_columns_asked_for_in_that_order() -> None:
    part = WIDE.select("topology", "pauses")
    assert part.columns == ("method", "topology", "pauses")
    assert part.rows == (("aligned", "DAG", "yes"), ("unaligned", "any", "no"))
    assert part.notes == WIDE.notes
    assert part.row("unaligned") == {"method": "unaligned", "topology": "any", "pauses": "no"}


def test_the_parts_together_hold_every_cell_of_the_table() -> None:
    first, second = WIDE.select("pauses", "stores"), WIDE.select("topology")
    for name in ("aligned", "unaligned"):
        assert {**first.row(name), **second.row(name)} == WIDE.row(name)


@pytest.mark.parametrize("name", ["latency", "method"])
def test_a_column_the_table_has_not_is_refused_naming_those_it_has(name: str) -> None:
    said = r"no column \w+ to select; the first \(method\) is always kept, the others are pauses"
    with pytest.raises(KeyError, match=said):
        WIDE.select("pauses", name)

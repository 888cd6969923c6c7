"""Tables for the lessons: a grid of short cells that wraps on a projector.

A :class:`Table` shows as an HTML table in a notebook (cells wrap, numbers align
right) and as aligned plain text elsewhere (a terminal, a test log, a static page
without HTML). Lessons print tables instead of long lines of text, so nothing runs off
the side of the screen.

>>> t = Table(("variant", "stored B"), [("aligned", "0"), ("unaligned", "2,200")],
...           notes=("medians over 40 seeds",))
>>> print(t)
variant    stored B
aligned           0
unaligned     2,200
<BLANKLINE>
medians over 40 seeds
>>> t.column("stored B")
['0', '2,200']
>>> t.row("unaligned")["stored B"]
'2,200'
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..text_colours import QUIET

__all__ = ["Table"]

_NUMBER = re.compile(r"^[-+]?[\d,]*\.?\d+( ?[%BkMG]B?)?( \((max )?\d+\))?$|^\d+/\d+$|^-$")


@dataclass(frozen=True)
class Table:
    """Rows of text cells under a header; the first column names the row.

    Parameters
    ----------
    columns
        The header, one title per column.
    rows
        One sequence of cells per row, as many as there are columns.
    notes
        Lines shown under the table: a legend, the units, where the numbers come from.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = field(default=())

    def __init__(
        self,
        columns: Sequence[str],
        rows: Iterable[Sequence[object]],
        notes: Sequence[str] = (),
    ) -> None:
        cols = tuple(str(c) for c in columns)
        body = tuple(tuple(str(cell) for cell in row) for row in rows)
        for row in body:
            if len(row) != len(cols):
                raise ValueError(f"a row has {len(row)} cells, the header {len(cols)}: {row!r}")
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "rows", body)
        object.__setattr__(self, "notes", tuple(notes))

    def column(self, name: str) -> list[str]:
        """The cells of column ``name``, top to bottom."""
        i = self.columns.index(name)
        return [row[i] for row in self.rows]

    def select(self, *names: str) -> Table:
        """The same rows with only the first column (which names the row) and the columns
        ``names``, in that order: a wide table in parts, each narrow enough for a slide.

        >>> t = Table(("method", "pauses", "stores"), [("fork", "no", "1,400 B")])
        >>> t.select("stores").rows
        (('fork', '1,400 B'),)
        """
        unknown = [n for n in names if n not in self.columns[1:]]
        if unknown:
            raise KeyError(
                f"no column {', '.join(unknown)} to select; the first ({self.columns[0]}) is "
                f"always kept, the others are {', '.join(self.columns[1:])}"
            )
        keep = [0, *(self.columns.index(n) for n in names)]
        return Table(
            [self.columns[i] for i in keep],
            [[row[i] for i in keep] for row in self.rows],
            self.notes,
        )

    def row(self, key: str) -> dict[str, str]:
        """The row whose first cell is ``key``, as ``{column: cell}``."""
        for row in self.rows:
            if row[0] == key:
                return dict(zip(self.columns, row, strict=True))
        raise KeyError(key)

    def _numeric(self, i: int) -> bool:
        cells = [row[i] for row in self.rows]
        return i > 0 and bool(cells) and all(_NUMBER.match(c) for c in cells)

    def __str__(self) -> str:
        widths = [
            max([len(c), *(len(row[i]) for row in self.rows)]) for i, c in enumerate(self.columns)
        ]
        right = [self._numeric(i) for i in range(len(self.columns))]

        def line(cells: Sequence[str]) -> str:
            out = [
                cell.rjust(w) if r else cell.ljust(w)
                for cell, w, r in zip(cells, widths, right, strict=True)
            ]
            return "  ".join(out).rstrip()

        lines = [line(self.columns), *(line(row) for row in self.rows)]
        if self.notes:
            lines += ["", *self.notes]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        cell = "padding:3px 8px;border-bottom:1px solid #ddd;vertical-align:top;"
        head = "".join(
            f"<th style='{cell}text-align:{'right' if self._numeric(i) else 'left'}'>"
            f"{html.escape(c)}</th>"
            for i, c in enumerate(self.columns)
        )
        body = []
        for row in self.rows:
            tds = "".join(
                f"<td style='{cell}text-align:{'right' if self._numeric(i) else 'left'};"
                f"white-space:{'nowrap' if self._numeric(i) or i == 0 else 'normal'}'>"
                f"{html.escape(c)}</td>"
                for i, c in enumerate(row)
            )
            body.append(f"<tr>{tds}</tr>")
        notes = "".join(
            f"<div style='font-size:90%;color:{QUIET};max-width:60em'>{html.escape(n)}</div>"
            for n in self.notes
        )
        return (
            "<div class='lesson-table'><table style='border-collapse:collapse;max-width:100%'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{notes}</div>"
        )

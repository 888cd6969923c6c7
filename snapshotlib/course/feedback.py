"""Feedback for a learner's answer: right or not, why, and a hint when not."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Feedback:
    """The verdict on an answer; shown in colour in a notebook, as text elsewhere.

    >>> print(Feedback(False, "P2 recorded F, G, H, not F, G.", "Which marker reached P2 first?"))
    ✗ P2 recorded F, G, H, not F, G. Hint: Which marker reached P2 first?
    """

    ok: bool
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"{'✓' if self.ok else '✗'} {self.message}"
        return f"{text} Hint: {self.hint}" if self.hint and not self.ok else text

    # a notebook's plain-text view (and a static page) shows the verdict, not the fields
    __repr__ = __str__

    def __bool__(self) -> bool:
        return self.ok

    def _repr_html_(self) -> str:
        colour, mark = ("#1b7f3b", "✓") if self.ok else ("#b00020", "✗")
        hint = f"<br><i>Hint: {html.escape(self.hint)}</i>" if self.hint and not self.ok else ""
        return (
            f"<div class='feedback' style='color:{colour};border-left:4px solid {colour};"
            f"padding:4px 10px'><b>{mark}</b> {html.escape(self.message)}{hint}</div>"
        )


def check_equal(what: str, answer: Any, expected: Any, hint: str = "") -> Feedback:
    """Compare an answer with the expected value, saying which ``what`` it was.

    >>> print(check_equal("P3's recorded events", ["I"], ["I"]))
    ✓ P3's recorded events: right, ['I'].
    """
    if answer == expected:
        return Feedback(True, f"{what}: right, {expected!r}.")
    if answer is None or answer is Ellipsis:
        return Feedback(False, f"{what}: no answer yet.", hint)
    return Feedback(False, f"{what}: {answer!r} is not it.", hint)

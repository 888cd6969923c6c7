"""Feedback for a learner's answer: right or not, a hint when not, the answer on request.

Every lesson's checkers return a :class:`Feedback`, and they follow three rules so
that a notebook never gives a *Try it* away:

* **No answer yet** (the placeholder ``None`` or ``...`` still in place): say so with
  :func:`no_answer_yet`, plus a hint on how to answer. Nothing about the answer, not
  even hidden: this is what a notebook run top to bottom stores.
* **Wrong**: the message says *that* it is wrong (and may say what is wrong with the
  learner's own answer); the hint points at the reasoning. Neither states the right
  answer. The right answer, explained, goes in ``answer``: a notebook shows it folded
  under a *Show answer* control, which the learner opens only on purpose. The
  plain-text form (``str``, ``repr``, what a terminal or a test log prints) never
  contains it.
* **Right**: the message confirms and explains; ``answer`` is not shown.

The folded part is an HTML ``<details>`` element, which JupyterLab and Notebook keep
when they sanitize the output of an untrusted notebook, so it works on Binder and in a
freshly downloaded notebook alike.

>>> fb = Feedback(False, "P2's recorded events: not quite.",
...               "Which marker reaches P2 first?", answer="F, G, H")
>>> print(fb)
✗ P2's recorded events: not quite. Hint: Which marker reaches P2 first?
>>> "F, G, H" in repr(fb), "Show answer</summary>" in fb._repr_html_()
(False, True)
"""

from __future__ import annotations

import html
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..text_colours import RIGHT, TEXT, WRONG

__all__ = ["Feedback", "answer_set", "check_equal", "is_blank", "no_answer_yet"]

_RIGHT, _WRONG = RIGHT, WRONG


@dataclass(frozen=True)
class Feedback:
    """The verdict on an answer; shown in colour in a notebook, as text elsewhere.

    Parameters
    ----------
    ok
        Whether the answer is right.
    message
        The verdict. When ``ok`` is false it must not state the right answer.
    hint
        Shown when the answer is not right: a pointer to the reasoning, not the answer.
    answer
        The right answer with its explanation, shown only when ``ok`` is false, and
        only in the notebook's folded *Show answer* part; never in the plain text.
        Leave it empty while there is no answer yet.

    Examples
    --------
    >>> print(Feedback(False, "Not quite.", "Which marker reached P2 first?", "F, G, H"))
    ✗ Not quite. Hint: Which marker reached P2 first?
    >>> print(Feedback(True, "Right: F, G, H.", "unused", "unused"))
    ✓ Right: F, G, H.
    """

    ok: bool
    message: str
    hint: str = ""
    answer: str = ""

    def __str__(self) -> str:
        text = f"{'✓' if self.ok else '✗'} {self.message}"
        return f"{text} Hint: {self.hint}" if self.hint and not self.ok else text

    # a notebook's plain-text view (and a static page) shows the verdict, not the fields
    __repr__ = __str__

    def __bool__(self) -> bool:
        return self.ok

    def _repr_html_(self) -> str:
        colour, mark = (_RIGHT, "✓") if self.ok else (_WRONG, "✗")
        parts = [f"<b>{mark}</b> {html.escape(self.message)}"]
        if self.hint and not self.ok:
            parts.append(f"<br><i>Hint: {html.escape(self.hint)}</i>")
        if self.answer and not self.ok:
            parts.append(
                f"<details class='feedback-answer' style='margin-top:4px;color:{TEXT}'>"
                "<summary style='cursor:pointer'>Show answer</summary>"
                f"<div style='white-space:pre-wrap'>{html.escape(self.answer)}</div></details>"
            )
        return (
            f"<div class='feedback' style='color:{colour};border-left:4px solid {colour};"
            f"padding:4px 10px'>{''.join(parts)}</div>"
        )


def is_blank(answer: Any) -> bool:
    """Whether ``answer`` is still the placeholder of a *Try it* cell (``None`` or ``...``).

    >>> is_blank(None), is_blank(...), is_blank([]), is_blank(0)
    (True, True, False, False)
    """
    return answer is None or answer is Ellipsis


def no_answer_yet(what: str = "", hint: str = "") -> Feedback:
    """The feedback while a *Try it* still holds its placeholder: how to answer, no answer.

    >>> print(no_answer_yet("P2's recorded events", "Write a list of labels, e.g. ['F']."))
    ✗ P2's recorded events: no answer yet. Hint: Write a list of labels, e.g. ['F'].
    >>> print(no_answer_yet())
    ✗ No answer yet.
    """
    return Feedback(False, f"{what}: no answer yet." if what else "No answer yet.", hint)


def check_equal(
    what: str, answer: Any, expected: Any, hint: str = "", reveal: str | None = None
) -> Feedback:
    """Compare an answer with the expected value, saying which ``what`` it was.

    A wrong answer gets "not quite" and ``hint``, never the expected value in its
    text: that (``reveal``, by default ``repr(expected)``) goes to the folded *Show
    answer* part. A right answer is confirmed with ``reveal``.

    >>> print(check_equal("P3's recorded events", ["I"], ["I"]))
    ✓ P3's recorded events: right, ['I'].
    >>> fb = check_equal("did it occur", True, False, hint="Look at moment 3.",
    ...                  reveal="No: no moment of the run has that state.")
    >>> print(fb)
    ✗ did it occur: not quite. Hint: Look at moment 3.
    >>> fb.answer
    'No: no moment of the run has that state.'
    >>> print(check_equal("did it occur", False, False, reveal="No: it never did."))
    ✓ did it occur: right. No: it never did.
    """
    if is_blank(answer):
        return no_answer_yet(what, hint)
    if answer == expected:
        if reveal is None:
            return Feedback(True, f"{what}: right, {expected!r}.")
        return Feedback(True, f"{what}: right. {reveal}")
    return Feedback(False, f"{what}: not quite.", hint, reveal or repr(expected))


def answer_set(
    answer: Any, allowed: Collection[Any], not_a_set: tuple[str, str], unknown: tuple[str, str]
) -> set[Any] | Feedback:
    """A try-it answer that names some of ``allowed``, as a set (a single name is a set
    of one), or the Feedback that says what is wrong with it: ``not_a_set`` (message and
    hint, the message formatted with ``{answer}``, the answer's repr) when it is no
    collection, ``unknown`` (the message formatted with ``{names}``) when it names
    something not in ``allowed``.

    >>> wrong = (("{answer} is no set.", "Write {'a'}."), ("Not {names}.", "a or b"))
    >>> answer_set("a", "ab", *wrong)
    {'a'}
    >>> print(answer_set({"c"}, "ab", *wrong))
    ✗ Not 'c'. Hint: a or b
    >>> print(answer_set(3, "ab", *wrong))
    ✗ 3 is no set. Hint: Write {'a'}.
    """
    if isinstance(answer, str):
        answer = {answer}
    try:
        names = set(answer)
    except TypeError:
        return Feedback(False, not_a_set[0].format(answer=repr(answer)), not_a_set[1])
    strange = sorted(str(n) for n in names if n not in allowed)
    if strange:
        return Feedback(False, unknown[0].format(names=", ".join(map(repr, strange))), unknown[1])
    return names

"""Concept checks, one question at a time: choose an answer and read its feedback.

Shows questions with multiple choices (:class:`~snapshotlib.course.concepts.Question`,
or anything with ``id``, ``prompt``, ``labelled()``, ``feedback(letter)`` and
``lesson``). Choosing a choice shows that choice's feedback at once, the right answer
folded under *Show answer* when the choice is wrong; *Previous* and *Next* move between
the questions, so one question fills a slide when the lesson is presented. With
``scored=True`` (the course's self-test) the widget counts the questions answered right
at the first choice and names the lessons to revisit.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any, Protocol

import ipywidgets as w

from .common import make_button, row, widget_bundle


class _Feedback(Protocol):
    @property
    def ok(self) -> bool: ...

    def _repr_html_(self) -> str: ...


class _Question(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def prompt(self) -> str: ...

    @property
    def lesson(self) -> str: ...

    def labelled(self) -> list[str]: ...

    def feedback(self, letter: object) -> Any: ...


#: a name in backticks, kept on one line (``P3->P1`` must not break at its hyphen)
_CODE = "<code style='white-space:nowrap'>\\1</code>"


def _marks(text: str) -> str:
    """Markdown's backticks, bold and italics in already escaped ``text``, as HTML."""
    text = re.sub(r"`([^`<>]+)`", _CODE, text)
    text = re.sub(r"\*\*([^*<>]+)\*\*", r"<b>\1</b>", text)
    return re.sub(r"(?<![\w*])\*([^*<>]+)\*(?![\w*])", r"<i>\1</i>", text)


def prompt_html(prompt: str) -> str:
    """A question's prompt (Markdown's backticks, bold and italics only) as HTML.

    >>> prompt_html("Is `P1->P2` **empty** *now* <here>?")
    "Is <code style='white-space:nowrap'>P1-&gt;P2</code> <b>empty</b> <i>now</i> &lt;here&gt;?"
    """
    return _marks(html.escape(prompt, quote=False))


def plain_label(text: str) -> str:
    """A choice as a radio button shows it: plain text, so Markdown's marks go.

    >>> plain_label("`P1` records **first**, *then* `P2`")
    'P1 records first, then P2'
    """
    text = text.replace("`", "").replace("**", "")
    return re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"\1", text)


def feedback_html(feedback: _Feedback) -> str:
    """A feedback's HTML with Markdown's marks as HTML (its text is escaped already)."""
    return _marks(feedback._repr_html_())


class ConceptCheck:
    """Questions shown one at a time, each with its choices and the chosen one's feedback.

    >>> from snapshotlib.course.concepts import Choice, Question
    >>> q = Question("demo.1", "Pick b.", (Choice("a", False, "Not a."), Choice("b", True, "Yes.")))
    >>> check = ConceptCheck([q, q], title="Demo")
    >>> print(check.choose("a"))
    ✗ Not a.
    >>> check.next(); print(check.choose("b")); print(check.position.value)
    ✓ Yes.
    Question 2 of 2
    """

    def __init__(
        self, questions: Sequence[_Question], title: str = "Check your understanding",
        scored: bool = False,
    ) -> None:  # fmt: skip
        if not questions:
            raise ValueError("a concept check needs at least one question")
        self.questions = list(questions)
        self.title, self.scored = title, scored
        self.index = 0
        #: per question id: the letters chosen, in order
        self.chosen: dict[str, list[str]] = {}
        self._showing = False  # while a question is put on screen (no learner's choice)
        self.position = w.HTML()
        self.prompt = w.HTML()
        self.choices = w.RadioButtons(
            options=[], value=None, layout=w.Layout(width="auto", max_width="100%")
        )
        self.choices.add_class("concept-choices")
        self.feedback = w.HTML()
        self.score = w.HTML()
        self.previous_button = make_button("Previous", "arrow-left", "the question before")
        self.next_button = make_button("Next", "arrow-right", "the next question")
        self.previous_button.on_click(lambda _: self.previous())
        self.next_button.on_click(lambda _: self.next())
        self.choices.observe(self._on_choice, names="value")
        self.widget = w.VBox(
            [
                w.HTML(f"<b>{html.escape(title)}</b>"),
                self.position,
                self.prompt,
                self.choices,
                self.feedback,
                row([self.previous_button, self.next_button]),
                self.score,
            ]
        )
        self._show()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = widget_bundle(self.widget, "ConceptCheck", **kwargs)
        # where widgets cannot run, the questions themselves still read
        questions = "\n\n".join(
            f"{k}. {q.prompt}\n" + "\n".join(f"   {c}" for c in q.labelled())
            for k, q in enumerate(self.questions, 1)
        )
        # the first line is every widget's (the browser tests look for it)
        bundle["text/plain"] = f"{bundle['text/plain']}\n\n{questions}"
        return bundle

    # ------------------------------------------------------------ actions
    @property
    def question(self) -> _Question:
        return self.questions[self.index]

    def choose(self, letter: str) -> Any:
        """Choose ``letter`` for the question shown (as clicking it does); its feedback."""
        self.choices.value = letter  # _on_choice records it and shows the feedback
        return self.question.feedback(letter)

    def next(self) -> None:
        """Show the next question."""
        if self.index + 1 < len(self.questions):
            self.index += 1
            self._show()

    def previous(self) -> None:
        """Show the question before."""
        if self.index > 0:
            self.index -= 1
            self._show()

    # ------------------------------------------------------------ results
    def first_choices_right(self) -> list[str]:
        """Ids of the questions answered right at the first choice."""
        return [
            q.id
            for q in self.questions
            if self.chosen.get(q.id) and q.feedback(self.chosen[q.id][0]).ok
        ]

    def to_revisit(self) -> list[str]:
        """The lessons of the questions answered wrong at the first choice, in order."""
        missed = [
            q.lesson
            for q in self.questions
            if self.chosen.get(q.id) and not q.feedback(self.chosen[q.id][0]).ok and q.lesson
        ]
        return list(dict.fromkeys(missed))

    def score_text(self) -> str:
        """The self-test's tally so far."""
        answered = sum(1 for q in self.questions if self.chosen.get(q.id))
        right = len(self.first_choices_right())
        text = (
            f"Right at the first choice: {right} of {answered} answered "
            f"({len(self.questions)} questions)."
        )
        revisit = self.to_revisit()
        if revisit:
            text += " Lessons to revisit: " + ", ".join(revisit) + "."
        return text

    # ------------------------------------------------------------ display
    def _show(self) -> None:
        q = self.question
        self.position.value = f"Question {self.index + 1} of {len(self.questions)}"
        self.prompt.value = f"<div class='concept-prompt'>{prompt_html(q.prompt)}</div>"
        letters = [label.split(")", 1)[0] for label in q.labelled()]
        chosen = self.chosen.get(q.id)
        self._showing = True
        try:
            labels = [plain_label(label) for label in q.labelled()]
            self.choices.options = list(zip(labels, letters, strict=True))
            self.choices.value = chosen[-1] if chosen else None
        finally:
            self._showing = False
        self.feedback.value = feedback_html(q.feedback(chosen[-1])) if chosen else ""
        self.previous_button.disabled = self.index == 0
        self.next_button.disabled = self.index + 1 == len(self.questions)
        self.score.value = html.escape(self.score_text()) if self.scored else ""

    def _on_choice(self, change: dict[str, Any]) -> None:
        letter = change["new"]
        if self._showing or letter is None:
            return
        q = self.question
        self.chosen.setdefault(q.id, []).append(letter)
        self.feedback.value = feedback_html(q.feedback(letter))
        if self.scored:
            self.score.value = html.escape(self.score_text())

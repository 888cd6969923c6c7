"""A concept check: a multiple-choice question aimed at a known misconception, with
feedback of its own for every choice.

Each lesson ends with a few (its *Check your understanding* section) and the course ends
with a self-test of its own questions. Choosing a choice gives a
:class:`~snapshotlib.course.feedback.Feedback`: a right choice is confirmed and
explained; a wrong one says why that choice is wrong, with a hint, and keeps the right
choice and its explanation folded under *Show answer*, as every try-it does.

>>> q = Question(
...     "demo.1",
...     "Does a marker pause the processes?",
...     (
...         Choice("Yes, until the snapshot is complete.", False,
...                "Nothing waits for a marker."),
...         Choice("No: each process records its state and goes on.", True,
...                "Right: the snapshot is taken while the run goes on."),
...     ),
...     hint="What does a process do after it records?",
... )
>>> print(q.feedback("a"))
✗ Nothing waits for a marker. Hint: What does a process do after it records?
>>> print(q.feedback("b"))
✓ Right: the snapshot is taken while the run goes on.
>>> "b) No: each process" in q.feedback("a").answer
True
"""

from __future__ import annotations

from dataclasses import dataclass

from ..feedback import Feedback, no_answer_yet

#: how the choices are named, in order
LETTERS = "abcdef"


@dataclass(frozen=True)
class Choice:
    """One answer to a :class:`Question`: its text, whether it is right, and what a
    learner who picks it is told (for a wrong choice: why it is wrong, without naming
    the right one)."""

    text: str
    right: bool
    feedback: str


@dataclass(frozen=True)
class Question:
    """A multiple-choice question.

    Parameters
    ----------
    id
        ``"LESSON.N"``, e.g. ``"02.1"``; the self-test's questions are ``"self.N"``.
    prompt
        The question, one or two sentences (Markdown: backticks for code).
    choices
        Two to :data:`LETTERS` choices, exactly one of them right.
    hint
        Shown with a wrong choice's feedback: where to look, not the answer.
    misconception
        The mistaken belief the wrong choices stand for, for the instructor's guide.
    lesson
        For a self-test question, the lesson to revisit when it is missed.
    """

    id: str
    prompt: str
    choices: tuple[Choice, ...]
    hint: str = ""
    misconception: str = ""
    lesson: str = ""

    def __post_init__(self) -> None:
        if not 2 <= len(self.choices) <= len(LETTERS):
            raise ValueError(f"{self.id}: {len(self.choices)} choices, want 2 to {len(LETTERS)}")
        if sum(c.right for c in self.choices) != 1:
            raise ValueError(f"{self.id}: exactly one choice must be right")

    @property
    def letters(self) -> str:
        return LETTERS[: len(self.choices)]

    @property
    def right_letter(self) -> str:
        return next(x for x, c in zip(self.letters, self.choices, strict=True) if c.right)

    def labelled(self) -> list[str]:
        """The choices as shown: ``"a) ..."``, ``"b) ..."``."""
        return [f"{x}) {c.text}" for x, c in zip(self.letters, self.choices, strict=True)]

    def feedback(self, letter: object) -> Feedback:
        """The feedback for choosing ``letter`` (``"a"``, ``"b"``...; ``None``: no
        choice yet)."""
        if letter is None or letter is Ellipsis:
            return no_answer_yet("", "Pick one of the choices.")
        key = str(letter).strip().lower().rstrip(")")
        if len(key) != 1 or key not in self.letters:
            return Feedback(
                False,
                f"{letter!r} is not one of the choices.",
                f"Answer with one of {', '.join(self.letters)}.",
            )
        choice = self.choices[self.letters.index(key)]
        if choice.right:
            return Feedback(True, choice.feedback)
        right = self.choices[self.letters.index(self.right_letter)]
        return Feedback(
            False,
            choice.feedback,
            self.hint,
            f"{self.right_letter}) {right.text}\n{right.feedback}",
        )

    def text(self) -> str:
        """The question and its choices as plain text."""
        return "\n".join([self.prompt, *(f"  {line}" for line in self.labelled())])

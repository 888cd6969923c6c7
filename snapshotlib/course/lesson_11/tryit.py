"""Lesson 11's try-it: the learner finds the recovery line of the run's checkpoints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...checks.cut import check_frontier
from ...checks.recovery import checkpoint_sets, rollback_propagation
from ...simulator import Simulator
from ..feedback import Feedback, is_blank, no_answer_yet
from .text import rollbacks_text

#: the try-it's checkpoints on the lesson's run
TRYIT: dict[str, list[int]] = {"P1": [1, 3], "P2": [3], "P3": [1]}

_HINT = (
    "Start from every process's latest checkpoint. Look for an orphan: a receive "
    "inside the cut whose send is outside it. Roll the receiver back to its latest "
    "checkpoint before that receive, and look again until there is none."
)


def check_recovery_line(
    sim: Simulator, answer: Any, checkpoints: Mapping[str, Sequence[int]] = TRYIT
) -> Feedback:
    """Is ``answer`` (events per process, ``{"P1": 1, ...}``) the recovery line of
    ``checkpoints`` on the run?

    >>> from snapshotlib.formats.scenario import load_scenario, run_scenario
    >>> sim = run_scenario(load_scenario("11-checkpoints"))
    >>> print(check_recovery_line(sim, {"P1": 3, "P2": 3, "P3": 1}))  # doctest: +ELLIPSIS
    ✗ Not consistent: P1's part holds the receipt of c, but P3's part does not hold its...
    """
    trace = sim.trace
    marks = checkpoint_sets(trace, checkpoints)
    line, steps = rollback_propagation(trace, checkpoints)
    shape = "{" + ", ".join(f'"{p}": ...' for p in marks) + "}"
    how = f"Give one number of events per process: {shape}."
    if is_blank(answer):
        return no_answer_yet("The recovery line", how)
    if not isinstance(answer, Mapping) or set(answer) != set(marks):
        return Feedback(False, f"Give one number per process, {shape}, not {answer!r}.")
    if any(is_blank(answer[p]) for p in marks):
        blank = ", ".join(p for p in marks if is_blank(answer[p]))
        return no_answer_yet(f"The recovery line of {blank}", how)
    given: dict[str, int] = {}
    for p in marks:
        k = answer[p]
        if isinstance(k, float) and k.is_integer():
            k = int(k)
        if isinstance(k, bool) or not isinstance(k, int):
            return Feedback(False, f"{p}: give a whole number of events, not {k!r}.")
        given[p] = k
    folded = rollbacks_text(line, steps)
    if given == line:
        return Feedback(
            True,
            "Right: " + " ".join(f"{p} {k}" for p, k in line.items()) + f". {_story(steps)}",
        )
    for p, k in given.items():
        if k not in marks[p]:
            own = [str(c) for c in marks[p] if c]
            saved = f"{', '.join(own)} or 0 (its start)" if own else "0, its start"
            return Feedback(
                False,
                f"{p} saved no checkpoint after {k} event{'s' * (k != 1)}: it can restart "
                f"only from {saved}.",
                _HINT,
                answer=folded,
            )
    verdict = check_frontier(trace, given)
    if not verdict.ok:
        assert verdict.witness is not None
        name = trace.message_name(verdict.witness)
        receiver = trace.actions[trace.received_by[verdict.witness]].process
        sender = trace.actions[trace.messages[verdict.witness].sent_by].process
        return Feedback(
            False,
            f"Not consistent: {receiver}'s part holds the receipt of {name}, but "
            f"{sender}'s part does not hold its sending: {name} is an orphan.",
            _HINT,
            answer=folded,
        )
    return Feedback(
        False,
        "Consistent, but not the latest: some process could restart from a later checkpoint.",
        "Roll a process back only when an orphan makes it: start from the latest "
        "checkpoints and undo one orphan at a time.",
        answer=folded,
    )


def _story(steps: Sequence[Any]) -> str:
    if not steps:
        return "The latest checkpoints were consistent already."
    undone = ", ".join(f"{s.message} ({s.process} to {s.to})" for s in steps)
    return f"Each rollback undid one orphan: {undone}."

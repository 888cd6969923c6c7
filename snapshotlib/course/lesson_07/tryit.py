"""Lesson 07's try-it checkers: each takes a run (the lesson's, or the learner's own) and
the learner's answer, and returns a Feedback.
"""

from __future__ import annotations

from typing import Any, Literal

from ...dataflow import VARIANTS
from .. import sizing
from ..feedback import Feedback, answer_set, is_blank, no_answer_yet
from ..sizing import Sizing
from .text import CHAIN, CYCLIC, DAG, TRY_IT, count_of, recorders

#: hints that point at the reasoning, never at a variant's name
_MISSING = (
    "A checkpoint stores a record in flight when the record was sent before the barrier "
    "(or marker) on its channel and read after its receiver recorded its state. Go through "
    "the stories above: under which variants is an operator's state recorded while "
    "records sent before a barrier are still on their way, on its inputs or its outputs?"
)


_EXTRA = (
    "An operator that records its state only once the barrier has arrived on every input "
    "it waits for has nothing left between the barriers to store; and a record read past "
    "a barrier is counted in the operator's state, not stored as channel state."
)


_CHAIN = (
    "On a chain every operator has one input, so its first barrier (or marker) is also its "
    "last. What is left to store between them, and what happens to the records queued on "
    "its output when the barrier goes on?"
)


_CYCLE = (
    "On a cycle an operator cannot wait for the barrier on its back edge: that barrier "
    "comes round only after the operator has sent its own. What happens to the records "
    "that arrive there meanwhile, under each variant? The ABS paper and Flink's "
    "documentation (above) do not answer it the same way."
)


def _in_flight_answer(expected: set[str], job: str) -> str:
    names = ", ".join(v for v in VARIANTS if v in expected)
    others = ", ".join(v for v in VARIANTS if v not in expected)
    if job == "cyclic":
        return (
            f"{names}: each stores the records that arrive on the back edge L->H after H "
            "recorded its state, until the barrier comes round (unaligned barriers record "
            "every input that way). Aligned barriers do it as the ABS paper does with "
            f"cycles. {others} records the back edge empty, as Flink's at-least-once mode: "
            "it logs no back edge, so a failure loses the records that were on the loop "
            "(lesson 07b counts them)."
        )
    if job == "chain":
        return (
            f"{names}. Every operator of a chain has one input, so its first marker is also "
            "its last: Chandy-Lamport has no input left to record, aligned barriers have "
            "nothing to wait for, and at-least-once has no barrier to cross. Unaligned "
            "barriers still overtake the records queued on each operator's output, and "
            f"those are stored. {others} store operator state only."
        )
    return (
        f"{names}. Chandy-Lamport stores what arrives on an input between its operator's "
        "recording and that input's marker; unaligned barriers also store the records they "
        f"overtake. {others} record their operators' state only: an aligned operator has "
        "nothing between its barriers, and at-least-once counts the crossing records in its "
        "state instead."
    )


#: the jobs a try-it asks about: the lesson's two-source job, a chain, the cyclic job
JOBS = {"dag": (DAG, "job"), "chain": (CHAIN, "chain"), "cyclic": (CYCLIC, "cyclic job")}


def check_in_flight(answer: Any, job: Literal["dag", "chain", "cyclic"] = "dag") -> Feedback:
    """Which variants store records in flight on one of the lesson's jobs (:data:`JOBS`:
    the two-source job ``DAG``, the ``CHAIN`` S1 -> C1 -> K, the ``CYCLIC`` one)?
    ``answer`` is a set (or list) of names from ``VARIANTS``.

    A wrong set is told how many variants are missing or extra, and where to look; the
    names are in the folded answer only.

    >>> feedback = check_in_flight({"unaligned"})
    >>> feedback.ok, feedback.message
    (False, 'Not quite: one variant that stores records in flight is missing.')
    """
    flow, where = JOBS[job]
    if is_blank(answer):
        return no_answer_yet(
            hint=f"Name the variants, e.g. {{'aligned'}}: any of {', '.join(VARIANTS)}."
        )
    names = answer_set(
        answer,
        VARIANTS,
        (
            "{answer} is not a set of variant names.",
            "Write a set such as {'aligned', 'unaligned'}.",
        ),
        ("Unknown variant {names}.", f"The variants are {', '.join(VARIANTS)}."),
    )
    if isinstance(names, Feedback):
        return names
    expected = recorders(flow)
    if names == expected:
        return Feedback(
            True,
            f"Right: on the {where}, {', '.join(v for v in VARIANTS if v in expected)} "
            f"store{'s' if len(expected) == 1 else ''} records in flight; "
            + (
                "the others store operator state only."
                if job != "cyclic"
                else "at-least-once records the back edge L->H empty, as Flink's "
                "at-least-once mode, and a failure loses what was on it."
            ),
        )
    missing = [v for v in VARIANTS if v in expected - names]
    extra = [v for v in VARIANTS if v in names - expected]
    parts = []
    if missing:
        parts.append(
            f"{count_of(len(missing), 'variant')} that store{'s' if len(missing) == 1 else ''} "
            f"records in flight {'is' if len(missing) == 1 else 'are'} missing"
        )
    if extra:
        parts.append(
            f"{count_of(len(extra), 'variant')} in your set store{'s' if len(extra) == 1 else ''}"
            f" none on the {where}"
        )
    text = "; ".join(parts).replace("1 variant", "one variant")
    if job == "chain":
        hint = _CHAIN
    elif job == "cyclic":
        hint = _CYCLE
    elif missing:
        hint = _MISSING
    else:
        hint = _EXTRA
    return Feedback(False, f"Not quite: {text}.", hint, answer=_in_flight_answer(expected, job))


def check_node_buffer(answer: Any, system: Sizing = TRY_IT) -> Feedback:
    """How many bytes must one node of ``system`` hold while its markers are held up?
    Either the initiator's or another node's figure is right
    (:func:`snapshotlib.course.sizing.check_node_buffer`).

    >>> feedback = check_node_buffer(60_000_000)
    >>> feedback.message
    '60,000,000 B counts 20 input channels.'
    >>> feedback.hint
    'A node has no channel to itself: how many inputs does it have?'
    """
    return sizing.check_node_buffer(answer, system)

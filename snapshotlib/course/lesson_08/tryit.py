"""Lesson 08's try-it checkers: each takes a run (the lesson's, or the learner's own) and
the learner's answer, and returns a Feedback.
"""

from __future__ import annotations

import copy
from typing import Any

from ...dataflow import COMPLETED, FAILED, INITIATED, StreamJob
from ..feedback import Feedback, no_answer_yet
from .text import crossings


def check_restore_point(answer: Any, job: StreamJob) -> Feedback:
    """Which checkpoint will :meth:`StreamJob.restore` use now? ``answer`` is a
    checkpoint id such as ``"c3"``, or ``None`` for "the start"."""
    entry = job.coordinator.latest_completed()
    expected = entry.id if entry is not None else None
    known = job.coordinator.entries
    if answer is Ellipsis:
        return no_answer_yet(
            hint="Answer with a checkpoint id such as 'c2', "
            "or None if the job must start again from the beginning."
        )
    reveal = (
        f"{expected}: the last COMPLETED checkpoint. A FAILED or unfinished one has no state "
        "to restore, and an earlier COMPLETED one would replay more."
        if expected is not None
        else "None: no checkpoint is COMPLETED, so the job starts again from the beginning."
    )
    if answer == expected:
        if expected is None:
            return Feedback(
                True, "Right: no checkpoint is COMPLETED, so the job restarts from the beginning."
            )
        return Feedback(
            True,
            f"Right: {expected} is the last COMPLETED checkpoint; a restore "
            "never uses a FAILED one.",
        )
    if answer is None:
        return Feedback(
            False,
            "None is not it: there is a COMPLETED checkpoint.",
            "Look for the last row whose status is COMPLETED.",
            answer=reveal,
        )
    if not isinstance(answer, str) or answer not in known:
        return Feedback(
            False,
            f"{answer!r} is not a checkpoint of this job.",
            f"The registry lists {', '.join(known)}.",
            answer=reveal,
        )
    status = known[answer].status
    if status == FAILED:
        return Feedback(
            False,
            f"{answer} is FAILED ({known[answer].reason}).",
            "A FAILED checkpoint's partial state was discarded: it cannot be restored.",
            answer=reveal,
        )
    if status == INITIATED:
        return Feedback(
            False,
            f"{answer} is still INITIATED.",
            "Only a checkpoint that every operator finished can be restored; and a "
            "crash fails every unfinished one.",
            answer=reveal,
        )
    assert status == COMPLETED and expected is not None
    return Feedback(
        False,
        f"{answer} is COMPLETED, but not the last one.",
        "A later checkpoint completed too; restoring it replays less.",
        answer=reveal,
    )


def _origins(answer: Any) -> set[str] | None:
    if isinstance(answer, str):
        answer = [answer]
    try:
        items = list(answer)
    except TypeError:
        return None
    out = set()
    for item in items:
        if isinstance(item, tuple) and len(item) == 2:
            out.add(f"{item[0]}#{item[1]}")
        elif isinstance(item, str):
            out.add(item.strip())
        else:
            return None
    return out


def check_duplicates(answer: Any, job: StreamJob, crash: str = "C1") -> Feedback:
    """If ``crash`` crashes now and the job is restored and run to the end, which
    records reach the sink twice? ``answer``: record names such as ``{"S1#4"}`` (or
    ``set()`` for none). The job itself is left as it is: a copy is crashed."""
    if answer is None or answer is Ellipsis:
        return no_answer_yet(hint="Name the records, e.g. {'S1#0', 'S2#1'}, or set() for none.")
    names = _origins(answer)
    if names is None:
        return Feedback(
            False,
            f"{answer!r} is not a set of record names.",
            "Write a set of names such as {'S1#0', 'S2#1'}.",
        )
    trial = copy.deepcopy(job)
    trial.crash(crash)
    info = trial.restore()
    trial.run()
    expected = {f"{s}#{i}" for s, i in trial.outcome().duplicates}
    restored = info["from"]
    if names == expected:
        if not expected:
            return Feedback(
                True,
                f"Right: no record crossed a barrier of {restored}, so nothing is delivered twice.",
            )
        return Feedback(
            True,
            f"Right: the restore uses {restored}, and "
            f"{', '.join(sorted(expected))} crossed its barriers: each is in "
            f"{restored}'s state and is read again.",
        )
    reveal = (
        f"The restore uses {restored}, the last COMPLETED checkpoint. The records that "
        f"crossed its barriers are in its operators' state and are read again: "
        f"{', '.join(sorted(expected)) or 'none'}. Crossings of other checkpoints do not "
        "come back."
    )
    crossed = crossings(job)
    others = {r for cid, found in crossed.items() if cid != restored for r, _, _ in found}
    wrong = names - expected
    if wrong and wrong <= others:
        return Feedback(
            False,
            f"{', '.join(sorted(wrong))} crossed a barrier, but not one of "
            "the checkpoint the restore uses.",
            "Which checkpoint does a restore use? Only its crossings come back.",
            answer=reveal,
        )
    if wrong:
        return Feedback(
            False,
            f"{', '.join(sorted(wrong))} will not be delivered twice.",
            "A record is duplicated when it crossed a barrier of the checkpoint the restore uses.",
            answer=reveal,
        )
    missing = expected - names
    return Feedback(
        False,
        f"Not all of them: {len(missing)} more will be delivered twice.",
        "Look again at every record that crossed a barrier of the checkpoint the restore uses.",
        answer=reveal,
    )

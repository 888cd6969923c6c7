"""The try-it checkers of lessons 05a (the learner's own run that breaks Chandy–Lamport
on non-FIFO channels) and 05b (what Lai–Yang records).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...formats.scenario import Scenario, ScenarioError, parse_scenario, run_scenario
from ...schedulers import FifoOrder, Scripted
from ...simulator import ActionError, Simulator
from ...workloads import actions_of
from ..feedback import Feedback, is_blank, no_answer_yet
from .text import MISSED, RED_IN_WHITE, RED_RECORDED, diagnose


def _scenario_from(answer: Any) -> Scenario:
    """A learner's run as a scenario: a list of steps, or a whole scenario document."""
    if isinstance(answer, Mapping):
        doc = dict(answer)
    else:
        steps = list(answer)
        names: list[str] = []
        for step in steps:
            if isinstance(step, Mapping):
                for key in ("at", "from", "to"):
                    p = step.get(key)
                    if isinstance(p, str) and p not in names:
                        names.append(p)
        names.sort()
        if len(names) < 2:
            names = sorted({*names, "P1", "P2"})
        doc = {"processes": names, "fifo": False, "app": "events", "steps": steps}
    steps = list(doc.get("steps", []))
    if not steps or not (isinstance(steps[-1], Mapping) and steps[-1].get("do") == "run"):
        steps.append({"do": "run"})  # let everything arrive, so the snapshot completes
    doc["steps"] = steps
    return parse_scenario(doc, source="your run")


def _learner_sim(answer: Any) -> Simulator:
    if isinstance(answer, Simulator):
        # replay the learner's actions on a fresh simulator, then let everything arrive
        # (the learner's own simulator is left as it is)
        sim = Simulator(answer.network, answer.app, answer.initial)
        sim.run(Scripted(actions_of(answer)))
        sim.run(FifoOrder())
        return sim

    return run_scenario(_scenario_from(answer))


def check_breaking_run(
    answer: Any, kind: str | None = None, channel: str | None = None
) -> Feedback:
    """Does the learner's non-FIFO run break the snapshot? Names the message if it does.

    Parameters
    ----------
    answer
        A list of scenario steps (processes are taken from the steps; channels are
        non-FIFO; a final ``{"do": "run"}`` is added when missing), a whole scenario
        document, or a :class:`~snapshotlib.Simulator` (e.g. an explorer's ``sim``);
        ``None`` while there is no answer yet.
    kind
        :data:`RED_IN_WHITE`, :data:`RED_RECORDED` or :data:`MISSED` to ask for that
        kind of break; any break counts when not given.
    channel
        Ask for the message that breaks it to travel on this channel, e.g. ``"P2->P3"``.

    Examples
    --------
    >>> fine = [{"do": "snapshot", "at": "P1"}]
    >>> print(check_breaking_run(fine))  # doctest: +ELLIPSIS
    ✗ Snapshot s1 of your run is right: ...
    """
    if is_blank(answer):
        return no_answer_yet(
            "Your run",
            "Write a list of steps such as {'do': 'snapshot', 'at': 'P1'} and run again.",
        )
    try:
        sim = _learner_sim(answer)
    except (ScenarioError, ActionError, TypeError, ValueError) as e:
        return Feedback(
            False,
            f"Your run cannot be played: {e}",
            "Check the step it names; a message is picked on a non-FIFO channel with "
            "{'do': 'deliver', 'from': ..., 'to': ..., 'msg': LABEL}.",
        )
    snapshots = sim.snapshot_ids()
    if not snapshots:
        return Feedback(
            False,
            "Your run takes no snapshot.",
            "Add a step {'do': 'snapshot', 'at': 'P1'}.",
        )
    if sim.network.fifo:
        return Feedback(
            False,
            "Your run has FIFO channels, and on those the marker algorithm never breaks.",
            "Set 'fifo': False in your scenario (a plain list of steps is non-FIFO already).",
        )
    breaks = [b for sid in snapshots if (b := diagnose(sim, sid)) is not None]
    wanted = [
        b
        for b in breaks
        if (kind is None or b.kind == kind) and (channel is None or b.channel == channel)
    ]
    if wanted:
        b = wanted[0]
        return Feedback(True, f"It breaks: {b.kind}. {b.explanation}")
    if breaks and channel is not None and all(b.channel != channel for b in breaks):
        src, _, dst = channel.partition("->")
        return Feedback(
            False,
            f"Your run breaks ({breaks[0].kind}), but the message to blame, "
            f"{breaks[0].message}, travels on {breaks[0].channel}, not on {channel}.",
            f"The message to blame must travel from {src} to {dst}: which of the two has "
            "to record first, and what has to arrive before what?",
        )
    if breaks:
        return Feedback(
            False,
            f"Your run breaks, but as {breaks[0].kind} (message {breaks[0].message}), "
            f"not as {kind}.",
            _HINTS.get(kind or "", ""),
        )
    return Feedback(
        False,
        f"Snapshot {snapshots[0]} of your run is right: a consistent cut, and every channel "
        "holds exactly the messages in transit.",
        _HINTS[kind or RED_IN_WHITE],
    )


#: hints that point at the reasoning, not at the steps: building the run is the task
_HINTS = {
    RED_IN_WHITE: (
        "A process that has not recorded yet must not accept a message sent after its "
        "sender recorded. On a non-FIFO channel, what can overtake a marker?"
    ),
    RED_RECORDED: (
        "A channel's recorded state is what arrives after its receiver recorded, before "
        "the marker on that channel. Could something sent after the sender recorded "
        "arrive in that window?"
    ),
    MISSED: (
        "A message sent before its sender recorded must show up in the receiver's "
        "recorded state or on the channel. What if the marker on that channel arrives "
        "before it?"
    ),
}


#: lesson 05b's try-it: the run in which the marker overtakes the token sent before it
COUNTED_RUN = "05-marker-overtakes-message"


def check_lai_yang_record(answer: Any) -> Feedback:
    """What Lai–Yang records on the run where the marker overtakes a white message.

    ``answer`` is ``{"P2": tokens P2 records, "P1->P2": [labels of the messages
    recorded on the channel]}``. The run is played under
    :class:`~snapshotlib.algorithms.lai_yang.LaiYang`, and the answer compared with
    what it recorded.

    >>> print(check_lai_yang_record({"P2": 0, "P1->P2": []}))  # doctest: +ELLIPSIS
    ✗ What Lai–Yang records: not quite. Hint: ...
    """
    from ...algorithms.lai_yang import LaiYang
    from ...formats.scenario import load_scenario
    from .text import run_with

    what = "What Lai–Yang records"
    hint = (
        "P1 sent one token before it recorded. What number does its marker on P1->P2 "
        "carry, and how long does P2 then keep recording that channel?"
    )
    if is_blank(answer):
        return no_answer_yet(what, 'Write {"P2": a number, "P1->P2": [message labels]}.')
    if not isinstance(answer, Mapping) or set(answer) != {"P2", "P1->P2"}:
        return Feedback(
            False,
            f'{what}: write a dict with the keys "P2" and "P1->P2", not {answer!r}.',
            'For example {"P2": 1, "P1->P2": ["x"]}.',
        )
    snapshot = run_with(load_scenario(COUNTED_RUN), LaiYang()).snapshot("s1")
    recorded = {
        "P2": snapshot.processes["P2"].state,
        "P1->P2": [m.label for m in snapshot.channels["P1->P2"]],
    }
    labels = answer["P1->P2"]
    given = {
        "P2": answer["P2"],
        "P1->P2": list(labels) if isinstance(labels, list | tuple) else labels,
    }
    reveal = (
        f"P2 records {recorded['P2']} tokens when the marker arrives, but the marker says "
        "one white message was sent on P1->P2 before it, so P2 goes on recording the "
        f"channel until that message has come: the channel holds {recorded['P1->P2']}. "
        "With P1's 1 token that is all 2 tokens."
    )
    if given == recorded:
        return Feedback(True, f"{what}: right. {reveal}")
    return Feedback(False, f"{what}: not quite.", hint, reveal)

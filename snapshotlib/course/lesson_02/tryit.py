"""Lesson 02's try-it checkers: each takes a run (the lesson's, or the learner's own) and
the learner's answer, and returns a Feedback; ``expected_answers`` gives one right
answer to each.
"""

from __future__ import annotations

from typing import Any

from ...actions import Deliver
from ...formats.scenario import load_scenario, run_scenario
from ...model import Channel
from ...simulator import Simulator
from ...trace import APP, NOT_RECEIVED
from ..feedback import Feedback, is_blank, no_answer_yet
from .text import SCENARIOS, occurrences, replay


# ------------------------------------------------------------------ the checks
def _names(answer: Any) -> list[str] | None:
    """A learner's list of names: one string, or any iterable of strings."""
    if answer is None or answer is Ellipsis:
        return None
    if isinstance(answer, str):
        answer = [answer]
    return [str(a).replace("→", "->").replace(" ", "") for a in answer]


def _why(sim: Simulator, snapshot_id: str, m: int) -> str:
    """Where message ``m`` stands with respect to snapshot ``snapshot_id``, in words."""
    trace = sim.trace
    red_from = sim.red_from(snapshot_id)
    msg = trace.messages[m]
    c = sim.network.channels[msg.channel]
    name = trace.message_name(m)
    src_red = red_from.get(c.src)
    if src_red is not None and msg.sent_by >= src_red:
        return (
            f"{name} was sent after {c.src} recorded for {snapshot_id}, so it travels behind "
            f"{c.src}'s {snapshot_id} marker: it is in no part of {snapshot_id}"
        )
    got = trace.received_by[m]
    dst_red = red_from.get(c.dst)
    if got != NOT_RECEIVED and (dst_red is None or got < dst_red):
        return (
            f"{name} arrived before {c.dst} recorded for {snapshot_id}, so {snapshot_id} "
            f"already counts it in {c.dst}'s recorded state"
        )
    return (
        f"{name} was sent before {c.src} recorded for {snapshot_id} and arrives after "
        f"{c.dst} did: for {snapshot_id} it was in transit"
    )


def check_recording_after_marker(answer: Any, sim: Simulator, channel: str) -> Feedback:
    """Which channels will the receiver be recording right after the marker at the head
    of ``channel`` arrives, if it is its first marker of that snapshot?

    Parameters
    ----------
    answer
        Channel names such as ``["P1->P2"]`` (``"P1→P2"`` is read the same).
    sim
        The run so far; it is not changed (the delivery happens on a copy).
    channel
        The channel whose head is the marker, e.g. ``"P3->P2"``.

    Examples
    --------
    >>> from snapshotlib import Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2", "P3"]))
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> print(check_recording_after_marker(["P3->P2"], sim, "P1->P2"))
    ✓ Right: right after its first s1 marker P2 is recording P3->P2; ...
    """
    c = Channel.parse(channel)
    copy = replay(sim)
    head = copy.in_flight(c)
    if not head or copy.trace.messages[head[0]].kind == APP:
        raise ValueError(f"the head of {c} is not a marker")
    snapshot_id = copy.trace.messages[head[0]].tag or "s1"
    if c.dst in copy.red_from(snapshot_id):
        raise ValueError(f"{c.dst} has already recorded for {snapshot_id}: not a first marker")
    copy.step(Deliver(c))
    pending = copy.snapshot(snapshot_id).pending_channels
    expected = [name for name in pending if Channel.parse(name).dst == c.dst]
    names = _names(answer)
    what = f"right after its first {snapshot_id} marker {c.dst} is recording"
    if names is None:
        return no_answer_yet(hint="List the channels by name, e.g. ['P2->P3'].")
    why = f"{what} {', '.join(expected) or 'nothing'}; {c} is closed at once, recorded empty."
    if sorted(set(names)) == sorted(expected):
        return Feedback(True, f"Right: {why}")
    reveal = f"{expected}: {why[0].upper()}{why[1:]}"
    known = {str(x) for x in copy.network.channels}
    shown = ", ".join(names) or "nothing"
    for name in names:
        if name not in known:
            return Feedback(
                False,
                f"{name!r} is not a channel of this network.",
                f"Write channels as 'SRC->DST'; this network has {', '.join(sorted(known))}.",
                reveal,
            )
    hint = ""
    if str(c) in names:
        hint = (
            f"{c} brought the marker: everything sent on it before the marker has already "
            f"arrived and is part of {c.dst}'s state, so it is recorded empty and closed."
        )
    elif any(Channel.parse(n).src == c.dst for n in names):
        hint = (
            f"A process records the channels that lead into it; on the channels that leave "
            f"{c.dst} it sends markers."
        )
    elif any(Channel.parse(n).dst != c.dst for n in names):
        hint = f"Only the channels that lead into {c.dst} matter here."
    else:
        hint = (
            f"{c.dst} starts recording every input channel except the one the marker came "
            f"on: which channels lead into {c.dst}?"
        )
    return Feedback(False, f"Not quite: {shown} is not what {c.dst} records.", hint, reveal)


def check_channel_state(
    answer: Any, sim: Simulator, channel: str, snapshot_id: str = "s1"
) -> Feedback:
    """What will snapshot ``snapshot_id`` record on ``channel``? (Message labels, in order.)

    The question is asked once both ends of ``channel`` have recorded, when the answer
    no longer depends on what happens next; the check runs a copy of ``sim`` to the end.

    Examples
    --------
    >>> from snapshotlib import Network, Simulator, Send, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P2": 1})
    >>> sim.step(Send("P2", "P1", 1, label="t"))
    >>> sim.step(StartSnapshot("P2", "s1"))
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> print(check_channel_state([], sim, "P2->P1"))
    ✗ Not quite: that is not what P1 will record on P2->P1. Hint: Something is missing. ...
    """
    c = Channel.parse(channel)
    red_from = sim.red_from(snapshot_id) if snapshot_id in sim.snapshot_ids() else {}
    for end in (c.src, c.dst):
        if end not in red_from:
            return Feedback(
                False,
                f"The recorded state of {c} is not settled yet: {end} has not recorded its "
                f"state for {snapshot_id}.",
            )
    copy = replay(sim)
    copy.run()
    trace = copy.trace
    msgs = copy.snapshot(snapshot_id).channels[str(c)]
    expected = [trace.message_name(m.id) for m in msgs]
    shown = ", ".join(expected) or "nothing"
    names = _names(answer)
    if names is None:
        return no_answer_yet(
            hint="Give the labels of the messages in order, e.g. ['u', 'v'], or []."
        )
    if names == expected:
        return Feedback(True, f"Right: {c.dst} will record {shown} on {c}.")
    sent = {
        trace.message_name(m): m
        for m, r in enumerate(trace.messages)
        if r.kind == APP and r.channel == copy.network.channel_index(c)
    }
    reveal = f"{expected}: {c.dst} will record {shown} on {c}. " + " ".join(
        _why(copy, snapshot_id, m) + "." for m in sent.values()
    )
    unknown = [n for n in names if n not in sent]
    if unknown:
        return Feedback(
            False,
            f"No message {unknown[0]!r} travels on {c}.",
            f"The messages sent on {c} are {', '.join(sent) or 'none'}; markers are never "
            "recorded.",
            reveal,
        )
    extra = [n for n in names if n not in expected]
    if extra:
        hint = _why(copy, snapshot_id, sent[extra[0]]) + "."
    elif any(n not in names for n in expected):
        hint = (
            f"Something is missing. Which messages on {c} were sent before {c.src} recorded "
            f"(so they travel ahead of its marker) and arrive after {c.dst} recorded?"
        )
    else:
        hint = "A channel's state is a sequence, in the order the messages were sent."
    return Feedback(False, f"Not quite: that is not what {c.dst} will record on {c}.", hint, reveal)


def check_in_transit(answer: Any, sim: Simulator, message: str) -> Feedback:
    """For which snapshots will ``message`` (a label) be recorded as in transit?

    The check runs a copy of ``sim`` until nothing is in flight and reads every
    snapshot's channel states.

    Examples
    --------
    >>> from snapshotlib import Network, Simulator, Send, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 1})
    >>> sim.step(StartSnapshot("P1", "s1"))
    >>> sim.step(Send("P1", "P2", 1, label="m"))
    >>> print(check_in_transit(["s1"], sim, "m"))
    ✗ Not quite: that is not the list of snapshots for m. Hint: m was sent after P1 ...
    """
    copy = replay(sim)
    copy.run()
    trace = copy.trace
    ids = [m for m, r in enumerate(trace.messages) if r.kind == APP and r.label == message]
    if not ids:
        raise ValueError(f"no message labelled {message!r} in this run")
    m = ids[0]
    snaps = copy.snapshots()
    expected = [
        s
        for s, snap in snaps.items()
        if any(x.id == m for xs in snap.channels.values() for x in xs)
    ]
    shown = ", ".join(expected) or "no snapshot"
    names = _names(answer)
    if names is None:
        return no_answer_yet(hint="Give snapshot ids, e.g. ['s1'].")
    if sorted(set(names)) == sorted(expected):
        return Feedback(True, f"Right: {message} is recorded in transit by {shown}.")
    reveal = f"{expected}: {message} is recorded in transit by {shown}. " + " ".join(
        _why(copy, s, m) + "." for s in snaps
    )
    unknown = [n for n in names if n not in snaps]
    if unknown:
        return Feedback(
            False,
            f"There is no snapshot {unknown[0]!r} in this run.",
            f"The snapshots are {', '.join(snaps)}.",
            reveal,
        )
    extra = [s for s in names if s not in expected]
    if extra:
        hint = _why(copy, extra[0], m) + "."
    else:
        hint = (
            f"Something is missing. For each snapshot, ask: was {message} sent before its "
            "sender recorded for it, and received after its receiver recorded for it?"
        )
    return Feedback(
        False, f"Not quite: that is not the list of snapshots for {message}.", hint, reveal
    )


def check_occurred(
    answer: Any, sim: Simulator, snapshot_id: str = "s1", hint: str = ""
) -> Feedback:
    """Did the state recorded by ``snapshot_id`` occur at some moment of the run?

    ``answer`` is ``True`` or ``False``; ``hint`` is shown when it is wrong (by default,
    how to find out).

    >>> from snapshotlib import Network, Simulator, StartSnapshot
    >>> sim = Simulator(Network(["P1", "P2"]), app="tokens", initial={"P1": 1})
    >>> sim.step(StartSnapshot("P1", "s1")); _ = sim.run()
    >>> print(check_occurred(True, sim))
    ✓ Right: the recorded state occurred after action(s) 0, 1, 2, 3.
    """
    if is_blank(answer):
        return no_answer_yet(hint="Answer True or False.")
    if not isinstance(answer, bool):
        return Feedback(False, f"{answer!r} is not True or False.", "Answer True or False.")
    found = occurrences(sim, snapshot_id)
    if found:
        why = f"the recorded state occurred after action(s) {', '.join(map(str, found))}."
    else:
        why = (
            "the recorded state occurred at no moment of the run: compare it with the state "
            "after each action, every process and every channel."
        )
    if answer == bool(found):
        return Feedback(True, f"Right: {why}")
    return Feedback(
        False,
        "Not quite.",
        hint or "Compare the recorded state with the state after each action of the run.",
        f"{bool(found)}: {why}",
    )


def expected_answers() -> dict[str, Any]:
    """One right answer for each try-it of the lesson, by the name of its answer variable.

    The lesson's tests check each against its checker and make sure no output of the
    stored notebook gives it away before the learner has answered.

    >>> expected_answers()["p1_p2_state"]
    ['x']
    """
    step_by_step = load_scenario(SCENARIOS / "02-step-by-step.json")
    two = run_scenario(load_scenario(SCENARIOS / "02-two-snapshots.json"))
    at9 = replay(run_scenario(step_by_step, until=9))
    full = run_scenario(step_by_step)
    return {
        "p2_recording": [
            name for name in at9.snapshot("s1").pending_channels if Channel.parse(name).dst == "P2"
        ],
        "p1_p2_state": [
            full.trace.message_name(m.id) for m in full.snapshot("s1").channels["P1->P2"]
        ],
        "m_in_transit_for": [
            s
            for s, snap in two.snapshots().items()
            if any(x.label == "m" for xs in snap.channels.values() for x in xs)
        ],
        "s1_occurred": bool(occurrences(full)),
    }

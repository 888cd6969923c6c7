"""The try-it checkers of lessons 06a and 06b: each takes a run (the lesson's, or the
learner's own) and the learner's answer, and returns a Feedback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...apps import Bank
from ...checks.lattice import Cut, CutLattice, Predicate
from ...checks.predicates import PredicateResult, conservation, deadlock, termination
from ...checks.true_state import state_at
from ...formats.scenario import (
    parse_scenario,  # noqa: F401  (for the examples)
)
from ...simulator import Simulator
from ...sweeps.stability import STABLE_PREDICATES
from ...trace import (
    SNAPSHOT,
)
from ..feedback import Feedback
from .text import MODALITIES, messages_text, p1_and_p3_hold_none


def _no_answer(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


def check_in_transit(sim: Simulator, answer: Any, snapshot_id: str = "s1") -> Feedback:
    """How much of the conserved quantity did the snapshot record in transit?

    The learner sees only the recorded process states and the total at the start.

    >>> from snapshotlib.formats.scenario import run_scenario

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "bank",
    ...     "initial": {"P1": 10}, "steps": [{"do": "send", "from": "P1", "to": "P2",
    ...     "payload": 4}, {"do": "snapshot", "at": "P2"}, {"do": "run"}]}))
    >>> print(check_in_transit(sim, 6))  # doctest: +ELLIPSIS
    ✗ 6 is what the processes hold, not what is travelling. Hint: The total is conserved...
    """
    result = conservation(sim, snapshot_id)
    unit = "tokens" if not isinstance(sim.app, Bank) else "units"
    initial = result.details.get("initial", 0)
    held = result.details.get("processes", 0)
    moving = result.details.get("channels", 0)
    hint = (
        "The total is conserved: what the processes recorded plus what the channels "
        f"recorded is what there was at the start ({initial})."
    )
    if _no_answer(answer):  # how to answer, not how to find it: that is the task
        return Feedback(False, "No answer yet.", f"Replace None with a whole number of {unit}.")
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Feedback(False, f"Give a whole number of {unit}, not {answer!r}.", hint)
    if answer == moving:
        snap = sim.snapshot(snapshot_id)
        where = "; ".join(
            f"{messages_text(sim.app, msgs)} on {name}"
            for name, msgs in snap.channels.items()
            if msgs
        )
        return Feedback(
            True, f"{moving} {unit} in transit: right. The channels recorded {where or 'nothing'}."
        )
    if answer == held and held != moving:
        return Feedback(
            False, f"{answer} is what the processes hold, not what is travelling.", hint
        )
    if answer == initial and initial != moving:
        return Feedback(False, f"{answer} is the total at the start.", hint)
    if answer == -moving:
        return Feedback(False, f"{answer}: mind the sign.", "Start minus what the processes hold.")
    return Feedback(False, f"{answer} {unit} is not it.", hint)


def _verdict_feedback(
    sim: Simulator,
    answer: Any,
    snapshot_id: str,
    name: str,
    result: PredicateResult,
    wrong_yes: str,
    wrong_no: str,
) -> Feedback:
    question = f"Will snapshot {snapshot_id} report {name}?"
    if _no_answer(answer):
        return Feedback(False, "No answer yet.", f"{question} Answer True or False.")
    if not isinstance(answer, bool):
        return Feedback(False, f"Answer True or False, not {answer!r}.")
    if answer != result.holds:
        # the hint leads back to the recorded state; the verdict waits in the fold
        return Feedback(
            False,
            "Not quite: look at the recorded state again before you change your answer.",
            wrong_yes if answer else wrong_no,
            answer=f"Snapshot {snapshot_id} {'reports' if result.holds else 'does not report'} "
            f"{name}: {result.reason}.",
        )
    begun = next(
        i
        for i, a in enumerate(sim.trace.actions)
        if a.kind == SNAPSHOT and (a.label or "s1") == snapshot_id
    )
    at_start = STABLE_PREDICATES[name](sim, state_at(sim, begun)).holds
    if at_start:
        why = f"It already held when {snapshot_id} began, so the recorded state had to show it."
    elif result.holds:
        why = (
            f"It did not hold yet when {snapshot_id} began: it set in while the snapshot "
            "was being taken, and the recorded state lies between the start and the end."
        )
    else:
        why = f"It did not hold when {snapshot_id} began either."
    return Feedback(True, f"Right: {result.reason}. {why}")


def check_termination(sim: Simulator, answer: Any, snapshot_id: str) -> Feedback:
    """Will this snapshot report termination? ``answer`` is ``True`` or ``False``.

    >>> from snapshotlib.formats.scenario import run_scenario

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "requests",
    ...     "steps": [{"do": "send", "from": "P1", "to": "P2", "payload": "request"},
    ...               {"do": "snapshot", "at": "P1"}, {"do": "run"}]}))
    >>> print(check_termination(sim, False, "s1"))  # doctest: +ELLIPSIS
    ✓ Right: P1 is still active. It did not hold when s1 began either.
    """
    return _verdict_feedback(
        sim,
        answer,
        snapshot_id,
        "termination",
        termination(sim, snapshot_id),
        "Look for a process that recorded its state while it was still waiting, or a "
        "channel whose recorded state holds a message.",
        "Each process records when its first marker arrives, not when the snapshot "
        "begins. By then, had its reply already arrived? And was anything recorded on "
        "a channel?",
    )


def check_deadlock(sim: Simulator, answer: Any, snapshot_id: str) -> Feedback:
    """Will this snapshot report a deadlock? ``answer`` is ``True`` or ``False``.

    >>> from snapshotlib.formats.scenario import run_scenario

    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "requests",
    ...     "steps": [{"do": "send", "from": "P1", "to": "P2", "payload": "request"},
    ...               {"do": "send", "from": "P2", "to": "P1", "payload": "request"},
    ...               {"do": "run"}, {"do": "snapshot", "at": "P1"}, {"do": "run"}]}))
    >>> print(check_deadlock(sim, True, "s1"))  # doctest: +ELLIPSIS
    ✓ Right: deadlock: P1 waits for P2 waits for P1. It already held when s1 began...
    """
    result = deadlock(sim, snapshot_id)
    return _verdict_feedback(
        sim,
        answer,
        snapshot_id,
        "deadlock",
        result,
        "The recorded states alone may form a cycle of waits, but look at the recorded "
        "channels too: is a message on its way to one of the waiting processes? It will "
        "wake that process up.",
        "Follow the 'waiting for' arrows between the recorded states. Does one come back "
        "to where it started, with no message recorded on the way to any of them?",
    )


def _cuts(cuts: Sequence[Cut]) -> str:
    named = ["(" + ", ".join(map(str, c)) + ")" for c in cuts]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def _arrows(cuts: Sequence[Cut]) -> str:
    return " → ".join("(" + ", ".join(map(str, c)) + ")" for c in cuts)


def check_modality(
    lattice: CutLattice,
    answer: Any,
    predicate: Predicate = p1_and_p3_hold_none,
    name: str = "P1 and P3 both hold no token",
) -> Feedback:
    """Is ``predicate`` true ``"never"``, ``"possibly"`` or ``"definitely"`` in this run?

    The answer is the strongest that is true: *definitely* implies *possibly*. A wrong
    answer gets a hint at the reasoning, not the answer. Here two processes swap tokens,
    so for a moment both hold none, whatever the order of the events:

    >>> from snapshotlib.formats.scenario import run_scenario

    >>> from snapshotlib.checks.lattice import cut_lattice
    >>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "tokens",
    ...     "initial": {"P1": 1, "P2": 1}, "steps": [
    ...     {"do": "send", "from": "P1", "to": "P2", "payload": 1},
    ...     {"do": "send", "from": "P2", "to": "P1", "payload": 1}, {"do": "run"}]}))
    >>> both_empty = lambda s: s.processes["P1"] == 0 and s.processes["P2"] == 0
    >>> print(check_modality(cut_lattice(sim), "definitely", both_empty, "both empty"))
    ... # doctest: +ELLIPSIS
    ✓ Right: definitely. 'both empty' holds at (1, 1), and every order of the events ...
    >>> print(check_modality(cut_lattice(sim), "possibly", both_empty, "both empty"))
    ... # doctest: +ELLIPSIS
    ✗ 'possibly' is not it. Hint: You found where it holds; now try to draw a path ...
    """
    options = f"{MODALITIES[0]!r}, {MODALITIES[1]!r} or {MODALITIES[2]!r}"
    find = (
        f"First find the nodes where '{name}': a node's counts tell you which events each "
        "process has taken, so what it holds. Look at every node, not only those on the "
        "run's own path."
    )
    if answer is None or answer is Ellipsis:
        return Feedback(False, "No answer yet.", f"Answer {options}. {find}")
    if not isinstance(answer, str) or answer.strip().lower() not in MODALITIES:
        return Feedback(False, f"Answer {options}, not {answer!r}.", find)
    answer = answer.strip().lower()
    where = lattice.holding(predicate)
    possibly, definitely = lattice.possibly(predicate), lattice.definitely(predicate)
    truth = "definitely" if definitely.holds else "possibly" if possibly.holds else "never"
    if answer == truth:
        if truth == "never":
            return Feedback(True, f"Right: '{name}' holds at none of the {len(lattice)} cuts.")
        if truth == "possibly":
            return Feedback(
                True,
                f"Right: possibly, not definitely. '{name}' holds at {_cuts(where)}, but "
                f"the order {_arrows(definitely.witness)} never passes through "
                f"{'it' if len(where) == 1 else 'them'}.",
            )
        edge = definitely.witness
        return Feedback(
            True,
            f"Right: definitely. '{name}' holds at {_cuts(where)}, and every order of the "
            "events (every path from the bottom to the top) passes through "
            f"{'' if len(edge) == 1 else 'one of '}{_cuts(edge)}.",
        )
    if answer == "never":
        hint = (
            f"{find} A cut where it holds need not be one the run passed through: every "
            "consistent cut is a state it could have passed through."
        )
    elif truth == "never":
        hint = (
            f"Check each node where you think it holds: is that cut consistent (in the "
            f"lattice at all)? {find}"
        )
    elif answer == "definitely":
        hint = (
            "'Definitely' needs every path from the bottom to the top to pass through a "
            "node where it holds. Try to draw one that does not, one event at a time; the "
            "run's own order is a good first try."
        )
    else:
        hint = (
            "You found where it holds; now try to draw a path from the bottom to the top "
            "that avoids all those nodes, one event at a time, and see whether you can "
            "finish it. Think of which receive must come first, and what the processes "
            "hold just before it."
        )
    return Feedback(False, f"'{answer}' is not it.", hint)

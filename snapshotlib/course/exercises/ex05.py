"""Exercise 5, *Dijkstra by hand*: each learner's run and proposal of swaps, in words.

Every learner reorders a run of their own: three processes, every channel in both
directions, one Chandy–Lamport snapshot ``s1``. Every action of the computation is named
by a letter in the order it happens. The notebook shows the run with :func:`describe`
only: the steps and where each marker arrives, never who has recorded when (that is the
learner's work). :func:`proposal` is a list of swaps of neighbours, one of which cannot
be made. The scenario document (:func:`scenario_of`) is for the tests.

Every question is practice (it earns no points): lesson 04's helpers answer each one in
a single call, which a learner can make in another notebook, so nothing here is refused.
The tests of the worked example and of the learner's run read the answers with the same
readers (:func:`read_swap`, :func:`read_white` and those of :mod:`.forms`), so the
public and hidden tests accept the same forms.

A run is drawn again until it suits the questions: between 4 and 10 inversions, a
message in transit in the snapshot, and a proposal whose illegal swap comes third or
later, after a swap of two actions that were not neighbours at the start.

>>> print(describe(7).splitlines()[0])
Three processes, P1, P2 and P3, a channel each way between every two of them.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from .forms import pair, shown

NAME = "05_dijkstra_by_hand"
VARIANT = True

#: nothing is refused: every question is practice (lesson 04's helpers answer each one in
#: a single call, which a learner can make in another notebook)
REFUSE: dict[str, tuple[str, ...]] = {}

_PROCESSES = ["P1", "P2", "P3"]
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _draw(rng: random.Random) -> dict[str, Any]:
    """A random run as a scenario document, every step explicit, every action named."""
    from ...actions import Deliver, Internal, Send, StartSnapshot
    from ...model import Network
    from ...simulator import Simulator

    net = Network(_PROCESSES, "complete")
    sim = Simulator(net, "events")
    names = iter(_LETTERS)
    steps: list[dict[str, Any]] = []
    plan = [rng.choice(["send", "send", "internal"]) for _ in range(rng.randint(5, 7))]
    plan.insert(rng.randint(1, 3), "start")

    def deliver() -> None:
        busy = [c for c, q in zip(net.channels, sim.queues, strict=True) if q]
        channel = rng.choice(busy)
        step: dict[str, Any] = {"do": "deliver", "from": channel.src, "to": channel.dst}
        head = sim.trace.messages[sim.queues[net.channels.index(channel)][0]]
        if head.kind == "app":
            step["label"] = next(names)
        sim.step(Deliver(channel, None, step.get("label")))
        steps.append(step)

    for what in plan:
        while any(sim.queues) and rng.random() < 0.5:
            deliver()
        p = rng.choice(_PROCESSES)
        if what == "start":
            sim.step(StartSnapshot(p, "s1"))
            steps.append({"do": "snapshot", "at": p, "id": "s1"})
        elif what == "internal":
            label = next(names)
            sim.step(Internal(p, label))
            steps.append({"do": "internal", "at": p, "label": label})
        else:
            to = rng.choice([q for q in _PROCESSES if q != p])
            label = next(names)
            sim.step(Send(p, to, None, label))
            steps.append({"do": "send", "from": p, "to": to, "label": label})
    while any(sim.queues):
        deliver()
    return {"name": f"{NAME}", "processes": _PROCESSES, "app": "events", "steps": steps}


def _propose(rng: random.Random, doc: dict[str, Any]) -> list[tuple[str, str]] | None:
    """Swaps of neighbours, legal ones then one that is not, then one more; ``None`` when
    this draw does not give a proposal that needs care."""
    from ...course.lesson_04 import swap_problem
    from ...formats.scenario import parse_scenario, run_scenario
    from ...trace import APP_KINDS

    trace = run_scenario(parse_scenario(doc)).trace
    order = [i for i, a in enumerate(trace.actions) if a.kind in APP_KINDS]
    start = set(itertools.pairwise(order))
    name = trace.action_name
    proposal: list[tuple[str, str]] = []
    moved_apart = False  # a swap of two actions that were not neighbours at the start
    swapped: set[frozenset[int]] = set()  # swapping a pair back would only undo a swap
    for _ in range(rng.randint(3, 5)):
        legal = [
            k
            for k in range(len(order) - 1)
            if frozenset(order[k : k + 2]) not in swapped
            and swap_problem(trace, *order[k : k + 2]) is None
        ]
        k = rng.choice(legal)
        swapped.add(frozenset(order[k : k + 2]))
        moved_apart |= (order[k], order[k + 1]) not in start
        proposal.append((name(order[k]), name(order[k + 1])))
        order[k], order[k + 1] = order[k + 1], order[k]
    illegal = [k for k in range(len(order) - 1) if swap_problem(trace, *order[k : k + 2])]
    if not moved_apart or not illegal:
        return None
    k = rng.choice(illegal)
    proposal.append((name(order[k]), name(order[k + 1])))
    for _ in range(rng.randint(0, 2)):  # the list goes on: nothing shows where it fails
        after = rng.randrange(len(order) - 1)
        proposal.append((name(order[after]), name(order[after + 1])))
    return proposal


def _fits(doc: dict[str, Any]) -> bool:
    from ...course.lesson_04 import inversions
    from ...formats.scenario import parse_scenario, run_scenario

    sim = run_scenario(parse_scenario(doc))
    snap = sim.snapshot("s1")
    in_transit = any(snap.channels.values())
    return snap.complete and in_transit and 4 <= inversions(sim) <= 10


def _made(variant: int) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    for attempt in itertools.count():
        rng = random.Random(f"{NAME}/{variant}/{attempt}")
        doc = _draw(rng)
        if not _fits(doc):
            continue
        proposed = _propose(rng, doc)
        if proposed is not None:
            return doc, proposed
    raise AssertionError("unreachable")


def scenario_of(variant: int) -> dict[str, Any]:
    """The learner's run, as a scenario document (for the tests)."""
    return _made(variant)[0]


def proposal(variant: int) -> list[tuple[str, str]]:
    """The proposed swaps of question 3, each a pair of action names."""
    return _made(variant)[1]


def describe(variant: int) -> str:
    """The learner's run in words: the network and every step, without running it."""
    doc = scenario_of(variant)
    lines = [
        "Three processes, P1, P2 and P3, a channel each way between every two of them.",
        "Steps, in order:",
    ]
    sent: dict[tuple[str, str], list[str]] = {}
    for number, step in enumerate(doc["steps"], start=1):
        do = step["do"]
        if do == "send":
            sent.setdefault((step["from"], step["to"]), []).append(step["label"])
            what = f"{step['from']} sends message {step['label']} to {step['to']}"
        elif do == "internal":
            what = f"{step['at']} does internal event {step['label']}"
        elif do == "snapshot":
            what = f"{step['at']} starts snapshot s1"
        elif "label" in step:
            message = sent[(step["from"], step["to"])].pop(0)
            what = (
                f"{step['to']} receives message {message} from {step['from']} "
                f"(event {step['label']})"
            )
        else:
            what = f"a marker from {step['from']} arrives at {step['to']}"
        lines.append(f"{number:>3}. {what}")
    return "\n".join(lines)


# ------------------------------------------------------------------ reading the answers


def processes_of(variant: int | None) -> list[str]:
    """The processes of the learner's run (``variant``), or of the worked example (None)."""
    if variant is None:
        from ..lesson_03 import worked_example

        return list(worked_example().network.processes)
    return list(_PROCESSES)


def action_names(variant: int | None) -> list[str]:
    """The names of the computation's actions in the order they happen, in the learner's
    run (``variant``, read from its steps without playing it) or in the worked example
    (None).

    >>> action_names(None)
    ['A', 'B', 'I', 'C', 'F', 'G', 'H', 'D', 'E', 'J']
    """
    if variant is None:
        from ..lesson_03 import worked_example

        trace = worked_example().trace
        return [trace.action_name(i) for i, _ in trace.app_actions()]
    return [step["label"] for step in scenario_of(variant)["steps"] if "label" in step]


def read_swap(answer: Any, what: str, variant: int | None) -> tuple[str, str]:
    """A swap (question 2): a pair (tuple or list) of two action names of the run, which
    may not be in the right order; AssertionError saying what to write otherwise.

    >>> read_swap(["C", "F"], "first_swap_worked", None)
    ('C', 'F')
    >>> read_swap((3, 4), "first_swap_worked", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: first_swap_worked is (3, 4): write two action names (strings), the red one...
    """
    known = action_names(variant)
    example = '("x", "y")'
    a, b = pair(answer, what, example=example)
    if not (isinstance(a, str) and isinstance(b, str)):
        raise AssertionError(
            f"{what} is {shown(answer)}: write two action names (strings), the red one first, "
            f"e.g. {example}"
        )
    unknown = [x for x in (a, b) if x not in known]
    if unknown:
        raise AssertionError(
            f"{what}: {unknown[0]!r} is not an action of this run; its actions are "
            f"{' '.join(known)}"
        )
    return a, b


def first_swap_feedback(run: Any, swap: tuple[str, str]) -> Any:
    """Lesson 04's verdict on ``swap`` as the first legal swap of ``run``, but the two
    actions must come red first, as the question asks (lesson 04 takes them either way).

    >>> from snapshotlib.course.lesson_03 import worked_example
    >>> print(first_swap_feedback(worked_example(), ("F", "C")))  # doctest: +ELLIPSIS
    ✗ F and C are the two actions, but not in the order the question asks for... Hint: ...
    """
    from ..feedback import Feedback
    from ..lesson_04 import check_first_swap, first_legal_swap

    verdict = check_first_swap(run, swap)
    if verdict.ok and tuple(swap) != first_legal_swap(run):
        return Feedback(
            False,
            f"{swap[0]} and {swap[1]} are the two actions, but not in the order the question "
            "asks for.",
            "Give the red action first, then the white one that follows it.",
        )
    return verdict


def read_white(answer: Any, what: str, variant: int | None) -> dict[str, list[str]]:
    """The white actions of each process (question 4): a dict naming exactly the run's
    processes, each to a list or tuple of action names (strings), in order;
    AssertionError saying what to write otherwise.

    >>> read_white({"P1": ("A", "B"), "P2": [], "P3": ["I"]}, "white_worked", None)
    {'P1': ['A', 'B'], 'P2': [], 'P3': ['I']}
    >>> read_white({"P1": ["A", "B"], "P3": "I"}, "white_worked", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: white_worked is {'P1': ['A', 'B'], 'P3': 'I'}: write a dict from each of P1...
    """
    processes = processes_of(variant)
    example = '{"P1": ["e", "f"], "P2": [], "P3": ["b"]}'
    ok = (
        isinstance(answer, dict)
        and all(isinstance(p, str) for p in answer)
        and sorted(answer) == sorted(processes)
        and all(
            isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)
            for v in answer.values()
        )
    )
    if not ok:
        raise AssertionError(
            f"{what} is {shown(answer)}: write a dict from each of {', '.join(processes)} to the "
            f"list of the names of its white actions, in order ([] for none), e.g. {example}"
        )
    return {p: list(answer[p]) for p in processes}

"""Exercise 13, *Possibly and definitely*: the lattice of a run as plain data, the
learner's brief, and the checks every test of their run starts with.

Question 1 asks for ``definitely(cuts, holding)``: given every consistent cut of a run
(tuples of event counts, one per process) and the cuts at which a predicate holds, does
every path from the bottom to the top pass through one of them? The tests hand it
:func:`lattice_data` of the lesson's run, of hand-made lattices and of random runs
(:func:`random_run`, :func:`predicates`), and compare with the engine's
:meth:`~snapshotlib.checks.lattice.CutLattice.definitely`, which the question refuses.

Question 2 asks the learner to build a run to a brief of their own (:func:`brief`): three
processes starting with one or two tokens each, and the predicate "these two processes
both hold no token" true *possibly but not definitely*, or *definitely* while not in the
final state.
:func:`play` plays it as every test does; :func:`modality` says what it achieves.

>>> cuts, holding = lattice_data(random_run(3), predicates(3)[0][1])
>>> (0, 0, 0) in cuts and holding <= cuts
True
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ...checks.lattice import Cut, GlobalState, cut_lattice
from ...simulator import Simulator
from .forms import scenario_within

NAME = "13_possibly_definitely"
VARIANT = True
REFUSE: dict[str, tuple[str, ...]] = {
    "definitely": (
        "snapshotlib.checks.lattice:CutLattice.definitely",
        "snapshotlib.checks.lattice:CutLattice._search",
    ),
}

PROCESSES = ("P1", "P2", "P3")
#: the random runs of the tests: one token each
INITIAL = dict.fromkeys(PROCESSES, 1)
#: the largest run question 2 takes (the lattice grows with the product of event counts)
MAX_STEPS = 24
MAX_ACTIONS = 60

StatePredicate = Callable[[GlobalState], bool]


def lattice_data(sim: Simulator, holds: StatePredicate) -> tuple[set[Cut], set[Cut]]:
    """The arguments of the learner's ``definitely``: every consistent cut of the run
    ``sim``, and those at whose global state ``holds`` is true."""
    lattice = cut_lattice(sim)
    return set(lattice.cuts), set(lattice.holding(holds))


def random_run(seed: int) -> Simulator:
    """A small random ``tokens`` run on three processes, every pair joined both ways,
    with one snapshot (which the lattice ignores: it counts application events)."""
    from ...model import Network
    from ...workloads import random_execution

    rng = random.Random(f"{NAME}/run/{seed}")
    network = Network(list(PROCESSES))
    return random_execution(
        network, seed=rng.randrange(10**6), n_actions=rng.randint(8, 14), initial=INITIAL
    )


def both_empty(first: str, second: str) -> StatePredicate:
    """The predicate "``first`` and ``second`` both hold no token"."""
    return lambda state: state.processes[first] == 0 and state.processes[second] == 0


def predicates(seed: int) -> list[tuple[str, StatePredicate]]:
    """Five predicates on a ``tokens`` run's global states, described in words, for two
    processes drawn by ``seed``: over random runs each is sometimes never true, sometimes
    possibly, sometimes definitely."""
    rng = random.Random(f"{NAME}/predicates/{seed}")
    a, b = rng.sample(PROCESSES, 2)
    return [
        (f"{a} and {b} both hold no token", both_empty(a, b)),
        (f"{a} holds no token", lambda s: s.processes[a] == 0),
        (f"{a} holds 2 tokens", lambda s: s.processes[a] == 2),
        (f"a token is in transit on {a}->{b}", lambda s: bool(s.channels.get(f"{a}->{b}"))),
        ("at least 2 tokens are in transit", lambda s: sum(map(len, s.channels.values())) >= 2),
    ]


def brief(variant: int) -> dict[str, Any]:
    """The learner's brief: the tokens each process starts with (one or two, never one
    each, as in the lesson's run), the two processes of the predicate, and what it must
    be.

    >>> b = brief(7)
    >>> len(b["pair"]), b["target"] in ("possibly", "definitely"), sorted(b["initial"])
    (2, True, ['P1', 'P2', 'P3'])
    """
    rng = random.Random(f"{NAME}/brief/{variant}")
    pair = tuple(sorted(rng.sample(PROCESSES, 2)))
    initial = {p: rng.choice((1, 2)) for p in PROCESSES}
    if set(initial.values()) == {1}:
        initial[rng.choice(pair)] = 2
    return {"pair": pair, "target": rng.choice(("possibly", "definitely")), "initial": initial}


def brief_text(wanted: dict[str, Any]) -> str:
    """The brief as the notebook prints it."""
    a, b = wanted["pair"]
    goal = (
        "possibly but not definitely: some order of the run's events passes through a "
        "state where it holds, and some order avoids every such state"
        if wanted["target"] == "possibly"
        else "definitely, though not in the run's final state: every order of the run's "
        "events passes through a state where it holds"
    )
    tokens = ", ".join(f"{p} {n}" for p, n in wanted["initial"].items())
    return (
        f'Your run: the processes {", ".join(PROCESSES)}, the "tokens" application, and '
        f'these tokens at the start: {tokens}. The predicate "{a} and {b} both hold no '
        f'token" holds {goal}.'
    )


def play(my_run: Any, wanted: dict[str, Any]) -> Simulator:
    """Play ``my_run`` (a scenario dict) as every test of question 2 does, and return
    the run if it is one the question takes: the processes, application and initial
    tokens of the brief ``wanted``, within :data:`MAX_STEPS` steps. AssertionError
    saying what to change otherwise.

    >>> play({"processes": ["P1", "P2"], "steps": []}, brief(7))
    Traceback (most recent call last):
    AssertionError: my_run has the processes P1, P2; your brief asks for P1, P2, P3
    """
    from ...formats.scenario import ScenarioError, parse_scenario, run_scenario

    if not isinstance(my_run, dict):
        raise AssertionError(
            f"my_run must be a scenario dict like the example, not {type(my_run).__name__}"
        )
    scenario_within(my_run, "my_run", processes=len(PROCESSES), steps=MAX_STEPS,
                    actions=MAX_ACTIONS)  # fmt: skip
    processes = list(my_run.get("processes", []))
    if processes != list(PROCESSES):
        raise AssertionError(
            f"my_run has the processes {', '.join(map(str, processes)) or 'none'}; your "
            f"brief asks for {', '.join(PROCESSES)}"
        )
    if my_run.get("app", "tokens") != "tokens":
        raise AssertionError('my_run must use the "tokens" application (leave out "app")')
    initial = my_run.get("initial", wanted["initial"])
    if initial != wanted["initial"]:
        raise AssertionError(
            f"my_run starts with {initial!r}; your brief asks for {wanted['initial']!r} "
            '(or leave out "initial")'
        )
    try:
        doc = {**my_run, "app": "tokens", "initial": initial}
        sim = run_scenario(parse_scenario(doc, source="my_run"))
    except ScenarioError as e:
        raise AssertionError(f"the scenario does not run: {e}") from None
    return sim


def modality(sim: Simulator, pair: tuple[str, str]) -> str:
    """What "the two processes of ``pair`` both hold no token" is in the run ``sim``:
    ``"never"``, ``"possibly"`` (but not definitely), ``"definitely"`` (and not in the
    final state) or ``"at the end"`` (in the final state, so definitely)."""
    lattice = cut_lattice(sim)
    holds = both_empty(*pair)
    if holds(lattice.state(lattice.top)):
        return "at the end"
    if lattice.definitely(holds).holds:
        return "definitely"
    return "possibly" if lattice.possibly(holds).holds else "never"

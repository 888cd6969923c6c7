"""Schedulers: who decides which action happens next.

A scheduler is anything with ``choose(sim) -> Action | None``; ``None`` ends the run.
They never reach into the simulator's queues: they look at :meth:`Simulator.enabled`
(or :meth:`Simulator.in_flight`) and return an action, so a run is always a sequence of
legal steps. Randomness comes only from the scheduler's own seeded generator: the same
seed gives the same trace.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from .actions import Action, Deliver

if TYPE_CHECKING:
    from .simulator import Simulator


class Scheduler(Protocol):
    def choose(self, sim: Simulator) -> Action | None: ...


class Manual:
    """The learner's choice: actions queued by :meth:`push` are taken in order.

    A stepper widget pushes what the learner clicked and calls ``sim.run(manual)``.
    """

    def __init__(self) -> None:
        self._queue: deque[Action] = deque()

    def push(self, action: Action) -> None:
        self._queue.append(action)

    def choose(self, sim: Simulator) -> Action | None:
        return self._queue.popleft() if self._queue else None


class Scripted:
    """A fixed list of actions (e.g. a scenario's steps), then stop."""

    def __init__(self, actions: Iterable[Action]) -> None:
        self._actions = iter(list(actions))

    def choose(self, sim: Simulator) -> Action | None:
        return next(self._actions, None)


class RandomOrder:
    """Deliver whatever is enabled, picked uniformly at random with a seeded generator."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def choose(self, sim: Simulator) -> Action | None:
        enabled = sim.enabled()
        return self.rng.choice(enabled) if enabled else None


class FifoOrder:
    """Deliver the oldest message or marker in flight first (a global FIFO order)."""

    def choose(self, sim: Simulator) -> Action | None:
        best: tuple[int, int] | None = None
        for i, q in enumerate(sim.queues):
            if q and i not in sim.blocked:
                oldest = q[0] if sim.network.fifo else min(q)
                if best is None or oldest < best[0]:
                    best = (oldest, i)
        if best is None:
            return None
        channel = sim.network.channels[best[1]]
        return Deliver(channel, None if sim.network.fifo else best[0])


def make_scheduler(name: str, seed: int | None = None) -> Scheduler:
    """A run scheduler by name: ``random`` (with ``seed``) or ``fifo-order``."""
    if name == "random":
        return RandomOrder(0 if seed is None else seed)
    if name == "fifo-order":
        return FifoOrder()
    raise ValueError(f"unknown scheduler {name!r}: expected 'random' or 'fifo-order'")

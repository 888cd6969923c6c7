"""Generated executions: networks and random runs for tests, benchmarks, lessons and sweeps.

Everything here is deterministic. Each generator takes a ``seed`` and draws only from
its own ``random.Random(seed)``, so the same arguments always give the same network or
the same trace, whatever else runs in the process (a Spark worker, a notebook, a
hypothesis test).

Examples
--------
>>> net = random_strongly_connected(4, extra_edges=2, seed=1)
>>> len(net.channels)
6
>>> sim = random_execution(net, seed=7, n_actions=40, snapshots=2, initiators_per_snapshot=2)
>>> all(s.complete for s in sim.snapshots().values())
True
>>> sim.has_pending()
False
>>> sum(sim.states.values()) == sum(sim.initial.values())
True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .actions import Action
from .algorithms.base import SnapshotAlgorithm
from .apps import Application, make_app
from .model import Network
from .simulator import ActionError, Simulator
from .trace import APP

#: tokens (or money) each process starts with when ``initial`` is not given
DEFAULT_AMOUNT = 3


def process_names(n: int, prefix: str = "P") -> list[str]:
    """``n`` process names, numbered from 1.

    >>> process_names(3)
    ['P1', 'P2', 'P3']
    """
    if n < 1:
        raise ValueError(f"a network needs at least one process, got n={n}")
    return [f"{prefix}{i}" for i in range(1, n + 1)]


def ring(n: int, *, fifo: bool = True, bidirectional: bool = False) -> Network:
    """``P1 -> P2 -> ... -> Pn -> P1`` (both ways with ``bidirectional``).

    >>> [str(c) for c in ring(3).channels]
    ['P1->P2', 'P2->P3', 'P3->P1']
    """
    return Network(process_names(n), "bidirectional-ring" if bidirectional else "ring", fifo)


def complete(n: int, *, fifo: bool = True) -> Network:
    """Every ordered pair of ``n`` processes joined by a channel.

    >>> len(complete(20).channels)
    380
    """
    return Network(process_names(n), "complete", fifo)


def random_strongly_connected(
    n: int, extra_edges: int = 0, seed: int = 0, *, fifo: bool = True
) -> Network:
    """A random strongly connected network: a random Hamiltonian cycle plus extra channels.

    The cycle makes the graph strongly connected whatever the extra channels are, so
    every such network is one the snapshot algorithm accepts (EWD 864a). The extra
    channels are drawn without repetition among the ordered pairs not on the cycle.

    Parameters
    ----------
    n
        Number of processes, named ``P1`` .. ``Pn``.
    extra_edges
        Channels added to the cycle; at most ``max_extra_edges(n)``.
    seed
        Seed of the generator's own random number generator.
    fifo
        Whether the channels are FIFO.

    Examples
    --------
    >>> net = random_strongly_connected(3, extra_edges=0, seed=4)
    >>> len(net.channels), net.fifo
    (3, True)
    >>> random_strongly_connected(3, extra_edges=4, seed=4)
    Traceback (most recent call last):
    ...
    ValueError: 3 processes have room for at most 3 channels besides a cycle, asked for 4
    """
    names = process_names(n)
    limit = max_extra_edges(n)
    if not 0 <= extra_edges <= limit:
        raise ValueError(
            f"{n} processes have room for at most {limit} channels besides a cycle, "
            f"asked for {extra_edges}"
        )
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    cycle = {(order[i], order[(i + 1) % n]) for i in range(n)} if n > 1 else set()
    others = [(a, b) for a in range(n) for b in range(n) if a != b and (a, b) not in cycle]
    pairs = sorted(cycle | set(rng.sample(others, extra_edges)))
    # Sorting by process number keeps channel order (and so channel indices) readable.
    return Network(names, [(names[a], names[b]) for a, b in pairs], fifo)


def max_extra_edges(n: int) -> int:
    """How many channels :func:`random_strongly_connected` can add to the cycle.

    >>> max_extra_edges(4)
    8
    """
    return n * (n - 1) - (n if n > 1 else 0)


def random_execution(
    network: Network,
    *,
    seed: int,
    n_actions: int,
    app: str | Application = "tokens",
    initial: Mapping[str, Any] | None = None,
    snapshots: int = 1,
    initiators_per_snapshot: int = 1,
    p_deliver: float = 0.5,
    p_send: float = 0.5,
    starts: Sequence[float] | None = None,
    spread: int | None = None,
    algorithm: SnapshotAlgorithm | Callable[[], SnapshotAlgorithm] | None = None,
) -> Simulator:
    """A random run with snapshots taken along the way, then drained to quiescence.

    The run has two phases. First ``n_actions`` random steps: with probability
    ``p_deliver`` (when something is in flight) a delivery on a channel chosen uniformly
    among the non-empty ones (on a non-FIFO channel, of a message or marker chosen
    uniformly within it); otherwise a spontaneous application action at a random
    process, a send with probability ``p_send`` (1 token to a random out-neighbour for
    ``tokens``/``bank``, when the process has one) or else an internal event. Snapshot
    initiations come on top of these steps. Then the drain: deliveries only, until every
    channel is empty, so every snapshot completes.

    Application events are labelled ``"P1.3"`` (the third event of ``P1``: sends,
    receives and internal events count, markers do not), so traces stay readable.

    Parameters
    ----------
    network
        The processes and channels (FIFO or not).
    seed
        Seed of the run's own random number generator: same arguments, same trace.
    n_actions
        Steps (application actions and deliveries) before the drain.
    app, initial
        The application and its initial values; for an application that conserves a
        quantity (``tokens``, ``bank``), ``initial`` defaults to :data:`DEFAULT_AMOUNT`
        per process. The drain needs an application that goes quiet when no spontaneous
        action happens (the built-in ones do).
    snapshots
        Number of snapshot ids, ``"s1"``, ``"s2"``, ...; they may run concurrently.
    initiators_per_snapshot
        Spontaneous initiations per id. Each picks a process that has not yet recorded
        for that id; an initiation is skipped when markers reached every process first.
    p_deliver, p_send
        Probabilities of a delivery, and of a send rather than an internal event.
    starts
        For each snapshot, when its first initiation happens, as a fraction of
        ``n_actions`` (``0.5``: mid-way); random when not given.
    spread
        Further initiators of the same id follow the first within this many steps
        (default: the number of processes), so they really are concurrent.
    algorithm
        The snapshot algorithm (Chandy–Lamport by default). Algorithms that are not
        started by a process (e.g. the clock snapshot) need ``snapshots=0``.

    Returns
    -------
    Simulator
        The simulator after the run; its ``trace`` is the execution.

    Examples
    --------
    >>> sim = random_execution(ring(3), seed=1, n_actions=6)
    >>> [f"{a.kind} {a.label or ''}".strip() for a in sim.trace.actions]
    ... # doctest: +NORMALIZE_WHITESPACE
    ['internal P3.1', 'snapshot s1', 'control', 'internal P2.1', 'send P1.1', 'control',
     'internal P2.2', 'receive P2.3', 'control']
    >>> snap = sim.snapshot("s1")
    >>> snap.complete, {p: r.events for p, r in snap.processes.items()}
    (True, {'P1': (), 'P2': (), 'P3': ('P3.1',)})
    """
    if n_actions < 0:
        raise ValueError(f"n_actions must be >= 0, got {n_actions}")
    if not 1 <= initiators_per_snapshot <= len(network.processes) and snapshots > 0:
        raise ValueError(
            f"initiators_per_snapshot must be between 1 and {len(network.processes)}, "
            f"got {initiators_per_snapshot}"
        )
    if starts is not None and len(starts) != snapshots:
        raise ValueError(f"starts gives {len(starts)} times for {snapshots} snapshot(s)")
    if starts is not None and not all(0 <= t <= 1 for t in starts):
        raise ValueError(f"starts are fractions of the run, between 0 and 1: got {starts}")
    sim = Simulator(network, app, _initial(network, app, initial), algorithm)
    rng = random.Random(seed)
    window = len(network.processes) if spread is None else spread
    plan = _initiation_plan(rng, n_actions, snapshots, initiators_per_snapshot, starts, window)
    _Runner(sim, rng, p_deliver, p_send).run(n_actions, plan)
    sim.algorithm.finish()
    return sim


def _initial(
    network: Network, app: str | Application, initial: Mapping[str, Any] | None
) -> dict[str, Any]:
    if initial is not None:
        return dict(initial)
    if make_app(app).conserved is not None:
        return dict.fromkeys(network.processes, DEFAULT_AMOUNT)
    return {}


def _initiation_plan(
    rng: random.Random,
    n_actions: int,
    snapshots: int,
    per_snapshot: int,
    starts: Sequence[float] | None,
    window: int,
) -> list[tuple[int, str]]:
    """``(step, snapshot id)`` of every initiation, in the order they happen."""
    plan = []
    for k in range(snapshots):
        first = int(starts[k] * n_actions) if starts is not None else rng.randint(0, n_actions)
        plan.append((first, k, f"s{k + 1}"))
        plan += [(first + rng.randint(0, window), k, f"s{k + 1}") for _ in range(per_snapshot - 1)]
    plan.sort()
    return [(step, sid) for step, _, sid in plan]


class _Runner:
    """The hot loop of :func:`random_execution`, on the simulator's fast primitives.

    ``sim.enabled()`` builds a list over every channel at each call, which would make a
    10^6-step run on a 380-channel network take minutes. The runner keeps instead the
    set of non-empty channels (a list plus positions, for O(1) uniform choice, insertion
    and removal). The simulator appends to queues only for sends it is asked for and for
    messages sent by handlers or the algorithm (markers); those show up as new message
    records, and then the acting process's output channels are looked at again.
    """

    def __init__(self, sim: Simulator, rng: random.Random, p_deliver: float, p_send: float) -> None:
        self.sim = sim
        self.rng = rng
        self.p_deliver = p_deliver
        self.p_send = p_send
        net = sim.network
        self.fifo = net.fifo
        self.dst = [c.dst for c in net.channels]
        self.outputs = {p: [net.channel_index(c) for c in net.outputs(p)] for p in net.processes}
        self.processes = list(net.processes)
        self.count = dict.fromkeys(net.processes, 0)
        self.live: list[int] = []
        self.where = [-1] * len(net.channels)
        app = sim.app
        self.amount = app.amount if app.conserved is not None else None
        self.payload = 1 if app.conserved is not None else None

    # The set of non-empty channels --------------------------------------------------
    def _add(self, ch: int) -> None:
        if self.where[ch] < 0:
            self.where[ch] = len(self.live)
            self.live.append(ch)

    def _remove(self, ch: int) -> None:
        live, where = self.live, self.where
        k = where[ch]
        last = live.pop()
        if last != ch:
            live[k] = last
            where[last] = k
        where[ch] = -1

    def _refresh(self, process: str) -> None:
        queues = self.sim.queues
        for ch in self.outputs[process]:
            if queues[ch]:
                self._add(ch)

    def _label(self, process: str) -> str:
        n = self.count[process] + 1
        self.count[process] = n
        return f"{process}.{n}"

    # Steps -----------------------------------------------------------------------
    def deliver(self) -> bool:
        """Deliver on a random unblocked non-empty channel; ``False`` if there is none."""
        sim, live, rng = self.sim, self.live, self.rng
        if sim.blocked:
            # Rare (barrier alignment): fall back to a filtered choice.
            open_ = [c for c in live if c not in sim.blocked]
            if not open_:
                return False
            ch = open_[rng.randrange(len(open_))]
        else:
            ch = live[rng.randrange(len(live))]
        q = sim.queues[ch]
        pos = 0 if self.fifo else rng.randrange(len(q))
        messages = sim.trace.messages
        dst = self.dst[ch]
        label = self._label(dst) if messages[q[pos]][2] == APP else None
        n = len(messages)
        sim.deliver(ch, pos, label)
        if not q:
            self._remove(ch)
        if len(messages) != n:
            self._refresh(dst)
        return True

    def spontaneous(self) -> None:
        """A send (when possible and drawn) or an internal event at a random process."""
        sim, rng = self.sim, self.rng
        p = self.processes[rng.randrange(len(self.processes))]
        outs = self.outputs[p]
        messages = sim.trace.messages
        if outs and rng.random() < self.p_send:
            ch = outs[rng.randrange(len(outs))]
            if self.amount is None or (self.amount(sim.states[p]) or 0) >= 1:
                label = self._label(p)
                try:
                    sim.send(p, ch, self.payload, label)
                except ActionError:
                    # A custom application refused: that process does something else.
                    self.count[p] -= 1
                else:
                    self._add(ch)
                    return
        n = len(messages)
        sim.internal(p, self._label(p))
        if len(messages) != n:
            self._refresh(p)

    def initiate(self, snapshot_id: str) -> None:
        """Start ``snapshot_id`` at a random process that has not recorded for it."""
        sim = self.sim
        done = sim.red_from(snapshot_id) if snapshot_id in sim.snapshot_ids() else {}
        candidates = [p for p in self.processes if p not in done]
        if not candidates:
            return
        p = candidates[self.rng.randrange(len(candidates))]
        sim.start_snapshot(p, snapshot_id)
        self._refresh(p)

    def run(self, n_actions: int, plan: list[tuple[int, str]]) -> None:
        rng, p_deliver = self.rng, self.p_deliver
        k = 0
        for step in range(n_actions):
            while k < len(plan) and plan[k][0] <= step:
                self.initiate(plan[k][1])
                k += 1
            if self.live and rng.random() < p_deliver and self.deliver():
                continue
            self.spontaneous()
        for _, snapshot_id in plan[k:]:
            self.initiate(snapshot_id)
        while self.live and self.deliver():
            pass


def actions_of(sim: Simulator) -> list[Action]:
    """The trace of ``sim`` as public actions, to replay with ``step`` or ``Scripted``.

    Replaying them on a fresh simulator (same network, application, initial values and
    algorithm) rebuilds the same trace, and ``step`` checks each action is enabled.

    >>> from snapshotlib import Scripted
    >>> sim = random_execution(ring(3), seed=2, n_actions=10)
    >>> again = Simulator(sim.network, "tokens", sim.initial)
    >>> _ = again.run(Scripted(actions_of(sim)))
    >>> again.trace.actions == sim.trace.actions
    True
    """
    return [sim.action(i) for i in range(len(sim.trace.actions))]


__all__ = [
    "DEFAULT_AMOUNT",
    "actions_of",
    "complete",
    "max_extra_edges",
    "process_names",
    "random_execution",
    "random_strongly_connected",
    "ring",
]

"""Breadth-first search over every schedule of a :class:`~.system.System`.

Each distinct state (:mod:`.state`) is expanded once; states are checked as they are
reached, level by level, so the first violation found is at the smallest depth the
search reaches it.

**Partial-order reduction.** Actions of different processes commute: each touches its
own process, takes from its own input channels and appends to its own output channels,
and appending to the tail of a channel commutes with taking its head (or any message)
at the other end; neither disables the other. Two exceptions are kept dependent: two
starts of a snapshot only one process may start, and everything of an algorithm that
does not declare its actions local (``local_actions``: the engine's Chandy–Lamport,
Lai–Yang and aligned and at-least-once barriers do; a clock snapshot or stop-the-world
reads or pauses the whole network, an unaligned barrier overtakes another's input), for
which the search does not reduce. Two classical reductions use this:

* **Sleep sets** prune transitions, never states: after exploring action ``a`` from a
  state, a sibling's subtree need not take ``a`` first when ``a`` commutes with what led
  there (that interleaving was covered). Every state is still reached, at its least
  depth, so the first violation found is a shortest one. A state reached twice before
  it is expanded keeps what both paths left awake.
* **Persistent sets** prune states: where a group of processes can act and nothing
  outside it can put a new action in its way (no process outside may still send on an
  empty input channel of the group, or any input channel if non-FIFO; a snapshot start
  only one may make brings in all that could), the search takes only the group's
  actions, the smallest such group, preferring one that can take a delivery. That
  still reaches every quiescent state, and so every snapshot's verdict (which never
  changes once it is complete). The state's depth is then part of its key, which keeps
  the graph acyclic so no action is put off forever.

By default both, with persistent sets on FIFO networks only: on non-FIFO channels every
message a sender may still send is a new action of its receiver, and persistent sets
barely reduce. A reduced search with persistent sets may reach a violation the long way
round; when it finds one at depth ``d`` it searches again with sleep sets alone up to
depth ``d - 1``, so the counterexample it returns is a shortest one either way.

**Memory.** A state waiting to be expanded keeps the parts of its key it passes on
(the algorithm's part as a hash unless ``exact``) and its path, an action and its
parent's path; not a run, unless fewer than :data:`HELD_RUNS` waiting states hold one.
When its turn comes its run is replayed along the path from the runs of the path
replayed last, kept (:meth:`_Search.rebuild`): a level's states come in the order of
their parents, so that is mostly one action. A run replayed must be the run first
made, as :meth:`Simulator.fork` already asks of an algorithm: the same calls give the
same answers (no randomness, no state shared between runs).

**Effects looked up.** For an algorithm whose actions are local and whose state is
declared (:func:`~.memo.splittable`: the engine's Chandy–Lamport, and a learner's class
that says so), the key holds the algorithm's state split by process, and
what an action did is recorded by the acting process's part (:mod:`.memo`): the next
time that part takes that action, in whatever state the others are, the successor is
made from the record without a run. On FIFO channels a state's moves are read from its
key too, so a run is replayed only for an action the memo does not know, or for the
checks of a state where nothing more can happen. A test walks random systems and checks
every successor so made against the one a run makes.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..actions import Action, Deliver, Internal, Send, StartSnapshot
from ..algorithms.state import freeze
from ..formats.scenario import Scenario, parse_scenario
from ..simulator import ActionError, Simulator
from ..trace import APP
from .memo import Effect, algorithm_parts, apply_audit, contribution, splittable
from .state import (
    Audit,
    Content,
    algorithm_key,
    audit_key,
    channel_names,
    content,
    reds,
    update_audit,
    verdict_at_completion,
)
from .system import System

BUILT_IN = ("consistent", "dijkstra", "conservation", "completes")
#: states a search reaches at most unless told otherwise (``max_states=None``: no limit),
#: so that a learner who enlarges a system gets an answer in seconds, not a kernel that
#: fills a Binder session's memory (about 2 GB). A waiting state holds its key's parts
#: and its path, not a run (but for HELD_RUNS of them): the example concurrent-snapshots
#: peaks at about 190 MB resident at 100,000 states
MAX_STATES = 50_000
#: waiting states that may keep their run rather than replay it when their turn comes:
#: a small search (a lesson's) then replays nothing, a big one holds this many runs
#: (about 20 kB each) and replays the others
HELD_RUNS = 2_000
#: invariants checked when a snapshot completes (its verdict never changes after that)
AT_COMPLETION = ("consistent", "dijkstra", "conservation")


@dataclass(frozen=True)
class Invariant:
    """A predicate of your own: ``check(sim)`` returns ``None`` or ``True`` when it holds,
    ``False`` or a reason (a string) when not. ``sim`` is a run that reaches the state.

    ``at="quiescent"`` checks it where nothing more can happen; ``"every"`` in every
    state, which turns partial-order reduction off (the reduced search skips states).
    """

    name: str
    check: Callable[[Simulator], bool | str | None]
    at: str = "quiescent"

    def __post_init__(self) -> None:
        if self.at not in ("quiescent", "every"):
            raise ValueError(f"invariant {self.name}: 'at' must be 'quiescent' or 'every'")


@dataclass
class SearchStats:
    """What a search did. ``explored``: states expanded; ``distinct``: states reached
    (each counted once); ``transitions``: actions taken; ``enabled``: actions that were
    possible in the expanded states (without reduction, equal to ``transitions``)."""

    explored: int = 0
    distinct: int = 0
    transitions: int = 0
    enabled: int = 0
    depth: int = 0
    quiescent: int = 0
    at_bound: int = 0
    seconds: float = 0.0
    reduction: bool = True
    #: with ``count_runs``: the schedules that end where nothing more can happen (the
    #: different orders the actions can take), else None
    runs: int | None = None

    @property
    def states_per_second(self) -> float:
        return self.distinct / self.seconds if self.seconds > 0 else 0.0

    @property
    def reduction_factor(self) -> float:
        """Actions possible per action taken in the expanded states (1.0: nothing saved)."""
        return self.enabled / self.transitions if self.transitions else 1.0

    def lines(self) -> list[str]:
        out = [
            f"states: {self.distinct:,} distinct, {self.explored:,} expanded, "
            f"{self.quiescent:,} quiescent",
            f"depth: {self.depth} actions; transitions: {self.transitions:,}",
            f"time: {self.seconds:.2f} s ({self.states_per_second:,.0f} states/s)",
        ]
        if self.runs is not None:
            out.insert(1, f"runs: {self.runs:,} different schedules to the end")
        if self.reduction:
            out.append(
                f"partial-order reduction: {self.enabled:,} actions possible, "
                f"{self.transitions:,} taken ({self.reduction_factor:.2f}x fewer)"
            )
        else:
            out.append("partial-order reduction: off")
        if self.at_bound:
            out.append(f"depth bound: {self.at_bound:,} states at the bound were not expanded")
        return out


@dataclass(frozen=True)
class Violation:
    """The shortest run found that breaks ``invariant``: ``path`` is its actions after
    the system's prefix, ``sim`` the run at its end."""

    invariant: str
    reason: str
    path: tuple[Action, ...]
    sim: Simulator
    snapshot_id: str | None = None

    @property
    def depth(self) -> int:
        return len(self.path)


@dataclass(frozen=True)
class SearchResult:
    """The outcome: ``ok`` when every reached state satisfies every invariant.

    ``exhaustive`` is False when the depth bound cut some run short, or the search was
    interrupted (``interrupted``); ``ok`` then speaks only of what was reached."""

    system: System
    invariants: tuple[str, ...]
    stats: SearchStats
    violation: Violation | None = None
    interrupted: bool = False
    #: with ``collect=True``: the key of every quiescent state with its failed invariants
    quiescent: dict[Hashable, frozenset[str]] | None = None
    shortest_confirmed: bool = True
    confirm_stats: SearchStats | None = None
    #: stopped after ``max_states`` states
    limited: bool = False

    @property
    def ok(self) -> bool:
        return self.violation is None

    @property
    def exhaustive(self) -> bool:
        return not self.interrupted and not self.limited and self.stats.at_bound == 0

    def counterexample(self) -> dict[str, Any]:
        """The violation's run as a scenario document (for ``json.dump``); see
        :func:`~.counterexample.counterexample_scenario`."""
        from .counterexample import counterexample_scenario

        if self.violation is None:
            raise ValueError("no invariant is violated: there is no counterexample")
        return counterexample_scenario(self.violation, self.system)

    def scenario(self) -> Scenario:
        """The violation's run as a :class:`~snapshotlib.formats.scenario.Scenario`, which
        the Explorer, the CommutationStepper and ``to_shiviz(run_scenario(...))`` take;
        under an algorithm a scenario cannot name, replay ``violation.sim`` instead."""
        return parse_scenario(self.counterexample(), source=f"{self.system.name}-counterexample")

    def summary(self) -> str:
        """A few lines for people: the verdict and the statistics."""
        if self.violation is not None:
            v = self.violation
            head = f"VIOLATED {v.invariant}: {v.reason} (a run of {v.depth} actions)"
        elif self.interrupted:
            head = "INTERRUPTED: no violation in the states reached so far"
        elif self.limited:
            head = f"STOPPED after {self.stats.distinct - 1:,} states: no violation so far"
        elif self.stats.at_bound:
            head = f"no violation within the depth bound ({self.system.depth} actions)"
        else:
            head = f"OK: every interleaving satisfies {', '.join(self.invariants)}"
        return "\n".join([head, *self.stats.lines()])


_NOTHING: frozenset[Any] = frozenset()
#: an action the memo has not seen from this part of the state
_UNKNOWN: Any = object()


class _Node:
    """A state in the search: the parts of its key, and the path that reaches it (its
    action and its parent's path). Its run (``sim``) is there while the state is made
    and checked, and while it is expanded; a state waiting in the frontier holds one only
    while fewer than :data:`HELD_RUNS` do, else :meth:`_Search.rebuild` replays its path
    when its turn comes."""

    __slots__ = (
        "algorithm",
        "amount",
        "audit",
        "audit_key",
        "blocked",
        "depth",
        "done",
        "done_key",
        "frozen",
        "names",
        "parts_done",
        "path",
        "paused",
        "pcs",
        "plans",
        "predicted",
        "recorded",
        "runs",
        "sim",
        "sleep",
    )

    def __init__(
        self,
        sim: Simulator | None,
        pcs: tuple[int, ...],
        plans: tuple[frozenset[str], ...],
        audit: Audit,
        done: tuple[tuple[str, tuple[tuple[str, str], ...]], ...],
        depth: int,
        path: tuple[Any, ...] | None,
        names: tuple[tuple[Content, ...], ...],
        algorithm: Hashable,
        audit_key: Hashable,
        done_key: Hashable,
    ) -> None:
        self.sim, self.pcs, self.plans, self.audit = sim, pcs, plans, audit
        self.done, self.depth, self.path = done, depth, path
        #: the audit and the verdicts as the key has them (kept while they do not change)
        self.audit_key, self.done_key = audit_key, done_key
        #: per channel, the contents of what is in flight (kept step by step)
        self.names = names
        #: the algorithm's part of the key (kept while the algorithm does not change)
        self.algorithm = algorithm
        #: with sleep sets: names of the actions whose interleavings are explored elsewhere
        self.sleep: frozenset[tuple[Any, ...]] = frozenset()
        #: when counting runs: how many schedules lead here
        self.runs = 1
        #: the key's other parts, kept so that a state made without a run has them:
        #: application states frozen, channels held back, processes paused
        self.frozen: tuple[Hashable, ...] = ()
        self.blocked: frozenset[int] = _NOTHING
        self.paused: frozenset[str] = _NOTHING
        #: with a split algorithm state (memo.py): (process index, snapshot id) recorded,
        #: and whose part is done; the conserved amount in the system (None: not kept)
        self.recorded: frozenset[tuple[int, str]] = _NOTHING
        self.parts_done: frozenset[tuple[int, str]] = _NOTHING
        self.amount: int | None = None
        #: made from a recorded effect, without a run (memo.py)
        self.predicted = False

    @property
    def run(self) -> Simulator:
        """The run that reaches this state (made or rebuilt, not yet let go)."""
        assert self.sim is not None, "a waiting state's run is rebuilt before it is read"
        return self.sim


class _Search:
    def __init__(
        self,
        system: System,
        invariants: Sequence[str | Invariant],
        reduction: bool | str,
        progress: Callable[[SearchStats], None] | None,
        collect: bool,
        max_depth: int | None,
        exact: bool = False,
        count_runs: bool = False,
        max_states: int | None = None,
    ) -> None:
        self.system = system
        self.exact = exact or collect
        self.count_runs = count_runs
        if max_states is not None and (type(max_states) is not int or max_states < 1):
            raise ValueError(
                "max_states: expected a whole number of states, at least 1, or None for "
                f"no limit, got {max_states!r}"
            )
        self.max_states = max_states
        self.limited = False
        if count_runs:
            reduction = False  # a reduced search leaves out orders it need not see
        self.builtin = frozenset(i for i in invariants if isinstance(i, str))
        unknown = self.builtin - set(BUILT_IN)
        if unknown:
            raise ValueError(
                f"unknown invariant(s) {', '.join(sorted(unknown))}: expected some of "
                f"{', '.join(BUILT_IN)}, or an Invariant of your own"
            )
        self.order = [i for i in invariants if isinstance(i, str)]
        self.custom = [i for i in invariants if isinstance(i, Invariant)]
        self.every = [i for i in self.custom if i.at == "every"]
        start = system.start()
        local = getattr(start.algorithm, "local_actions", False)
        if reduction not in (True, False, "persistent", "sleep"):
            raise ValueError(
                f"reduction: expected True (persistent and sleep sets), 'persistent', "
                f"'sleep' or False, got {reduction!r}"
            )
        if not (local and not self.every):
            reduction = False
        self.sleeping = reduction in (True, "sleep")
        # On non-FIFO channels every message a sender may still send is a new action
        # of its receiver, so a persistent set almost never leaves a process out (1.05x
        # in bench_search): by default, sleep sets alone there, which keep every state
        # at its least depth, so the first violation found is a shortest one.
        self.reduction = reduction == "persistent" or (reduction is True and system.network.fifo)
        self.stats = SearchStats(reduction=bool(reduction))
        self.progress = progress
        self.collect: dict[Hashable, frozenset[str]] | None = {} if collect else None
        self.max_depth = system.depth if max_depth is None else max_depth
        self.procs = system.network.processes
        self.programs = [system.programs.get(p, ()) for p in self.procs]
        self.index = {p: i for i, p in enumerate(self.procs)}
        #: per channel, its receiver's index, and the delivery of its head (FIFO)
        self.dst_index = [self.index[c.dst] for c in system.network.channels]
        self.heads = [Deliver(c) for c in system.network.channels]
        self.plans = system.snapshots
        app = start.app
        self.handlers_send = _handlers_send(app)
        self.conserved = app.conserved is not None
        #: what the application conserves (money, tokens), for the reason
        self.what_conserved = app.conserved
        if self.conserved:
            self.total = self.amount_now(start)
        records = reds(start)
        audit = update_audit({}, start, records, 0, frozenset())
        self.fast = start.algorithm.key_follows_events()
        self.fifo = system.network.fifo
        self.inputs = [tuple(start.input_channels(p)) for p in self.procs]
        self.outputs = [tuple(start.output_channels(p)) for p in self.procs]
        #: what actions did, by the acting process's part of the state (memo.py); None
        #: when the algorithm's state cannot be split by process
        self.memo: dict[Hashable, Effect | None] | None = None
        if self.fast and not self.every and splittable(start, self.inputs):
            self.memo = {}
        #: whether effects are read from the memo (off for good once a run showed an
        #: effect the acting process's part does not decide)
        self.predicting = self.memo is not None
        #: whether a state is expanded without replaying its run first (replayed only
        #: for an action the memo does not know): its moves are then read from its key
        self.lazy = self.memo is not None and self.fifo
        self.root = _Node(
            start,
            (0,) * len(self.procs),
            tuple(frozenset() for _ in self.plans),
            audit,
            (),
            0,
            None,
            tuple(channel_names(start, ch, records) for ch in range(len(start.queues))),
            self.algorithm_part(start, records),
            audit_key(audit, self.fifo),
            frozenset(),
        )
        self.root.frozen = tuple(freeze(start.states[p]) for p in self.procs)
        self.describe(self.root, start, records)
        #: the runs along the path last rebuilt, from the start: (path cell, run)
        self.replayed: list[tuple[Any, Simulator]] = [(None, start)]
        #: waiting states that kept their run (at most HELD_RUNS)
        self.held = 0

    # -------------------------------------------------------------- moves
    def moves(self, node: _Node) -> list[tuple[int, Action, int]]:
        """(owner process index, action, what it consumes) for every enabled action:
        consumes -1 - c for a delivery on channel c, 0 for a program step, k+1 for plan
        k. On FIFO channels they are read from the state's key, without its run."""
        out: list[tuple[int, Action, int]] = []
        channels = self.system.network.channels
        blocked = node.blocked
        if self.fifo:
            heads, dst = self.heads, self.dst_index
            for ch, names in enumerate(node.names):
                if names and ch not in blocked:
                    out.append((dst[ch], heads[ch], -1 - ch))
        else:  # a delivery names its message by id: the run's
            sim = self.run_of(node)
            for ch, queue in enumerate(sim.queues):
                if queue and ch not in blocked:
                    d, c = self.dst_index[ch], -1 - ch
                    out.extend((d, Deliver(channels[ch], m), c) for m in queue)
        paused = node.paused
        for i, prog in enumerate(self.programs):
            pc = node.pcs[i]
            if pc < len(prog) and self.procs[i] not in paused:
                out.append((i, prog[pc], 0))
        out.extend(self.starts(node))
        return out

    def position(self, node: _Node, action: Deliver, ch: int) -> int:
        """Where on channel ``ch`` the message ``action`` delivers is (0 on FIFO)."""
        if action.message is None:
            return 0
        return self.run_of(node).queues[ch].index(action.message)

    def run_of(self, node: _Node) -> Simulator:
        """``node``'s run: the one it holds, or replayed now (:meth:`rebuild`)."""
        return node.sim if node.sim is not None else self.rebuild(node)

    def starts(self, node: _Node) -> Iterator[tuple[int, Action, int]]:
        """The snapshot starts the plans still allow (``moves``' last part), lazily."""
        if self.memo is not None:  # what each process recorded is kept with the state
            recorded = node.recorded
            for k, plan in enumerate(self.plans):
                started = node.plans[k]
                if plan.initiators == "one" and started:
                    continue
                for p in plan.at:
                    i = self.index[p]
                    if p not in started and (i, plan.snapshot_id) not in recorded:
                        yield (i, StartSnapshot(p, plan.snapshot_id), k + 1)
            return
        records = node.run.algorithm.snapshot_records()
        for k, plan in enumerate(self.plans):
            started = node.plans[k]
            if plan.initiators == "one" and started:
                continue
            rec = records.get(plan.snapshot_id)
            for p in plan.at:
                if p in started or (rec is not None and p in rec.red_from):
                    continue
                yield (self.index[p], StartSnapshot(p, plan.snapshot_id), k + 1)

    def can_move(self, node: _Node) -> bool:
        """Whether :meth:`moves` would find an action, without listing them (asked of
        every new state; the list is made when the state is expanded)."""
        blocked = node.blocked
        if any(names and ch not in blocked for ch, names in enumerate(node.names)):
            return True
        paused = node.paused
        for i, prog in enumerate(self.programs):
            if node.pcs[i] < len(prog) and self.procs[i] not in paused:
                return True
        return any(True for _ in self.starts(node))

    def persistent(
        self, node: _Node, moves: list[tuple[int, Action, int]]
    ) -> list[tuple[int, Action, int]]:
        """A persistent set: the enabled actions of a set of processes that nothing
        outside it can disturb (see the module docstring); all actions when no smaller
        one is found."""
        by_owner: dict[int, list[tuple[int, Action, int]]] = {}
        for m in moves:
            by_owner.setdefault(m[0], []).append(m)
        if len(by_owner) < 2:
            return moves
        feeds = self.feeders(node)
        best: list[tuple[int, Action, int]] | None = None
        best_rank: tuple[bool, int] | None = None
        for owner in by_owner:
            group = self.closure(owner, feeds, by_owner)
            if len(group) == len(by_owner):
                continue
            chosen = [m for p in group for m in by_owner.get(p, ())]
            # prefer consuming what is in flight: the runs found first stay short
            rank = (not any(m[2] < 0 for m in chosen), len(chosen))
            if best_rank is None or rank < best_rank:
                best, best_rank = chosen, rank
        return best if best is not None else moves

    def feeders(self, node: _Node) -> list[set[int]]:
        """Per process, the processes that may still put a new action in its way: a
        sender that may still send on a channel to it which is empty (on a FIFO
        channel, a message behind the head adds no new action) or non-FIFO."""
        net = self.system.network
        index = self.index
        cut: dict[str, Collection[str]]
        if self.memo is not None:  # who recorded what is kept with the state
            recorded: dict[str, set[str]] = {}
            for i, sid in node.recorded:
                recorded.setdefault(sid, set()).add(self.procs[i])
            cut = dict(recorded)
        else:
            records_now = self.run_of(node).algorithm.snapshot_records()
            cut = {sid: rec.red_from for sid, rec in records_now.items()}
        # snapshots that are or may still be taken: every process that has not
        # recorded one of them will, and sends its control messages then
        ids = set(cut)
        for plan, used in zip(self.plans, node.plans, strict=True):
            if not (plan.initiators == "one" and used):
                ids.add(plan.snapshot_id)
        for i, prog in enumerate(self.programs):
            ids.update(a.snapshot_id for a in prog[node.pcs[i] :] if isinstance(a, StartSnapshot))
        unrecorded = [cut.get(sid, ()) for sid in sorted(ids)]
        feeds: list[set[int]] = [set() for _ in self.procs]
        for ch, c in enumerate(net.channels):
            if net.fifo and node.names[ch]:
                continue
            q = index[c.src]
            if self.may_send(node, q, c.dst, unrecorded):
                feeds[index[c.dst]].add(q)
        return feeds

    def may_send(self, node: _Node, q: int, dst: str, snapshots: list[Collection[str]]) -> bool:
        """Whether process ``q`` may still send to ``dst``: its program says so, or its
        handlers may send, or it has yet to record a snapshot (``snapshots``: the cut so
        far of each snapshot that is or may still be taken)."""
        if self.handlers_send:
            return True
        prog = self.programs[q]
        if any(isinstance(a, Send) and a.dst == dst for a in prog[node.pcs[q] :]):
            return True
        name = self.procs[q]
        return any(name not in red_from for red_from in snapshots)

    def closure(
        self, owner: int, feeds: list[set[int]], by_owner: dict[int, list[Any]]
    ) -> set[int]:
        """``owner`` and every process that may disturb the group, transitively; a
        snapshot only one process may start brings in every process that could."""
        group = {owner}
        todo = [owner]
        while todo:
            p = todo.pop()
            extra = set(feeds[p])
            for m in by_owner.get(p, ()):
                if m[2] > 0 and self.plans[m[2] - 1].initiators == "one":
                    extra |= {o for o, ms in by_owner.items() if any(x[2] == m[2] for x in ms)}
            for q in extra - group:
                group.add(q)
                todo.append(q)
        return group

    def name(self, node: _Node, move: tuple[int, Action, int]) -> tuple[Any, ...]:
        """The same action in every state where it is possible (for sleep sets), as
        (kind, process, ...): a delivery by channel (and, on a non-FIFO channel, the
        message's content), a program step by process, a snapshot start by plan."""
        owner, action, consumes = move
        if consumes == 0:
            return ("p", owner)
        if consumes > 0:
            return ("s", owner, consumes - 1)
        assert isinstance(action, Deliver)
        ch = -1 - consumes
        if action.message is None:
            return ("d", owner, ch)
        pos = self.run_of(node).queues[ch].index(action.message)
        return ("d", owner, ch, node.names[ch][pos])

    def independent(self, a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
        """Whether named actions ``a`` and ``b`` commute: different processes, and not
        two starts of a snapshot only one process may start."""
        if a[1] == b[1]:
            return False
        if a[0] == "s" and b[0] == "s" and a[2] == b[2]:
            return bool(self.plans[a[2]].initiators != "one")
        return True

    # -------------------------------------------------------------- steps
    def child(
        self, node: _Node, move: tuple[int, Action, int], defer: bool = False
    ) -> _Node | _Deferred | str | None:
        """The state after ``move``; None if the action turned out not to be possible
        (the application refused a send); a reason if the run stopped with an error.
        With the memo on, an action whose effect is recorded is applied without a run;
        with ``defer``, such a state comes as its key and parts, made a node only if it
        is new (:meth:`node_of`): most are not."""
        memo_key = None
        if self.predicting:
            assert self.memo is not None
            memo_key = self.memo_key(node, move)
            effect = self.memo.get(memo_key, _UNKNOWN)
            if effect is None:
                return None  # refused from this very part of the state before
            if effect is not _UNKNOWN:
                deferred = self.predicted(node, move, effect)  # type: ignore[arg-type]
                if deferred is not None:
                    return deferred if defer else self.node_of(deferred)
        owner, action, consumes = move
        parent = self.run_of(node)
        trace = parent.trace
        before, sent_before, events_before = (
            len(trace.actions),
            len(trace.messages),
            len(trace.events),
        )
        names = list(node.names)
        touched = not self.fast
        if consumes < 0:
            ch = -1 - consumes
            queue = parent.queues[ch]
            assert isinstance(action, Deliver)
            pos = self.position(node, action, ch)
            if trace.messages[queue[pos]].kind != APP or parent.algorithm.listening[ch]:
                touched = True
            names[ch] = names[ch][:pos] + names[ch][pos + 1 :]
        try:
            sim = self.advance(parent, action)
        except ActionError:
            if self.memo is not None and self.predicting:
                self.memo[memo_key] = None
            return None
        except Exception as e:  # a handler's error (a learner's class): the run stops
            return f"the run stopped: {type(e).__name__}: {e}"
        trace = sim.trace
        records = reds(sim)
        messages = trace.messages
        if len(messages) > sent_before:
            srcs = sim.network.channels
            for mid in range(sent_before, len(messages)):
                msg = messages[mid]
                names[msg.channel] += (content(msg, srcs[msg.channel].src, records),)
            for mid in range(sent_before, len(messages)):
                ch = messages[mid].channel
                if len(names[ch]) != len(sim.queues[ch]) or sim.queues[ch][-1] < sent_before:
                    names[ch] = channel_names(sim, ch, records)  # put ahead of others (`at`)
        if len(trace.events) != events_before:
            touched = True
        pcs, plans = _progress(node, move)
        done = node.done
        audit = node.audit
        if records and self.fast:
            # the engine's algorithms never touch a snapshot once it is complete: its
            # verdict is final, and its audit can go
            finished = frozenset(sid for sid, _ in done)
            audit = update_audit(audit, sim, records, before, finished)
            for sid, rec in records:
                if sid not in finished and rec.complete:
                    failed = verdict_at_completion(sim, sid, rec, audit)
                    done = (*done, (sid, tuple(sorted(failed.items()))))
                    audit = {s: a for s, a in audit.items() if s != sid}
        elif records:
            # any other class may go on changing a complete snapshot (a channel that
            # keeps recording after its marker): judge it again after every step
            audit = update_audit(audit, sim, records, before, frozenset())
            done = tuple(
                (sid, tuple(sorted(verdict_at_completion(sim, sid, rec, audit).items())))
                for sid, rec in records
                if rec.complete
            )
        made = _Node(
            sim,
            pcs,
            plans,
            audit,
            done,
            node.depth + 1,
            (action, node.path),
            tuple(names),
            self.algorithm_part(sim, records) if touched else node.algorithm,
            node.audit_key if audit is node.audit else audit_key(audit, self.fifo),
            node.done_key if done is node.done else frozenset(done),
        )
        if self.memo is None:
            made.frozen = tuple([freeze(sim.states[p]) for p in self.procs])
            self.describe(made, sim, records)
            return made
        # the acting process's state alone changes (its actions are local)
        p = self.procs[owner]
        made.frozen = (*node.frozen[:owner], freeze(sim.states[p]), *node.frozen[owner + 1 :])
        if touched or sim.blocked or sim.paused or node.blocked or node.paused:
            self.describe(made, sim, records)
        else:
            made.recorded, made.parts_done = node.recorded, node.parts_done
            if self.conserved:
                made.amount = self.amount_now(sim)
        if sim.app_sent_asked:  # its effects depend on counts no process's part holds
            self.predicting = False
        if self.predicting:
            # the audit's part of the effect is this action's own: applied elsewhere, an
            # orphan already there stays first, and one this action makes is kept
            finished = frozenset(sid for sid, _ in node.done)
            own = update_audit({}, sim, records, before, finished) if records else {}
            self.remember(memo_key, node, made, move, own)
        return made

    def memo_key(self, node: _Node, move: tuple[int, Action, int]) -> Hashable:
        """What ``move``'s effect depends on: the acting process's part of ``node``'s
        state, the part of no process, and the action (see :mod:`.memo`)."""
        owner, action, consumes = move
        what: tuple[Any, ...]
        if consumes < 0:
            assert isinstance(action, Deliver)
            ch = -1 - consumes
            pos = self.position(node, action, ch)
            what = (ch, node.names[ch][pos])
        else:
            what = (consumes, node.pcs[owner])
        algorithm = node.algorithm
        blocked = node.blocked and frozenset(c for c in self.inputs[owner] if c in node.blocked)
        return (
            owner,
            what,
            algorithm[0][owner],  # type: ignore[index]
            algorithm[1],  # type: ignore[index]
            node.frozen[owner],
            blocked,
            self.procs[owner] in node.paused,
            node.done_key,
        )

    def predicted(
        self, node: _Node, move: tuple[int, Action, int], effect: Effect
    ) -> _Deferred | None:
        """The state after ``move`` made from its recorded ``effect``, without a run, as
        its key and parts (:meth:`node_of` makes the node); None when a run must decide
        (a snapshot completes: its verdict reads every channel)."""
        owner, action, consumes = move
        names = list(node.names)
        if consumes < 0:
            ch = -1 - consumes
            if self.fifo:
                names[ch] = names[ch][1:]
            else:
                assert isinstance(action, Deliver)
                pos = self.position(node, action, ch)
                names[ch] = names[ch][:pos] + names[ch][pos + 1 :]
        for ch, items in effect.sent:
            names[ch] += items
        recorded, parts_done = node.recorded, node.parts_done
        if effect.marks:  # what the acting process recorded or finished changed
            recorded = frozenset(
                [*(x for x in recorded if x[0] != owner), *((owner, s) for s in effect.recorded)]
            )
            parts_done = frozenset(
                [*(x for x in parts_done if x[0] != owner), *((owner, s) for s in effect.done)]
            )
            finished = {sid for sid, _ in node.done}
            n = len(self.procs)
            for sid in effect.done:
                if sid not in finished and sum(1 for _, s in parts_done if s == sid) == n:
                    return None  # complete now
        pcs, plans = _progress(node, move)
        audit = apply_audit(node.audit, effect.audit) if effect.audit else node.audit
        parts = node.algorithm[0]  # type: ignore[index]
        algorithm = ((*parts[:owner], effect.part, *parts[owner + 1 :]), effect.shared)
        frozen = (*node.frozen[:owner], effect.state, *node.frozen[owner + 1 :])
        blocked = node.blocked
        if blocked or effect.blocked:
            ins = self.inputs[owner]
            blocked = frozenset(c for c in blocked if c not in ins) | effect.blocked or _NOTHING
        paused = node.paused
        if paused or effect.paused:
            p = self.procs[owner]
            paused = (paused - {p}) | ({p} if effect.paused else _NOTHING) or _NOTHING
        names_now = tuple(names)
        audit_now = node.audit_key if audit is node.audit else audit_key(audit, self.fifo)
        key = (
            node.depth + 1 if self.reduction else 0,
            pcs,
            plans,
            frozen,
            names_now,
            blocked,
            paused,
            algorithm,
            audit_now,
            node.done_key,
        )
        amount = None if node.amount is None else node.amount + effect.amount
        return (key, node, action, audit, recorded, parts_done, amount)

    def node_of(self, deferred: _Deferred) -> _Node:
        """The node of a state :meth:`predicted` made."""
        key, node, action, audit, recorded, parts_done, amount = deferred
        _, pcs, plans, frozen, names, blocked, paused, algorithm, audit_now, done_key = key
        made = _Node(
            None,
            pcs,
            plans,
            audit,
            node.done,
            node.depth + 1,
            (action, node.path),
            names,
            algorithm,
            audit_now,
            done_key,
        )
        made.predicted = True
        made.frozen, made.blocked, made.paused = frozen, blocked, paused
        made.recorded, made.parts_done, made.amount = recorded, parts_done, amount
        return made

    def remember(
        self,
        memo_key: Hashable,
        node: _Node,
        made: _Node,
        move: tuple[int, Action, int],
        own: Audit,
    ) -> None:
        """Record what ``move`` did from ``node`` (the run made ``made``), as the acting
        process's change; nothing when the change reached past that process (the class
        is not as local as it says) or a snapshot completed."""
        assert self.memo is not None
        if made.done is not node.done:
            return
        owner, action, consumes = move
        before_names = list(node.names)
        if consumes < 0:
            assert isinstance(action, Deliver)
            ch = -1 - consumes
            pos = self.position(node, action, ch)
            before_names[ch] = before_names[ch][:pos] + before_names[ch][pos + 1 :]
        outs = self.outputs[owner]
        sent = []
        for ch, (old, new) in enumerate(zip(before_names, made.names, strict=True)):
            if old == new:
                continue
            if ch not in outs or new[: len(old)] != old:
                return
            sent.append((ch, new[len(old) :]))
        ins = self.inputs[owner]
        others = [i for i in range(len(self.procs)) if i != owner]
        old_parts, _ = _split(node.algorithm)
        new_parts, shared = _split(made.algorithm)
        p = self.procs[owner]

        def others_of(pairs: frozenset[tuple[int, str]]) -> set[tuple[int, str]]:
            return {x for x in pairs if x[0] != owner}

        if (
            any(made.frozen[i] != node.frozen[i] for i in others)
            or any(new_parts[i] != old_parts[i] for i in others)
            or made.blocked - set(ins) != node.blocked - set(ins)
            or made.paused - {p} != node.paused - {p}
            or others_of(made.recorded) != others_of(node.recorded)
            or others_of(made.parts_done) != others_of(node.parts_done)
        ):
            return
        amount = 0
        if made.amount is not None and node.amount is not None:
            amount = made.amount - node.amount
        marks = made.recorded != node.recorded or made.parts_done != node.parts_done
        self.memo[memo_key] = Effect(
            part=new_parts[owner],
            shared=shared,
            state=made.frozen[owner],
            blocked=frozenset(c for c in made.blocked if c in ins),
            paused=p in made.paused,
            sent=tuple(sent),
            audit=contribution(own),
            recorded=frozenset(s for i, s in made.recorded if i == owner),
            done=frozenset(s for i, s in made.parts_done if i == owner),
            marks=marks,
            amount=amount,
        )

    def compact(self, part: Hashable) -> Hashable:
        """A part of a state's key as a waiting state keeps it: its 64-bit hash, unless
        the search is exact (the algorithm's records, held whole by every waiting
        state, were the largest part of a search's memory)."""
        return part if self.exact else hash(part)

    def advance(self, parent: Simulator, action: Action) -> Simulator:
        """A new run: ``parent`` (left as it is) and then ``action``; how :meth:`child`
        makes a state and :meth:`rebuild` remakes it, the same way each time."""
        sim = parent.clone(share_algorithm=self.fast and self.unheard(parent, action))
        if isinstance(action, Deliver):
            ch = sim.network.channel_index(action.channel)
            pos = 0 if action.message is None else sim.queues[ch].index(action.message)
            sim.deliver(ch, pos, action.label)
        elif isinstance(action, Send):
            sim.send(action.src, sim._out[action.src][action.dst], action.payload, action.label)
        elif isinstance(action, Internal):
            sim.internal(action.process, action.label)
        else:
            assert isinstance(action, StartSnapshot)
            sim.start_snapshot(action.process, action.snapshot_id)
        return sim

    def rebuild(self, node: _Node) -> Simulator:
        """``node``'s run, replayed along its path. The runs along the path last rebuilt
        are kept (:attr:`replayed`), and a level's states come in the order of their
        parents, so a state's run is mostly its parent's, kept, and one more action."""
        cells = []
        cell = node.path
        while cell is not None:
            cells.append(cell)
            cell = cell[1]
        cells.reverse()
        replayed = self.replayed
        shared = 0
        while (
            shared < len(cells)
            and shared + 1 < len(replayed)
            and replayed[shared + 1][0] is cells[shared]
        ):
            shared += 1
        while len(replayed) > shared + 1:
            _drop(replayed.pop()[1])
        for cell in cells[shared:]:
            replayed.append((cell, self.advance(replayed[-1][1], cell[0])))
        node.sim = replayed[-1][1]
        return node.sim

    def kept(self, node: _Node) -> bool:
        """Whether ``node``, its turn come, kept its own run (:data:`HELD_RUNS`), which
        it then no longer holds as a waiting state; the start's run is not its own but
        :attr:`replayed`'s first."""
        if node.sim is None or node is self.root:
            return False
        self.held -= 1
        return True

    def unheard(self, sim: Simulator, action: Action) -> bool:
        """Whether taking ``action`` in ``sim`` calls nothing of the algorithm (then the
        new state may share the algorithm's instance; see :meth:`Simulator.clone`)."""
        algorithm = sim.algorithm
        if algorithm.watches_actions or isinstance(action, StartSnapshot):
            return False
        if isinstance(action, Deliver):
            ch = sim.network.channel_index(action.channel)
            queue = sim.queues[ch]
            mid = queue[0] if action.message is None else action.message
            return sim.trace.messages[mid].kind == APP and not algorithm.listening[ch]
        return True

    def key(self, node: _Node) -> Hashable:
        return (
            # with persistent sets, the depth keeps the graph acyclic (no action can
            # then be put off forever round a cycle: the "ignoring" problem)
            node.depth if self.reduction else 0,
            node.pcs,
            node.plans,
            node.frozen,
            node.names,
            node.blocked,
            node.paused,
            node.algorithm,
            node.audit_key,
            node.done_key,
        )

    def algorithm_part(self, sim: Simulator, records: list[tuple[str, Any]]) -> Hashable:
        """The algorithm's part of a key: split by process when the memo is on
        (:func:`~.memo.algorithm_parts`, each part compacted), else whole."""
        if self.memo is None:
            return self.compact(algorithm_key(sim, records))
        parts, shared = algorithm_parts(sim, records, self.inputs, self.procs)
        return (tuple(self.compact(part) for part in parts), self.compact(shared))

    def describe(self, node: _Node, sim: Simulator, records: list[tuple[str, Any]]) -> None:
        """Set the parts of ``node``'s key that a run of it gives, and, with the memo on,
        what it keeps to be judged and expanded without one."""
        node.blocked = frozenset(sim.blocked) if sim.blocked else _NOTHING
        node.paused = frozenset(sim.paused) if sim.paused else _NOTHING
        if self.memo is None:
            return
        node.recorded = frozenset(
            (i, sid) for sid, rec in records for i, p in enumerate(self.procs) if p in rec.red_from
        )
        node.parts_done = frozenset(
            (i, sid)
            for sid, rec in records
            for i, p in enumerate(self.procs)
            if rec.part_done(p, self.inputs[i])
        )
        if self.conserved:
            node.amount = self.amount_now(sim)

    def amount_now(self, sim: Simulator) -> int:
        app = sim.app
        held = sum(app.amount(s) or 0 for s in sim.states.values())
        messages = sim.trace.messages
        moving = sum(
            app.message_amount(messages[m].payload)
            for q in sim.queues
            for m in q
            if messages[m].kind == APP
        )
        return held + moving

    # ------------------------------------------------------------- checks
    def violated(self, node: _Node, quiescent: bool) -> tuple[str, str, str | None] | None:
        """(invariant, reason, snapshot id) for the first invariant ``node`` breaks."""
        for sid, failed in node.done:
            reasons = dict(failed)
            for name in self.order:
                if name in reasons:
                    return name, f"snapshot {sid}: {reasons[name]}", sid
        if "conservation" in self.builtin and self.conserved:
            now = node.amount if node.amount is not None else self.amount_now(node.run)
            if now != self.total:
                return (
                    "conservation",
                    f"{now} {self.what_conserved} in the system, not {self.total}",
                    None,
                )
        for inv in self.every:
            reason = _judge(inv, node.run)
            if reason is not None:
                return inv.name, reason, None
        if not quiescent:
            return None
        sim = node.run
        if "completes" in self.builtin:
            for sid, rec in reds(sim):
                if not rec.complete:
                    missing = [p for p in self.procs if p not in rec.red_from]
                    what = (
                        f"{', '.join(missing)} never recorded"
                        if missing
                        else f"{len(rec.closed)} of {rec.n_channels} channels closed"
                    )
                    return "completes", f"snapshot {sid} never completes: {what}", sid
        for inv in self.custom:
            if inv.at == "quiescent":
                reason = _judge(inv, sim)
                if reason is not None:
                    return inv.name, reason, None
        return None

    # ---------------------------------------------------------------- run
    def run(self) -> tuple[Violation | None, bool]:
        # The runs are cyclic structures (a simulator and its algorithm refer to each
        # other) made and dropped by the hundred thousand: the cycle collector would
        # spend its time walking the live frontier, so it is off while the search runs
        # and the search breaks the cycles of the runs it drops (_drop).
        was_enabled = gc.isenabled()
        gc.disable()
        self.frontier: list[list[tuple[_Node, Any]]] = []
        try:
            return self._run()
        finally:
            for level in self.frontier:
                for node, _ in level:
                    if node.sim is not None and node.sim.__dict__:
                        _drop(node.sim)
            for _, sim in self.replayed:
                _drop(sim)
            self.frontier, self.replayed = [], []
            if was_enabled:
                gc.enable()

    def _run(self) -> tuple[Violation | None, bool]:
        stats = self.stats
        began = time.perf_counter()
        last_report = began
        seen: set[Hashable] = set()
        exact = self.exact
        root = self.root
        key = self.key(root)
        seen.add(key if exact else hash(key))
        stats.distinct = 1
        movable = self.can_move(root)
        # a level holds each state with whether it can move: its moves are listed when
        # it is expanded (a list of them per waiting state weighs more)
        level = [(root, movable)]
        if self.count_runs:
            stats.runs = 0 if movable else 1
        found = self._check(root, movable, key)
        if found is not None:
            stats.seconds = time.perf_counter() - began
            return found, False
        interrupted = False
        try:
            while level:
                following: list[tuple[_Node, bool]] = []
                self.frontier = [level, following]  # dropped when the search ends
                waiting: dict[Hashable, _Node] = {}  # the next level's states (sleep sets)
                for node, movable in level:
                    if not movable or (self.max_depth is not None and node.depth >= self.max_depth):
                        if movable:
                            stats.at_bound += 1
                        elif stats.runs is not None:
                            stats.runs += node.runs
                        if self.kept(node):
                            _drop(node.run)
                            node.sim = None
                        continue
                    stats.explored += 1
                    own = self.kept(node)
                    if not own and not self.lazy:
                        self.rebuild(node)
                    moves = self.moves(node)
                    stats.enabled += len(moves)
                    chosen = self.persistent(node, moves) if self.reduction else moves
                    done_here: list[tuple[Any, ...]] = []
                    for move in chosen:
                        if self.sleeping:
                            name = self.name(node, move)
                            if name in node.sleep:
                                continue
                        made = self.child(node, move, defer=True)
                        if made is None:
                            continue
                        stats.transitions += 1
                        if isinstance(made, str):
                            stats.seconds = time.perf_counter() - began
                            return self._stopped(node, move, made), False
                        sleep = _NOTHING
                        if self.sleeping:
                            # Classical sleep sets: what was explored here before this
                            # action, and what slept here, sleeps in the child if it
                            # commutes with this action (its interleavings are covered).
                            sleep = frozenset(
                                u for u in (*node.sleep, *done_here) if self.independent(u, name)
                            )
                            done_here.append(name)
                        key = made[0] if isinstance(made, tuple) else self.key(made)
                        fingerprint = key if exact else hash(key)
                        if fingerprint in seen:
                            if stats.runs is not None and fingerprint in waiting:
                                waiting[fingerprint].runs += node.runs
                            if self.sleeping and fingerprint in waiting:
                                # reached again before it is expanded: it must explore
                                # what either path left awake
                                other = waiting[fingerprint]
                                other.sleep = other.sleep & sleep
                            if not isinstance(made, tuple) and not made.predicted:
                                _drop(made.run)
                            continue
                        child = self.node_of(made) if isinstance(made, tuple) else made
                        child.sleep = sleep
                        if stats.runs is not None:
                            child.runs = node.runs
                        seen.add(fingerprint)
                        if self.sleeping or stats.runs is not None:
                            waiting[fingerprint] = child
                        stats.distinct += 1
                        if self.max_states is not None and stats.distinct > self.max_states:
                            self.limited = True
                            raise KeyboardInterrupt  # stop as Ctrl-C does
                        if child.depth > stats.depth:
                            stats.depth = child.depth
                        movable = self.can_move(child)
                        found = self._check(child, movable, key)
                        if found is not None:
                            stats.seconds = time.perf_counter() - began
                            return found, False
                        following.append((child, movable))
                        if child.predicted:
                            child.sim = None  # a run borrowed for its checks is the cache's
                        elif self.held < HELD_RUNS:
                            self.held += 1
                        else:
                            _drop(child.run)  # rebuilt when its turn comes
                            child.sim = None
                    if own:
                        _drop(node.run)
                    node.sim = None  # or self.replayed keeps it while the next states need it
                    if self.progress is not None and stats.explored % 512 == 0:
                        now = time.perf_counter()
                        if now - last_report >= 2.0:
                            last_report = now
                            stats.seconds = now - began
                            self.progress(stats)
                level = following
        except KeyboardInterrupt:
            interrupted = not self.limited
        stats.seconds = time.perf_counter() - began
        return None, interrupted

    def _check(self, node: _Node, movable: bool, key: Hashable | None = None) -> Violation | None:
        quiescent = not movable
        if quiescent:
            self.stats.quiescent += 1
        if node.sim is None and quiescent:
            self.rebuild(node)  # its checks there read a run (the loop lets it go)
        bad = self.violated(node, quiescent)
        if self.collect is not None:  # gather, and go on past violations
            if quiescent:
                failed = {name for _, f in node.done for name, _ in f}
                if bad is not None:
                    failed.add(bad[0])
                self.collect[key if key is not None else self.key(node)] = frozenset(failed)
            return None
        if bad is None:
            return None
        if node.sim is None:
            self.rebuild(node)
        # a copy of its own: the search's states may share an algorithm instance
        return Violation(bad[0], bad[1], _path(node.path), node.run.clone(), bad[2])

    def _stopped(self, node: _Node, move: tuple[int, Action, int], reason: str) -> Violation:
        path = (*_path(node.path), move[1])
        sim = self.run_of(node).clone()
        return Violation("runs", reason, path, sim)


def _handlers_send(app: Any) -> bool:
    """Whether ``app``'s handlers may send: unless the class that says they do not also
    wrote the handlers (a subclass that overrides them may send)."""
    from ..apps import Application

    for method in ("on_receive", "on_internal"):
        owner = next(c for c in type(app).__mro__ if method in c.__dict__)
        if owner is Application:
            continue
        if owner.__dict__.get("sends_in_handlers", True):
            return True
    return False


#: a state made from a recorded effect, before it is a node (:meth:`_Search.predicted`):
#: its key, its parent, the action, and what the node keeps besides its key
_Deferred = tuple[Any, _Node, Action, Audit, frozenset[Any], frozenset[Any], "int | None"]


def _progress(
    node: _Node, move: tuple[int, Action, int]
) -> tuple[tuple[int, ...], tuple[frozenset[str], ...]]:
    """How far each program and snapshot plan has got after ``move`` from ``node``."""
    owner, action, consumes = move
    pcs, plans = node.pcs, node.plans
    if consumes == 0:
        pcs = (*pcs[:owner], pcs[owner] + 1, *pcs[owner + 1 :])
    elif consumes > 0:
        k = consumes - 1
        plans = (*plans[:k], plans[k] | {action.process}, *plans[k + 1 :])  # type: ignore[union-attr]
    return pcs, plans


def _split(algorithm: Hashable) -> tuple[tuple[Hashable, ...], Hashable]:
    """A key's algorithm part as the memo keeps it: one part per process, and the
    part of no process."""
    return cast("tuple[tuple[Hashable, ...], Hashable]", algorithm)


def _drop(sim: Simulator) -> None:
    """Break the cycles of a run no longer needed, so it is freed at once."""
    sim.__dict__.clear()


def _judge(inv: Invariant, sim: Simulator) -> str | None:
    try:
        result = inv.check(sim)
    except Exception as e:
        return f"{inv.name} raised {type(e).__name__}: {e}"
    if result is None or result is True:
        return None
    return result if isinstance(result, str) else f"{inv.name} is false"


def _path(cons: tuple[Any, ...] | None) -> tuple[Action, ...]:
    out = []
    while cons is not None:
        out.append(cons[0])
        cons = cons[1]
    return tuple(reversed(out))


def search(
    system: System,
    invariants: Iterable[str | Invariant] = ("consistent", "dijkstra", "conservation", "completes"),
    *,
    reduction: bool | str = True,
    progress: Callable[[SearchStats], None] | None = None,
    collect: bool = False,
    exact: bool = False,
    count_runs: bool = False,
    max_states: int | None = MAX_STATES,
) -> SearchResult:
    """Explore every schedule of ``system``; see the module docstring.

    ``invariants``: names of built-in ones (``consistent``: every complete snapshot is
    a consistent cut with the right channel states; ``dijkstra``: the premise of
    Dijkstra's argument, no red message accepted in a white action, so the run reorders
    into all white actions then all red ones (it says nothing of what the algorithm
    recorded on the channels: ``consistent`` does); ``conservation``: the quantity the
    application conserves is conserved in every state and recorded whole;
    ``completes``: where nothing more can happen, every snapshot started is complete)
    and :class:`Invariant` objects.
    ``collect``: gather every quiescent state with what fails there, and go on past
    violations (to compare searches).
    ``count_runs``: also count the schedules, the different orders the actions can
    take to where nothing more can happen (``stats.runs``); without reduction.
    ``max_states``: stop after reaching this many states (``limited``; the summary and
    the lessons' tables say so); ``None`` for no limit.
    ``exact``: remember every state's whole key. By default the search remembers a
    64-bit hash of it instead (hash compaction, as TLC's fingerprints): far less
    memory, at a chance of about n²/2⁶⁵ that two of n states collide and one is not
    explored (under one in ten million for a million states); a waiting state keeps the
    algorithm's part of its key as such a hash too, and so does the memo of effects
    (:mod:`.memo`), where a collision would apply one part's effect to another.

    >>> from snapshotlib import Network
    >>> from snapshotlib.algorithms import ChandyLamport
    >>> from snapshotlib.search.system import SnapshotPlan, System, each_sends
    >>> net = Network(["P1", "P2"])
    >>> system = System(net, "tokens", {"P1": 2, "P2": 2}, ChandyLamport,
    ...                 programs=each_sends(net, "tokens", 1),
    ...                 snapshots=(SnapshotPlan("s1", ("P1", "P2")),))
    >>> result = search(system)
    >>> result.ok, result.stats.quiescent > 0
    (True, True)
    """
    names = tuple(invariants)
    s = _Search(system, names, reduction, progress, collect, None, exact, count_runs, max_states)
    found, interrupted = s.run()
    labels = tuple(i if isinstance(i, str) else i.name for i in names)
    if found is None or not s.reduction or found.depth <= 1:  # sleep sets keep depths
        return SearchResult(
            system, labels, s.stats, found, interrupted, s.collect, limited=s.limited
        )
    # the reduced search may have reached it the long way round: look for a shorter one
    again = _Search(system, names, "sleep", progress, False, found.depth - 1, exact)
    shorter, interrupted = again.run()
    return SearchResult(
        system,
        labels,
        s.stats,
        shorter or found,
        interrupted,
        None,
        shortest_confirmed=not interrupted,
        confirm_stats=again.stats,
    )

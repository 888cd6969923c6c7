"""The lattice of consistent cuts of a run, and the modalities *possibly* and *definitely*.

A cut is written as the number of events each process has taken, in the network's
process order: ``(2, 1, 0)`` holds the first two events of P1 and the first of P2.
Only application events count (internal, send, receive); markers belong to the
snapshot algorithm. A cut is consistent when every receive inside it has its send
inside it too. The consistent cuts of a run, ordered by "has taken at least as many
events of every process", form a lattice: its bottom is the empty cut (the initial
state), its top the whole run (the final state), and an edge adds one more event of one
process. Every path from the bottom to the top is an order in which the run's events
could have happened, one of them the order in which they did.

A snapshot records one of these cuts. Dijkstra's argument (EWD 864a) says that the
recorded state SSS is reachable from S0, the state when the snapshot began, and that
S1, the state when it ended, is reachable from SSS: in the lattice, the snapshot's cut
lies between the cuts of S0 and S1 (:func:`snapshot_window`).

Cooper and Marzullo ("Consistent detection of global predicates", 1991) ask two
questions of a predicate on global states: does it hold **possibly** (at some
consistent cut) and **definitely** (every path from the bottom to the top passes through
a cut where it holds). Both are answered here on the whole lattice, which has to be
small: :func:`cut_lattice` refuses runs with more than ``max_cuts`` consistent cuts.

>>> from snapshotlib.formats.scenario import parse_scenario, run_scenario
>>> sim = run_scenario(parse_scenario({"processes": ["P1", "P2"], "app": "tokens",
...     "initial": {"P1": 1}, "steps": [
...     {"do": "send", "from": "P1", "to": "P2", "label": "a", "payload": 1},
...     {"do": "snapshot", "at": "P2", "id": "s1"}, {"do": "run"}]}))
>>> lattice = cut_lattice(sim)
>>> lattice.cuts
((0, 0), (1, 0), (1, 1))
>>> lattice.state((1, 0)).channels["P1->P2"][0].label
'a'
>>> snapshot_window(sim, "s1")
SnapshotWindow(begin=(1, 0), recorded=(1, 0), end=(1, 1))
>>> lattice.definitely(lambda s: s.processes["P2"] == 1).holds
True
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..snapshot import GlobalSnapshot, RecordedMessage, RecordedProcess
from ..trace import APP, APP_KINDS, INTERNAL, NOT_RECEIVED, RECEIVE, SEND, SNAPSHOT

if TYPE_CHECKING:
    from ..simulator import Simulator

Cut = tuple[int, ...]
Predicate = Callable[["GlobalState"], bool]

#: the largest lattice :func:`cut_lattice` builds unless asked for more
MAX_CUTS = 5000

__all__ = [
    "MAX_CUTS",
    "Cut",
    "CutLattice",
    "GlobalState",
    "Modality",
    "SnapshotWindow",
    "cut_at",
    "cut_lattice",
    "path_of",
    "run_path",
    "snapshot_cut",
    "snapshot_window",
]


@dataclass(frozen=True)
class GlobalState:
    """The global state of one consistent cut.

    ``processes`` maps each process to its application state after its events in the
    cut; ``channels`` maps ``"SRC->DST"`` to the application messages sent inside the
    cut and not received inside it, in the order they were sent.
    """

    cut: Cut
    processes: Mapping[str, Any]
    channels: Mapping[str, tuple[RecordedMessage, ...]]

    def as_snapshot(self, name: str | None = None) -> GlobalSnapshot:
        """This state as a complete :class:`GlobalSnapshot`, for the checks of
        :mod:`snapshotlib.checks.predicates` (``conservation``, ``termination``, ...)."""
        label = name or "cut (" + ", ".join(map(str, self.cut)) + ")"
        return GlobalSnapshot(
            label,
            (),
            True,
            {p: RecordedProcess((), s, -1, True) for p, s in self.processes.items()},
            dict(self.channels),
            (),
        )


@dataclass(frozen=True)
class Modality:
    """The answer to *possibly* or *definitely* for one predicate over a lattice.

    ``witness`` is a tuple of cuts. For *possibly*: when it holds, a path from the
    bottom to the lowest cut where the predicate holds (the last cut of the path);
    otherwise empty. For *definitely*: when it does not hold, a path from the bottom to
    the top on which the predicate never holds; when it holds, the cuts where it holds
    that can be reached without passing through another such cut (every path meets one
    of them).
    """

    name: str
    holds: bool
    reason: str
    witness: tuple[Cut, ...] = ()


@dataclass(frozen=True)
class SnapshotWindow:
    """Where a snapshot lies in the lattice: the cut of S0 (the true state when it
    began), the cut it recorded (SSS), and the cut of S1 (the true state when its last
    marker arrived). ``begin <= recorded <= end``, process by process."""

    begin: Cut
    recorded: Cut
    end: Cut


def _fmt(cut: Cut) -> str:
    return "(" + ", ".join(map(str, cut)) + ")"


@dataclass(frozen=True)
class CutLattice:
    """Every consistent cut of a run, the edges between them and their global states.

    ``cuts`` are sorted by level (the total number of events), then by their counts;
    ``edges`` join a cut to each cut with one more event of one process.
    ``events[k]`` names the events of the ``k``-th process, in order.
    """

    processes: tuple[str, ...]
    events: tuple[tuple[str, ...], ...]
    cuts: tuple[Cut, ...]
    edges: tuple[tuple[Cut, Cut], ...]
    states: Mapping[Cut, GlobalState] = field(repr=False)

    @property
    def bottom(self) -> Cut:
        """The empty cut: the initial state."""
        return self.cuts[0]

    @property
    def top(self) -> Cut:
        """The whole run: the final state."""
        return self.cuts[-1]

    def __contains__(self, cut: object) -> bool:
        return cut in self.states

    def __len__(self) -> int:
        return len(self.cuts)

    def state(self, cut: Cut) -> GlobalState:
        """The global state of a consistent cut (``KeyError`` names an inconsistent one)."""
        try:
            return self.states[tuple(cut)]
        except KeyError:
            raise KeyError(f"{_fmt(tuple(cut))} is not a consistent cut of this run") from None

    def successors(self, cut: Cut) -> list[Cut]:
        """The consistent cuts with one more event of one process, in process order."""
        out = []
        for k in range(len(cut)):
            nxt = (*cut[:k], cut[k] + 1, *cut[k + 1 :])
            if nxt in self.states:
                out.append(nxt)
        return out

    def count_paths(self) -> int:
        """How many paths lead from the bottom to the top (orders the events could take)."""
        ways = dict.fromkeys(self.cuts, 0)
        ways[self.bottom] = 1
        for cut in self.cuts:  # sorted by level: every predecessor comes first
            for nxt in self.successors(cut):
                ways[nxt] += ways[cut]
        return ways[self.top]

    def holding(self, predicate: Predicate) -> tuple[Cut, ...]:
        """The cuts whose global state satisfies ``predicate``."""
        return tuple(c for c in self.cuts if predicate(self.states[c]))

    def _search(self, start: Cut, allowed: Callable[[Cut], bool]) -> dict[Cut, Cut | None]:
        """Breadth-first from ``start`` through cuts that are ``allowed``; parents."""
        parent: dict[Cut, Cut | None] = {start: None}
        queue = deque([start])
        while queue:
            cut = queue.popleft()
            for nxt in self.successors(cut):
                if nxt not in parent and allowed(nxt):
                    parent[nxt] = cut
                    queue.append(nxt)
        return parent

    @staticmethod
    def _path(parent: Mapping[Cut, Cut | None], end: Cut) -> tuple[Cut, ...]:
        path = [end]
        while (before := parent[path[-1]]) is not None:
            path.append(before)
        return tuple(reversed(path))

    def possibly(self, predicate: Predicate) -> Modality:
        """*Possibly* ``predicate``: it holds at some consistent cut of the run.

        The witness is a path from the bottom to the lowest such cut.
        """
        where = self.holding(predicate)
        if not where:
            return Modality(
                "possibly", False, f"it holds at none of the {len(self.cuts)} consistent cuts"
            )
        parent = self._search(self.bottom, lambda c: True)
        first = where[0]
        steps = sum(first) - sum(self.bottom)
        return Modality(
            "possibly",
            True,
            f"it holds at cut {_fmt(first)}, {steps} event{'s' if steps != 1 else ''} "
            "from the bottom",
            self._path(parent, first),
        )

    def definitely(self, predicate: Predicate) -> Modality:
        """*Definitely* ``predicate``: every path from the bottom to the top passes
        through a cut where it holds.

        Computed by searching from the bottom through the cuts where it does *not* hold:
        it holds definitely exactly when the top cannot be reached that way. The witness
        is the avoiding path when there is one, else the cuts where the predicate holds
        at the edge of the region reachable without it.
        """
        good = set(self.holding(predicate))
        if self.bottom in good:
            return Modality(
                "definitely",
                True,
                "it holds at the bottom, where every path starts",
                (self.bottom,),
            )
        parent = self._search(self.bottom, lambda c: c not in good)
        if self.top in parent:
            path = self._path(parent, self.top)
            return Modality(
                "definitely",
                False,
                f"a path from {_fmt(self.bottom)} to {_fmt(self.top)} avoids it: "
                + " → ".join(_fmt(c) for c in path),
                path,
            )
        edge = tuple(c for c in self.cuts if c in good and any(p in parent for p in self._preds(c)))
        return Modality(
            "definitely",
            True,
            f"every path from {_fmt(self.bottom)} to {_fmt(self.top)} passes through one of "
            + ", ".join(_fmt(c) for c in edge),
            edge,
        )

    def _preds(self, cut: Cut) -> Iterator[Cut]:
        for k in range(len(cut)):
            if cut[k] > 0:
                before = (*cut[:k], cut[k] - 1, *cut[k + 1 :])
                if before in self.states:
                    yield before


# ------------------------------------------------------------------- building it


class _Run:
    """What the lattice needs from a trace: each process's events and what they send."""

    def __init__(self, sim: Simulator) -> None:
        trace = sim.trace
        self.processes = tuple(sim.network.processes)
        self.actions = [trace.process_actions(p) for p in self.processes]
        # trace index of an application action -> (process number, 1-based position)
        self.where: dict[int, tuple[int, int]] = {}
        for k, mine in enumerate(self.actions):
            for pos, i in enumerate(mine, start=1):
                self.where[i] = (k, pos)
        # for each process's j-th event (0-based): the send it needs, as (process, count)
        self.needs: list[list[tuple[int, int] | None]] = []
        for mine in self.actions:
            row: list[tuple[int, int] | None] = []
            for i in mine:
                a = trace.actions[i]
                # a message not sent by an event (none of the built-in ones) needs nothing
                sent_by = trace.messages[a.message].sent_by if a.kind == RECEIVE else -1
                row.append(self.where.get(sent_by))
            self.needs.append(row)
        self.sim = sim

    def names(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(self.sim.trace.action_name(i) for i in mine) for mine in self.actions)

    def local_states(self) -> list[list[Any]]:
        """``[k][n]``: the state of the ``k``-th process after its first ``n`` events."""
        sim = self.sim
        app, trace, channels = sim.app, sim.trace, sim.network.channels

        def ignore(*args: Any, **kwargs: Any) -> None:
            return None  # what a handler sends is already in the trace

        out = []
        for p, mine in zip(self.processes, self.actions, strict=True):
            state = app.initial_state(p, sim.initial.get(p))
            row = [state]
            for i in mine:
                a = trace.actions[i]
                if a.kind == SEND:
                    payload = trace.messages[a.message].payload
                    state = app.on_send(p, state, channels[a.channel].dst, payload)
                elif a.kind == RECEIVE:
                    payload = trace.messages[a.message].payload
                    state = app.on_receive(p, state, channels[a.channel].src, payload, ignore)
                elif a.kind == INTERNAL:
                    state = app.on_internal(p, state, a.label, ignore)
                row.append(state)
            out.append(row)
        return out

    def consistent_cuts(self, max_cuts: int) -> list[Cut]:
        """Every consistent cut, level by level from the empty one."""
        lengths = [len(mine) for mine in self.actions]
        level: list[Cut] = [tuple(0 for _ in lengths)]
        found = list(level)
        while level:
            nxt: set[Cut] = set()
            for cut in level:
                for k, n in enumerate(cut):
                    if n == lengths[k]:
                        continue
                    need = self.needs[k][n]
                    if need is not None and cut[need[0]] < need[1]:
                        continue  # its message is sent outside the cut
                    nxt.add((*cut[:k], n + 1, *cut[k + 1 :]))
            level = sorted(nxt)
            found += level
            if len(found) > max_cuts:
                sizes = ", ".join(f"{p} {n}" for p, n in zip(self.processes, lengths, strict=True))
                raise ValueError(
                    f"this run has more than {max_cuts} consistent cuts ({len(found)} found "
                    f"with up to {sum(level[0])} of its {sum(lengths)} events; events per "
                    f"process: {sizes}): take a shorter run or raise max_cuts"
                )
        return found


def cut_lattice(sim: Simulator, max_cuts: int = MAX_CUTS) -> CutLattice:
    """The lattice of consistent cuts of ``sim``'s run so far, with their global states.

    Raises ``ValueError`` (naming the counts) when the run has more than ``max_cuts``
    consistent cuts: the lattice grows like the product of the processes' event counts.
    """
    run = _Run(sim)
    cuts = run.consistent_cuts(max_cuts)
    local = run.local_states()
    trace = sim.trace
    names = [str(c) for c in sim.network.channels]
    app_messages = [
        (m, msg)
        for m, msg in enumerate(trace.messages)
        if msg.kind == APP and msg.sent_by in run.where
    ]
    sent = [run.where[msg.sent_by] for _, msg in app_messages]
    received = [
        run.where[trace.received_by[m]] if trace.received_by[m] != NOT_RECEIVED else None
        for m, _ in app_messages
    ]
    states: dict[Cut, GlobalState] = {}
    edges: list[tuple[Cut, Cut]] = []
    known = set(cuts)
    for cut in cuts:
        channels: dict[str, list[RecordedMessage]] = {n: [] for n in names}
        for (m, msg), (sk, spos), got in zip(app_messages, sent, received, strict=True):
            if cut[sk] >= spos and (got is None or cut[got[0]] < got[1]):
                channels[names[msg.channel]].append(RecordedMessage(m, msg.label, msg.payload))
        states[cut] = GlobalState(
            cut,
            {p: local[k][cut[k]] for k, p in enumerate(run.processes)},
            {n: tuple(v) for n, v in channels.items()},
        )
        for k in range(len(cut)):
            nxt = (*cut[:k], cut[k] + 1, *cut[k + 1 :])
            if nxt in known:
                edges.append((cut, nxt))
    return CutLattice(run.processes, run.names(), tuple(cuts), tuple(edges), states)


def cut_at(sim: Simulator, index: int) -> Cut:
    """The cut of the true state just before trace action ``index``: every event before it."""
    trace = sim.trace
    return tuple(
        sum(1 for i in trace.process_actions(p) if i < index) for p in sim.network.processes
    )


def snapshot_cut(sim: Simulator, snapshot_id: str) -> Cut:
    """The cut a snapshot recorded: each process's events before it turned red.

    ``ValueError`` when some process has not recorded (yet).
    """
    red_from = sim.red_from(snapshot_id)
    missing = [p for p in sim.network.processes if p not in red_from]
    if missing:
        raise ValueError(
            f"snapshot {snapshot_id} has no cut yet: {', '.join(missing)} not recorded"
        )
    trace = sim.trace
    return tuple(
        sum(1 for i in trace.process_actions(p) if i < red_from[p]) for p in sim.network.processes
    )


def snapshot_window(sim: Simulator, snapshot_id: str) -> SnapshotWindow:
    """S0, the recorded cut and S1 of a complete snapshot (see :class:`SnapshotWindow`).

    S0 is the true state just before the snapshot's first initiation; S1 the true state
    just after the last of its markers was received.
    """
    trace = sim.trace
    snap = sim.snapshot(snapshot_id)
    if not snap.complete:
        raise ValueError(f"snapshot {snapshot_id} is not complete: it has no S1 yet")
    starts = [
        i
        for i, a in enumerate(trace.actions)
        if a.kind == SNAPSHOT and (a.label or "s1") == snapshot_id
    ]
    received = [
        trace.received_by[m]
        for m, msg in enumerate(trace.messages)
        if msg.kind != APP and msg.tag == snapshot_id and trace.received_by[m] != NOT_RECEIVED
    ]
    recorded = list(snap.red_from.values())
    first = min(starts or recorded)  # a clock snapshot has no initiation: its first record
    last = max(starts + received + recorded)
    return SnapshotWindow(cut_at(sim, first), snapshot_cut(sim, snapshot_id), cut_at(sim, last + 1))


def path_of(sim: Simulator, order: Sequence[int]) -> tuple[Cut, ...]:
    """The cuts an order of the run's events passes through, from the empty cut.

    ``order`` lists application actions by trace index, e.g. the white-then-red order of
    :func:`snapshotlib.checks.commutation.check_commutation` (Dijkstra's reordering).
    Whether each cut is consistent is not checked here: look it up in the lattice.
    """
    trace = sim.trace
    index = {p: k for k, p in enumerate(sim.network.processes)}
    cut = [0] * len(index)
    path = [tuple(cut)]
    for i in order:
        a = trace.actions[i]
        if a.kind not in APP_KINDS:
            raise ValueError(f"action {i} ({a.kind} at {a.process}) is not an event of the run")
        cut[index[a.process]] += 1
        path.append(tuple(cut))
    return tuple(path)


def run_path(sim: Simulator) -> tuple[Cut, ...]:
    """The path the run really took through the lattice: the cut after each event."""
    return path_of(sim, [i for i, _ in sim.trace.app_actions()])

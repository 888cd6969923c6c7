"""From the logs of live nodes to one run of the engine, and the engine's verdict on it.

Each node logs every action with its vector clock after it (:mod:`.node`). A node's
clock counts, for every node, how many of that node's actions happened before, so:

* the logs read so far may hold a receive whose send was not written yet (nodes flush
  at different moments); :func:`causal_prefix` keeps the largest prefix of each log in
  which every action's causes are kept too, and :func:`causes_of` gives the prefixes a
  set of events needs (a snapshot's check replays only the causes of its parts' ends,
  however long the cluster has run since);
* sorting the actions by the sum of their clock's entries is an order in which every
  cause comes before its effects: the run as one sequence of atomic actions
  (:func:`assemble`), which the engine's simulator replays with the same algorithm;
  where markers travel out of band, channels are not FIFO, and each delivery names the
  message the node took (by the transfer's channel and number, or the marker's snapshot);
* the snapshot the engine records on that replay must be the one the nodes recorded
  (:func:`check_live_snapshot` compares them), and the engine's checks decide whether
  it is a consistent cut that conserves money.

A node that gives a failed snapshot up logs it (``discard``); the replay has that node
alone abandon it at the same point (:class:`Abandon`), so both ignore its later markers
alike. A restore starts a new epoch whose logs go to a folder of their own, each opening
with the node's restored balance and the channel messages delivered to it first
(:func:`starting_balances`).

Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..actions import Action, Deliver, Send, StartSnapshot
from ..algorithms.chandy_lamport import ChandyLamport
from ..checks.verdict import SnapshotVerdict, snapshot_verdict
from ..model import Channel
from ..simulator import ActionError, Simulator
from ..trace import APP, CONTROL
from .action_log import read_segments
from .algorithm_choice import algorithm_class
from .parts import CheckedPart
from .spec import ClusterSpec


class RunLogError(ValueError):
    """A node's log that cannot be read or replayed, naming the file and line."""


@dataclass(frozen=True)
class Abandon:
    """``process`` gives ``snapshot_id`` up (a node's cleanup or time-to-live): not an
    action of the engine, a change to its algorithm at that point of the run."""

    process: str
    snapshot_id: str


#: what :func:`assemble` yields: the engine's actions, and the abandons between them
Step = Action | Abandon

#: the kinds of log line that belong to a snapshot (they name it: ``"snapshot"``)
SNAPSHOT_KINDS = ("initiate", "marker", "discard")


@dataclass(frozen=True)
class RunStart:
    """Where a replay of the logs begins: each node's balance; on each channel the
    transfers in flight, oldest first, as (send label, amount); and the snapshots begun
    before (``closed``): their later actions are not replayed, their markers not in
    flight, so none of them can be checked from here. The logs' own beginning has
    nothing in flight and nothing closed; a later one is a log base (:mod:`.log_base`)."""

    balances: dict[str, int]
    in_flight: dict[str, tuple[tuple[str | None, int], ...]] = field(default_factory=dict)
    closed: frozenset[str] = frozenset()


def read_logs(
    spec: ClusterSpec,
    log_dir: Path,
    upto: dict[str, int] | None = None,
    since: dict[str, int] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every node's log lines, in order; with ``upto``, only each node's first
    ``upto[node]`` actions (:class:`RunLogError` if its log is shorter); with ``since``,
    none before action ``since[node]`` (the log's base, :mod:`.log_base`: the earlier
    ones may be pruned). A last line cut short (the node was writing it) is dropped."""
    logs: dict[str, list[dict[str, Any]]] = {}
    for node in spec.ids:
        first = 0 if since is None else since[node]
        limit = None if upto is None else upto[node]
        if limit is not None and limit < first:
            raise RunLogError(
                f"{log_dir}: {node}'s actions before {first} were pruned, {limit} needed"
            )
        expected = first
        lines: list[dict[str, Any]] = []
        try:
            for path, number, row in read_segments(log_dir, node, since=first):
                if limit is not None and expected >= limit:
                    break
                if not row.strip():
                    continue
                try:
                    line = json.loads(row)
                except json.JSONDecodeError:
                    if not row.endswith("\n"):  # written in part when the log was read
                        break
                    raise RunLogError(f"{path}, line {number}: not a JSON object") from None
                number_of = line.get("i") if isinstance(line, dict) else None
                if type(number_of) is int and number_of < first:
                    continue  # before the base: a segment the pruning has yet to remove
                if number_of != expected:
                    raise RunLogError(f"{path}, line {number}: expected action {expected}")
                clock = line.get("clock")
                if not (
                    isinstance(clock, list)
                    and len(clock) == len(spec.ids)
                    and all(type(c) is int for c in clock)
                    and isinstance(line.get("kind"), str)
                ):
                    raise RunLogError(
                        f"{path}, line {number}: a kind and a clock of {len(spec.ids)} "
                        "whole numbers expected"
                    )
                lines.append(line)
                expected += 1
        except OSError as e:  # a segment gone, or damaged: its file named
            raise RunLogError(str(e)) from None
        if limit is not None and expected < limit:
            raise RunLogError(
                f"{log_dir / node}.*.jsonl: {expected} actions logged, {limit} needed"
            )
        logs[node] = lines
    return logs


def causes_of(spec: ClusterSpec, clocks: Iterable[Sequence[int]]) -> dict[str, int]:
    """How many actions of each node the events with vector ``clocks`` have among their
    causes (themselves included): the logs' prefixes that replay them, closed under
    causes by construction."""
    upto = dict.fromkeys(spec.ids, 0)
    for clock in clocks:
        for node, count in zip(spec.ids, clock, strict=True):
            upto[node] = max(upto[node], count)
    return upto


def causal_prefix(
    spec: ClusterSpec,
    logs: dict[str, list[dict[str, Any]]],
    since: dict[str, int] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """The longest prefix of each log whose every action has all its causes kept (each
    log beginning at action ``since[node]``, the actions before it kept already)."""
    ids = spec.ids
    first = dict.fromkeys(ids, 0) if since is None else since
    kept = {n: first[n] + len(logs[n]) for n in ids}
    changed = True
    while changed:
        changed = False
        for n in ids:
            lines = logs[n]
            for k in range(kept[n] - first[n]):
                clock = lines[k]["clock"]
                if any(clock[j] > kept[q] for j, q in enumerate(ids)):
                    kept[n] = first[n] + k
                    changed = True
                    break
    return {n: logs[n][: kept[n] - first[n]] for n in ids}


def starting_balances(spec: ClusterSpec, logs: dict[str, list[dict[str, Any]]]) -> dict[str, int]:
    """Each node's balance when its log begins: the spec's initial money, or after a
    restore the restored balance with the channel messages re-injected into it (the
    ``reinject`` lines that follow the ``restore`` line)."""
    balances = dict.fromkeys(spec.ids, spec.initial_money)
    for node, lines in logs.items():
        if not lines or lines[0].get("kind") != "restore":
            continue
        try:
            balance = int(lines[0]["balance"])
            for line in lines[1:]:
                if line.get("kind") != "reinject":
                    break
                balance += int(line["amount"])
        except (KeyError, TypeError, ValueError):
            raise RunLogError(f"{node}'s log: its restore is malformed") from None
        balances[node] = balance
    return balances


def assemble(
    spec: ClusterSpec, logs: dict[str, list[dict[str, Any]]], start: RunStart | None = None
) -> list[Step]:
    """The logged actions as one sequence in which causes come first (see the module
    docstring); markers are the algorithm's own, so only their arrivals appear. The logs
    begin at ``start`` (default: their own beginning, :func:`starting_balances`); the
    actions of the snapshots it closed are left out."""
    if start is None:
        start = RunStart(starting_balances(spec, logs))
    closed = start.closed
    position = {n: i for i, n in enumerate(spec.ids)}
    lines = [(sum(line["clock"]), position[n], line) for n in spec.ids for line in logs[n]]
    lines.sort(key=lambda x: (x[0], x[1]))
    actions: list[Step] = []
    markers: list[str | None] = []  # per action: the snapshot of a delivered marker
    for _, p, line in lines:
        node = spec.ids[p]
        kind = line.get("kind")
        if kind in ("restore", "reinject"):
            continue  # the epoch's start: read by starting_balances
        if closed and kind in SNAPSHOT_KINDS and str(line.get("snapshot")) in closed:
            continue
        try:
            actions.append(_action(node, line))
            markers.append(str(line["snapshot"]) if line["kind"] == "marker" else None)
        except KeyError as e:
            raise RunLogError(f"{node}'s log, action {line['i']}: no {e.args[0]!r}") from None
        except ValueError as e:
            raise RunLogError(f"{node}'s log, action {line['i']}: {e}") from None
    if spec.network().fifo:
        return actions
    return _name_messages(spec, actions, markers, start)


def _action(node: str, line: dict[str, Any]) -> Step:
    """The engine's action for one line of ``node``'s log."""
    kind = line["kind"]
    if kind == "send":
        channel = Channel.parse(line["ch"])
        return Send(channel.src, channel.dst, line["amount"], label=_label(line))
    if kind in ("receive", "marker"):
        sent = _label(line)  # a transfer's; a marker has none
        # the receive is an event of its own, named as the course names receives
        return Deliver(Channel.parse(line["ch"]), label=None if sent is None else RECEIVED + sent)
    if kind == "initiate":
        return StartSnapshot(node, line["snapshot"])
    if kind == "discard":
        return Abandon(node, str(line["snapshot"]))
    raise ValueError(f"unknown kind {kind!r}")


def _name_messages(
    spec: ClusterSpec,
    actions: list[Step],
    markers: list[str | None],
    start: RunStart,
) -> list[Step]:
    """``actions`` with each delivery naming the message it takes, as a non-FIFO channel
    needs: the transfer with the logged label, or the marker of the logged snapshot.

    Message ids are the engine's, known only as it runs: the run is replayed to read
    them (the markers are its algorithm's own).
    """
    sim = _simulator(spec, start)
    named: list[Step] = []
    for n, (action, snapshot) in enumerate(zip(actions, markers, strict=True)):
        if isinstance(action, Deliver):
            channel = sim.network.channel_index(action.channel)
            message = _in_flight(sim, channel, action.label, snapshot)
            if message is None:
                what = f"the marker of {snapshot}" if snapshot else f"transfer {action.label}"
                raise RunLogError(
                    f"assembled action {n}: {action.channel.dst} accepted {what}, "
                    f"which is not in flight on {action.channel}{_hint(sim)}"
                )
            action = Deliver(action.channel, message=message, label=action.label)
        _step(sim, n, action)
        named.append(action)
    return named


def _in_flight(sim: Simulator, channel: int, label: str | None, snapshot: str | None) -> int | None:
    """The id of the message on ``channel`` with send ``label`` (a transfer), or of the
    marker of ``snapshot``; ``None`` if no such message is in flight."""
    messages = sim.trace.messages
    for message in sim.queues[channel]:
        record = messages[message]
        if snapshot is None:
            if (
                record.kind == APP
                and label is not None
                and record.label == label.removeprefix(RECEIVED)
            ):
                return message
        elif record.kind != APP and record.tag == snapshot:
            return message
    return None


#: what a receive's label adds to the label of the send it takes (``got-P1->P2#3``)
RECEIVED = "got-"


def _label(line: dict[str, Any]) -> str | None:
    if "seq" in line:
        return f"{line['ch']}#{line['seq']}"
    return None


def replay(spec: ClusterSpec, actions: list[Step], start: RunStart | None = None) -> Simulator:
    """The engine's run of ``actions`` (the bank, the engine's Chandy–Lamport), from
    ``start`` (default: the spec's initial money, nothing in flight).

    :class:`RunLogError` when a delivery does not take what the node accepted: a
    channel the spec says is FIFO was not, or the logs disagree.
    """
    sim = _simulator(spec, start)
    for n, action in enumerate(actions):
        _step(sim, n, action)
        if isinstance(action, Deliver):
            record = sim.trace.actions[-1]
            message = sim.trace.messages[record.message]
            took_app = message.kind == APP
            if took_app != (action.label is not None):
                raise RunLogError(
                    f"assembled action {n}: {action.channel} delivered a "
                    f"{message.kind} where the node accepted "
                    f"{'a transfer' if action.label else 'a marker'}{_hint(sim)}"
                )
    return sim


def _simulator(spec: ClusterSpec, start: RunStart | None = None) -> Simulator:
    """The engine at ``start``: the transfers in flight are sent first, each from a
    balance that held it, so that they travel with their labels as the logged ones do."""
    if start is None:
        return Simulator(
            spec.network(),
            "bank",
            dict.fromkeys(spec.ids, spec.initial_money),
            algorithm_class(spec),
        )
    initial = dict(start.balances)
    sends = []
    for name, messages in start.in_flight.items():
        channel = Channel.parse(name)
        for label, amount in messages:
            initial[channel.src] += amount
            sends.append(Send(channel.src, channel.dst, amount, label=label))
    sim = Simulator(spec.network(), "bank", initial, algorithm_class(spec))
    for send in sends:
        try:
            sim.step(send)
        except ActionError as e:
            raise RunLogError(f"the logs' base: a transfer in flight ({send}): {e}") from None
    return sim


def _step(sim: Simulator, n: int, action: Step) -> None:
    if isinstance(action, Abandon):
        algorithm = sim.algorithm
        if isinstance(algorithm, ChandyLamport):  # its recordings of the snapshot go too
            algorithm.abandon(action.process, action.snapshot_id)
        sim.ignore_snapshot(action.process, action.snapshot_id)
        return
    try:
        sim.step(action)
    except ActionError as e:
        raise RunLogError(f"assembled action {n} ({action}): {e}{_hint(sim)}") from None
    except Exception as e:  # a learner's class raised here, as it did on the node
        raise RunLogError(
            f"assembled action {n} ({action}): {type(sim.algorithm).__name__} raised "
            f"{type(e).__name__}: {e}"
        ) from None
    # a node that made its part of a snapshot takes no more of its markers (node.py);
    # only a start, a marker, or a message on a channel being recorded can make a part
    process = action.process if isinstance(action, StartSnapshot) else None
    if isinstance(action, Deliver):
        taken = sim.trace.actions[-1]
        heard = taken.kind == CONTROL or sim.algorithm.listening[taken.channel]
        process = action.channel.dst if heard else None
    if process is not None:
        inputs = sim.input_channels(process)
        for sid, rec in sim.algorithm.snapshot_records().items():
            if (process, sid) not in sim.ignored and rec.part_done(process, inputs):
                sim.ignore_snapshot(process, sid)


def _hint(sim: Simulator) -> str:
    """Why a replay under a learner's class may part from what the nodes did."""
    if type(sim.algorithm) is ChandyLamport:
        return ""
    return (
        f" (the replay runs {type(sim.algorithm).__name__} as one object for every node, "
        "where each node ran its own: a class that acts otherwise when it sees only its "
        "own process sends other markers there)"
    )


@dataclass(frozen=True)
class LiveCheck:
    """What the engine says of one snapshot taken by live nodes.

    ``verdict`` is the engine's (consistent cut, Dijkstra's argument, money conserved)
    on the assembled run; ``same_as_engine`` whether the nodes recorded exactly what
    the engine recorded replaying that run; ``recorded_total`` the money in the parts;
    ``from_base`` whether the run was replayed from the logs' base (:mod:`.log_base`),
    the actions before it pruned, rather than from its epoch's start.
    """

    snapshot_id: str
    verdict: SnapshotVerdict
    same_as_engine: bool
    recorded_total: int
    expected_total: int
    differences: tuple[str, ...] = field(default=())
    simulator: Simulator | None = field(default=None, compare=False, repr=False)
    from_base: bool = False

    @property
    def ok(self) -> bool:
        return (
            self.verdict.ok and self.same_as_engine and self.recorded_total == self.expected_total
        )

    @property
    def reason(self) -> str | None:
        if self.verdict.reason:
            return self.verdict.reason
        if self.differences:
            return self.differences[0]
        if self.recorded_total != self.expected_total:
            return f"the parts hold {self.recorded_total}, the cluster {self.expected_total}"
        return None


def check_live_snapshot(
    spec: ClusterSpec, parts: dict[str, CheckedPart], sim: Simulator, snapshot_id: str
) -> LiveCheck:
    """Compare the nodes' ``parts`` of ``snapshot_id`` with the engine's replay ``sim``."""
    differences = []
    snap = sim.snapshot(snapshot_id)
    channels = sim.network.channels
    for node in spec.ids:
        part = parts.get(node)
        if part is None:
            differences.append(f"{node} wrote no part")
            continue
        engine = snap.processes.get(node)
        if engine is None:
            differences.append(f"the engine's replay has no state of {node}")
        elif engine.state != part.balance:
            differences.append(f"{node} recorded {part.balance}, the engine {engine.state}")
        for index, amounts in part.channels.items():
            name = str(channels[index])
            replayed = [m.payload for m in snap.channels.get(name, ())]
            if replayed != amounts:
                differences.append(f"{name}: {node} recorded {amounts}, the engine {replayed}")
    recorded = sum(p.total for p in parts.values())
    return LiveCheck(
        snapshot_id,
        snapshot_verdict(sim, snapshot_id),
        not differences,
        recorded,
        spec.total_money,
        tuple(differences),
        sim,
    )

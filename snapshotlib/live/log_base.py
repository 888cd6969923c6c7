"""A run's logs pruned from the front: a base the engine's replay starts from.

A check replays a run from its beginning (:mod:`.runlog`), so without more a node's log
could never shrink. A *base* is a point of the logs from which a replay can start
instead: a causally closed prefix of them (every action in it has its causes in it)
and what the engine's replay of that prefix ended with: each node's balance and the
transfers in flight on each channel (with their send labels, which a receive names).
The logs before it are no longer needed, and their full segments are deleted.

What a replay from a base cannot do is check a snapshot begun before it: that
snapshot's markers in flight and records are not kept. So a base is moved forward
(:func:`rebase`) only up to the first action of any snapshot still registered; the
snapshots with an action before it are *closed*: the replay leaves their actions out
(until every channel's marker of one has arrived: no more can come), and a check of one
says that its logs were pruned. The controller moves the base when it prunes to the
retained snapshots (``live up --retain N``). It reads the registry after the logs: a
snapshot is registered before any of its actions is logged, so one with an action in
the logs read that is no longer registered was pruned.

The base is ``base.json`` in the logs' folder, written whole under a temporary name and
renamed; segments go only after it is on disk, and a reader skips actions before it
(:func:`.runlog.read_logs` with ``since``), so a segment whose deletion was cut short is
harmless.

Standard library only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..simulator import Simulator
from ..trace import APP
from .action_log import BASE_FILE, drop_segments_before
from .runlog import (
    SNAPSHOT_KINDS,
    RunLogError,
    RunStart,
    assemble,
    causal_prefix,
    read_logs,
    replay,
    starting_balances,
)
from .spec import ClusterSpec
from .storage import fsync_dir


@dataclass(frozen=True)
class LogBase:
    """``upto``: how many actions of each node are before the base; ``start``: the
    engine's state there (:class:`.runlog.RunStart`); ``awaited``: per closed snapshot,
    the channels whose marker of it has yet to arrive."""

    upto: dict[str, int]
    start: RunStart
    awaited: dict[str, tuple[str, ...]]

    def to_json(self) -> str:
        start = self.start
        return json.dumps(
            {
                "upto": self.upto,
                "balances": start.balances,
                "in_flight": {ch: [list(m) for m in ms] for ch, ms in start.in_flight.items()},
                "closed": {sid: list(self.awaited[sid]) for sid in sorted(self.awaited)},
            },
            indent=1,
        )


def load_base(spec: ClusterSpec, folder: Path) -> LogBase | None:
    """The base of the logs in ``folder``; ``None`` where they were never pruned.
    :class:`.runlog.RunLogError` naming the file and the field for one that is not a
    base of this cluster's logs."""
    path = folder / BASE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as e:
        raise RunLogError(f"{path}: cannot be read ({e})") from None
    try:
        return _base_from(spec, data)
    except (KeyError, TypeError, ValueError) as e:
        raise RunLogError(f"{path}: not a base of this cluster's logs: {e}") from None


def _base_from(spec: ClusterSpec, data: Any) -> LogBase:
    if not isinstance(data, dict):
        raise ValueError("an object expected")

    missing = [f for f in ("upto", "balances", "in_flight", "closed") if f not in data]
    if missing:
        raise ValueError(f"{missing[0]}: missing")

    def counts(field: str) -> dict[str, int]:
        value = data[field]
        if not isinstance(value, dict) or set(value) != set(spec.ids):
            raise ValueError(f"{field}: one entry per node expected")
        if not all(type(v) is int and v >= 0 for v in value.values()):
            raise ValueError(f"{field}: whole numbers at least 0 expected")
        return {node: value[node] for node in spec.ids}

    channels = {str(c) for c in spec.network().channels}
    in_flight: dict[str, tuple[tuple[str | None, int], ...]] = {}
    if not isinstance(data["in_flight"], dict):
        raise ValueError("in_flight: an object from channel to transfers expected")
    for name, messages in data["in_flight"].items():
        if name not in channels:
            raise ValueError(f"in_flight: no channel {name!r}")
        pairs: list[Any] = messages if isinstance(messages, list) else [None]
        if not all(
            isinstance(m, list)
            and len(m) == 2
            and (m[0] is None or isinstance(m[0], str))
            and type(m[1]) is int
            and m[1] >= 0
            for m in pairs
        ):
            raise ValueError(f"in_flight: {name}: [label, amount at least 0] pairs expected")
        in_flight[name] = tuple((label, amount) for label, amount in pairs)
    closed = data["closed"]
    if not isinstance(closed, dict) or not all(
        isinstance(awaited, list) and awaited and set(awaited) <= channels
        for awaited in closed.values()
    ):
        raise ValueError("closed: an object from snapshot id to the channels awaited expected")
    balances = counts("balances")
    carried = sum(amount for messages in in_flight.values() for _, amount in messages)
    if sum(balances.values()) + carried != spec.total_money:
        raise ValueError(
            f"balances: with the transfers in flight they hold "
            f"{sum(balances.values()) + carried}, the cluster {spec.total_money}"
        )
    return LogBase(
        counts("upto"),
        RunStart(balances, in_flight, frozenset(closed)),
        {sid: tuple(awaited) for sid, awaited in closed.items()},
    )


def replay_logs(
    spec: ClusterSpec, folder: Path, base: LogBase | None, upto: dict[str, int] | None = None
) -> Simulator:
    """The engine's replay of the logs in ``folder`` from ``base`` (:func:`load_base`;
    ``None``: their beginning) up to ``upto`` actions of each node (default: all, cut to
    their causal prefix)."""
    since = None if base is None else base.upto
    logs = read_logs(spec, folder, upto, since)
    if upto is None:
        logs = causal_prefix(spec, logs, since)
    return _replay_from(spec, logs, base)


def _replay_from(
    spec: ClusterSpec, logs: dict[str, list[dict[str, Any]]], base: LogBase | None
) -> Simulator:
    """The engine's replay of ``logs``, which begin at ``base`` (or at their beginning)."""
    start = RunStart(starting_balances(spec, logs)) if base is None else base.start
    return replay(spec, assemble(spec, logs, start), start)


def rebase(
    spec: ClusterSpec,
    folder: Path,
    registered: Callable[[], Iterable[str]],
    *,
    restored: bool = False,
) -> LogBase | None:
    """Move the base of the logs in ``folder`` as far as no snapshot ``registered()``
    names (asked after the logs are read) has an action before it (see the module
    docstring), write it, and delete the segments wholly before it. ``restored``: the
    logs of a restore's epoch, every one of which must begin with the node's restore.
    The new base; ``None`` when it did not move."""
    old = load_base(spec, folder)
    since = dict.fromkeys(spec.ids, 0) if old is None else old.upto
    logs = read_logs(spec, folder, since=since)
    kept = set(registered())
    if old is None and restored:
        unrestored = [n for n, ls in logs.items() if not ls or ls[0].get("kind") != "restore"]
        if unrestored:
            raise RunLogError(f"{folder}: {unrestored[0]}'s log does not begin with its restore")
    for node, lines in logs.items():
        for k, line in enumerate(lines):
            if line.get("kind") in SNAPSHOT_KINDS and str(line.get("snapshot")) in kept:
                logs[node] = lines[:k]
                break
    prefix = causal_prefix(spec, logs, since)
    upto = {node: since[node] + len(prefix[node]) for node in spec.ids}
    if upto == since:
        # a segment the last pruning was cut short in deleting (or compressed anew
        # after it was deleted) goes now
        for node in spec.ids:
            drop_segments_before(folder, node, upto[node])
        return None
    sim = _replay_from(spec, prefix, old)
    messages = sim.trace.messages
    in_flight = {}
    for index, channel in enumerate(sim.network.channels):
        # the markers in flight are those of snapshots begun in the prefix: closed
        carried = [messages[m] for m in sim.queues[index] if messages[m].kind == APP]
        if carried:
            in_flight[str(channel)] = tuple((m.label, int(m.payload)) for m in carried)
    awaited = _still_awaited(spec, prefix, {} if old is None else old.awaited)
    balances = {node: int(sim.states[node]) for node in spec.ids}
    base = LogBase(upto, RunStart(balances, in_flight, frozenset(awaited)), awaited)
    _write(folder / BASE_FILE, base.to_json())
    for node in spec.ids:
        drop_segments_before(folder, node, upto[node])
    return base


def _still_awaited(
    spec: ClusterSpec, prefix: dict[str, list[dict[str, Any]]], before: dict[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """The snapshots closed at the new base, each with the channels whose marker of it has
    not arrived by then: one begun in ``prefix`` awaits every channel's first, one closed
    ``before`` what it awaited. A snapshot with none left has no action after the base
    (each channel carries one marker of it), and is no longer named. (One given up
    where some node never recorded it may await a marker for good: a few bytes for each
    such failed snapshot.)"""
    channels = tuple(str(c) for c in spec.network().channels)
    awaited = {sid: set(chs) for sid, chs in before.items()}
    for lines in prefix.values():
        for line in lines:
            if line.get("kind") in SNAPSHOT_KINDS:
                awaited.setdefault(str(line["snapshot"]), set(channels))
    for lines in prefix.values():
        for line in lines:
            if line.get("kind") == "marker":
                awaited[str(line["snapshot"])].discard(str(line.get("ch")))
    return {sid: tuple(sorted(chs)) for sid, chs in sorted(awaited.items()) if chs}


def _write(path: Path, text: str) -> None:
    """``text`` to ``path``, whole on disk before it has that name."""
    temporary = path.with_name(path.name + ".part")
    with temporary.open("w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    fsync_dir(path.parent)

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
snapshots with an action before it are *closed*: the replay leaves their actions out,
and a check of one says that its logs were pruned. The controller moves the base when it
prunes to the retained snapshots (``live up --retain N``), with no trigger in between, so
a snapshot is registered before any of its actions is logged.

The base is ``base.json`` in the logs' folder, written whole under a temporary name and
renamed; segments go only after it is on disk, and a reader skips actions before it
(:func:`.runlog.read_logs` with ``since``), so a segment whose deletion was cut short is
harmless.

Standard library only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
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
    engine's state there (:class:`.runlog.RunStart`)."""

    upto: dict[str, int]
    start: RunStart

    def to_json(self) -> str:
        start = self.start
        return json.dumps(
            {
                "upto": self.upto,
                "balances": start.balances,
                "in_flight": {ch: [list(m) for m in ms] for ch, ms in start.in_flight.items()},
                "closed": sorted(start.closed),
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
    except (OSError, ValueError) as e:
        raise RunLogError(f"{path}: cannot be read ({e})") from None
    try:
        return _base_from(spec, data)
    except (KeyError, TypeError, ValueError) as e:
        raise RunLogError(f"{path}: not a base of this cluster's logs: {e}") from None


def _base_from(spec: ClusterSpec, data: Any) -> LogBase:
    def counts(field: str) -> dict[str, int]:
        value = data[field]
        if not isinstance(value, dict) or set(value) != set(spec.ids):
            raise ValueError(f"{field}: one entry per node expected")
        if not all(type(v) is int and v >= 0 for v in value.values()):
            raise ValueError(f"{field}: whole numbers at least 0 expected")
        return {node: value[node] for node in spec.ids}

    channels = {str(c) for c in spec.network().channels}
    in_flight: dict[str, tuple[tuple[str | None, int], ...]] = {}
    for name, messages in data["in_flight"].items():
        if name not in channels:
            raise ValueError(f"in_flight: no channel {name!r}")
        kept = []
        for label, amount in messages:
            if not (label is None or isinstance(label, str)) or type(amount) is not int:
                raise ValueError(f"in_flight: {name}: [label, amount] pairs expected")
            kept.append((label, amount))
        in_flight[name] = tuple(kept)
    closed = data["closed"]
    if not isinstance(closed, list) or not all(isinstance(s, str) for s in closed):
        raise ValueError("closed: a list of snapshot ids expected")
    return LogBase(counts("upto"), RunStart(counts("balances"), in_flight, frozenset(closed)))


def replay_logs(
    spec: ClusterSpec, folder: Path, upto: dict[str, int] | None = None
) -> tuple[Simulator, LogBase | None]:
    """The engine's replay of the logs in ``folder`` from their base (or their beginning)
    up to ``upto`` actions of each node (default: all, cut to their causal prefix when
    ``upto`` is not given), and the base it started from."""
    base = load_base(spec, folder)
    since = None if base is None else base.upto
    logs = read_logs(spec, folder, upto, since)
    if upto is None:
        logs = causal_prefix(spec, logs, since)
    start = RunStart(starting_balances(spec, logs)) if base is None else base.start
    return replay(spec, assemble(spec, logs, start), start), base


def rebase(spec: ClusterSpec, folder: Path, registered: Iterable[str]) -> LogBase | None:
    """Move the base of the logs in ``folder`` as far as no snapshot in ``registered``
    has an action before it (see the module docstring), write it, and delete the
    segments wholly before it. The new base; ``None`` when it did not move."""
    kept = set(registered)
    old = load_base(spec, folder)
    since = dict.fromkeys(spec.ids, 0) if old is None else old.upto
    logs = read_logs(spec, folder, since=since)
    for node, lines in logs.items():
        for k, line in enumerate(lines):
            if line.get("kind") in SNAPSHOT_KINDS and str(line.get("snapshot")) in kept:
                logs[node] = lines[:k]
                break
    prefix = causal_prefix(spec, logs, since)
    upto = {node: since[node] + len(prefix[node]) for node in spec.ids}
    if upto == since:
        return None
    start = RunStart(starting_balances(spec, prefix)) if old is None else old.start
    sim = replay(spec, assemble(spec, prefix, start), start)
    messages = sim.trace.messages
    in_flight = {}
    for index, channel in enumerate(sim.network.channels):
        # the markers in flight are those of snapshots begun in the prefix: closed
        carried = [messages[m] for m in sim.queues[index] if messages[m].kind == APP]
        if carried:
            in_flight[str(channel)] = tuple((m.label, int(m.payload)) for m in carried)
    closed = set(start.closed)
    for lines in prefix.values():
        closed |= {str(line["snapshot"]) for line in lines if line.get("kind") in SNAPSHOT_KINDS}
    balances = {node: int(sim.states[node]) for node in spec.ids}
    base = LogBase(upto, RunStart(balances, in_flight, frozenset(closed)))
    _write(folder / BASE_FILE, base.to_json())
    for node in spec.ids:
        drop_segments_before(folder, node, upto[node])
    return base


def _write(path: Path, text: str) -> None:
    """``text`` to ``path``, whole on disk before it has that name."""
    temporary = path.with_name(path.name + ".part")
    with temporary.open("w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    fsync_dir(path.parent)

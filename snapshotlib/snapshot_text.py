"""A recorded snapshot in words: the one layout every view of a snapshot shares.

Each view says different things of a process's recorded part (its events, its state,
both) and of a recorded message (its name, what it carries, where it was sent and
received); that is its :class:`SnapshotStyle`. The layout is the same everywhere and
written once here: a heading (who initiated it, whether it is complete), then every
process in the network's order, recorded or not yet, then every channel, recorded,
still recording or not begun, with the empty ones of a large network folded into one
line. :func:`snapshot_rows` gives that layout as rows (the Explorer's HTML table reads
them), :func:`snapshot_text` as plain deterministic text (the lessons print it).

>>> from snapshotlib import Network, Simulator, StartSnapshot
>>> sim = Simulator(Network(["P1", "P2"]), "tokens", {"P1": 2})
>>> sim.step(StartSnapshot("P1", "s1"))
>>> style = SnapshotStyle(process=lambda p, part: f"{part.state} tokens")
>>> print(snapshot_text(sim, sim.snapshot("s1"), style))
snapshot s1, initiated by P1: in progress
  P1: 2 tokens
  P2: not recorded yet
  P1->P2: not recorded yet
  P2->P1: empty (still recording)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .model import Channel
from .snapshot import GlobalSnapshot, RecordedMessage, RecordedProcess

if TYPE_CHECKING:  # the simulator imports the snapshot model; this module reads both
    from .simulator import Simulator

PROCESS, CHANNEL, QUIET = "process", "channel", "quiet"
NOT_RECORDED = "not recorded yet"


def _label(message: RecordedMessage) -> str:
    return message.label or repr(message.payload)


@dataclass(frozen=True)
class SnapshotStyle:
    """What one view says of each part of a snapshot.

    ``process`` gives the text of a recorded process (its name comes before it);
    ``channel`` the text of a recorded channel's messages (default: each message's
    text by ``message``, comma-separated, or ``empty``); ``channel_name`` how a
    channel is named; with more than ``quiet_over`` channels, the recorded empty ones
    are folded into one line.
    """

    process: Callable[[str, RecordedProcess], str]
    message: Callable[[RecordedMessage], str] = _label
    channel: Callable[[tuple[RecordedMessage, ...]], str] | None = None
    channel_name: Callable[[Channel], str] = str
    quiet_over: int | None = None

    def messages(self, messages: tuple[RecordedMessage, ...]) -> str:
        if self.channel is not None:
            return self.channel(messages)
        return ", ".join(self.message(m) for m in messages) or "empty"


@dataclass(frozen=True)
class SnapshotRow:
    """One line of the layout: a process or a channel (``kind``), its ``name``, whether
    it has been recorded, whether its recording is still open (a process recording its
    inputs, a channel recording), what the style says of it (``text``) and, for a
    recorded process, its recorded part (for views that lay it out in columns). A
    ``quiet`` row stands for ``name`` (a count) channels folded into one line, recorded
    empty (``recorded``) or not begun."""

    kind: str
    name: str
    recorded: bool
    open: bool
    text: str
    part: RecordedProcess | None = None


def heading(snap: GlobalSnapshot) -> str:
    """``snapshot s1, initiated by P1: complete`` (a state with no initiator, such as
    the true state of a run, is headed by its id alone)."""
    if not snap.initiators:
        return snap.id
    status = "complete" if snap.complete else "in progress"
    return f"snapshot {snap.id}, initiated by {', '.join(snap.initiators)}: {status}"


def snapshot_rows(sim: Simulator, snap: GlobalSnapshot, style: SnapshotStyle) -> list[SnapshotRow]:
    """The layout of ``snap`` (module docstring), one row per process and channel."""
    rows = []
    for p in sim.network.processes:
        part = snap.processes.get(p)
        if part is None:
            rows.append(SnapshotRow(PROCESS, p, False, False, NOT_RECORDED))
        else:
            text = style.process(p, part)
            rows.append(SnapshotRow(PROCESS, p, True, not part.done, text, part))
    channels = sim.network.channels
    fold = style.quiet_over is not None and len(channels) > style.quiet_over
    empty = not_begun = 0
    for c in channels:
        name, shown = str(c), style.channel_name(c)
        if name not in snap.channels:
            if fold:
                not_begun += 1
            else:
                rows.append(SnapshotRow(CHANNEL, shown, False, False, NOT_RECORDED))
            continue
        messages = snap.channels[name]
        pending = name in snap.pending_channels
        if fold and not messages and not pending:
            empty += 1
            continue
        rows.append(SnapshotRow(CHANNEL, shown, True, pending, style.messages(messages)))
    if empty:
        rows.append(SnapshotRow(QUIET, str(empty), True, False, "empty"))
    if not_begun:
        rows.append(SnapshotRow(QUIET, str(not_begun), False, False, NOT_RECORDED))
    return rows


def snapshot_text(
    sim: Simulator,
    snap: GlobalSnapshot,
    style: SnapshotStyle,
    sections: tuple[str, str] | None = None,
) -> str:
    """``snap`` as plain text: :func:`heading`, then a line per row of
    :func:`snapshot_rows`; ``sections`` titles the processes' and the channels' lines."""
    lines = [heading(snap)]
    kinds_seen: set[str] = set()
    for row in snapshot_rows(sim, snap, style):
        if sections is not None and row.kind not in kinds_seen and row.kind != QUIET:
            kinds_seen.add(row.kind)
            lines.append(sections[0] if row.kind == PROCESS else sections[1])
        if row.kind == QUIET and row.recorded:
            lines.append(f"  every other channel: empty ({row.name})")
            continue
        if row.kind == QUIET:
            lines.append(f"  {row.name} more channels: not recorded yet")
            continue
        still = " (still recording)" if row.kind == CHANNEL and row.open else ""
        lines.append(f"  {row.name}: {row.text}{still}")
    return "\n".join(lines)

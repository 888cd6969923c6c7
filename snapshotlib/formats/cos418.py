"""Princeton COS 418 assignment 2 files: topologies, event scripts and snapshots.

Three plain-text formats (the assignment's ``data/`` folder):

``.top``
    First line ``N``, then ``N`` lines ``ID tokens`` (the servers), then ``SRC DST``
    lines (directed links). Lines starting with ``#`` and blank lines are comments.
``.events``
    ``send SRC DST N`` (``SRC`` passes ``N`` tokens to ``DST``), ``snapshot ID``
    (``ID`` initiates the next snapshot), ``tick`` or ``tick N`` (advance time).
    ``#`` comments and blank lines are tolerated as well.
``.snap``
    The snapshot id on the first line, then ``ID tokens`` for every server (sorted by
    ID as strings), then ``SRC DST token(N)`` for every message recorded in transit.

Every parse error is a :class:`Cos418Error` naming the file, the line and what was
expected there.

Examples
--------
>>> top = parse_topology("2\\nN1 1\\nN2 0\\nN1 N2\\nN2 N1\\n", source="2nodes.top")
>>> top.ids, top.total_tokens
(('N1', 'N2'), 1)
>>> script = parse_events("send N1 N2 1\\nsnapshot N2\\ntick\\n", "x.events", top)
>>> script.events[0]
SendEvent(src='N1', dst='N2', tokens=1)
>>> parse_topology("2\\nN1 1\\nN2 0\\nN1\\n", source="2nodes.top")
Traceback (most recent call last):
...
snapshotlib.formats.cos418.Cos418Error: 2nodes.top, line 4: expected "SRC DST", got "N1"
>>> snap = Cos418Snapshot("0", {"N2": 0, "N1": 0}, (SnapMessage("N1", "N2", 1),))
>>> print(format_snap(snap), end="")
0
N1 0
N2 0
N1 N2 token(1)
"""

from __future__ import annotations

import bisect
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path


class Cos418Error(ValueError):
    """A COS 418 file that cannot be read or run; the message names the file and line."""


# --------------------------------------------------------------------------- values
@dataclass(frozen=True)
class Topology:
    """Servers with their initial tokens and the directed links between them.

    Both are kept in file order; the tick model sorts them where COS 418 does.
    """

    servers: tuple[tuple[str, int], ...]
    links: tuple[tuple[str, str], ...]
    source: str = "<topology>"

    @property
    def ids(self) -> tuple[str, ...]:
        """Server ids in file order."""
        return tuple(s for s, _ in self.servers)

    @property
    def initial(self) -> dict[str, int]:
        """Initial tokens by server id."""
        return dict(self.servers)

    @property
    def total_tokens(self) -> int:
        """The tokens in the whole system, which every snapshot must account for."""
        return sum(n for _, n in self.servers)


@dataclass(frozen=True, slots=True)
class SendEvent:
    """``send SRC DST N``: ``src`` passes ``tokens`` tokens to ``dst``."""

    src: str
    dst: str
    tokens: int


@dataclass(frozen=True, slots=True)
class SnapshotEvent:
    """``snapshot ID``: ``server`` initiates the next snapshot (ids ``"0"``, ``"1"``, ...)."""

    server: str


@dataclass(frozen=True, slots=True)
class TickEvent:
    """``tick`` or ``tick N``: advance time by ``count`` ticks."""

    count: int = 1


Event = SendEvent | SnapshotEvent | TickEvent


@dataclass(frozen=True)
class EventScript:
    """The events of a ``.events`` file, in order.

    Line numbers are not stored per event (a benchmark script has a million events):
    ``skips`` holds, for each run of comment lines, the index of the next event and how
    many lines were skipped before it in total, and :meth:`line` recovers the number.
    """

    events: tuple[Event, ...]
    source: str = "<events>"
    skips: tuple[tuple[int, int], ...] = ()

    def line(self, index: int) -> int:
        """The 1-based line number of event ``index``.

        >>> parse_events("# hi\\n\\ntick\\n# bye\\ntick 2\\n").line(1)
        5
        """
        k = bisect.bisect_right(self.skips, (index, float("inf"))) - 1
        return index + 1 + (self.skips[k][1] if k >= 0 else 0)


@dataclass(frozen=True)
class SnapMessage:
    """A message recorded in transit: ``tokens`` tokens on the link ``src`` → ``dst``."""

    src: str
    dst: str
    tokens: int


@dataclass(frozen=True)
class Cos418Snapshot:
    """One global snapshot as a ``.snap`` file holds it.

    ``tokens`` maps every server to its recorded tokens; ``messages`` lists the recorded
    messages, channel by channel in sorted order and in recorded order on each channel.
    """

    id: str
    tokens: Mapping[str, int]
    messages: tuple[SnapMessage, ...] = ()

    @property
    def total(self) -> int:
        """Tokens in the recorded servers plus tokens in the recorded messages."""
        return sum(self.tokens.values()) + sum(m.tokens for m in self.messages)


# ------------------------------------------------------------------------- helpers
def _lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, stripped line)`` for every line that is not a comment."""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            yield number, line


def _whole(text: str) -> int | None:
    """``int(text)`` for a plain decimal whole number (no sign, no ``_``), else ``None``."""
    return int(text) if text.isascii() and text.isdigit() else None


def _names(names: Iterable[str], most: int = 8) -> str:
    """``names`` joined by commas, the first ``most`` of them only."""
    listed = list(names)
    more = f", ... ({len(listed)} in all)" if len(listed) > most else ""
    return ", ".join(listed[:most]) + more


def _read(path: str | Path) -> tuple[str, str]:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8"), p.name
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise Cos418Error(f"{p}: cannot read: {reason}") from None


# ------------------------------------------------------------------------ topology
def load_topology(path: str | Path) -> Topology:
    """Read a ``.top`` file; errors name the file by its base name and the line."""
    text, name = _read(path)
    return parse_topology(text, source=name)


def parse_topology(text: str, source: str = "<topology>") -> Topology:
    """Parse the text of a ``.top`` file (see the module docstring)."""
    lines = _lines(text)
    first = next(lines, None)
    if first is None:
        raise Cos418Error(f"{source}: expected the number of servers N, got an empty file")
    n_line, n_text = first
    n = _whole(n_text)
    if n is None or n < 1:
        raise Cos418Error(
            f"{source}, line {n_line}: expected the number of servers N (a whole number"
            f' >= 1), got "{n_text}"'
        )
    servers: dict[str, int] = {}
    links: dict[tuple[str, str], int] = {}
    for number, line in lines:
        where = f"{source}, line {number}"
        parts = line.split()
        if len(servers) < n:
            _server_line(parts, line, where, servers, n, n_line)
            continue
        if len(parts) != 2:
            raise Cos418Error(f'{where}: expected "SRC DST", got "{line}"')
        src, dst = map(sys.intern, parts)
        for end in (src, dst):
            if end not in servers:
                raise Cos418Error(
                    f"{where}: link {src} -> {dst} to unknown server {end!r} (line {n_line}"
                    f" declares {n} servers: {_names(servers)})"
                )
        if src == dst:
            raise Cos418Error(f"{where}: link {src} -> {dst} is a self-loop")
        if (src, dst) in links:
            raise Cos418Error(
                f"{where}: link {src} -> {dst} is listed twice (first on line {links[src, dst]})"
            )
        links[src, dst] = number
    if len(servers) < n:
        raise Cos418Error(
            f"{source}: line {n_line} declares N = {n} servers but the file lists only"
            f" {len(servers)}"
        )
    return Topology(tuple(servers.items()), tuple(links), source)


def _server_line(
    parts: list[str], line: str, where: str, servers: dict[str, int], n: int, n_line: int
) -> None:
    """Read one ``ID tokens`` line into ``servers``."""
    tokens = _whole(parts[1]) if len(parts) == 2 else None
    if tokens is None:
        # A link where a server was expected means N promised more servers than listed.
        hint = ""
        if len(parts) == 2 and parts[0] in servers:
            hint = f" (line {n_line} declares N = {n} servers, {len(servers)} listed so far)"
        raise Cos418Error(
            f'{where}: expected "ID tokens" with a whole number of tokens, got "{line}"{hint}'
        )
    if parts[0] in servers:
        raise Cos418Error(f"{where}: server {parts[0]!r} is listed twice")
    servers[sys.intern(parts[0])] = tokens


# -------------------------------------------------------------------------- events
def load_events(path: str | Path, topology: Topology | None = None) -> EventScript:
    """Read a ``.events`` file; with ``topology``, also check servers and links exist."""
    text, name = _read(path)
    return parse_events(text, name, topology)


_EVENT_FORMS = {
    "send": '"send SRC DST N"',
    "snapshot": '"snapshot ID"',
    "tick": '"tick" or "tick N"',
}


def parse_events(
    text: str, source: str = "<events>", topology: Topology | None = None
) -> EventScript:
    """Parse the text of a ``.events`` file (see the module docstring).

    Equal lines give the same (immutable) event object: a benchmark script repeats a
    few thousand distinct lines a million times, and building one object per distinct
    line makes parsing several times faster.
    """
    links = frozenset(topology.links) if topology is not None else None
    servers = frozenset(topology.ids) if topology is not None else None
    seen: dict[str, Event] = {}
    events: list[Event] = []
    skips: list[tuple[int, int]] = []
    skipped = recorded = 0  # comment lines so far; and as of the last entry of skips
    for number, raw in enumerate(text.splitlines(), start=1):
        event = seen.get(raw)
        if event is None:
            line = raw.strip()
            if not line or line.startswith("#"):
                skipped += 1
                continue
            event = _event(line, f"{source}, line {number}", servers, links)
            seen[raw] = event
        if skipped != recorded:
            skips.append((len(events), skipped))
            recorded = skipped
        events.append(event)
    return EventScript(tuple(events), source, tuple(skips))


def _event(
    line: str,
    where: str,
    servers: frozenset[str] | None,
    links: frozenset[tuple[str, str]] | None,
) -> Event:
    parts = line.split()
    command = parts[0]
    form = _EVENT_FORMS.get(command)
    if form is None:
        raise Cos418Error(
            f'{where}: expected "send SRC DST N", "snapshot ID" or "tick [N]", got "{line}"'
        )
    if command == "tick":
        count = _whole(parts[1]) if len(parts) == 2 else 1 if len(parts) == 1 else None
        if count is None or count < 1:
            raise Cos418Error(f'{where}: expected {form} with N a whole number >= 1, got "{line}"')
        return TickEvent(count)
    if command == "snapshot":
        if len(parts) != 2:
            raise Cos418Error(f'{where}: expected {form}, got "{line}"')
        _known(parts[1], where, servers)
        return SnapshotEvent(sys.intern(parts[1]))
    tokens = _whole(parts[3]) if len(parts) == 4 else None
    if tokens is None:
        raise Cos418Error(f'{where}: expected {form} with N a whole number of tokens, got "{line}"')
    # Interned names: the simulator's dictionaries then find them by identity.
    src, dst = sys.intern(parts[1]), sys.intern(parts[2])
    _known(src, where, servers)
    _known(dst, where, servers)
    if links is not None and (src, dst) not in links:
        raise Cos418Error(f"{where}: there is no link {src} -> {dst} in the topology")
    return SendEvent(src, dst, tokens)


def _known(server: str, where: str, servers: frozenset[str] | None) -> None:
    if servers is not None and server not in servers:
        raise Cos418Error(
            f"{where}: unknown server {server!r} (the topology has {_names(sorted(servers))})"
        )


# --------------------------------------------------------------------------- .snap
def format_snap(snapshot: Cos418Snapshot) -> str:
    """The text of a ``.snap`` file for ``snapshot``, exactly as COS 418 writes it."""
    out = [snapshot.id]
    out.extend(f"{s} {snapshot.tokens[s]}" for s in sorted(snapshot.tokens))
    out.extend(f"{m.src} {m.dst} token({m.tokens})" for m in snapshot.messages)
    return "\n".join(out) + "\n"


def write_snap(snapshot: Cos418Snapshot, path: str | Path) -> Path:
    """Write ``snapshot`` to ``path`` in the ``.snap`` format; returns the path."""
    p = Path(path)
    p.write_text(format_snap(snapshot), encoding="utf-8")
    return p


_TOKEN = re.compile(r"token\(([0-9]+)\)")


def load_snaps(path: str | Path) -> tuple[Cos418Snapshot, ...]:
    """Read a ``.snap`` file (it may hold several snapshots, each starting with its id)."""
    text, name = _read(path)
    return parse_snaps(text, source=name)


def parse_snaps(text: str, source: str = "<snap>") -> tuple[Cos418Snapshot, ...]:
    """Parse the text of a ``.snap`` file into its snapshots, in file order."""
    snaps: list[tuple[str, dict[str, int], list[SnapMessage]]] = []
    for number, line in _lines(text):
        where = f"{source}, line {number}"
        parts = line.split()
        if len(parts) == 1:
            if _whole(parts[0]) is None:
                raise Cos418Error(f'{where}: expected a snapshot id (a whole number), got "{line}"')
            snaps.append((parts[0], {}, []))
            continue
        if not snaps:
            raise Cos418Error(f'{where}: expected a snapshot id first, got "{line}"')
        _, tokens, messages = snaps[-1]
        if len(parts) == 2:
            n = _whole(parts[1])
            if n is None:
                raise Cos418Error(f'{where}: expected "ID tokens", got "{line}"')
            tokens[parts[0]] = n
        elif len(parts) == 3 and (m := _TOKEN.fullmatch(parts[2])):
            messages.append(SnapMessage(parts[0], parts[1], int(m.group(1))))
        else:
            raise Cos418Error(f'{where}: expected "SRC DST token(N)", got "{line}"')
    if not snaps:
        raise Cos418Error(f"{source}: expected a snapshot id, got an empty file")
    return tuple(Cos418Snapshot(i, t, tuple(m)) for i, t, m in snaps)

"""A live node's action log, rotated: one JSON line per action, in segments.

A node of a cluster at rate 50 logs about 100 actions a second (some 5 MB in ten
minutes). Its log is a series of segments in the epoch's folder, each named by the
number of its first action: ``P1.000000000.jsonl``, ``P1.000050000.jsonl``, ... The
node appends to the newest; once a segment holds :data:`SEGMENT_LINES` actions the next
one is opened, and the full one is compressed (gzip, about 7 times smaller) in a thread
of its own: written whole under a temporary name, renamed to ``....jsonl.gz``, and only
then is the plain file removed. So at every moment each segment is whole under one of
its two names, and a reader (:func:`read_segments`) takes the compressed one where it
exists.

The engine's check of a snapshot replays the run from its epoch's start, or from the
logs' base (:mod:`.log_base`), which the controller moves forward when it prunes to the
retained snapshots: the segments wholly before it are then deleted
(:func:`drop_segments_before`).

Standard library only.
"""

from __future__ import annotations

import gzip
import itertools
import logging
import os
import re
import shutil
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .storage import fsync_dir

log = logging.getLogger(__name__)

#: actions per segment (about 4.5 MB plain, 0.6 MB compressed)
SEGMENT_LINES = 50_000

#: the logs' base in their folder (written by :mod:`.log_base`)
BASE_FILE = "base.json"


def segment_name(node: str, first: int, *, compressed: bool = False) -> str:
    return f"{node}.{first:09d}.jsonl" + (".gz" if compressed else "")


class ActionLog:
    """The log of ``node`` in ``folder`` (``None``: nothing is kept, as for a node
    awaiting its restore). ``write`` takes one whole line."""

    def __init__(
        self, folder: Path | None, node: str, *, segment_lines: int = SEGMENT_LINES
    ) -> None:
        self.folder, self.node = folder, node
        self.segment_lines = segment_lines
        #: actions written so far (the next one's number)
        self.written = 0
        self._compressing: list[threading.Thread] = []
        self._file: IO[str] | None = None
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            # a log begins anew (a node switched to the same epoch again, after a
            # restart): segments an earlier writer left would be read as its sequel,
            # and a base of the logs (:mod:`.log_base`) would skip its first actions
            earlier = _segments(folder, node)
            if earlier and (folder / BASE_FILE).exists():
                (folder / BASE_FILE).unlink(missing_ok=True)  # first: it must never
                fsync_dir(folder)  # outlive the segments it was the base of
            for old in earlier.values():
                for path in old:
                    path.unlink(missing_ok=True)
            self._file = self._open(0)

    def _open(self, first: int) -> IO[str]:
        assert self.folder is not None
        return (self.folder / segment_name(self.node, first)).open("w", encoding="utf-8")

    def write(self, line: str) -> None:
        if self._file is None:
            return
        if self.written and self.written % self.segment_lines == 0:
            self._rotate()
        self._file.write(line)
        self.written += 1

    def _rotate(self) -> None:
        assert self._file is not None and self.folder is not None
        self._file.close()
        full = self.folder / segment_name(self.node, self.written - self.segment_lines)
        self._file = self._open(self.written)
        self._compressing = [t for t in self._compressing if t.is_alive()]
        worker = threading.Thread(target=compress, args=(full,), daemon=True)
        worker.start()
        self._compressing.append(worker)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self, *, wait: bool = True) -> None:
        """Flush and close; with ``wait``, wait for the compressions under way (a node
        leaving a log for a new epoch's need not: they finish on their own)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if wait:
            for worker in self._compressing:
                worker.join()


def compress(path: Path) -> None:
    """``path`` to ``path.gz``, whole and on disk before it appears; then ``path`` goes.
    A failure (a full disk) leaves ``path`` as it was: it is logged, never raised."""
    temporary = path.with_name(path.name + ".gz.part")
    try:
        with path.open("rb") as plain, temporary.open("wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as packed:
                shutil.copyfileobj(plain, packed)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temporary, path.with_name(path.name + ".gz"))
        fsync_dir(path.parent)
        path.unlink(missing_ok=True)  # a segment before the logs' base may be gone
    except OSError:
        log.exception("compressing %s (it stays as it is)", path)
        temporary.unlink(missing_ok=True)


def _segments(folder: Path, node: str) -> dict[int, list[Path]]:
    """``node``'s segments in ``folder``: each one's files, by its first action."""
    pattern = re.compile(re.escape(node) + r"\.(\d{9,})\.jsonl(\.gz)?")
    found: dict[int, list[Path]] = {}
    for name in os.listdir(folder) if folder.is_dir() else ():
        match = pattern.fullmatch(name)
        if match:
            found.setdefault(int(match[1]), []).append(folder / name)
    return found


def read_segments(folder: Path, node: str, since: int = 0) -> Iterator[tuple[Path, int, str]]:
    """Every line of ``node``'s log in ``folder``, in order, as (file, line number in
    it, text); none of a segment wholly before action ``since`` (the logs' base). A
    segment compressed while it is being listed is read compressed. :class:`OSError`
    naming the file for a segment that cannot be read (gone, or its gzip damaged)."""
    firsts = sorted(_segments(folder, node))
    for first, following in itertools.zip_longest(firsts, firsts[1:]):
        if following is not None and following <= since:
            continue
        plain = folder / segment_name(node, first)
        packed = folder / segment_name(node, first, compressed=True)
        path = packed if packed.exists() else plain
        try:
            try:
                rows = _open_segment(path)
            except FileNotFoundError:  # compressed between the two looks
                path = packed
                rows = _open_segment(path)
            with rows:
                for number, row in enumerate(rows, 1):
                    yield path, number, row
        except (OSError, EOFError, zlib.error) as e:
            raise OSError(f"{path}: cannot be read ({e})") from None


def drop_segments_before(folder: Path, node: str, upto: int) -> int:
    """Delete ``node``'s segments in ``folder`` whose every action is before action
    ``upto`` (known by the next segment's first): the newest one always stays. How many
    files went."""
    segments = _segments(folder, node)
    firsts = sorted(segments)
    gone = 0
    for first, following in itertools.pairwise(firsts):
        if following > upto:
            break
        for path in segments[first]:
            path.unlink(missing_ok=True)
            gone += 1
    return gone


def _open_segment(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")

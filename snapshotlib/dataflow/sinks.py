"""What the outside world sees of a job's sinks: output that a restore cannot take back.

A sink's *state* is part of every checkpoint, so a restore rolls it back with the rest
of the job (exactly-once state). Its *output*, written to another system, is not: a row
written to a database stays written. So a sink that writes each record as it arrives
writes again, after a restore, every record replayed since the checkpoint: duplicates
in the output even when the job's state is exactly once. Three sinks (``SINKS``):

``plain``
    Writes each record when it arrives: visible at once; duplicates after a restore.
``idempotent``
    Writes each record under its own key (its origin), so a second write of the same
    record replaces the first: each record shows once, at once. It needs records that
    come back the same after a restore, with a key of their own.
``transactional``
    Writes into a transaction per checkpoint (two-phase commit, as Flink's
    ``TwoPhaseCommitSinkFunction``): when the sink records its state for a checkpoint,
    it closes the open transaction (*pre-commit*); when that checkpoint COMPLETES, the
    transaction is committed and its records become visible; a restore aborts every
    transaction not committed. With a variant whose state is exactly once, each record
    shows exactly once; the price is latency: a record is visible only once the next
    checkpoint completes.

:class:`ExternalOutput` keeps what became visible and when; :class:`~.job.StreamJob`
feeds it (its ``sink`` parameter).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

SINKS = ("plain", "idempotent", "transactional")

Origin = tuple[str, int]


@dataclass(frozen=True)
class Write:
    """A record made visible to the outside world at step ``visible``; it reached its
    sink at step ``arrived``."""

    origin: Origin
    arrived: int
    visible: int


@dataclass
class ExternalOutput:
    """The output of a job's sinks as the outside world sees it, under one of
    :data:`SINKS`.

    >>> out = ExternalOutput("transactional")
    >>> out.arrived("K", 0, ("S1", 0), step=3)
    >>> out.visible_output()
    Counter()
    >>> out.state_recorded("K", "c1", before=1)
    >>> out.checkpoint_completed("c1", step=9)
    >>> out.visible_output(), out.latencies()
    (Counter({('S1', 0): 1}), [6])
    """

    mode: str = "plain"
    #: every write, in the order the outside world saw it
    writes: list[Write] = field(default_factory=list)
    #: per sink: (trace index, step, origin) of records in its open transaction
    _open: dict[str, list[tuple[int, int, Origin]]] = field(default_factory=dict)
    #: per checkpoint id: the records pre-committed for it, in checkpoint order
    _precommitted: dict[str, list[tuple[int, Origin]]] = field(default_factory=dict)
    #: transactions aborted by restores, and how many records they held
    aborted: int = 0

    def __post_init__(self) -> None:
        if self.mode not in SINKS:
            raise ValueError(f"unknown sink {self.mode!r}: expected one of {', '.join(SINKS)}")

    def arrived(self, sink: str, index: int, origin: Origin, step: int) -> None:
        """A record reached ``sink`` (trace index ``index``, at ``step``)."""
        if self.mode == "transactional":
            self._open.setdefault(sink, []).append((index, step, origin))
        else:
            self.writes.append(Write(origin, step, step))

    def state_recorded(self, sink: str, checkpoint: str, before: int) -> None:
        """``sink`` recorded its state for ``checkpoint`` at trace index ``before``: the
        records it received before that close their transaction (pre-commit)."""
        if self.mode != "transactional":
            return
        mine = self._open.get(sink, [])
        self._precommitted.setdefault(checkpoint, []).extend(
            (step, origin) for index, step, origin in mine if index < before
        )
        self._open[sink] = [r for r in mine if r[0] >= before]

    def checkpoint_completed(self, checkpoint: str, step: int) -> None:
        """``checkpoint`` COMPLETED at ``step``: commit its transaction and every earlier
        one still waiting (a checkpoint that FAILED left its records to the next)."""
        if self.mode != "transactional" or checkpoint not in self._precommitted:
            return
        for cid in list(self._precommitted):
            for arrived, origin in self._precommitted.pop(cid):
                self.writes.append(Write(origin, arrived, step))
            if cid == checkpoint:
                break

    def restored(self) -> None:
        """The job was restored: every transaction not committed is aborted (the records
        in it come again, replayed or read again)."""
        self.aborted += sum(map(len, self._open.values()))
        self.aborted += sum(map(len, self._precommitted.values()))
        self._open.clear()
        self._precommitted.clear()

    def waiting(self) -> bool:
        """Whether records wait for a checkpoint to become visible."""
        return any(self._open.values()) or any(self._precommitted.values())

    def visible_output(self) -> Counter[Origin]:
        """How many times the outside world sees each record: for an idempotent sink, a
        second write of a record replaces the first."""
        seen = Counter(w.origin for w in self.writes)
        if self.mode == "idempotent":
            return Counter(dict.fromkeys(seen, 1))
        return seen

    def duplicates(self) -> dict[Origin, int]:
        """Records the outside world sees more than once, with how many times."""
        return {o: n for o, n in sorted(self.visible_output().items()) if n > 1}

    def latencies(self) -> list[int]:
        """For every write, steps from the record's arrival at its sink to the moment
        the outside world could see it."""
        return [w.visible - w.arrived for w in self.writes]

    def summary(self) -> dict[str, float]:
        """Mean and largest latency of the writes, in steps (0 when nothing was written)."""
        lat = self.latencies()
        return {
            "mean_latency": statistics.fmean(lat) if lat else 0.0,
            "max_latency": float(max(lat, default=0)),
        }

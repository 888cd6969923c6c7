"""What the outside world sees of a job's sinks: output that a restore cannot take back.

A sink's *state* is part of every checkpoint, so a restore rolls it back with the rest
of the job (exactly-once state). Its *output*, written to another system, is not: a row
written to a database stays written. So a sink that writes each record as it arrives
writes again, after a restore, every record replayed since the checkpoint: duplicates
in the output even when the job's state is exactly once. Three sinks (``SINKS``):

``plain`` (:class:`PlainSink`)
    Writes each record when it arrives: visible at once; duplicates after a restore.
``idempotent`` (:class:`IdempotentSink`)
    Writes each record under its own key (its origin), so a second write of the same
    record replaces the first: each record shows once, at once. It needs records that
    come back the same after a restore, with a key of their own.
``transactional`` (:class:`TransactionalSink`)
    Writes into a transaction per checkpoint (two-phase commit, as Flink's
    ``TwoPhaseCommitSinkFunction``): when the sink records its state for a checkpoint,
    it closes the open transaction (*pre-commit*); when that checkpoint COMPLETES, the
    transaction is committed and its records become visible; a restore aborts every
    transaction not committed. With a variant whose state is exactly once, each record
    shows exactly once; the price is latency: a record is visible only once the next
    checkpoint completes.

A sink of one's own subclasses :class:`Sink`; :class:`~.job.StreamJob` takes the class
as its ``sink``. :class:`ExternalOutput` is the outside world: it keeps what became
visible and when.
"""

from __future__ import annotations

import statistics
from collections import Counter, deque
from dataclasses import dataclass

Origin = tuple[str, int]


class SinkError(ValueError):
    """A sink wrote a record that is not waiting to be written."""


@dataclass(frozen=True)
class Write:
    """A record made visible to the outside world at step ``visible``; it reached its
    sink at step ``arrived``."""

    origin: Origin
    arrived: int
    visible: int


class Sink:
    """How a job's sink operators write to the outside world. The job calls, in the
    order things happen in the run:

    * :meth:`invoke`: a record (``origin``: its source and position there) reached the
      sink operator ``sink``;
    * :meth:`pre_commit`: ``sink`` recorded its state for ``checkpoint``; the records
      it received before belong to that checkpoint, the ones after to the next;
    * :meth:`commit`: ``checkpoint`` COMPLETED (every operator recorded its state);
    * :meth:`abort`: the job was restored from its last completed checkpoint; every
      record not written yet comes again (replayed or read again).

    A sink makes a record visible with :meth:`write`. A job instantiates its sink class
    once: the sink is outside the job, and a restore does not roll it back.
    """

    #: the name :class:`ExternalOutput` reports
    name = "sink"
    #: whether the outside world keys writes by the record's origin (a second write of
    #: a record replaces the first)
    keyed = False
    #: the outside world this sink writes to (:class:`ExternalOutput` binds it; a class
    #: attribute, so a sink that resets itself by calling ``__init__`` stays bound)
    world: ExternalOutput | None = None

    def write(self, origin: Origin) -> None:
        """Make the record ``origin`` visible to the outside world, now."""
        if self.world is None:
            raise SinkError("this sink writes to no job's output yet (StreamJob binds it)")
        self.world.write(origin)

    def invoke(self, sink: str, origin: Origin) -> None:
        """A record reached the sink operator ``sink``."""
        raise NotImplementedError(f"{type(self).__name__} must say what invoke does")

    def pre_commit(self, sink: str, checkpoint: str) -> None:
        """``sink`` recorded its state for ``checkpoint``."""

    def commit(self, checkpoint: str) -> None:
        """``checkpoint`` COMPLETED."""

    def abort(self) -> None:
        """The job was restored: what was not written comes again."""


class PlainSink(Sink):
    """Each record written when it arrives."""

    name = "plain"

    def invoke(self, sink: str, origin: Origin) -> None:
        self.write(origin)


class IdempotentSink(PlainSink):
    """Each record written when it arrives, keyed by its origin."""

    name = "idempotent"
    keyed = True


class TransactionalSink(Sink):
    """Two-phase commit: a transaction per sink operator and checkpoint, pre-committed
    when the operator records its state, committed when the checkpoint completes
    (with every earlier one still waiting, which a FAILED checkpoint leaves), aborted
    by a restore."""

    name = "transactional"

    def __init__(self) -> None:
        #: per sink operator, its open transaction
        self.open: dict[str, list[Origin]] = {}
        #: per checkpoint, in the order pre-committed: the records of its transactions
        self.precommitted: dict[str, list[Origin]] = {}

    def invoke(self, sink: str, origin: Origin) -> None:
        self.open.setdefault(sink, []).append(origin)

    def pre_commit(self, sink: str, checkpoint: str) -> None:
        self.precommitted.setdefault(checkpoint, []).extend(self.open.pop(sink, []))

    def commit(self, checkpoint: str) -> None:
        if checkpoint not in self.precommitted:
            return
        for cid in list(self.precommitted):
            for origin in self.precommitted.pop(cid):
                self.write(origin)
            if cid == checkpoint:
                break

    def abort(self) -> None:
        self.open.clear()
        self.precommitted.clear()


#: the engine's sinks, by name
SINK_CLASSES: dict[str, type[Sink]] = {
    s.name: s for s in (PlainSink, IdempotentSink, TransactionalSink)
}
SINKS = tuple(SINK_CLASSES)


class ExternalOutput:
    """The outside world a job's sink writes to: what became visible, and when.

    >>> out = ExternalOutput(TransactionalSink())
    >>> out.arrived("K", ("S1", 0), step=3)
    >>> out.visible_output()
    Counter()
    >>> out.state_recorded("K", "c1", step=5)
    >>> out.checkpoint_completed("c1", step=9)
    >>> out.visible_output(), out.latencies()
    (Counter({('S1', 0): 1}), [6])
    """

    def __init__(self, sink: Sink | str = "plain") -> None:
        if isinstance(sink, str):
            if sink not in SINK_CLASSES:
                raise ValueError(f"unknown sink {sink!r}: expected one of {', '.join(SINKS)}")
            sink = SINK_CLASSES[sink]()
        self.sink = sink
        sink.world = self
        self.mode = sink.name
        #: every write, in the order the outside world saw it
        self.writes: list[Write] = []
        #: records that reached a sink and are not written yet: origin -> arrival steps
        self._unwritten: dict[Origin, deque[int]] = {}
        #: records not written yet when a restore came (their transactions aborted)
        self.aborted = 0
        self._step = 0

    def arrived(self, sink: str, origin: Origin, step: int) -> None:
        """A record reached the sink operator ``sink`` at ``step``."""
        self._step = step
        self._unwritten.setdefault(origin, deque()).append(step)
        self.sink.invoke(sink, origin)

    def state_recorded(self, sink: str, checkpoint: str, step: int) -> None:
        """``sink`` recorded its state for ``checkpoint`` at ``step``."""
        self._step = step
        self.sink.pre_commit(sink, checkpoint)

    def checkpoint_completed(self, checkpoint: str, step: int) -> None:
        """``checkpoint`` COMPLETED at ``step``."""
        self._step = step
        self.sink.commit(checkpoint)

    def restored(self, step: int) -> None:
        """The job was restored at ``step``: what was not written comes again."""
        self._step = step
        self.sink.abort()
        self.aborted += sum(map(len, self._unwritten.values()))
        self._unwritten.clear()

    def write(self, origin: Origin) -> None:
        """The sink makes ``origin`` visible now."""
        try:
            origin = (str(origin[0]), int(origin[1]))
        except (TypeError, ValueError, IndexError):
            raise SinkError(
                f"the sink wrote {origin!r}, which is no record's origin: write the origin "
                "invoke was given, e.g. ('S1', 3)"
            ) from None
        waiting = self._unwritten.get(origin)
        if not waiting:
            raise SinkError(
                f"the sink wrote record {origin[0]}#{origin[1]}, which is not waiting to "
                "be written: it has not reached a sink since the last restore, or it was "
                "written already"
            )
        arrived = waiting.popleft()
        if not waiting:
            del self._unwritten[origin]
        self.writes.append(Write(origin, arrived, self._step))

    def waiting(self) -> bool:
        """Whether records that reached a sink are not visible yet."""
        return bool(self._unwritten)

    def visible_output(self) -> Counter[Origin]:
        """How many times the outside world sees each record: for a keyed sink, a second
        write of a record replaces the first."""
        seen = Counter(w.origin for w in self.writes)
        if self.sink.keyed:
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

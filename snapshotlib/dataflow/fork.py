"""Fork and copy-on-write: a streaming job run as one node, snapshotted the way Redis
writes an RDB file.

At a checkpoint the node forks. The child holds an image of the parent's memory as it
was at that instant and writes it out, while the parent goes on processing. The two
share their memory pages until the parent writes one: that page is then copied once
(copy-on-write), so the snapshot costs extra memory and copy time in proportion to the
pages the parent writes *while the child is writing*. :class:`ForkSnapshot` runs this
on a :class:`~snapshotlib.dataflow.StreamJob`; :class:`CowModel` prices the pages, and
:func:`fork_costs` reads the state updates of the same run to count them.

The model's assumptions:

* **One node.** Every operator and every channel of the job lives in the memory of one
  process. The image is taken in one instant, so it is a consistent cut with no
  protocol at all, and it holds the records queued in the channels: a restore puts them
  back. (This is what "Single Node" means in the production lesson's table.)
* **Memory layout.** The operators' state is laid out once, at fixed addresses, packed
  in operator order: a source's offset (8 bytes), a keyed count's table of 16-byte
  entries (one per key of the job's input, in key order), a sink's output log of
  ``record_bytes`` per record (room for every record of the input). Stateless
  operators take none. Each state update writes one entry; the pages it touches are
  the pages its bytes lie on (an entry may straddle two).
* **Queues.** A queued record is written once into freshly allocated memory and freed
  when delivered, so queues cause no copies (optimistic: a real allocator reuses
  freed memory and writes its own metadata).
* **Write-out.** The child writes the image (the operators' state as recorded, plus the
  queued records) at ``write_bytes_per_step`` bytes per step; the checkpoint completes
  when it has written everything, and fails if the node crashes before that. Time
  is the parent's steps: a write-out still under way when the job has nothing left to
  do never completes.
* **Copies.** The first write to a page during the write-out copies it (``page_bytes``
  of extra memory, held until the child exits); later writes to it copy nothing. A
  copy takes ``page_bytes / copy_bytes_per_step`` steps, which the parent spends
  stalled (reported, not simulated: the run's schedule is the same as without
  snapshots). The fork call itself (copying page tables) is taken as free.
* **Defaults.** 4 KiB pages; the child writes 200 bytes per step (one record's worth,
  what a channel carries per step); a page copy takes one step.

>>> from snapshotlib.dataflow import StreamJob, word_count
>>> job = StreamJob(word_count(records=10), algorithm=ForkSnapshot, seed=1).run()
>>> costs = fork_costs(job)
>>> [c.checkpoint for c in costs], costs[0].state_pages
(['c1', 'c2'], 2)
>>> all(0 < c.pages_copied <= c.state_pages for c in costs)
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..algorithms.base import SnapshotAlgorithm, SnapshotError, SnapshotRecord
from ..algorithms.state import PLAIN
from ..trace import APP, INTERNAL, RECEIVE, PartDone, SnapshotComplete
from .app import DataflowApp, Record
from .graph import Dataflow

if TYPE_CHECKING:
    from ..algorithms.host import Host
    from ..simulator import Simulator
    from .job import StreamJob

#: bytes of one state entry: a source's offset, a count's (key, count) entry
OFFSET_BYTES, COUNT_BYTES = 8, 16


@dataclass(frozen=True)
class CowModel:
    """The prices of a fork snapshot (see the module docstring for the assumptions).

    >>> m = CowModel(page_bytes=100, copy_bytes_per_step=100)
    >>> m.pages(250), m.write_out_steps(1000), m.copy_steps(3)
    (3, 5, 3.0)
    >>> m.copied([(0, 8), (10, 16), (90, 16), (240, 200)], state_bytes=250)
    3
    >>> round(m.pages_touched(keys_written=3, state_pages=3), 3)
    2.111
    """

    page_bytes: int = 4096
    write_bytes_per_step: int = 200
    copy_bytes_per_step: int = 4096

    def __post_init__(self) -> None:
        for name in ("page_bytes", "write_bytes_per_step", "copy_bytes_per_step"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")

    def pages(self, state_bytes: int) -> int:
        """Pages that ``state_bytes`` of memory occupy."""
        return -(-state_bytes // self.page_bytes)

    def write_out_steps(self, image_bytes: int) -> int:
        """Steps the child takes to write an image of ``image_bytes`` (at least one)."""
        return max(1, -(-image_bytes // self.write_bytes_per_step))

    def copy_steps(self, pages_copied: int) -> float:
        """Steps the parent spends copying ``pages_copied`` pages."""
        return pages_copied * self.page_bytes / self.copy_bytes_per_step

    def copied(self, writes: Iterable[tuple[int, int]], state_bytes: int) -> int:
        """Pages copied when the parent makes ``writes`` (``(address, size)`` each)
        during one write-out over a state of ``state_bytes``: every page of the image
        written at least once, once. Bytes outside the image (memory allocated after
        the fork) are never copied."""
        page = self.page_bytes
        touched: set[int] = set()
        for address, size in writes:
            first, last = max(address, 0), min(address + size, state_bytes) - 1
            if first <= last:
                touched.update(range(first // page, last // page + 1))
        return len(touched)

    def pages_touched(self, keys_written: float, state_pages: int) -> float:
        """The pages expected to be touched when ``keys_written`` writes fall on keys
        spread uniformly over ``state_pages`` pages: ``P (1 - (1 - 1/P)^k)``. The
        deterministic estimate, for rates and sizes other than a run's."""
        if state_pages <= 0 or keys_written <= 0:
            return 0.0
        untouched: float = (1 - 1 / state_pages) ** keys_written
        return state_pages * (1 - untouched)

    def estimate(self, state_bytes: int, write_rate: float, duration: int) -> float:
        """Expected pages copied during a write-out of ``duration`` steps while the
        parent writes ``write_rate`` keys per step, spread uniformly over the state."""
        return self.pages_touched(write_rate * duration, self.pages(state_bytes))


@dataclass(frozen=True)
class StateLayout:
    """Where each operator's state entries lie in the node's memory (module docstring).

    >>> from snapshotlib.dataflow import word_count
    >>> layout = StateLayout.of(word_count(sources=1, counters=1, records=3, keys=2))
    >>> layout.size, layout.address("S1"), layout.address("C1", key="k1"), layout.address("K", n=2)
    (640, (0, 8), (24, 16), (440, 200))
    """

    starts: dict[str, int]
    keys: dict[str, int]
    size: int
    record_bytes: int
    kinds: dict[str, str]

    @classmethod
    def of(cls, flow: Dataflow, record_bytes: int = 200) -> StateLayout:
        keys = sorted({key for op in flow.operators for key, _ in op.records})
        total = sum(len(op.records) for op in flow.operators)
        sizes = {"source": OFFSET_BYTES, "count": COUNT_BYTES * len(keys),
                 "sink": record_bytes * total}  # fmt: skip
        starts, at = {}, 0
        for op in flow.operators:
            starts[op.name] = at
            at += sizes.get(op.kind, 0)
        kinds = {op.name: op.kind for op in flow.operators}
        return cls(starts, {k: i for i, k in enumerate(keys)}, at, record_bytes, kinds)

    def address(self, operator: str, key: str = "", n: int = 0) -> tuple[int, int] | None:
        """``(address, size)`` of the entry an update of ``operator`` writes: its offset,
        the entry of ``key``, or the ``n``-th record of its output; ``None`` for a
        stateless operator."""
        kind, start = self.kinds[operator], self.starts[operator]
        if kind == "source":
            return start, OFFSET_BYTES
        if kind == "count":
            return start + COUNT_BYTES * self.keys[key], COUNT_BYTES
        if kind == "sink":
            return start + self.record_bytes * n, self.record_bytes
        return None


class ForkSnapshot(SnapshotAlgorithm):
    """Fork the one node: every state and every queued record recorded in one instant;
    COMPLETED once the child has written them out (:class:`CowModel`), FAILED if the
    node crashes first. Sends no control message, blocks and pauses nothing.

    Use :meth:`with_model` for other prices: ``StreamJob(flow,
    algorithm=ForkSnapshot.with_model(CowModel(write_bytes_per_step=50)))``.
    """

    name = "fork"
    control_kind = "fork"
    watches_actions = True  # the write-out is timed in the parent's steps
    model: ClassVar[CowModel] = CowModel()
    state_fields: ClassVar[Mapping[str, str]] = {
        "app": PLAIN,
        "writing": PLAIN,
        "image_bytes": PLAIN,
        "written_at": PLAIN,
    }

    @classmethod
    def with_model(cls, model: CowModel) -> type[ForkSnapshot]:
        """A subclass pricing its snapshots with ``model``."""
        return type(cls.__name__, (cls,), {"model": model})

    def bind(self, host: Host) -> None:
        super().bind(host)
        # the price of a fork is a model of a simulated job's memory: simulator only
        app = self.sim.app
        if not isinstance(app, DataflowApp):
            raise SnapshotError("fork snapshots model the memory of a dataflow job")
        self.app: DataflowApp = app
        #: snapshot id -> steps of write-out left
        self.writing: dict[str, int] = {}
        #: snapshot id -> bytes of its image (state recorded plus queued records)
        self.image_bytes: dict[str, int] = {}
        #: snapshot id -> the trace index of the last action during its write-out
        self.written_at: dict[str, int] = {}

    def start(self, process: str, snapshot_id: str, action: int) -> None:
        rec = self.records.get(snapshot_id)
        if rec is not None:  # the node has forked for this snapshot already
            if process in rec.initiators:
                raise SnapshotError(f"{process} has already started {snapshot_id}")
            rec.initiators.append(process)
            return
        rec = self.new_record(snapshot_id)
        rec.initiators.append(process)
        host, app = self.host, self.app
        for p in host.network.processes:
            self.record_state(rec, p, action)
        queued = 0
        for ch in range(rec.n_channels):
            recorded = self.open_channel(rec, ch, action)
            recorded += [m for m in host.queued(ch) if host.message(m).kind == APP]
            queued += len(recorded)
        for p in host.network.processes:  # a process with no inputs is done already
            self.note_progress(rec, p, action)
        state = sum(app.state_bytes(p, s) for p, s in rec.states.items())
        self.image_bytes[snapshot_id] = state + queued * app.record_bytes
        self.writing[snapshot_id] = self.model.write_out_steps(self.image_bytes[snapshot_id])

    def before_app_action(self, process: str) -> None:
        for snapshot_id in list(self.writing):
            self.writing[snapshot_id] -= 1
            if self.writing[snapshot_id] == 0:  # the child writes its last bytes now
                del self.writing[snapshot_id]
                at = self.written_at[snapshot_id] = self.host.time
                self._written(self.records[snapshot_id], at)

    def _written(self, rec: SnapshotRecord, at: int) -> None:
        """The image is on disk: every channel's recording closes, so every part not yet
        done (those of processes with inputs), and the snapshot, are done at once (trace
        index ``at``)."""
        host = self.host
        for ch in range(rec.n_channels):
            self.close_channel(rec, ch, at)
        for p in host.network.processes:
            if host.input_channels(p):
                host.event(PartDone(at, rec.id, p))
        host.event(SnapshotComplete(at, rec.id))

    def discard(self, snapshot_id: str) -> None:
        super().discard(snapshot_id)
        self.writing.pop(snapshot_id, None)


@dataclass(frozen=True)
class CowCost:
    """What one fork snapshot cost, measured on a run.

    Attributes
    ----------
    duration
        Steps of write-out (the checkpoint's duration).
    writes
        State updates the parent made during the write-out.
    write_rate
        ``writes / duration``.
    state_pages
        Pages of the node's state (the most that can be copied).
    pages_copied, copy_bytes, copy_steps
        Pages copied, the extra memory they take, the steps spent copying them.
    """

    checkpoint: str
    duration: int
    image_bytes: int
    writes: int
    write_rate: float
    state_pages: int
    pages_copied: int
    copy_bytes: int
    copy_steps: float


def state_writes(sim: Simulator, layout: StateLayout) -> list[tuple[int, int, int]]:
    """``(trace index, address, size)`` of every state update of a run, in order: a
    source's read, a count's record, a sink's record."""
    trace, kinds = sim.trace, layout.kinds
    sink_len = {p: len(sim.initial.get(p) or ()) for p, k in kinds.items() if k == "sink"}
    out = []
    for i, a in enumerate(trace.actions):
        kind = kinds.get(a.process)
        if a.kind == INTERNAL and kind == "source":
            where = layout.address(a.process)
        elif a.kind == RECEIVE and kind == "count":
            record: Record = trace.messages[a.message].payload
            where = layout.address(a.process, key=record.key)
        elif a.kind == RECEIVE and kind == "sink":
            where = layout.address(a.process, n=sink_len[a.process])
            sink_len[a.process] += 1
        else:
            continue
        if where is not None:
            out.append((i, *where))
    return out


def fork_costs(job: StreamJob, model: CowModel | None = None) -> list[CowCost]:
    """The copy-on-write cost of each completed fork snapshot of ``job`` (run with
    :class:`ForkSnapshot`), from the state updates its parent made while the child
    wrote: the updates of the same run, counted page by page. ``model`` prices the
    pages differently (page size, copy rate); the write-outs are the run's."""
    algo = job.sim.algorithm
    if not isinstance(algo, ForkSnapshot):
        raise TypeError(f"fork_costs needs a job run with ForkSnapshot, not {algo.name}")
    model = model if model is not None else algo.model
    layout = StateLayout.of(job.flow, job.app.record_bytes)
    writes = state_writes(job.sim, layout)
    out = []
    for sid, end in algo.written_at.items():
        start = min(job.sim.red_from(sid).values())
        during = [(a, n) for i, a, n in writes if start < i <= end]
        copied = model.copied(during, layout.size)
        duration = algo.model.write_out_steps(algo.image_bytes[sid])
        out.append(
            CowCost(
                checkpoint=sid,
                duration=duration,
                image_bytes=algo.image_bytes[sid],
                writes=len(during),
                write_rate=len(during) / duration,
                state_pages=model.pages(layout.size),
                pages_copied=copied,
                copy_bytes=copied * model.page_bytes,
                copy_steps=model.copy_steps(copied),
            )
        )
    return out

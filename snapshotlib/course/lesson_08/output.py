"""Exactly-once state is not exactly-once output: what a sink sent out before a crash.

A restore rolls every operator's state back, the sink's included, so the job's state ends
as in the failure-free run. What the sink had already passed to the outside world (rows
written to a database, messages sent to users) is not rolled back: the records it took
after the restored checkpoint come again, and a sink that writes each record as it
arrives writes them twice. Exactly-once output needs a sink whose writes become visible
only when the checkpoint that covers them completes (transactional), or whose second
write of a record changes nothing (idempotent).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dataflow import Dataflow, StreamJob


@dataclass(frozen=True)
class SinkOutput:
    """What one crashed and restored run gave: the job's final state against the
    failure-free run, and what a sink writing each record as it arrives sent out."""

    state_as_without_a_crash: bool
    written: int
    records: int
    written_twice: tuple[str, ...]

    def __str__(self) -> str:
        state = "as" if self.state_as_without_a_crash else "NOT as"
        twice = ", ".join(self.written_twice) or "none"
        return (
            f"state after the restore: {state} without a crash (exactly-once state)\n"
            f"written out by the sink as records arrived: {self.written} for "
            f"{self.records} records; written twice: {twice}"
        )


def sink_output(
    flow: Dataflow, variant: str = "aligned", seed: int = 0, crash_after: int = 100,
    process: str = "C1",
) -> SinkOutput:  # fmt: skip
    """Run ``flow`` for ``crash_after`` steps, crash ``process``, restore, run to the end;
    count what a plain sink (:mod:`snapshotlib.dataflow.sinks`) wrote out over the whole
    run."""
    clean = StreamJob(flow, variant, seed=seed).run()
    job = StreamJob(flow, variant, seed=seed, sink="plain").run(crash_at=(crash_after, process))
    written = job.output.visible_output()
    return SinkOutput(
        state_as_without_a_crash=job.outcome() == clean.outcome(),
        written=sum(written.values()),
        records=sum(clean.outcome().delivered.values()),
        written_twice=tuple(f"{s}#{i}" for (s, i), n in sorted(written.items()) if n > 1),
    )

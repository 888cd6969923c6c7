"""Crash and restore, measured: how a run's output differs from the failure-free one
(:func:`outcome_diff`), and every variant crashed at many moments
(:func:`recovery_sweep`). Lesson 08 shows these (``snapshotlib.course.lesson_08``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .graph import Dataflow
from .job import VARIANTS, Outcome, StreamJob


@dataclass(frozen=True)
class Diff:
    """How one outcome differs from another: records delivered more (or fewer) times,
    and counts that came out higher (or lower), per count operator and key."""

    extra: dict[str, int]
    missing: dict[str, int]
    counts: dict[str, dict[str, int]]

    @property
    def same(self) -> bool:
        return not self.extra and not self.missing and not self.counts

    def __str__(self) -> str:
        if self.same:
            return "the same output and the same counts as the failure-free run"
        lines = []
        if self.extra:
            items = ", ".join(f"{r} ×{n + 1}" for r, n in self.extra.items())
            lines.append(f"delivered more than once: {items} ({sum(self.extra.values())} extra)")
        if self.missing:
            items = ", ".join(f"{r} (-{n})" for r, n in self.missing.items())
            lines.append(f"missing from the output: {items}")
        for op, keys in self.counts.items():
            items = ", ".join(f"{k} {d:+d}" for k, d in keys.items())
            lines.append(f"{op}'s counts: {items}")
        if not self.counts:
            lines.append("every count as in the failure-free run")
        return "\n".join(lines)


def outcome_diff(reference: Outcome, other: Outcome) -> Diff:
    """``other`` against ``reference`` (the failure-free run)."""
    extra = {f"{s}#{i}": n for (s, i), n in sorted((other.delivered - reference.delivered).items())}
    missing = {
        f"{s}#{i}": n for (s, i), n in sorted((reference.delivered - other.delivered).items())
    }
    counts: dict[str, dict[str, int]] = {}
    for op in sorted(set(reference.counts) | set(other.counts)):
        mine, theirs = other.counts.get(op, {}), reference.counts.get(op, {})
        keys = {k: mine.get(k, 0) - theirs.get(k, 0) for k in sorted(set(mine) | set(theirs))}
        keys = {k: d for k, d in keys.items() if d}
        if keys:
            counts[op] = keys
    return Diff(extra, missing, counts)


@dataclass(frozen=True)
class Recovery:
    """One variant crashed at many moments: how many runs restored from a checkpoint
    (the others from the start), how many came out as the failure-free run, and how the
    at-least-once duplicates and losses compare with the restore's prediction."""

    variant: str
    runs: int
    from_checkpoint: int
    same_output: int
    with_duplicates: int
    duplicates: int
    as_predicted: int
    only_duplicates: int


def recovery_sweep(
    flow: Dataflow,
    seeds: Iterable[int] = range(15),
    crash_steps: Iterable[int] = (40, 80, 120),
    variants: Sequence[str] = VARIANTS,
) -> list[Recovery]:
    """For each seed and each of ``crash_steps``, crash an operator (the seeds take the
    operators that are not sources in turn), restore, run to the end, and compare with
    the failure-free run of the same seed.

    ``only_duplicates`` counts the runs whose output differs from the failure-free one
    by duplicated deliveries alone (nothing missing); ``as_predicted`` those whose
    duplicates and missing records are exactly the ones the restore predicted (records
    that crossed a barrier; records on a back edge at-least-once does not log).
    """
    seeds, steps = list(seeds), list(crash_steps)
    ops = [op.name for op in flow.operators if op.kind != "source"]
    out = []
    for variant in variants:
        runs = restored = same = with_dups = dups = predicted = only = 0
        for seed in seeds:
            clean = StreamJob(flow, variant, seed=seed).run().outcome()
            op = ops[seed % len(ops)]
            for step in steps:
                job = StreamJob(flow, variant, seed=seed).run(crash_at=(step, op))
                if not job.restores:
                    continue  # the job ended before the crash step
                runs += 1
                info = job.restores[0]
                restored += info["from"] is not None
                got = job.outcome()
                diff = outcome_diff(clean, got)
                same += diff.same
                found = got.duplicates
                with_dups += bool(found)
                dups += sum(n - 1 for n in found.values())
                predicted += got.as_predicted(clean, info)
                only += not diff.missing and diff.extra == {
                    f"{s}#{i}": n - 1 for (s, i), n in found.items()
                }
        out.append(Recovery(variant, runs, restored, same, with_dups, dups, predicted, only))
    return out

"""Lesson 09, cost at scale: the try-it's feedback, and the lesson's claims about its
sweep, checked on the lesson's own configuration (run in this process, not on Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from snapshotlib.course import lesson_09
from snapshotlib.sweeps import parse_config_text, run_point, summarize

#: the model must match the simulated slope within this fraction
TOLERANCE = 0.10


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    sweep = parse_config_text(lesson_09.SWEEP_TOML, "lesson-09.toml")
    return [run_point(p) for p in sweep.points()]


@pytest.fixture(scope="module")
def cells(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return summarize(rows)


def test_the_sweep_runs_without_errors(rows: list[dict[str, Any]]) -> None:
    assert len(rows) == 1400
    assert all(r["error"] is None for r in rows)


def test_recorded_bytes_follow_the_models_slope(rows: list[dict[str, Any]]) -> None:
    means = lesson_09.mean_by(
        rows, "marker_delay", "recorded_bytes", algorithm="chandy-lamport", fifo=True,
        message_delay=1,
    )  # fmt: skip
    intercept, slope = lesson_09.fit_line(list(means), list(means.values()))
    model = lesson_09.model_slope(rate=2, message_bytes=200)
    assert abs(slope - model) <= TOLERANCE * model
    for d, b in means.items():
        assert abs(b - (intercept + model * d)) <= TOLERANCE * b


def test_barrier_variants_record_nothing_or_a_constant(rows: list[dict[str, Any]]) -> None:
    for variant in ("aligned", "at-least-once"):
        assert set(lesson_09.mean_by(rows, "marker_delay", "recorded_bytes", algorithm=variant)
                   .values()) == {0.0}  # fmt: skip
    unaligned = lesson_09.mean_by(rows, "marker_delay", "recorded_bytes", algorithm="unaligned")
    assert len(set(unaligned.values())) == 1


def test_the_model_scaled_up_gives_the_production_lessons_numbers() -> None:
    s = lesson_09.SEED_000
    assert s.records_per_channel == 100_000
    assert s.bytes_per_channel == 20_000_000
    assert s.per_node_bytes == 1_980_000_000


def test_naive_clock_snapshots_are_consistent_at_no_drift_and_worse_with_more(
    cells: list[dict[str, Any]],
) -> None:
    rates = lesson_09.inconsistency_rates(cells, "drift", algorithm="clock")
    assert rates[0.0] == 0.0
    values = list(rates.values())
    assert values == sorted(values)
    assert values[-1] > 0.9


def test_chandy_lamport_is_always_consistent_on_fifo_and_not_on_non_fifo(
    cells: list[dict[str, Any]],
) -> None:
    fifo = lesson_09.inconsistency_rates(
        cells, "message_delay", algorithm="chandy-lamport", marker_delay=3, fifo=True
    )
    other = lesson_09.inconsistency_rates(
        cells, "message_delay", algorithm="chandy-lamport", marker_delay=3, fifo=False
    )
    assert set(fifo.values()) == {0.0}
    assert all(r > 0 for r in other.values())


def test_the_try_it_accepts_the_models_answer_and_hints_at_mistakes() -> None:
    assert lesson_09.check_node_buffer(195_000_000).ok
    assert not lesson_09.check_node_buffer(None).ok
    assert "megabytes" in str(lesson_09.check_node_buffer(195))
    assert "no channel to itself" in str(lesson_09.check_node_buffer(200_000_000))
    assert "whole cluster" in str(lesson_09.check_node_buffer(40 * 39 * 5_000_000))


def test_the_example_sweep_file_is_the_lessons_sweep() -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "lesson-09.toml"
    assert example.read_text() == lesson_09.SWEEP_TOML

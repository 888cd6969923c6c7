"""Lesson 09, cost at scale: the try-it's feedback, the lesson's claims about its sweep
(checked on the lesson's own configuration, run in this process, not on Spark), and
the lesson running without Spark.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from tryit_support import find_try_it, given_away, goal_and_minutes, load, shown, try_it_variables

from snapshotlib.course import lesson_09
from snapshotlib.sweeps import parse_config_text, run_point, summarize

#: the model must match the simulated slope within this fraction
TOLERANCE = 0.10
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    sweep = parse_config_text(lesson_09.SWEEP_TOML, "lesson-09.toml")
    return [run_point(p) for p in sweep.points()]


@pytest.fixture(scope="module")
def cells(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return summarize(rows)


def test_the_sweep_runs_without_errors(rows: list[dict[str, Any]]) -> None:
    assert len(rows) == 1720
    assert all(r["error"] is None for r in rows)


def test_recorded_bytes_follow_the_models_slope(rows: list[dict[str, Any]]) -> None:
    means = lesson_09.mean_by(
        rows, "marker_delay", "recorded_bytes", algorithm="chandy-lamport", fifo=True,
        message_delay=1, rate=2,
    )  # fmt: skip
    assert list(means) == [1, 2, 4, 8, 16]
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


def test_the_model_scaled_up_gives_the_design_lessons_numbers_for_the_initiator() -> None:
    s = lesson_09.DESIGN_CLUSTER
    assert s.records_per_channel == 100_000
    assert s.bytes_per_channel == 20_000_000
    assert s.initiator_bytes == 1_980_000_000  # 99 inputs: the text's figure
    assert s.other_node_bytes == 1_960_000_000  # 98: the first marker's channel is empty


def test_naive_clock_snapshots_are_consistent_at_no_drift_and_worse_with_more(
    cells: list[dict[str, Any]],
) -> None:
    rates = lesson_09.inconsistency_rates(cells, "drift", algorithm="clock")
    assert rates[0.0] == 0.0
    values = list(rates.values())
    assert values == sorted(values)
    assert values[-1] > 0.9


def reordering(cells: list[dict[str, Any]], fifo: bool) -> dict[Any, float]:
    return lesson_09.inconsistency_rates(
        cells, "message_delay", algorithm="chandy-lamport", marker_delay=1, rate=0.1, fifo=fifo
    )


def test_chandy_lamport_is_always_consistent_on_fifo_channels(
    cells: list[dict[str, Any]],
) -> None:
    fifo = reordering(cells, True)
    assert list(fifo) == [1, 2, 3, 4, 6, 8, 12, 16]
    assert set(fifo.values()) == {0.0}


def test_on_non_fifo_channels_inconsistency_rises_from_zero_with_the_spread(
    cells: list[dict[str, Any]],
) -> None:
    # what the lesson says: nothing breaks while no message can take longer than the
    # marker plus one tick; from then on more and more snapshots break, and at the
    # widest spread nearly all
    other = reordering(cells, False)
    values = list(other.values())
    assert other[1] == other[2] == 0.0
    assert 0 < other[3] < 0.5
    assert values == sorted(values)
    assert len(set(values)) >= 6  # a curve, not a step
    assert other[16] > 0.9


def test_on_non_fifo_channels_every_failure_is_a_missed_white_message(
    rows: list[dict[str, Any]],
) -> None:
    broken = [
        r for r in rows
        if r["algorithm"] == "chandy-lamport" and r["rate"] == 0.1 and not r["fifo"]
        and not r["consistent"]
    ]  # fmt: skip
    assert broken
    assert all(r["consistent_cut"] and not r["conserved"] for r in broken)
    assert all("missing from the recorded state" in r["reason"] for r in broken)


def test_the_grids_broken_snapshots_show_only_white_messages_missed(
    rows: list[dict[str, Any]],
) -> None:
    from snapshotlib.course.lesson_05 import MISSED

    assert lesson_09.failure_kinds(rows) == {MISSED}


def test_the_try_it_is_checked_against_the_rows_and_hints_without_the_answer(
    rows: list[dict[str, Any]],
) -> None:
    from snapshotlib.course.lesson_05 import MISSED, RED_IN_WHITE, RED_RECORDED

    right = lesson_09.check_failure_kinds(rows, {MISSED})
    assert right.ok and right.message.startswith("The failures this grid can show: right. MISSED.")
    assert lesson_09.check_failure_kinds(rows, MISSED).ok  # one name alone is a set of one
    wrongs = [({RED_IN_WHITE, MISSED}, "overtake a marker"),
              ({RED_RECORDED}, "overtake a marker"), (set(), "sent *before*")]  # fmt: skip
    for wrong, hint in wrongs:
        feedback = lesson_09.check_failure_kinds(rows, wrong)
        assert not feedback.ok and hint in feedback.hint
        assert "MISSED" not in str(feedback) and feedback.answer.startswith("MISSED.")
    assert "no answer yet" in str(lesson_09.check_failure_kinds(rows, None))
    assert "unknown failure" in lesson_09.check_failure_kinds(rows, {"lost"}).message
    assert "not a set" in lesson_09.check_failure_kinds(rows, 3).message


def test_the_failure_kinds_follow_the_rows_not_a_stored_answer() -> None:
    from snapshotlib.course.lesson_05 import MISSED, RED_IN_WHITE, RED_RECORDED

    grid = {"algorithm": "chandy-lamport", "rate": 0.1, "fifo": False, "consistent": False}
    made_up = [
        {**grid, "consistent_cut": False, "reason": "an inconsistent cut"},
        {**grid, "consistent_cut": True, "reason": "m is recorded on P1->P2 but was not in "
         "transit across the cut"},
        {**grid, "fifo": True, "consistent_cut": True, "reason": "missing from the recorded state"},
    ]  # fmt: skip
    assert lesson_09.failure_kinds(made_up) == {RED_IN_WHITE, RED_RECORDED}
    assert lesson_09.check_failure_kinds(made_up, {RED_IN_WHITE, RED_RECORDED}).ok
    assert not lesson_09.check_failure_kinds(made_up, {MISSED}).ok


def test_the_example_sweep_file_is_the_lessons_sweep() -> None:
    example = ROOT / "examples" / "sweeps" / "lesson-09.toml"
    assert example.read_text() == lesson_09.SWEEP_TOML


def test_model_table_compares_each_delay() -> None:
    table = lesson_09.model_table({1: 110.0, 2: 190.0}, 0.0, 100.0)
    assert table.column("difference") == ["+10.0%", "-5.0%"]


# --------------------------------------------------------- without Spark

SMALL = """\
[sweep]
name = "small"
seeds = 3
size = 3
duration = 10

[[grid]]
topology = "complete"
algorithm = ["chandy-lamport", "clock"]
"""


@pytest.fixture
def no_java(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without a Java runtime: no java on the PATH, no JAVA_HOME."""
    pytest.importorskip("pyspark")
    from snapshotlib.spark import session

    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(session.shutil, "which", lambda name: None)


def test_without_java_spark_is_reported_unavailable(no_java: None) -> None:
    spark, why = lesson_09.start_spark()
    assert spark is None
    assert "Java" in why


def test_without_java_the_lessons_sweep_runs_in_this_process(no_java: None, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    sweep = parse_config_text(SMALL, "small.toml")
    run = lesson_09.run_lesson_sweep(sweep, tmp_path / "results")
    assert not run.on_spark
    assert run.line.startswith("Spark is not available here (Spark needs a Java 17 runtime")
    assert "\n" not in run.line  # one visible line
    result = run.result
    assert result.master == "this process"
    # the files the lesson reads next are all there, with every execution
    rows = pd.read_parquet(result.rows)
    assert len(rows) == result.executions == 6
    assert len(pd.read_parquet(result.summary)) == 2
    manifest = json.loads((result.out / "manifest.json").read_text())
    assert manifest["executions"] == 6
    # the same rows as computed one by one
    expected = sorted((r["seed"], r["algorithm"], r["consistent"]) for r in map(
        run_point, sweep.points()))  # fmt: skip
    got = sorted(zip(rows.seed, rows.algorithm.astype(str), rows.consistent, strict=True))
    assert got == expected


def test_without_pyspark_the_lessons_sweep_runs_in_this_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("pyarrow")
    for name in [m for m in sys.modules if m == "pyspark" or m.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    run = lesson_09.run_lesson_sweep(parse_config_text(SMALL, "small.toml"), tmp_path)
    assert not run.on_spark and "pyspark cannot be imported" in run.line


def test_the_lesson_needs_no_spark_cell_of_its_own() -> None:
    nb = json.loads((ROOT / "notebooks" / "09_cost_at_scale.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "run_lesson_sweep(" in code
    assert "spark.stop()" not in code and "spark_session(" not in code


# ------------------------------------------------- the stored lesson, as read

TELLTALES = [r"a white message missing from a channel in [1-9]",
             r"Every broken snapshot of this grid is of that kind",
             r"by losing a white message", r"never overtakes that marker"]  # fmt: skip


def test_the_try_it_is_not_given_away_before_it_or_right_after_it(
    rows: list[dict[str, Any]],
) -> None:
    from snapshotlib.course.lesson_05 import MISSED

    lesson = load("09_cost_at_scale")
    assert try_it_variables(lesson) == ["failures_seen"]
    found = find_try_it(lesson, "failures_seen")
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, TELLTALES) == []
    seen = "\n".join(shown(c) for c in lesson["cells"])
    seen += lesson_09.check_failure_kinds(rows, {MISSED}).message
    assert sum(bool(re.search(p, seen)) for p in TELLTALES) == len(TELLTALES) - 1  # not the summary


def test_the_lesson_states_its_goal_and_time_at_the_top() -> None:
    goal, _ = goal_and_minutes(load("09_cost_at_scale"))
    assert "many executions" in goal


class _Session:
    """A stand-in for a Spark session: only stopped."""

    stopped = 0

    def stop(self) -> None:
        _Session.stopped += 1


def test_a_spark_failure_during_the_sweep_is_retried_once_then_run_in_this_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # on a loaded machine a session can start and its collect still fail (PySpark's
    # CANNOT_OPEN_SOCKET): the lesson must go on, saying so in one line
    pytest.importorskip("pyarrow")
    from snapshotlib.spark import anywhere
    from snapshotlib.spark import sweep as spark_sweep

    tries: list[int] = []

    def failing(*args: object, **kwargs: object) -> None:
        tries.append(1)
        raise RuntimeError("[CANNOT_OPEN_SOCKET] Can not open socket: connection refused.\nmore")

    monkeypatch.setattr(anywhere, "start_spark", lambda master="local[2]": (_Session(), ""))
    monkeypatch.setattr(spark_sweep, "run_sweep", failing)
    _Session.stopped = 0
    run = lesson_09.run_lesson_sweep(parse_config_text(SMALL, "small.toml"), tmp_path)
    assert len(tries) == 2 and _Session.stopped == 2  # tried again in a new session
    assert not run.on_spark and run.result.executions == 6
    assert run.line.startswith("Spark started but failed during the sweep twice ([CANNOT_OPEN")
    assert "\n" not in run.line


def test_a_spark_failure_that_a_new_session_gets_past_stays_on_spark(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from snapshotlib.spark import anywhere
    from snapshotlib.spark import sweep as spark_sweep
    from snapshotlib.spark.sweep import run_sweep_local

    tries: list[int] = []

    def once(sweep: object, out: Path, **kwargs: object) -> object:
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("connection refused")
        return run_sweep_local(sweep, out, progress=False)  # type: ignore[arg-type]

    pytest.importorskip("pyarrow")
    monkeypatch.setattr(anywhere, "start_spark", lambda master="local[2]": (_Session(), ""))
    monkeypatch.setattr(spark_sweep, "run_sweep", once)
    run = lesson_09.run_lesson_sweep(parse_config_text(SMALL, "small.toml"), tmp_path)
    assert len(tries) == 2 and run.on_spark and run.result.executions == 6

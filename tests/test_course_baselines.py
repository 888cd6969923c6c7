"""The stop-the-world and fork/copy-on-write rows of lesson 07's table: measured on the
lesson's job, seeds and crash, in the shape of the other rows."""

from __future__ import annotations

from dataclasses import asdict, fields

import pytest

from snapshotlib.algorithms import StopTheWorld
from snapshotlib.course.baselines import (
    FORK,
    STOP_THE_WORLD,
    BaselineCosts,
    baselines,
    baselines_table,
    pauses,
    tradeoff_rows,
)
from snapshotlib.course.lesson_07 import (
    CYCLIC,
    DAG,
    TRADEOFF_COLUMNS,
    Costs,
    costs_table,
    measure,
    tradeoff_table,
)
from snapshotlib.dataflow import CowModel, StreamJob, word_count

SEEDS, CRASH = range(40), (100, "C1")


@pytest.fixture(scope="module")
def rows() -> dict[str, BaselineCosts]:
    return {r.variant: r for r in baselines(DAG, seeds=SEEDS, crash_at=CRASH)}


@pytest.fixture(scope="module")
def lesson() -> dict[str, Costs]:
    return {c.variant: c for c in measure(DAG, seeds=SEEDS, crash_at=CRASH)}


def test_the_rows_have_every_column_of_the_lessons_rows(rows: dict[str, BaselineCosts]) -> None:
    assert list(rows) == [STOP_THE_WORLD, FORK]
    shared = [f.name for f in fields(Costs)]
    for row in rows.values():
        assert isinstance(row, Costs)
        assert list(asdict(row))[: len(shared)] == shared
        assert row.runs == len(SEEDS) and row.options == {"crash_at": CRASH}


def test_the_rows_append_to_the_lessons_table(
    rows: dict[str, BaselineCosts], lesson: dict[str, Costs]
) -> None:
    table = str(costs_table([*lesson.values(), *rows.values()])).splitlines()
    names = [line.split()[0] for line in table[1 : 1 + len(lesson) + len(rows)]]
    assert names == [*lesson, "stop-the-world", "fork"]


def test_stop_the_world_blocks_no_channel_and_stores_nothing_in_flight(
    rows: dict[str, BaselineCosts],
) -> None:
    stw = rows[STOP_THE_WORLD]
    assert stw.blocked == stw.peak_buffered == stw.peak_held == 0
    assert stw.inflight_bytes == stw.inflight_records == stw.replayed == 0
    assert stw.duplicates == stw.duplicates_without_crash == 0
    assert stw.same_output == stw.runs
    assert stw.control == len(DAG.network().channels)  # one drain message per channel


def test_stop_the_world_pays_with_its_pause(
    rows: dict[str, BaselineCosts], lesson: dict[str, Costs]
) -> None:
    stw = rows[STOP_THE_WORLD]
    assert stw.paused >= stw.latency > 0  # the sources stand still for a whole checkpoint
    assert stw.reads_forgone > 0 and 0 < stw.paused_share < 1
    assert stw.state_pages is None and stw.pages_copied is None
    for variant in lesson:  # no other variant stops a source
        assert pauses(StreamJob(DAG, variant, seed=0)).lengths == ()


def test_fork_stores_the_queues_and_pays_with_copied_pages(
    rows: dict[str, BaselineCosts],
) -> None:
    fork = rows[FORK]
    assert fork.control == fork.blocked == fork.paused == fork.reads_forgone == 0
    assert fork.inflight_records > 0  # the image holds what the channels held
    assert fork.same_output == fork.runs and fork.duplicates == 0
    assert fork.state_pages is not None and fork.pages_copied is not None
    assert 0 < fork.pages_copied <= fork.state_pages
    assert fork.copy_bytes == fork.pages_copied * 4096
    assert fork.copy_steps == fork.pages_copied  # a page copy takes a step by default


def test_a_slower_child_or_smaller_pages_copy_at_least_as_much() -> None:
    flow = word_count(records=12)
    seeds = range(6)
    default = baselines(flow, seeds=seeds, crash_at=(30, "C1"))[1]
    small = baselines(flow, seeds=seeds, crash_at=(30, "C1"), model=CowModel(page_bytes=256))[1]
    assert small.state_pages is not None and default.state_pages is not None
    assert small.state_pages > default.state_pages
    assert small.copy_bytes is not None and default.copy_bytes is not None
    assert small.copy_bytes <= default.copy_bytes  # finer pages copy fewer bytes


def test_the_stop_the_world_pause_is_measured_step_by_step() -> None:
    job = StreamJob(DAG, algorithm=StopTheWorld, seed=23)
    run = pauses(job)
    durations = [e.duration for e in job.coordinator.entries.values()]
    assert sum(run.lengths) == sum(d for d in durations if d is not None)
    assert run.steps == job.steps and run.share == sum(run.lengths) / job.steps


def test_the_extra_columns_show_a_dash_where_they_do_not_apply(
    rows: dict[str, BaselineCosts],
) -> None:
    table = baselines_table(list(rows.values()))
    assert table.column("variant") == [STOP_THE_WORLD, FORK]
    assert table.columns[1:4] == ("pause", "share of steps paused", "reads forgone")
    stw, fork = table.row(STOP_THE_WORLD), table.row(FORK)
    assert stw["share of steps paused"] == f"{rows[STOP_THE_WORLD].paused_share:.0%}"
    assert stw["pages copied"] == stw["extra memory"] == stw["copy steps"] == "-"
    assert fork["pages copied"] == "1 of 3" and fork["extra memory"] == "4,096 B"
    assert fork["pause"] == "0" and table.notes[0].startswith("Medians over 40 runs")


def test_the_baselines_draw_in_colours_of_their_own() -> None:
    pytest.importorskip("plotly")
    from snapshotlib.viz import style
    from snapshotlib.viz.costs import COLOURS, OTHER, costs_spec

    rows = [{"variant": STOP_THE_WORLD, "latency": 9}, {"variant": FORK, "latency": 17}]
    spec = costs_spec(rows, [("latency", "checkpoint duration")])
    colours = spec["data"][0]["marker"]["color"]
    assert colours == [COLOURS[STOP_THE_WORLD], COLOURS[FORK]]
    taken = {OTHER, style.RED_FILL, style.WHITE_FILL}
    assert len(set(COLOURS.values())) == len(COLOURS)
    assert not set(colours) & taken


def test_the_rows_join_the_corrected_tradeoff_table_with_measured_cells(
    rows: dict[str, BaselineCosts], lesson: dict[str, Costs]
) -> None:
    cyclic = measure(CYCLIC, seeds=SEEDS, crash_at=(50, "H"))
    base_cyclic = baselines(CYCLIC, seeds=SEEDS, crash_at=(50, "H"))
    bounded = measure(DAG, seeds=SEEDS, capacity=2, variants=("chandy-lamport", "aligned"))
    extra = tradeoff_rows(list(rows.values()), base_cyclic)
    table = tradeoff_table(list(lesson.values()), cyclic, bounded, extra=extra)
    assert table.columns == TRADEOFF_COLUMNS
    assert table.column("method") == [*lesson, STOP_THE_WORLD, FORK]
    stw, fork = table.row(STOP_THE_WORLD), table.row(FORK)
    assert stw["pauses inputs"].startswith("yes: every source")
    assert stw["stores in flight"] == "none: the channels are drained first"
    assert fork["pauses inputs"] == "no"
    assert fork["stores in flight"].startswith(f"{rows[FORK].inflight_bytes:,.0f} B on the DAG")
    assert (
        stw["after a crash"]
        == fork["after a crash"]
        == "exactly-once state (40/40 runs as without a crash)"
    )
    assert max(r.paused for r in base_cyclic if r.variant == STOP_THE_WORLD) > 0

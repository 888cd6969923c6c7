"""Claims the course once got wrong, each kept right by a run and by its text.

For each corrected claim: a run of the engine that shows the right fact, and a scan of
everything a learner reads (lessons, reference pages, exercises, the instructor guide)
that fails if the old wording comes back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from snapshotlib.course import lesson_07, lesson_08
from snapshotlib.course.baselines import baselines
from snapshotlib.course.baselines import tradeoff_rows as baseline_rows
from snapshotlib.course.lesson_07 import DAG
from snapshotlib.dataflow import iteration, word_count
from snapshotlib.formats.scenario import load_scenario, run_scenario

ROOT = Path(__file__).resolve().parents[1]
READ = [
    *sorted((ROOT / "notebooks").glob("*.ipynb")),
    *sorted((ROOT / "exercises").glob("*.ipynb")),
    *sorted((ROOT / "solutions").glob("*.ipynb")),
]


def course_text() -> dict[str, str]:
    """What a learner or an instructor reads, by file: markdown cells, with their line
    breaks folded to spaces so that a phrase split over two lines is still found."""
    texts = {}
    for path in READ:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        texts[str(path.relative_to(ROOT))] = re.sub(r"\s+", " ", text)
    for path in (ROOT / "docs").glob("*.md"):
        texts[str(path.relative_to(ROOT))] = re.sub(r"\s+", " ", path.read_text("utf-8"))
    return texts


TEXT = course_text()


def saying(phrase: str) -> list[str]:
    """The files whose text says ``phrase`` (case-insensitive)."""
    return [name for name, text in TEXT.items() if phrase.lower() in text.lower()]


# --------------------------------------------------------- capacity and recording


def test_a_channel_of_room_one_feeds_a_chandy_lamport_recording_of_ten() -> None:
    shown = lesson_07.recording_outgrows_its_channel(messages=10)
    assert shown.peak_in_channel == 1
    assert shown.recorded == 10
    assert shown.money_recorded == shown.money_in_system == 200
    assert lesson_07.recording_outgrows_its_channel(messages=25).recorded == 25


@pytest.mark.parametrize(
    "old",
    [
        "bounds what every variant holds",
        "bound what every variant holds",
        "bounds everything in the channels",
        "cap all of it",
        "bounds the other variants just as well",
        "Backpressure bounds the buffers",
        "With bounded channels nobody holds",
    ],
)
def test_no_text_says_channel_capacity_bounds_what_chandy_lamport_records(old: str) -> None:
    assert saying(old) == []


def test_the_lesson_the_errata_and_the_glossary_say_a_recording_receiver_never_blocks() -> None:
    for name in ("notebooks/07b_measuring_tradeoffs.ipynb", "notebooks/errata.ipynb",
                 "notebooks/glossary.ipynb"):  # fmt: skip
        assert "never blocks" in TEXT[name], name


# --------------------------------------------------- exactly-once state, not output


@pytest.mark.parametrize("variant", ["aligned", "unaligned", "chandy-lamport"])
def test_a_restore_gives_exactly_once_state_while_a_plain_sink_writes_records_twice(
    variant: str,
) -> None:
    shown = lesson_08.sink_output(DAG, variant, seed=0, crash_after=100, process="C1")
    assert shown.state_as_without_a_crash
    assert shown.written_twice and shown.written > shown.records


@pytest.mark.parametrize(
    "old",
    [
        "delivered once to the sink",
        "counted and delivered once, as in the run without a crash",
        "give the failure-free output",
    ],
)
def test_no_text_teaches_exactly_once_as_delivered_once_to_the_sink(old: str) -> None:
    assert saying(old) == []


def test_the_glossary_and_lesson_08_tell_state_from_output() -> None:
    for name in ("notebooks/glossary.ipynb", "notebooks/08_failures_and_recovery.ipynb"):
        said = TEXT[name].lower()
        assert "exactly-once *output*" in said or "exactly-once **output**" in said
        assert "transactional" in TEXT[name] and "idempotent" in TEXT[name]


# ------------------------------------------------------- engine artefacts as facts


def test_the_corrected_table_does_not_say_stop_the_world_needs_fifo() -> None:
    # the states are recorded when no record is in flight: the order channels delivered
    # in cannot matter (a drain is not a marker that must stay behind earlier records)
    dag = baselines(word_count(records=6), seeds=[0], crash_at=(20, "C1"))
    cyclic = baselines(iteration(records=4), seeds=[0], crash_at=(10, "H"))
    stop = next(r for r in baseline_rows(dag, cyclic) if r.method == "stop-the-world")
    assert not stop.topology.startswith("FIFO") and "any channel order" in stop.topology


def test_partial_order_reduction_is_justified_by_commuting_independent_actions() -> None:
    for name in ("notebooks/glossary.ipynb", "notebooks/04_dijkstra_proof.ipynb"):
        assert "Dijkstra's swap argument is why nothing is missed" not in TEXT[name]
        assert "Dijkstra's argument is what makes the shortcut safe" not in TEXT[name]
        assert "commute" in TEXT[name]


def test_at_least_once_on_a_cycle_is_said_to_differ_from_flinks() -> None:
    # the engine's at-least-once logs its back edges as the other variants do
    assert "at-least-once" in lesson_07.recorders(lesson_07.CYCLIC, seeds=[0])
    said = lesson_07.check_in_flight({"aligned"}, cyclic=True).answer or ""
    assert "Flink's at-least-once mode logs no back edge" in said
    assert "Flink's at-least-once mode logs none" in TEXT["notebooks/07a_barrier_snapshots.ipynb"]


# ----------------------------------------------------- recording is keeping a copy


def test_a_recorded_message_is_also_delivered_to_the_process() -> None:
    # lesson 02's run: P1 records y(3) on P3->P1 and its current state has the 3 tokens
    run = run_scenario(load_scenario("02-step-by-step"), until=8)
    assert [m.payload for m in run.snapshot("s1").channels["P3->P1"]] == [3]
    assert run.snapshot("s1").processes["P1"].state == 8
    assert run.state_of("P1") == 8 - 1 + 3  # sent b(1), took y(3)


def test_the_errata_name_the_java_model_that_records_instead_of_processing() -> None:
    errata = TEXT["notebooks/errata.ipynb"]
    assert "receiveMessage" in errata and "It must be both" in errata

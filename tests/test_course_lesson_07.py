"""Lesson 07 (07a, the four variants; 07b, measuring the trade-offs): the stories it
tells, the claims it makes about the measured tables, the audit of a system-design
lesson's trade-off table, the sizing arithmetic, and the feedback of its try-its.

The measurements are taken with the lesson's own parameters, so every sentence of the
lesson that reads a number off a table is checked here as an ordering or a bound.
"""

from __future__ import annotations

import html
import re

import pytest
from tryit_support import find_try_it, given_away, goal_and_minutes, load, shown, try_it_variables

from snapshotlib.checks import check_snapshot
from snapshotlib.course import Feedback
from snapshotlib.course.baselines import (
    FORK,
    STOP_THE_WORLD,
    BaselineCosts,
    baselines,
    tradeoff_rows,
)
from snapshotlib.course.lesson_07 import (
    CHAIN,
    CYCLIC,
    DAG,
    FIGURE_METRICS,
    TRY_IT,
    Costs,
    Sizing,
    TradeoffRow,
    backpressure,
    backpressure_table,
    check_in_flight,
    check_node_buffer,
    claims,
    claims_table,
    costs_table,
    flow_text,
    held,
    measure,
    recorded_text,
    recorders,
    recovery_table,
    story,
    tradeoff_table,
    unreachable_snapshot,
)
from snapshotlib.course.sizing import num
from snapshotlib.dataflow import EXACTLY_ONCE, VARIANTS, StreamJob, word_count

EVERY = set(VARIANTS)


@pytest.fixture(scope="module")
def dag() -> dict[str, Costs]:
    return {c.variant: c for c in measure(DAG, seeds=range(40), crash_at=(100, "C1"))}


@pytest.fixture(scope="module")
def cyclic() -> dict[str, Costs]:
    return {c.variant: c for c in measure(CYCLIC, seeds=range(40), crash_at=(50, "H"))}


@pytest.fixture(scope="module")
def bounded() -> dict[str, Costs]:
    costs = measure(DAG, seeds=range(40), capacity=2, variants=("chandy-lamport", "aligned"))
    return {c.variant: c for c in costs}


@pytest.fixture(scope="module")
def base() -> dict[str, BaselineCosts]:
    """The two baselines, with the lesson's job, seeds and crash."""
    return {r.variant: r for r in baselines(DAG, seeds=range(40), crash_at=(100, "C1"))}


@pytest.fixture(scope="module")
def base_cyclic() -> list[BaselineCosts]:
    return baselines(CYCLIC, seeds=range(40), crash_at=(50, "H"))


# ------------------------------------------------------------------ the jobs


def test_the_lessons_job_keeps_both_counters_busy() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run()
    counts = job.outcome().counts
    assert counts["C1"] and counts["C2"]
    assert set(counts["C1"]) == {"k4", "k5", "k6", "k7"}
    assert set(counts["C2"]) == {"k0", "k1", "k2", "k3"}


def test_the_cyclic_job_has_one_back_edge() -> None:
    assert flow_text(CYCLIC).splitlines()[-1] == "back edges: L->H"
    assert flow_text(DAG).splitlines()[-1] == "no cycle"


# --------------------------------------------------------------- the stories


def test_an_aligned_operator_blocks_the_first_input_and_records_nothing_in_flight() -> None:
    job = StreamJob(DAG, "aligned", seed=23)
    text = story(job, "C1", "c1")
    assert "C1 blocks S1->C1 and waits for the barrier on S2->C1" in text
    assert "S1#3 is sent on S1->C1, which is blocked: it waits there (1 waiting)" in text
    assert "unblocks S1->C1 (2 records waited)" in text
    assert text.splitlines()[-1].endswith("in flight on its inputs: nothing")


def test_chandy_lamport_records_what_arrives_before_the_marker_and_never_blocks() -> None:
    job = StreamJob(DAG, "chandy-lamport", seed=23)
    text = story(job, "C1", "c1")
    assert "blocks" not in text
    assert "C1 stops recording it: 1 record in flight (S2#3)" in text


def test_an_unaligned_barrier_overtakes_the_queued_output_and_it_is_recorded() -> None:
    job = StreamJob(DAG, "unaligned", seed=23)
    text = story(job, "C1", "c1")
    assert "the barrier overtakes what waits on C1->K: S1#0, S2#2 (recorded)" in text
    job.run()
    assert "in flight: S1->C1: S1#2; S2->C1: S2#3; C1->K: S1#0, S2#2" in recorded_text(job, "c1")


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_story_ends_when_its_checkpoint_fails_and_is_discarded(variant: str) -> None:
    # a time-to-live too short for the checkpoint: it fails while the barriers travel
    job = StreamJob(word_count(records=12), variant, seed=0, interval=5, ttl=8)
    text = story(job, "C2", "c1")
    last = text.splitlines()[-1]
    assert re.fullmatch(
        r"step \d+: c1 failed \(past its time-to-live \(8 steps\)\) and is discarded: "
        r"C2 has no part of it to finish",
        last,
    ), last
    assert job.coordinator.entry("c1").status == "FAILED"
    assert "c1" not in job.sim.algorithm.records


def test_an_unaligned_story_tells_the_overtaken_records_read_after_the_snapshot() -> None:
    # the first barrier's channel closes at once, holding what the barrier overtook at its
    # writer; those records arrive afterwards, and are told as recorded in flight
    job = StreamJob(word_count(records=12), "unaligned", seed=0, interval=5)
    text = story(job, "C2", "c1")
    assert "step 7: C2 reads S2#0 from S2->C2: recorded in flight" in text
    assert text.splitlines()[-1].endswith("S2->C2: S2#0, S2#1")


def test_at_least_once_names_the_records_that_cross_the_barrier() -> None:
    job = StreamJob(DAG, "at-least-once", seed=23)
    text = story(job, "C1", "c1")
    crossing = [line.split()[4] for line in text.splitlines() if "crosses the barrier" in line]
    assert crossing == ["S1#3", "S1#4"]
    crossed = {job.sim.trace.messages[m].label for m in job.sim.algorithm.crossed["c1"]}
    assert {"S1#3", "S1#4"} <= crossed  # crossings at C1 (others may cross at K)
    job.run()
    assert check_snapshot(job.sim, "c1").reason.startswith("message S1#3 (sent by S1")


def test_the_four_variants_start_the_lessons_checkpoint_from_the_same_moment() -> None:
    jobs = {v: StreamJob(DAG, v, seed=23).run() for v in VARIANTS}
    offsets = {v: (j.coordinator.entry("c1").snapshot.processes["S1"].state,
                   j.coordinator.entry("c1").snapshot.processes["S2"].state)
               for v, j in jobs.items()}  # fmt: skip
    assert set(offsets.values()) == {(3, 4)}
    latency = {v: j.coordinator.entry("c1").duration for v, j in jobs.items()}
    assert latency == {"chandy-lamport": 28, "aligned": 31, "unaligned": 16, "at-least-once": 54}


def test_on_the_cycle_the_back_edge_is_logged_until_its_barrier_comes_round() -> None:
    job = StreamJob(CYCLIC, "aligned", seed=0)
    text = story(job, "H", "c1")
    assert "it records what arrives on L->H until its barrier comes" in text
    assert "H stops recording it: 1 record in flight (S#4)" in text
    job.run()
    assert "in flight: L->H: S#4" in recorded_text(job, "c1")


def test_telling_a_story_does_not_change_the_run() -> None:
    told = StreamJob(DAG, "unaligned", seed=3)
    story(told, "C2", "c1")
    told.run()
    plain = StreamJob(DAG, "unaligned", seed=3).run()
    assert told.metrics() == plain.metrics()
    assert told.coordinator.rows() == plain.coordinator.rows()


def test_a_checkpoint_not_completed_has_nothing_to_show() -> None:
    job = StreamJob(DAG, "aligned", seed=0).run(max_steps=20)
    assert recorded_text(job, "c1") == "c1 is INITIATED: nothing to restore from"


# -------------------------------------------------- the measured table's claims


def test_only_chandy_lamport_and_unaligned_store_in_flight_bytes_on_the_dag(
    dag: dict[str, Costs],
) -> None:
    assert dag["aligned"].inflight_bytes == 0
    assert dag["at-least-once"].inflight_bytes == 0
    assert dag["chandy-lamport"].inflight_bytes > 0
    assert dag["unaligned"].inflight_bytes > 2 * dag["chandy-lamport"].inflight_bytes


def test_unaligned_checkpoints_complete_about_twice_as_fast(dag: dict[str, Costs]) -> None:
    unaligned = dag["unaligned"].latency
    for variant in ("chandy-lamport", "aligned", "at-least-once"):
        assert 1.8 * unaligned < dag[variant].latency
    assert dag["chandy-lamport"].latency < dag["aligned"].latency


def test_only_alignment_pauses_inputs(dag: dict[str, Costs]) -> None:
    for variant in ("chandy-lamport", "unaligned", "at-least-once"):
        assert dag[variant].blocked == 0 and dag[variant].peak_buffered == 0
    assert dag["aligned"].blocked > 80
    assert dag["aligned"].peak_buffered >= 7


def test_recording_a_channel_holds_its_records_as_alignment_holds_blocked_ones(
    dag: dict[str, Costs],
) -> None:
    # what the lesson says: Chandy-Lamport holds about as many records as aligned
    # barriers do (recorded rather than blocked), unaligned the most, at-least-once none
    cl, al = dag["chandy-lamport"].peak_held, dag["aligned"].peak_held
    assert cl > 0 and al > 0 and abs(cl - al) <= 1
    assert dag["unaligned"].peak_held > cl
    assert dag["at-least-once"].peak_held == 0


def test_held_counts_records_waiting_on_a_blocked_input() -> None:
    job = StreamJob(DAG, "aligned", seed=23).run(max_steps=20)
    assert job.sim.blocked and held(job) == 2  # S1#3, S1#4 wait on S1->C1
    job.run()
    assert not job.sim.blocked and held(job) == 0


def test_held_counts_recorded_records_until_the_checkpoint_completes() -> None:
    job = StreamJob(DAG, "chandy-lamport", seed=23).run(max_steps=30)
    # C1 recorded S2#3 on S2->C1 at step 28; c1 completes at step 43
    assert job.coordinator.entry("c1").status == "INITIATED"
    assert not job.sim.blocked and held(job) >= 1
    job.run()
    assert held(job) == 0


def test_unaligned_records_the_least_state_and_the_most_in_flight(dag: dict[str, Costs]) -> None:
    assert min(dag.values(), key=lambda c: c.state_bytes).variant == "unaligned"
    assert max(dag.values(), key=lambda c: c.inflight_bytes).variant == "unaligned"


def test_exactly_once_variants_recover_the_failure_free_output(dag: dict[str, Costs]) -> None:
    for variant in EXACTLY_ONCE:
        assert dag[variant].same_output == dag[variant].runs == 40
        assert dag[variant].max_duplicates == 0


def test_at_least_once_duplicates_only_after_a_restore_and_exactly_the_crossings(
    dag: dict[str, Costs],
) -> None:
    alo = dag["at-least-once"]
    assert alo.duplicates_without_crash == 0
    assert alo.runs_with_duplicates == 39
    assert alo.same_output == alo.runs - alo.runs_with_duplicates
    assert alo.as_predicted == alo.runs


def test_markers_and_barriers_are_one_per_channel_per_checkpoint(dag: dict[str, Costs]) -> None:
    channels = len(DAG.network().channels)
    assert {c.control for c in dag.values()} == {channels}


def test_on_the_cycle_the_exactly_once_variants_record_the_back_edge_and_recover(
    cyclic: dict[str, Costs],
) -> None:
    for variant in EXACTLY_ONCE:
        assert cyclic[variant].inflight_bytes > 0
        assert cyclic[variant].same_output == cyclic[variant].runs
        assert cyclic[variant].runs_with_losses == 0
    same = [
        (c.latency, c.state_bytes, c.inflight_bytes, c.blocked)
        for v, c in cyclic.items()
        if v in ("chandy-lamport", "aligned")
    ]
    assert len(set(same)) == 1  # nothing to align: aligned ABS is Chandy-Lamport here
    assert cyclic["aligned"].blocked == 0


def test_on_the_cycle_at_least_once_logs_no_back_edge_and_loses_records_as_predicted(
    cyclic: dict[str, Costs],
) -> None:
    alo = cyclic["at-least-once"]
    assert alo.inflight_bytes == 0  # as Flink's at-least-once mode
    assert alo.latency < cyclic["aligned"].latency  # no wait for the barrier to come round
    assert alo.runs_with_duplicates == 0  # one input apart from the back edge: no crossing
    assert (alo.same_output, alo.runs_with_losses, alo.as_predicted) == (8, 32, 40)
    text = " ".join(" ".join(shown(c) for c in load("07b_measuring_tradeoffs")["cells"]).split())
    assert "At-least-once does in 8 of the 40; in the other 32 the records" in text


def test_a_smaller_channel_capacity_lowers_every_buffer_of_the_lessons_job() -> None:
    # a lower figure, not a bound, for the recording variants: a writer that waits sends
    # less before its marker (tests/test_course_corrections.py shows a recording outgrow
    # its channel); blocked inputs are bounded by the room, as asserted first
    rows = backpressure(DAG, capacities=(None, 4, 2, 1), seeds=range(12))
    by = {(r["capacity"], r["variant"]): r for r in rows}
    buffered = [by[(c, "aligned")]["peak_buffered"] for c in (None, 4, 2, 1)]
    assert buffered == sorted(buffered, reverse=True) and buffered[-1] <= 2 < buffered[0]
    for variant in ("chandy-lamport", "aligned", "unaligned"):
        kept = [by[(c, variant)]["peak_held"] for c in (None, 4, 2, 1)]
        assert kept == sorted(kept, reverse=True) and kept[-1] < kept[0]
    for variant in ("chandy-lamport", "unaligned"):
        recorded = [by[(c, variant)]["inflight_bytes"] for c in (None, 4, 2, 1)]
        assert recorded == sorted(recorded, reverse=True) and recorded[-1] < recorded[0]
    assert all(r["finished"] == r["runs"] for r in rows)  # no deadlock: every record out
    table = backpressure_table(rows)
    assert table.column("channel capacity") == ["unbounded", "4", "2", "1"]
    assert table.columns[1:] == tuple(VARIANTS)
    assert backpressure_table(rows, "inflight_bytes").row("1")["at-least-once"] == "0 B"


def test_every_verdict_on_the_design_lessons_table_follows_from_the_numbers(
    dag: dict[str, Costs], cyclic: dict[str, Costs], bounded: dict[str, Costs]
) -> None:
    found = claims(list(dag.values()), list(cyclic.values()), list(bounded.values()))
    verdicts = {(c.method, c.column): c.verdict.split(":")[0] for c in found}
    assert verdicts == {
        ("Chandy-Lamport", "latency impact"): "agrees",
        ("ABS (aligned)", "latency impact"): "does not hold",
        ("Chandy-Lamport", "memory overhead"): "agrees",
        ("ABS (aligned)", "memory overhead"): "half right",
        ("ABS (aligned)", "prose"): "does not hold",
        ("both", "network overhead"): "agrees in direction, for another reason",
        ("Chandy-Lamport", "topology"): "does not hold",
        ("Chandy-Lamport", "prose"): "does not hold, and contradicts the table",
        ("ABS (aligned)", "topology"): "right for Flink in practice, wrong for the ABS paper",
        ("both", "recovery complexity"): "agrees",
    }
    assert bounded["aligned"].peak_held < dag["aligned"].peak_held
    table = claims_table(found)
    assert table.columns == ("claim", "the text says", "measured", "verdict")
    assert len(table.rows) == len(found)


def test_a_process_no_marker_reaches_never_records() -> None:
    snap = unreachable_snapshot()
    assert not snap.complete
    assert "P3" not in snap.processes
    assert snap.pending_channels == ("P3->P2",)


def test_the_corrected_table_has_a_measured_row_per_variant_and_takes_more_rows(
    dag: dict[str, Costs], cyclic: dict[str, Costs], bounded: dict[str, Costs]
) -> None:
    args = list(dag.values()), list(cyclic.values()), list(bounded.values())
    table = tradeoff_table(*args)
    assert table.column("method") == list(VARIANTS)
    assert table.row("aligned")["pauses inputs"].startswith("yes: ")
    assert table.row("chandy-lamport")["pauses inputs"] == "no"
    assert table.row("aligned")["stores in flight"].startswith("none on the DAG")
    assert table.row("at-least-once")["after a crash"].startswith("duplicates in 39/40")
    extra = TradeoffRow("stop-the-world", "yes", "none", "nothing", "any", "exactly once")
    longer = tradeoff_table(*args, extra=[extra])
    assert longer.rows[:-1] == table.rows
    assert longer.row("stop-the-world")["pauses inputs"] == "yes"


def test_the_tables_have_a_row_per_variant_and_a_legend(dag: dict[str, Costs]) -> None:
    for table in (costs_table(list(dag.values())), recovery_table(list(dag.values()))):
        assert table.column("variant") == list(VARIANTS)
        assert table.notes and len(table.columns) <= 6
    assert costs_table(list(dag.values())).notes[0] == "Medians over 40 runs (one per seed)."
    assert recovery_table(list(dag.values())).row("at-least-once")["same output"] == "1/40"


def test_stop_the_world_has_the_shortest_checkpoints_and_pays_with_its_sources(
    dag: dict[str, Costs], base: dict[str, BaselineCosts]
) -> None:
    # what lesson 07b says of it: the shortest checkpoints, nothing stored in flight,
    # the sources standing still most of the steps; and no input blocked by alignment
    stw = base[STOP_THE_WORLD]
    assert stw.latency < min(c.latency for c in dag.values())
    assert stw.inflight_bytes == stw.peak_held == stw.blocked == 0
    assert stw.paused_share > 0.5 and stw.reads_forgone > 0


def test_fork_pauses_nothing_stores_the_queues_and_copies_a_share_of_the_pages(
    dag: dict[str, Costs], base: dict[str, BaselineCosts]
) -> None:
    fork = base[FORK]
    assert fork.paused == fork.paused_share == fork.blocked == 0
    stored = fork.inflight_bytes
    assert dag["chandy-lamport"].inflight_bytes < stored < dag["unaligned"].inflight_bytes
    assert fork.pages_copied is not None and fork.state_pages is not None
    assert 0 < fork.pages_copied < fork.state_pages


def test_the_lessons_tradeoff_table_has_measured_stop_the_world_and_fork_rows(
    dag: dict[str, Costs],
    cyclic: dict[str, Costs],
    bounded: dict[str, Costs],
    base: dict[str, BaselineCosts],
    base_cyclic: list[BaselineCosts],
) -> None:
    extra = tradeoff_rows(list(base.values()), base_cyclic)
    table = tradeoff_table(
        list(dag.values()), list(cyclic.values()), list(bounded.values()), extra=extra
    )
    assert table.column("method") == [*VARIANTS, STOP_THE_WORLD, FORK]
    stw, fork = base[STOP_THE_WORLD], base[FORK]
    assert stw.paused > 0 and fork.pages_copied and fork.state_pages
    row = table.row(STOP_THE_WORLD)
    assert row["pauses inputs"] == (
        f"yes: every source, {num(stw.paused)} steps a pause ({stw.paused_share:.0%} of the steps)"
    )
    assert row["stores in flight"] == "none: the channels are drained first"
    assert row["holds for a checkpoint"].endswith(f"({num(stw.reads_forgone)} reads forgone a run)")
    row = table.row(FORK)
    assert row["pauses inputs"] == "no"
    assert row["stores in flight"].startswith(f"{num(fork.inflight_bytes)} B on the DAG; ")
    copied = f"{num(fork.pages_copied)} of {num(fork.state_pages)} pages copied"
    assert copied in row["holds for a checkpoint"]
    # the stored lesson shows these very rows in its corrected table (in two parts)
    parts = ("l07b-tradeoff", "l07b-tradeoff-b")
    cells = [c for c in load("07b_measuring_tradeoffs")["cells"] if c.get("id") in parts]
    assert len(cells) == 2
    shown_html = "".join("".join(c["outputs"][0]["data"]["text/html"]) for c in cells)
    for method in (STOP_THE_WORLD, FORK):
        for text in table.row(method).values():
            assert f">{html.escape(text)}</td>" in shown_html, (method, text)


# ------------------------------------------------------------------ sizing


def test_the_design_lessons_arithmetic_for_the_initiator_and_the_other_nodes() -> None:
    s = Sizing(nodes=100, rate=50_000, record_bytes=200, delay=2)
    assert s.channels == 9_900
    assert s.records_per_channel == 100_000
    assert s.bytes_per_channel == 20_000_000
    assert s.initiator_bytes == s.per_node_bytes == 1_980_000_000  # 99 inputs
    assert s.other_node_bytes == 1_960_000_000  # 98: the first marker's channel is empty
    assert s.recorded_channels == 99 + 99 * 98
    table = s.table()
    assert table.row("the initiator")["result"].endswith("(1.98 GB)")
    assert table.row("any other node")["result"].endswith("(1.96 GB)")


# ------------------------------------------------------------ try it: in flight


def test_the_recorders_are_found_by_running_the_variants() -> None:
    assert recorders(DAG) == {"chandy-lamport", "unaligned"}
    assert recorders(CHAIN) == {"unaligned"}
    assert recorders(CYCLIC) == EVERY - {"at-least-once"}  # Flink's: no back edge logged


def test_on_the_chain_only_unaligned_is_right_and_a_wrong_set_gets_the_chain_hint() -> None:
    right = check_in_flight({"unaligned"}, job="chain")
    assert right.ok and right.message.startswith("Right: on the chain, unaligned stores")
    for wrong in ({"chandy-lamport", "unaligned"}, set(), {"aligned"}):
        feedback = check_in_flight(wrong, job="chain")
        assert not feedback.ok and "one input" in feedback.hint
        assert "unaligned" not in str(feedback) or "unaligned" in wrong
        assert feedback.answer.startswith("unaligned. Every operator of a chain has one input")


@pytest.mark.parametrize(
    "answer", [{"chandy-lamport", "unaligned"}, ["unaligned", "chandy-lamport"]]
)
def test_naming_chandy_lamport_and_unaligned_is_right(answer: object) -> None:
    assert check_in_flight(answer).ok


def test_on_the_cycle_every_variant_but_at_least_once_is_right() -> None:
    feedback = check_in_flight(EVERY - {"at-least-once"}, job="cyclic")
    assert feedback.ok and "records the back edge L->H empty" in feedback.message
    every = check_in_flight(EVERY, job="cyclic")
    assert not every.ok and "one variant in your set stores none" in every.message
    assert "at-least-once" not in every.message + (every.hint or "")
    assert "Flink" in (every.hint or "")


@pytest.mark.parametrize(
    ("answer", "says", "hint"),
    [
        ({"chandy-lamport", "unaligned", "aligned"}, "one variant in your set stores none",
         "every input"),
        ({"chandy-lamport", "unaligned", "at-least-once"}, "one variant in your set stores none",
         "every input"),
        ({"chandy-lamport"}, "one variant that stores records in flight is missing",
         "read after"),
        ("unaligned", "one variant that stores records in flight is missing", "read after"),
        (set(), "2 variants that store records in flight are missing", "read after"),
        ({"aligned"}, "are missing; one variant in your set stores none", "read after"),
    ],
)  # fmt: skip
def test_a_wrong_set_says_how_it_is_wrong_and_where_to_look_without_the_answer(
    answer: object, says: str, hint: str
) -> None:
    feedback = check_in_flight(answer)
    assert not feedback.ok
    assert says in feedback.message
    assert hint in feedback.hint
    given = {answer} if isinstance(answer, str) else set(answer)
    shown = str(feedback).lower().replace("chandy-lamport", "cl")  # without the folded answer
    for name in set(VARIANTS) - given:
        short = "cl" if name == "chandy-lamport" else name
        assert not re.search(rf"(?<![a-z-]){short}(?![a-z-])", shown), name
    assert "chandy-lamport, unaligned" in feedback.answer


def test_forgetting_the_back_edge_gets_the_cycle_hint() -> None:
    feedback = check_in_flight({"chandy-lamport", "unaligned"}, job="cyclic")
    assert not feedback.ok
    assert "one variant that stores records in flight is missing" in feedback.message
    assert "back edge" in feedback.hint
    assert "aligned" not in str(feedback).replace("unaligned", "")
    assert feedback.answer.startswith("chandy-lamport, aligned, unaligned: each stores")
    assert "at-least-once records the back edge empty" in feedback.answer


@pytest.mark.parametrize(
    ("answer", "says"),
    [(None, "No answer"), (..., "No answer"), (5, "not a set"), ({"abs"}, "Unknown variant")],
)
def test_an_answer_that_is_not_a_set_of_variants_is_explained(answer: object, says: str) -> None:
    feedback = check_in_flight(answer)
    assert not feedback.ok and says in feedback.message and feedback.hint


# -------------------------------------------------------------- try it: sizing


@pytest.mark.parametrize("answer", [57_000_000, 57e6, 57_100_000])
def test_the_initiators_figure_is_accepted(answer: float) -> None:
    feedback = check_node_buffer(answer)
    assert feedback.ok
    assert feedback.message.startswith("Right, for the initiator: 19 input channels")
    assert TRY_IT.initiator_bytes == 57_000_000


@pytest.mark.parametrize("answer", [54_000_000, 54e6])
def test_the_figure_of_a_node_that_records_on_its_first_marker_is_accepted(answer: float) -> None:
    feedback = check_node_buffer(answer)
    assert feedback.ok
    assert "records on its first marker" in feedback.message
    assert "18 input channels" in feedback.message
    assert TRY_IT.other_node_bytes == 54_000_000


@pytest.mark.parametrize(
    ("answer", "says", "hint"),
    [
        (60_000_000, "counts 20 input channels", "no channel to itself"),
        (1_083_000_000, "whole cluster", "only its own input channels"),
        (1_140_000_000, "every channel of the cluster", "only its own input channels"),
        (3_000_000, "one channel", "several input channels"),
        (114_000, "number of records", "bytes"),
        (19_000_000, "one second's worth", "How long"),
        (57, "megabytes", "megabytes"),
        (0.057, "gigabytes", "gigabytes"),
        (12_345, "matches no step", "Multiply"),
    ],
)
def test_typical_slips_in_the_arithmetic_are_named_without_the_answer(
    answer: float, says: str, hint: str
) -> None:
    feedback = check_node_buffer(answer)
    assert not feedback.ok
    assert says in feedback.message and hint in feedback.hint
    assert "57,000,000" not in str(feedback) and "54,000,000" not in str(feedback)
    assert "57,000,000" in feedback.answer and "54,000,000" in feedback.answer


@pytest.mark.parametrize(
    ("answer", "says"), [(None, "No answer"), ("57 MB", "not a number"), (True, "not a number")]
)
def test_a_sizing_answer_must_be_a_number(answer: object, says: str) -> None:
    feedback = check_node_buffer(answer)
    assert not feedback.ok and says in feedback.message
    assert not feedback.answer  # nothing to give away while there is no answer


# -------------------------------------------------------------------- figures


def test_the_cost_figures_are_valid_plotly_with_a_panel_per_metric(dag: dict[str, Costs]) -> None:
    go = pytest.importorskip("plotly.graph_objects")
    from snapshotlib.viz import backpressure_figure, costs_figure
    from snapshotlib.viz.costs import METRICS

    fig = costs_figure(list(dag.values()))
    ours = costs_figure(list(dag.values()), FIGURE_METRICS)
    assert [a.text for a in ours.layout.annotations] == [title for _, title in FIGURE_METRICS]
    go.Figure(fig.to_dict())  # validates every property
    assert len(fig.data) == len(METRICS)
    assert [a.text for a in fig.layout.annotations] == [title for _, title in METRICS]
    latency = fig.data[0]
    assert latency.customdata == tuple(VARIANTS)
    assert latency.y == tuple(dag[v].latency for v in VARIANTS)
    rows = backpressure(DAG, capacities=(None, 1), seeds=range(2))
    bp = backpressure_figure(rows)
    go.Figure(bp.to_dict())
    assert bp.data[0].x == ("unbounded", "1")
    assert len(bp.data) == 3 * len(VARIANTS)


# ------------------------------------------------- the stored lessons, as read

LESSONS = ("07a_barrier_snapshots", "07b_measuring_tradeoffs")

#: per try-it (lesson, answer variable): texts that would give its answer away
TELLTALES = {
    ("07a_barrier_snapshots", "stores_in_flight_on_a_chain"): [
        r"(?i)only (the )?unaligned (barriers |variant |checkpoints )?stores?",
        r"on the chain, unaligned stores",
        r"(?i)chain[^.]*nothing (is )?(recorded|stored) in flight",
    ],
    ("07a_barrier_snapshots", "stores_in_flight_on_the_cycle"): [
        r"(?i)at-least-once[^.]*(logs no back edge|records (the|a) back edge[^.]* empty)",
        r"(?i)all but at-least-once",
        r"chandy-lamport, aligned, unaligned store",
    ],
    ("07b_measuring_tradeoffs", "node_buffer_bytes"): [
        r"57,000,000", r"57_000_000", r"\b57 MB", r"54,000,000", r"54_000_000", r"\b54 MB",
    ],
}  # fmt: skip


def right_answers() -> dict[tuple[str, str], Feedback]:
    return {
        ("07a_barrier_snapshots", "stores_in_flight_on_a_chain"): check_in_flight(
            {"unaligned"}, job="chain"
        ),
        ("07a_barrier_snapshots", "stores_in_flight_on_the_cycle"): check_in_flight(
            EVERY - {"at-least-once"}, job="cyclic"
        ),
        ("07b_measuring_tradeoffs", "node_buffer_bytes"): check_node_buffer(57_000_000),
    }


def test_every_try_it_has_a_right_answer_its_check_accepts() -> None:
    found = [(name, v) for name in LESSONS for v in try_it_variables(load(name))]
    assert found == list(TELLTALES) == list(right_answers())
    assert all(feedback.ok for feedback in right_answers().values())


@pytest.mark.parametrize(("name", "variable"), list(TELLTALES))
def test_no_try_it_is_given_away_before_it_or_right_after_it(name: str, variable: str) -> None:
    found = find_try_it(load(name), variable)
    assert "no answer yet" in found.placeholder.lower() and "Hint:" in found.placeholder
    assert given_away(found, TELLTALES[(name, variable)]) == []


def test_the_telltales_would_catch_the_answer_where_it_is_revealed() -> None:
    for (name, variable), feedback in right_answers().items():
        text = "\n".join(shown(c) for c in load(name)["cells"]) + "\n" + feedback.message
        assert any(re.search(p, text) for p in TELLTALES[(name, variable)]), variable


@pytest.mark.parametrize("name", LESSONS)
def test_each_part_states_its_goal_and_time_at_the_top(name: str) -> None:
    goal, _ = goal_and_minutes(load(name))
    assert goal
    assert ("variants" in goal) if name.startswith("07a") else ("costs" in goal)

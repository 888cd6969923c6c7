"""The one layout every view of a snapshot shares (``snapshotlib.snapshot_text``)."""

from __future__ import annotations

from snapshotlib import Deliver, Network, Send, Simulator, StartSnapshot
from snapshotlib.checks.true_state import true_state
from snapshotlib.snapshot_text import (
    CHANNEL,
    PROCESS,
    QUIET,
    SnapshotStyle,
    heading,
    snapshot_rows,
    snapshot_text,
)
from snapshotlib.workloads import complete

TOKENS = SnapshotStyle(process=lambda p, part: f"{part.state} tokens")


def started() -> Simulator:
    """P1 has recorded s1 and sent m to P2 after its marker; nothing delivered yet."""
    sim = Simulator(Network(["P1", "P2", "P3"], "ring"), "tokens", {"P1": 3})
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P1", "P2", 1, label="m"))
    return sim


def test_a_snapshot_in_progress_lists_every_process_and_channel_in_the_networks_order():
    sim = started()
    assert snapshot_text(sim, sim.snapshot("s1"), TOKENS).splitlines() == [
        "snapshot s1, initiated by P1: in progress",
        "  P1: 3 tokens",
        "  P2: not recorded yet",
        "  P3: not recorded yet",
        "  P1->P2: not recorded yet",
        "  P2->P3: not recorded yet",
        "  P3->P1: empty (still recording)",
    ]


def test_a_complete_snapshot_shows_each_recorded_channels_messages_by_the_style():
    sim = Simulator(Network(["P1", "P2"]), "tokens", {"P1": 2, "P2": 2})
    sim.step(Send("P2", "P1", 1, label="x"))
    sim.step(StartSnapshot("P1", "s1"))
    sim.run()
    style = SnapshotStyle(
        process=lambda p, part: f"{part.state} tokens",
        message=lambda m: f"{m.label}={m.payload}",
    )
    text = snapshot_text(sim, sim.snapshot("s1"), style)
    assert text.splitlines()[0] == "snapshot s1, initiated by P1: complete"
    assert "  P2->P1: x=1" in text.splitlines()
    assert "  P1->P2: empty" in text.splitlines()


def test_sections_title_the_processes_and_the_channels_once_each():
    sim = started()
    text = snapshot_text(sim, sim.snapshot("s1"), TOKENS, ("the processes:", "the channels:"))
    lines = text.splitlines()
    assert lines[1] == "the processes:" and lines[5] == "the channels:"
    assert lines.count("the processes:") == lines.count("the channels:") == 1


def test_a_large_network_folds_the_empty_and_the_unbegun_channels_into_a_line_each():
    sim = Simulator(complete(4), "tokens", {"P1": 1})
    sim.step(StartSnapshot("P1", "s1"))
    style = SnapshotStyle(process=TOKENS.process, quiet_over=6)
    rows = snapshot_rows(sim, sim.snapshot("s1"), style)
    # P1 records its three inputs (open, so listed); the other nine channels are not begun
    assert [(r.kind, r.name, r.open) for r in rows if r.kind == CHANNEL] == [
        (CHANNEL, "P2->P1", True),
        (CHANNEL, "P3->P1", True),
        (CHANNEL, "P4->P1", True),
    ]
    assert [(r.name, r.recorded) for r in rows if r.kind == QUIET] == [("9", False)]
    assert snapshot_text(sim, sim.snapshot("s1"), style).endswith(
        "  9 more channels: not recorded yet"
    )
    sim.run()
    text = snapshot_text(sim, sim.snapshot("s1"), style)
    assert text.endswith("  every other channel: empty (12)")


def test_rows_carry_the_recorded_part_and_whether_it_still_records_its_inputs():
    sim = started()
    rows = snapshot_rows(sim, sim.snapshot("s1"), TOKENS)
    p1 = next(r for r in rows if r.kind == PROCESS and r.name == "P1")
    assert p1.recorded and p1.open and p1.part is not None and p1.part.state == 3
    p2 = next(r for r in rows if r.kind == PROCESS and r.name == "P2")
    assert not p2.recorded and p2.part is None
    sim.run()
    assert not any(r.open for r in snapshot_rows(sim, sim.snapshot("s1"), TOKENS))


def test_a_true_state_has_no_initiator_and_is_headed_by_its_id():
    sim = started()
    sim.step(Deliver(sim.network.channel("P1", "P2")))  # P2's marker
    now = true_state(sim)
    assert heading(now) == now.id
    assert snapshot_text(sim, now, TOKENS).splitlines()[0] == now.id

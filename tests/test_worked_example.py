"""The worked example of seed 002 (Gupta's three-process run with events A..J).

P1 initiates right after B; its marker to P3 is fast and its marker to P2 slow. The
recorded state is P1 = A, B; P2 = F, G, H; P3 = I; channel P2->P1 holds the message
sent at H (and received at D); every other channel is empty.

The golden file ``tests/golden/worked-example.json`` holds the whole snapshot, the
colour of every action and message and the commutation result. After a deliberate
change, regenerate it with::

    UPDATE_GOLDEN=1 python3 -m pytest tests/test_worked_example.py

then read the diff against the seed text before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from snapshotlib import Simulator
from snapshotlib.checks import check_commutation, check_snapshot
from snapshotlib.colouring import colouring
from snapshotlib.formats.scenario import load_scenario, run_scenario
from snapshotlib.trace import APP, APP_KINDS

HERE = Path(__file__).resolve().parent
SCENARIO = HERE.parent / "examples" / "scenarios" / "worked-example.json"
GOLDEN = HERE / "golden" / "worked-example.json"


@pytest.fixture(scope="module")
def sim() -> Simulator:
    return run_scenario(load_scenario(SCENARIO))


def render(sim: Simulator) -> dict[str, Any]:
    """Everything the golden file pins down, as plain JSON data."""
    trace = sim.trace
    col = colouring(sim, "s1")
    result = check_commutation(sim, "s1")
    name = trace.action_name
    actions = [
        {
            "name": name(i),
            "process": a.process,
            "kind": a.kind,
            # only the computation's own actions are coloured (EWD 864a); markers and
            # snapshot starts belong to the algorithm
            "colour": col.action(i) if a.kind in APP_KINDS else None,
        }
        for i, a in enumerate(trace.actions)
    ]
    messages = {
        trace.message_name(m): {
            "from": name(rec.sent_by),
            "to": name(trace.received_by[m]) if trace.received_by[m] >= 0 else None,
            "colour": col.message(m),
        }
        for m, rec in enumerate(trace.messages)
        if rec.kind == APP
    }
    data = {
        "snapshot": sim.snapshot("s1").to_dict(sim.app),
        "actions": actions,
        "messages": messages,
        "commutation": {
            "holds": result.holds,
            "inversions": result.inversions,
            "original": [name(i) for i in result.original],
            "order": [name(i) for i in result.order],
            "swaps": [[name(s.red), name(s.white)] for s in result.swaps or ()],
        },
    }
    return json.loads(json.dumps(data))  # tuples become lists, as in the file


def test_p1_records_a_and_b(sim):
    assert sim.snapshot("s1").processes["P1"].events == ("A", "B")


def test_p2_records_f_g_and_h(sim):
    assert sim.snapshot("s1").processes["P2"].events == ("F", "G", "H")


def test_p3_records_i(sim):
    assert sim.snapshot("s1").processes["P3"].events == ("I",)


def test_d_the_receive_of_the_message_sent_at_h_is_not_recorded(sim):
    recorded = {e for r in sim.snapshot("s1").processes.values() for e in r.events}
    assert "D" not in recorded and "C" not in recorded


def test_channel_p2_to_p1_holds_the_message_sent_at_h(sim):
    (msg,) = sim.snapshot("s1").channels["P2->P1"]
    trace = sim.trace
    assert trace.action_name(trace.messages[msg.id].sent_by) == "H"
    assert trace.action_name(trace.received_by[msg.id]) == "D"


def test_every_other_channel_is_empty(sim):
    channels = sim.snapshot("s1").channels
    assert set(channels) == {"P1->P2", "P1->P3", "P2->P1", "P2->P3", "P3->P1", "P3->P2"}
    assert {c: m for c, m in channels.items() if c != "P2->P1"} == {
        c: () for c in channels if c != "P2->P1"
    }


def test_the_snapshot_is_complete_and_a_consistent_cut(sim):
    snap = sim.snapshot("s1")
    assert snap.complete and snap.initiators == ("P1",)
    assert check_snapshot(sim, "s1").ok


def test_p3_records_before_p2_as_in_the_seed(sim):
    red = colouring(sim, "s1").red_from
    assert red["P1"] < red["P3"] < red["P2"]


def test_snapshot_colours_and_commutation_match_the_golden_file(sim):
    got = render(sim)
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=2) + "\n", encoding="utf-8")
        pytest.skip(f"rewrote {GOLDEN.relative_to(HERE.parent)}: review the diff")
    assert GOLDEN.exists(), "no golden file: run with UPDATE_GOLDEN=1 (see the module docstring)"
    assert got == json.loads(GOLDEN.read_text(encoding="utf-8"))

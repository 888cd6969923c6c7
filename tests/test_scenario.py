"""Scenario files: every example runs, and every mistake is named with file and step."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from snapshotlib import ClockSnapshot, RandomOrder
from snapshotlib.checks import check_snapshot
from snapshotlib.formats.scenario import (
    RunStep,
    ScenarioError,
    load_scenario,
    parse_scenario,
    run_scenario,
)

EXAMPLES = sorted(
    (Path(__file__).resolve().parent.parent / "examples" / "scenarios").glob("*.json")
)


def write(tmp_path: Path, doc: object, name: str = "sc.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
    return path


def base(**fields) -> dict:
    doc = {"processes": ["P1", "P2"], "app": "tokens", "initial": {"P1": 2}, "steps": []}
    doc.update(fields)
    return doc


def load_error(tmp_path: Path, doc: object) -> str:
    path = write(tmp_path, doc)
    with pytest.raises(ScenarioError) as e:
        load_scenario(path)
    message = str(e.value)
    assert message.startswith(str(path)), message  # every error names the file
    return message


def run_error(tmp_path: Path, doc: object) -> str:
    path = write(tmp_path, doc)
    scenario = load_scenario(path)  # it parses: the problem only shows when it runs
    with pytest.raises(ScenarioError) as e:
        run_scenario(scenario)
    message = str(e.value)
    assert message.startswith(str(path)), message
    return message


# ------------------------------------------------------------------ examples


def test_there_are_example_scenarios():
    names = {p.stem for p in EXAMPLES}
    assert {"worked-example", "token-ring", "concurrent-snapshots", "non-fifo-breaks"} <= names


#: examples that take no snapshot: lesson 11's run, whose checkpoints the lesson gives
#: beside it (each process's own, taken without an algorithm)
WITHOUT_SNAPSHOTS = {"11-checkpoints"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_scenario_loads_and_runs_to_complete_snapshots(path):
    scenario = load_scenario(path)
    assert scenario.name == json.loads(path.read_text()).get("name", path.stem)
    assert scenario.source == str(path)
    sim = run_scenario(scenario)
    assert sim.time > 0
    snaps = sim.snapshots()
    if path.stem in WITHOUT_SNAPSHOTS:
        assert not snaps, path.stem
    else:
        assert snaps, "every example takes at least one snapshot"
    assert all(s.complete for s in snaps.values()), path.stem


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_running_an_example_twice_gives_the_same_trace(path):
    a = run_scenario(load_scenario(path))
    b = run_scenario(load_scenario(path))
    assert a.trace.actions == b.trace.actions and a.trace.messages == b.trace.messages


def test_examples_that_should_break_do_and_the_others_do_not():
    verdicts = {}
    for path in EXAMPLES:
        sim = run_scenario(load_scenario(path))
        verdicts[path.stem] = all(check_snapshot(sim, sid).ok for sid in sim.snapshots())
    meant_to_break = {"non-fifo-breaks", "clock-drift", "05-marker-overtakes-message"}
    assert {name for name, right in verdicts.items() if not right} == meant_to_break


def test_the_name_defaults_to_the_file_stem(tmp_path):
    path = write(tmp_path, base(), name="my-run.json")
    assert load_scenario(path).name == "my-run"


def test_run_scenario_can_stop_after_the_first_steps():
    worked = next(p for p in EXAMPLES if p.stem == "worked-example")
    sim = run_scenario(load_scenario(worked), until=4)
    assert [a.label for a in sim.trace.actions] == ["A", "B", "I", "s1"]
    assert set(sim.snapshot("s1").processes) == {"P1"}


def test_run_step_uses_the_named_scheduler_and_seed(tmp_path):
    doc = base(
        processes=["P1", "P2", "P3"],
        initial={"P1": 3},
        steps=[
            {"do": "send", "from": "P1", "to": "P2", "payload": 1},
            {"do": "send", "from": "P1", "to": "P3", "payload": 1},
            {"do": "snapshot", "at": "P2"},
            {"do": "run", "scheduler": "random", "seed": 4},
        ],
    )
    scenario = load_scenario(write(tmp_path, doc))
    assert scenario.steps[-1] == RunStep("random", 4)
    by_file = run_scenario(scenario)
    by_hand = scenario.simulator()
    for step in scenario.steps[:-1]:
        by_hand.step(step)
    by_hand.run(RandomOrder(4))
    assert by_file.trace.actions == by_hand.trace.actions


def test_deliver_may_name_the_receive_event_and_pick_by_message_or_marker(tmp_path):
    doc = base(
        fifo=False,
        steps=[
            {"do": "snapshot", "at": "P1", "id": "s1"},
            {"do": "send", "from": "P1", "to": "P2", "label": "a", "payload": 1},
            {"do": "send", "from": "P1", "to": "P2", "label": "b", "payload": 1},
            {"do": "deliver", "from": "P1", "to": "P2", "msg": "b", "label": "got-b"},
            {"do": "deliver", "from": "P1", "to": "P2", "marker": "s1"},
        ],
    )
    sim = run_scenario(load_scenario(write(tmp_path, doc)))
    kinds = [(a.kind, a.label) for a in sim.trace.actions[3:]]
    assert kinds == [("receive", "got-b"), ("control", None)]
    assert [sim.trace.messages[m].label for m in sim.in_flight("P1->P2")] == ["a"]


# ------------------------------------------------------------- file errors


def test_a_scenario_given_as_data_is_named_by_its_source():
    with pytest.raises(ScenarioError, match=r"^lesson-3 cell 2: unknown field\(s\) colour"):
        parse_scenario(base(colour="red"), source="lesson-3 cell 2")
    with pytest.raises(ScenarioError, match=r"^<scenario>: step 1: unknown 'do'"):
        parse_scenario(base(steps=[{"do": "jump"}]))


def test_a_missing_file_is_named(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: cannot read")):
        load_scenario(path)


def test_invalid_json_is_named_with_file_line_and_column(tmp_path):
    text = '{\n  "processes": ["P1", "P2"],\n  "steps": [,]\n}\n'
    message = load_error(tmp_path, text)
    assert re.search(r", line 3, column 13: invalid JSON: ", message), message


def test_top_level_must_be_an_object(tmp_path):
    assert "expected a JSON object at the top level" in load_error(tmp_path, [1, 2])


def test_unknown_top_level_field_is_named_with_the_allowed_ones(tmp_path):
    message = load_error(tmp_path, base(colour="red"))
    assert ": unknown field(s) colour; expected some of " in message
    assert "processes" in message and "steps" in message


@pytest.mark.parametrize("processes", [None, [], "P1"])
def test_processes_must_be_a_non_empty_list(tmp_path, processes):
    doc = base(processes=processes)
    if processes is None:
        del doc["processes"]
    assert "field 'processes' must be a non-empty list of names" in load_error(tmp_path, doc)


def test_network_errors_are_reported_with_the_file(tmp_path):
    message = load_error(tmp_path, base(channels=[["P1", "P2"]]))
    assert "not strongly connected: P1 cannot be reached from P2" in message
    message = load_error(tmp_path, base(channels=[["P1", "P3"], ["P3", "P1"]]))
    assert "unknown process 'P3'" in message


def test_fifo_must_be_a_boolean(tmp_path):
    assert "field 'fifo' must be true or false, got 'yes'" in load_error(tmp_path, base(fifo="yes"))


def test_unknown_app_is_named_with_the_choices(tmp_path):
    message = load_error(tmp_path, base(app="chess"))
    assert "field 'app' is 'chess'; expected one of events, tokens, bank" in message


def test_initial_must_be_an_object(tmp_path):
    assert "field 'initial' must be an object" in load_error(tmp_path, base(initial=[2, 0]))


def test_initial_value_for_an_unknown_process_is_named(tmp_path):
    message = load_error(tmp_path, base(initial={"P1": 2, "P7": 1}))
    assert "field 'initial' names unknown process 'P7'" in message


def test_initial_value_the_app_refuses_is_named(tmp_path):
    message = load_error(tmp_path, base(initial={"P1": -2}))
    assert "initial tokens of P1 must be a whole number >= 0" in message


def test_steps_must_be_a_list(tmp_path):
    assert "field 'steps' must be a list" in load_error(tmp_path, base(steps={"do": "run"}))


# ------------------------------------------------------------- step errors


def test_a_step_must_be_an_object_with_do(tmp_path):
    message = load_error(tmp_path, base(steps=[{"do": "run"}, {"at": "P1"}]))
    assert ": step 2: expected an object with a 'do' field" in message


def test_unknown_do_is_named_with_its_step_and_the_choices(tmp_path):
    message = load_error(tmp_path, base(steps=[{"do": "run"}, {"do": "jump"}]))
    assert ": step 2: unknown 'do' 'jump'; expected one of internal, send, deliver" in message


def test_missing_field_is_named_with_its_step(tmp_path):
    message = load_error(tmp_path, base(steps=[{"do": "send", "from": "P1"}]))
    assert ": step 1 (send): missing field(s) to" in message


def test_unknown_step_field_is_named_with_the_allowed_ones(tmp_path):
    message = load_error(tmp_path, base(steps=[{"do": "internal", "at": "P1", "lable": "x"}]))
    assert ": step 1 (internal): unknown field(s) lable; allowed: at, label" in message


@pytest.mark.parametrize(
    ("step", "key"),
    [
        ({"do": "internal", "at": "P9"}, "at"),
        ({"do": "send", "from": "P9", "to": "P1"}, "from"),
        ({"do": "deliver", "from": "P1", "to": "P9"}, "to"),
        ({"do": "snapshot", "at": "P9"}, "at"),
    ],
)
def test_unknown_process_in_a_step_is_named_with_the_known_ones(tmp_path, step, key):
    message = load_error(tmp_path, base(steps=[{"do": "run"}, step]))
    assert f": step 2 ({step['do']}): field '{key}' is 'P9', not one of the processes P1, P2" in (
        message
    )


def test_deliver_on_a_channel_that_does_not_exist_is_named(tmp_path):
    doc = base(
        processes=["P1", "P2", "P3"],
        channels="ring",
        steps=[{"do": "deliver", "from": "P2", "to": "P1"}],
    )
    message = load_error(tmp_path, doc)
    assert ": step 1 (deliver): there is no channel P2->P1 (channels from P2: P2->P3)" in message


def test_label_must_be_a_string(tmp_path):
    message = load_error(tmp_path, base(steps=[{"do": "internal", "at": "P1", "label": 3}]))
    assert ": step 1 (internal): field 'label' must be a string" in message


def test_deliver_takes_msg_or_marker_not_both(tmp_path):
    step = {"do": "deliver", "from": "P1", "to": "P2", "msg": "a", "marker": "s1"}
    assert "give 'msg' or 'marker', not both" in load_error(tmp_path, base(steps=[step]))


def test_run_step_scheduler_and_seed_are_checked(tmp_path):
    message = load_error(tmp_path, base(steps=[{"do": "run", "scheduler": "lifo"}]))
    assert ": step 1 (run): field 'scheduler' is 'lifo'; expected 'random' or 'fifo-order'" in (
        message
    )
    message = load_error(tmp_path, base(steps=[{"do": "run", "scheduler": "random", "seed": "7"}]))
    assert ": step 1 (run): field 'seed' must be an integer" in message


# -------------------------------------------------------- errors while running


def test_deliver_on_an_empty_channel_names_the_step_number(tmp_path):
    doc = base(
        steps=[
            {"do": "send", "from": "P1", "to": "P2", "payload": 1},
            {"do": "deliver", "from": "P1", "to": "P2"},
            {"do": "deliver", "from": "P1", "to": "P2"},
        ]
    )
    message = run_error(tmp_path, doc)
    assert ": step 3: cannot deliver P1->P2: channel P1->P2 is empty; enabled: " in message


def test_msg_label_not_in_flight_is_named_with_what_is(tmp_path):
    doc = base(
        fifo=False,
        steps=[
            {"do": "send", "from": "P1", "to": "P2", "label": "a", "payload": 1},
            {"do": "deliver", "from": "P1", "to": "P2", "msg": "b"},
        ],
    )
    message = run_error(tmp_path, doc)
    assert ": step 2: message 'b' is not in flight on P1->P2 (in flight: a)" in message


def test_marker_not_in_flight_is_named(tmp_path):
    doc = base(
        fifo=False,
        steps=[
            {"do": "snapshot", "at": "P1", "id": "s1"},
            {"do": "deliver", "from": "P1", "to": "P2", "marker": "s2"},
        ],
    )
    message = run_error(tmp_path, doc)
    assert ": step 2: marker 's2' is not in flight on P1->P2 (in flight: marker(s1))" in message


def test_a_send_the_app_refuses_names_the_step(tmp_path):
    doc = base(steps=[{"do": "send", "from": "P2", "to": "P1", "payload": 1}])
    message = run_error(tmp_path, doc)
    assert ": step 1: cannot send P2->P1: P2 has 0 token(s) and cannot send 1" in message


def test_starting_a_snapshot_twice_names_the_step(tmp_path):
    doc = base(steps=[{"do": "snapshot", "at": "P1"}, {"do": "snapshot", "at": "P1"}])
    message = run_error(tmp_path, doc)
    assert ": step 2: cannot start snapshot s1 at P1: P1 has already recorded" in message


# --------------------------------------------------------- algorithm errors


def test_algorithm_must_be_an_object(tmp_path):
    message = load_error(tmp_path, base(algorithm="clock"))
    assert "field 'algorithm' must be an object" in message


def test_clock_algorithm_from_a_scenario(tmp_path):
    doc = base(algorithm={"name": "clock", "at": 2, "rate": {"P2": 0.5}, "id": "t2"})
    sim = load_scenario(write(tmp_path, doc)).simulator()
    assert isinstance(sim.algorithm, ClockSnapshot)
    assert (sim.algorithm.at, sim.algorithm.rate, sim.algorithm.snapshot_id) == (
        2,
        {"P2": 0.5},
        "t2",
    )


def test_unknown_algorithm_is_named_with_the_choices(tmp_path):
    message = load_error(tmp_path, base(algorithm={"name": "lamport-clock"}))
    assert (
        "unknown name 'lamport-clock'; expected one of chandy-lamport, lai-yang, clock" in message
    )


def test_clock_algorithm_needs_at(tmp_path):
    message = load_error(tmp_path, base(algorithm={"name": "clock"}))
    assert "the clock algorithm needs 'at'" in message


def test_clock_at_must_be_a_number(tmp_path):
    message = load_error(tmp_path, base(algorithm={"name": "clock", "at": "3"}))
    assert "must be a number, got '3'" in message


def test_clock_rate_must_be_positive(tmp_path):
    message = load_error(tmp_path, base(algorithm={"name": "clock", "at": 3, "rate": {"P2": 0}}))
    assert "clock rate of P2 must be positive, got 0" in message


def test_clock_offset_must_be_a_number(tmp_path):
    doc = base(algorithm={"name": "clock", "at": 3, "offset": {"P1": "early"}})
    assert "clock offset of P1 must be a number, got 'early'" in load_error(tmp_path, doc)


def test_clock_drift_of_an_unknown_process_is_named(tmp_path):
    doc = base(algorithm={"name": "clock", "at": 3, "rate": {"P5": 2}})
    assert "clock drift given for unknown process 'P5'" in load_error(tmp_path, doc)


def test_a_misspelt_algorithm_field_is_named_not_ignored(tmp_path):
    message = load_error(tmp_path, base(algorithm={"name": "clock", "at": 2, "rates": {}}))
    assert "unknown field(s) rates for 'clock'" in message


def test_a_scenario_may_take_its_snapshot_with_lai_yang_on_non_fifo_channels():
    doc = {
        "processes": ["P1", "P2"],
        "fifo": False,
        "app": "tokens",
        "initial": {"P1": 2},
        "algorithm": {"name": "lai-yang"},
        "steps": [
            {"do": "snapshot", "at": "P1", "id": "s1"},
            {"do": "send", "from": "P1", "to": "P2", "label": "late", "payload": 1},
            {"do": "deliver", "from": "P1", "to": "P2", "msg": "late"},
            {"do": "run"},
        ],
    }
    sim = run_scenario(parse_scenario(doc))
    assert check_snapshot(sim, "s1").ok

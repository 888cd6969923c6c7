"""The grader's boundary, piece by piece: plain data across it, delegation found in a
submission's code, what the sandbox says it cannot contain without root, variants."""

from __future__ import annotations

import contextlib
import math
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snapshotlib.course.variants import MissingLearnerId, learner_variant, variant_of
from snapshotlib.grading import containment_warning
from snapshotlib.grading.judge import static_refusals
from snapshotlib.grading.wire import WireError, dumps, loads, roundtrip
from snapshotlib.workloads import random_execution, random_strongly_connected

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8),
    st.floats(allow_nan=False),
)  # fmt: skip
hashable = st.recursive(scalars, lambda inner: st.tuples(inner, inner), max_leaves=4)
plain = st.recursive(
    st.one_of(scalars, hashable),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=5), inner, max_size=4),
        st.dictionaries(st.integers(), inner, max_size=3),
        st.frozensets(hashable, max_size=4),
    ),
    max_leaves=12,
)


@given(plain)
def test_plain_data_crosses_the_boundary_unchanged(value: object) -> None:
    assert roundtrip(value) == value
    assert type(roundtrip(value)) is type(value)


def test_non_finite_numbers_cross_as_what_they_are() -> None:
    got = roundtrip([float("nan"), float("inf"), -float("inf"), 2**80])
    assert math.isnan(got[0]) and got[1:] == [float("inf"), -float("inf"), 2**80]


def test_a_trace_crosses_whole() -> None:
    sim = random_execution(random_strongly_connected(3, seed=4), seed=4, n_actions=25)
    trace = roundtrip(sim.trace)
    assert trace.actions == sim.trace.actions and trace.messages == sim.trace.messages
    assert sim.trace.events and trace.events == sim.trace.events
    assert [type(e) for e in trace.events] == [type(e) for e in sim.trace.events]
    assert trace.process_actions("P2") == sim.trace.process_actions("P2")


@pytest.mark.parametrize("value", [object(), print, type, {1: object()}, [lambda: 1]])
def test_anything_else_is_refused_and_named(value: object) -> None:
    with pytest.raises(WireError, match="is not plain data"):
        dumps(value)


@pytest.mark.parametrize(
    "text", [b"{", b'{"$tuple": 3}', b'{"$trace": {"actions": [[1]]}}', b"[" * 100 + b"]" * 100]
)
def test_malformed_data_from_a_sandbox_is_a_wire_error(text: bytes) -> None:
    with pytest.raises(WireError):
        loads(text)


@pytest.mark.parametrize(
    "event",
    [
        '["__import__", "os"]',  # a name that is not one of the trace's event types
        '["Trace"]',
        '["StateRecorded", 1]',  # too few fields
        '["PartDone", 1, "s1", "P1", "extra"]',  # too many
    ],
)
def test_a_forged_trace_event_from_a_sandbox_is_a_wire_error(event: str) -> None:
    text = '{"$trace": {"actions": [], "messages": [], "received_by": [], "events": [%s]}}'
    with pytest.raises(WireError):
        loads(text % event)


def test_delegation_is_found_in_the_cells_that_define_an_answer() -> None:
    refuse = {"offending_message": ("snapshotlib.checks.cut:check_frontier",),
              "MarkerRules": ("snapshotlib.algorithms.chandy_lamport:ChandyLamport",)}  # fmt: skip
    wrapper = "def offending_message(t, f):\n    return cf(t, f)"
    assert static_refusals(
        ["from snapshotlib.checks import check_frontier as cf\n" + wrapper], refuse
    ) == {"offending_message": "snapshotlib.checks.cut:check_frontier"}
    assert static_refusals(
        ["import snapshotlib\noffending_message = snapshotlib.checks.check_frontier"], refuse
    )
    assert "MarkerRules" in static_refusals(["class MarkerRules(ChandyLamport): pass"], refuse)
    # trying the engine's version in a cell of its own is allowed (a call from the
    # answer is caught while it runs); comments, strings and magics are not code
    assert static_refusals(["from snapshotlib.checks import check_frontier", wrapper], refuse) == {}
    commented = (
        "def offending_message(t, f):\n    # check_frontier would do it\n    'ChandyLamport'"
    )
    assert static_refusals([commented, "%time 1"], refuse) == {}


def test_without_root_the_grader_says_what_it_cannot_contain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    warning = containment_warning()
    assert "NOT contained" in warning
    for what in ("tmpfs", "IPC", "network", "user id"):
        assert what in warning, what


def test_each_learner_has_a_variant_of_their_own() -> None:
    ids = [f"learner{i}" for i in range(200)]
    variants = {variant_of("03_predict_the_snapshot", i) for i in ids}
    assert len(variants) == len(ids)
    assert variant_of("01_x", "ada") != variant_of("03_x", "ada")  # per exercise, too
    assert learner_variant("01_x", " Ada ") == variant_of("01_x", "ada")
    for blank in ("", "   ", None, 3):
        with pytest.raises(MissingLearnerId, match="enter your id"):
            learner_variant("01_x", blank)


@pytest.mark.parametrize(
    ("exercise", "answer", "reach"),
    [
        # the engine's code reached through the modules it now lives in, not the names
        # the refusals give: the same functions, so the same refusal
        ("ex05", "inversions_mine", "snapshotlib.course.lesson_04.text:inversions"),
        ("ex08", "terminated", "snapshotlib.sweeps.stability:_truth"),
        ("ex10", "ring_bytes", "snapshotlib.course.lesson_09:run_lesson_sweep"),
    ],
)
def test_refused_engine_code_is_caught_whichever_module_it_is_called_through(
    exercise: str, answer: str, reach: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from snapshotlib.grading.sandboxed import Delegated, _resolve, _Watch
    from snapshotlib.spark import anywhere

    def no_spark(*args: object) -> None:
        raise RuntimeError("no Spark in this test")

    monkeypatch.setattr(anywhere, "start_spark", no_spark)  # the sweep stops at once
    rules = importlib.import_module(f"snapshotlib.course.exercises.{exercise}")
    refused = {name: list(targets) for name, targets in rules.REFUSE.items()}
    watch = _Watch(refused)
    target = _resolve(reach)
    function = getattr(target, "__wrapped__", target)

    def work() -> None:
        # the call is caught on entry; what it does with these arguments does not matter
        with contextlib.suppress(Exception):
            function(*([None] * function.__code__.co_argcount))

    with pytest.raises(Delegated):
        watch.run(answer, work)
    # and the cell that defines the answer names it: refused before it runs
    cell = f"from {reach.split(':')[0]} import {reach.split(':')[1]}\n{answer} = 1"
    assert answer in static_refusals([cell], rules.REFUSE)

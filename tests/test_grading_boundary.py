"""The grader's boundary, piece by piece: plain data across it, what the sandbox says it
cannot contain without root, variants."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snapshotlib.course.variants import MissingLearnerId, learner_variant, variant_of
from snapshotlib.grading import containment_warning
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


def test_a_test_the_learners_data_makes_too_slow_fails_saying_so_and_the_rest_run() -> None:
    pytest.importorskip("otter", reason="needs otter-grader (pip install -e '.[grading]')")
    from snapshotlib.grading.judge import Question, run_question

    source = (
        "from otter.test_files import test_case\n\nOK_FORMAT = False\n\nname = 'q1'\n"
        "points = [1, 2]\n\n"
        "@test_case(points=None, hidden=False)\ndef test_slow(answer):\n"
        "    while answer:\n        pass\n\n"
        "@test_case(points=None, hidden=True)\ndef test_quick(answer):\n"
        "    assert answer == 1, 'not 1'\n"
    )
    score, message, passed = run_question(Question("q1", source, 3.0, 2, ("answer",)),
                                           {"answer": 1}, 0.5)  # fmt: skip
    assert (score, passed) == (2.0, False)
    assert message == (
        "test_slow: checking this answer took more than 0.5 s of the grader's CPU time "
        "(is what it gives far larger than the question needs?)"
    )

"""An algorithm says what its state is, and exhaustive search believes only that.

Search merges two runs when their keys are equal, and an algorithm's part of the key
comes from :meth:`SnapshotAlgorithm.state_key`: attributes declared in ``state_fields``
are read by what they hold, any other attribute safely as it is. So the names a learner
gives their attributes change nothing: not the verdict, not the outcomes, not even the
number of states.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snapshotlib.algorithms import ChandyLamport, SnapshotAlgorithm
from snapshotlib.algorithms.state import CHANNEL_MESSAGES, PLAIN, declared_fields
from snapshotlib.course.exercises import ex02

ROOT = Path(__file__).resolve().parent.parent

#: a small search: 2 processes, 2 sends each, one snapshot
RECIPE: dict[str, Any] = {"processes": 2, "sends": 2}

#: names the search once read by meaning, whatever the class
TRAPS = ["arrived", "back", "regular", "crossed", "dropped", "recording", "_logging"]


class LogAndIndex(SnapshotAlgorithm):
    """Chandy–Lamport written the way a learner might: every input channel keeps a log of
    the message ids accepted on it (attribute ``log_name``), and each recording remembers
    where in that log it began (``start_name``); a channel's state is cut from the log
    when its marker comes. The log's ids decide what is recorded."""

    name = "log-and-index"
    log_name = "log"
    start_name = "begin"

    def bind(self, sim: Any) -> None:
        super().bind(sim)
        setattr(self, self.log_name, [[] for _ in sim.network.channels])
        setattr(self, self.start_name, {})

    def _record(self, rec: Any, process: str, action: int) -> None:
        rec.red_from[process] = action
        rec.states[process] = self.sim.states[process]
        for ch in self.sim.output_channels(process):
            self.sim.emit(ch, action, "marker", rec.id)
        log, start = getattr(self, self.log_name), getattr(self, self.start_name)
        for ch in self.sim.input_channels(process):
            start[(ch, rec.id)] = len(log[ch])

    def start(self, process: str, snapshot_id: str, action: int) -> None:
        rec = self.records.get(snapshot_id) or self.new_record(snapshot_id)
        rec.initiators.append(process)
        self._record(rec, process, action)

    def on_control(self, process: str, channel: int, message: int, action: int) -> None:
        sid = self.sim.trace.messages[message].tag
        rec = self.records[sid]
        if process not in rec.red_from:
            self._record(rec, process, action)
        begun = getattr(self, self.start_name).pop((channel, sid))
        rec.channels[channel] = getattr(self, self.log_name)[channel][begun:]
        rec.closed.add(channel)

    def on_app_receive(self, channel: int, message: int) -> None:
        getattr(self, self.log_name)[channel].append(message)


def named(log: str, start: str, fields: dict[str, str] | None = None) -> type[LogAndIndex]:
    fields = fields or {}
    return type(
        "LogAndIndex",
        (LogAndIndex,),
        {"log_name": log, "start_name": start, "state_fields": fields},
    )


def report(cls: type[SnapshotAlgorithm]) -> dict[str, Any]:
    result = ex02.search_recipe(cls, RECIPE)
    assert result["error"] is None, result["error"]
    assert result["exhaustive"]
    return result


@pytest.fixture(scope="module")
def baseline() -> dict[str, Any]:
    return report(named("log", "begin"))


def test_a_learner_class_declaring_nothing_is_searched_right(baseline: dict[str, Any]) -> None:
    engine = report(ChandyLamport)
    assert baseline["ok"]
    assert baseline["outcomes"] == engine["outcomes"]


_IDENTIFIER = st.from_regex(r"\A[a-z_][a-z0-9_]{0,10}\Z").filter(
    lambda n: not keyword.iskeyword(n) and not hasattr(LogAndIndex, n)
)


@settings(max_examples=12, deadline=None)
@given(
    log=st.sampled_from(TRAPS) | _IDENTIFIER,
    start=st.sampled_from(TRAPS) | _IDENTIFIER,
)
def test_attribute_names_change_nothing_the_search_finds(
    baseline: dict[str, Any], log: str, start: str
) -> None:
    if log == start:
        return
    found = report(named(log, start))
    assert (found["ok"], found["outcomes"], found["states"]) == (
        baseline["ok"],
        baseline["outcomes"],
        baseline["states"],
    )


@pytest.mark.parametrize(
    ("log", "start"), [("arrived", "back"), ("back", "regular"), ("regular", "arrived")]
)
def test_the_names_once_read_by_meaning_are_searched_like_any_other(
    baseline: dict[str, Any], log: str, start: str
) -> None:
    """The search once took these names to hold no message ids, whatever the class: a
    log of ids kept under them merged runs whose logs held other messages."""
    found = report(named(log, start))
    assert (found["ok"], found["outcomes"], found["states"]) == (
        baseline["ok"],
        baseline["outcomes"],
        baseline["states"],
    )


def test_declaring_what_an_attribute_holds_merges_more_and_finds_the_same(
    baseline: dict[str, Any],
) -> None:
    declared = report(named("log", "begin", {"log": CHANNEL_MESSAGES, "begin": PLAIN}))
    assert declared["outcomes"] == baseline["outcomes"]
    assert declared["ok"]
    assert declared["states"] < baseline["states"]


def test_a_declared_kind_that_does_not_exist_is_named() -> None:
    class Typo(ChandyLamport):
        state_fields = {"seen": "plane"}  # noqa: RUF012 (written as a learner writes it)

    with pytest.raises(TypeError, match=r"Typo.state_fields\['seen'\]: 'plane' is not one of"):
        declared_fields(Typo)


def test_state_fields_that_are_not_a_dict_are_named() -> None:
    class Listed(ChandyLamport):
        state_fields = ["seen"]  # type: ignore[assignment]  # noqa: RUF012 (a learner's slip)

    with pytest.raises(TypeError, match=r"Listed.state_fields: a dict of .* got list"):
        declared_fields(Listed)


def test_a_subclass_declaration_adds_to_its_bases() -> None:
    class More(ChandyLamport):
        state_fields = {"count": PLAIN}  # noqa: RUF012 (written as a learner writes it)

    fields = declared_fields(More)
    assert fields["count"] == PLAIN
    assert set(declared_fields(ChandyLamport)) < set(fields)


def test_no_module_outside_the_algorithms_reads_an_algorithms_insides() -> None:
    """Only ``algorithms/`` (and an algorithm's own class) reads its private attributes
    or writes its records; everyone else asks ``state_key`` and ``snapshot_records``."""
    pattern = re.compile(r"\balgorithm\.(records\b|_[a-z]\w*)")
    offenders = []
    for path in sorted((ROOT / "snapshotlib").rglob("*.py")):
        if "algorithms" in path.relative_to(ROOT / "snapshotlib").parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("fifo", [True, False])
def test_keeping_the_key_between_silent_steps_finds_what_keying_every_step_finds(
    fifo: bool,
) -> None:
    """The engine's class says its state changes only with trace events, so the search
    keeps its key across steps that write none; a subclass adding nothing does not say so
    (it is not inherited) and is keyed at every step. Both search the same states."""
    from snapshotlib import Network
    from snapshotlib.search import SnapshotPlan, System, each_sends, search

    class Declared(ChandyLamport):
        pass

    net = Network(["P1", "P2", "P3"], "ring", fifo=fifo)
    results = [
        search(
            System(
                net,
                "tokens",
                {p: 2 for p in net.processes},
                cls,
                programs=each_sends(net, "tokens", 1),
                snapshots=(SnapshotPlan("s1", tuple(net.processes)), SnapshotPlan("s2", ("P2",))),
            ),
            reduction=False,
        )
        for cls in (ChandyLamport, Declared)
    ]
    assert ChandyLamport().key_follows_events() and not Declared().key_follows_events()
    engine, declared = (r.stats for r in results)
    assert (engine.distinct, engine.transitions) == (declared.distinct, declared.transitions)
    assert [r.ok for r in results] == [fifo, fifo]

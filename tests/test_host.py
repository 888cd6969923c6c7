"""The snapshot algorithms run on any host: they ask only what the host protocol offers.

Each algorithm here runs bound to a stand-in host that forwards the protocol's calls
(:class:`snapshotlib.algorithms.Host`) to a simulator and refuses everything else, as a
real process would have nothing else to offer. The run must be the very run the
algorithm makes in the simulator directly: the same trace, the same snapshots.
"""

from __future__ import annotations

from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snapshotlib import Simulator
from snapshotlib.algorithms import (
    AlignedBarriers,
    AtLeastOnceBarriers,
    ChandyLamport,
    ClockSnapshot,
    Host,
    LaiYang,
    SnapshotAlgorithm,
    SnapshotError,
    StopTheWorld,
    UnalignedBarriers,
)
from snapshotlib.dataflow import StreamJob, iteration, word_count
from snapshotlib.workloads import max_extra_edges, random_execution, random_strongly_connected

#: what the protocol offers: its methods and properties
PROTOCOL = frozenset(name for name in vars(Host) if not name.startswith("_"))


class ProtocolOnly:
    """A host that is only the protocol: every call goes to ``sim``, nothing else is there."""

    def __init__(self, sim: Simulator) -> None:
        self._sim = sim

    def __getattr__(self, name: str) -> Any:
        if name not in PROTOCOL:
            raise AttributeError(f"{name!r} is not in the host protocol")
        return getattr(self._sim, name)


_A = TypeVar("_A", bound=SnapshotAlgorithm)


def hosted_apart(cls: type[_A]) -> type[_A]:
    """``cls``, bound to a :class:`ProtocolOnly` host instead of the simulator itself."""

    def bind(self: _A, host: Host) -> None:
        assert isinstance(host, Simulator)
        cls.bind(self, ProtocolOnly(host))  # type: ignore[arg-type]

    return type(cls.__name__, (cls,), {"bind": bind})


def outcome(sim: Simulator) -> tuple[Any, ...]:
    """Everything a run leaves: its actions, messages, events and snapshots."""
    snapshots = {sid: sim.snapshot(sid) for sid in sim.algorithm.records}
    return (sim.trace.actions, sim.trace.messages, sim.trace.events, snapshots)


def test_the_protocol_is_what_the_simulator_offers_algorithms() -> None:
    assert {"emit", "event", "block", "unblock", "pause", "resume", "message"} <= PROTOCOL
    assert all(hasattr(Simulator, name) for name in PROTOCOL - {"network"})


def test_the_stand_in_host_refuses_what_the_protocol_does_not_offer() -> None:
    sim = Simulator(random_strongly_connected(3, seed=1))
    host = ProtocolOnly(sim)
    assert host.output_channels("P1") == sim.output_channels("P1")
    for name in ("trace", "states", "queues", "algorithm", "step"):
        with pytest.raises(AttributeError, match="not in the host protocol"):
            getattr(host, name)


@settings(max_examples=60, deadline=None)
@given(
    # Chandy–Lamport assumes FIFO channels; Lai–Yang does not
    st.sampled_from([(ChandyLamport, True), (LaiYang, True), (LaiYang, False)]),
    st.integers(2, 5),
    st.integers(0, 10_000),
)
def test_marker_algorithms_make_the_same_run_on_a_host_apart(
    algorithm_and_fifo: tuple[type[SnapshotAlgorithm], bool], n: int, seed: int
) -> None:
    cls, fifo = algorithm_and_fifo
    extra = min(n - 1, max_extra_edges(n))
    net = random_strongly_connected(n, extra, seed=seed, fifo=fifo)

    def run(algorithm: type[SnapshotAlgorithm]) -> Simulator:
        return random_execution(
            net, seed=seed, n_actions=40, snapshots=2, initiators_per_snapshot=2,
            algorithm=algorithm,
        )  # fmt: skip

    assert outcome(run(hosted_apart(cls))) == outcome(run(cls))


def test_the_clock_snapshot_makes_the_same_run_on_a_host_apart() -> None:
    net = random_strongly_connected(4, seed=3)
    drift = {"rate": {"P1": 0.5}, "offset": {"P2": 3}}
    apart = random_execution(
        net, seed=3, n_actions=60, snapshots=0,
        algorithm=lambda: hosted_apart(ClockSnapshot)(20, **drift),
    )  # fmt: skip
    here = random_execution(
        net, seed=3, n_actions=60, snapshots=0, algorithm=lambda: ClockSnapshot(20, **drift)
    )
    apart.algorithm.finish()
    here.algorithm.finish()
    assert outcome(apart) == outcome(here)
    assert apart.algorithm.records["clock"].red_from  # it did record


@pytest.mark.parametrize(
    "cls", [AlignedBarriers, UnalignedBarriers, AtLeastOnceBarriers, StopTheWorld]
)
@pytest.mark.parametrize("flow", [word_count(records=20), iteration(records=10)])
def test_dataflow_algorithms_make_the_same_run_on_a_host_apart(
    cls: type[SnapshotAlgorithm], flow: Any
) -> None:
    def run(algorithm: type[SnapshotAlgorithm]) -> StreamJob:
        # a pause after each checkpoint: a drain may outlast the interval (StreamJob)
        return StreamJob(flow, seed=1, interval=6, min_pause=6, algorithm=algorithm).run()

    apart, here = run(hosted_apart(cls)), run(cls)
    assert outcome(apart.sim) == outcome(here.sim)
    assert apart.outcome() == here.outcome()
    assert here.sim.algorithm.records  # it did take snapshots


def test_an_algorithm_not_bound_to_a_host_says_so() -> None:
    with pytest.raises(SnapshotError, match="not attached"):
        _ = ChandyLamport().host

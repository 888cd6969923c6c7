"""Channel capacity does not bound what Chandy–Lamport records: a run that shows it.

A Chandy–Lamport receiver never blocks. Between recording its state and taking the
marker from a channel it goes on consuming that channel, keeping a copy of each
message, so the recording grows with the time the marker takes, whatever the channel
holds at any moment. Only a blocked input (alignment) is bounded by the channel's room:
its writer stops when the channel is full.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...actions import Deliver, Send, StartSnapshot
from ...model import Network
from ...simulator import Simulator


@dataclass(frozen=True)
class Outgrown:
    """What :func:`recording_outgrows_its_channel` measured on ``P2->P1``."""

    peak_in_channel: int
    recorded: int
    money_recorded: int
    money_in_system: int

    def __str__(self) -> str:
        return (
            f"P2->P1 never held more than {self.peak_in_channel} message; "
            f"P1 recorded {self.recorded} messages on it; "
            f"money recorded {self.money_recorded} of {self.money_in_system}"
        )


def recording_outgrows_its_channel(messages: int = 10) -> Outgrown:
    """Two bank processes: ``P1`` records and sends its marker; before ``P2`` takes it,
    ``P2`` sends ``messages`` transfers of 1 to ``P1``, each taken at once, so the channel
    ``P2->P1`` holds at most one message, and ``P1`` records every one of them."""
    network = Network(["P1", "P2"])
    sim = Simulator(network, "bank", {"P1": 100, "P2": 100})
    back, marker_way = network.channel("P2", "P1"), network.channel("P1", "P2")
    peak = 0
    sim.step(StartSnapshot("P1"))
    for _ in range(messages):
        sim.step(Send("P2", "P1", 1))
        peak = max(peak, len(sim.in_flight(back)))
        sim.step(Deliver(back))
    sim.step(Deliver(marker_way))  # P2 records, and its marker closes P2->P1
    peak = max(peak, len(sim.in_flight(back)))
    sim.step(Deliver(back))
    snapshot = sim.snapshot("s1")
    recorded = snapshot.channels[str(back)]
    in_states = sum(p.state for p in snapshot.processes.values())
    return Outgrown(
        peak_in_channel=peak,
        recorded=len(recorded),
        money_recorded=in_states + sum(m.payload for m in recorded),
        money_in_system=200,
    )

"""snapshotlib: a small deterministic engine for learning distributed snapshots.

>>> from snapshotlib import Network, Simulator, Send, StartSnapshot
>>> sim = Simulator(Network(["P1", "P2", "P3"], "ring"), app="tokens",
...                 initial={"P1": 0, "P2": 0, "P3": 1})
>>> sim.step(Send("P3", "P1", 1))
>>> sim.step(StartSnapshot("P1", "s1"))
>>> _ = sim.run()
>>> snap = sim.snapshot("s1")
>>> snap.complete, {p: r.state for p, r in snap.processes.items()}
(True, {'P1': 0, 'P2': 0, 'P3': 0})
>>> snap.channels["P3->P1"][0].payload
1
"""

from .actions import Action, Deliver, Internal, Send, StartSnapshot
from .algorithms import ChandyLamport, ClockSnapshot, SnapshotAlgorithm, SnapshotError
from .apps import AppError, Application, Bank, Events, Tokens, make_app
from .model import Channel, Network, NetworkError
from .schedulers import FifoOrder, Manual, RandomOrder, Scripted, make_scheduler
from .simulator import ActionError, Simulator
from .snapshot import GlobalSnapshot, RecordedMessage, RecordedProcess

__version__ = "0.1.0"

__all__ = [
    "Action",
    "ActionError",
    "AppError",
    "Application",
    "Bank",
    "ChandyLamport",
    "Channel",
    "ClockSnapshot",
    "Deliver",
    "Events",
    "FifoOrder",
    "GlobalSnapshot",
    "Internal",
    "Manual",
    "Network",
    "NetworkError",
    "RandomOrder",
    "RecordedMessage",
    "RecordedProcess",
    "Scripted",
    "Send",
    "Simulator",
    "SnapshotAlgorithm",
    "SnapshotError",
    "StartSnapshot",
    "Tokens",
    "make_app",
    "make_scheduler",
]

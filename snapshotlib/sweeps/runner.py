"""A tick-based run of the engine: message rates, message and marker delays in logical time.

The simulator has no clock; sweeps need one to speak of rates and delays. Here time
advances in *ticks*. In each tick, in this order:

1. the processes due to start the snapshot in this tick do so (markers are sent);
2. every message and marker whose delay has elapsed is delivered, in the order they
   became due (a channel held back by the algorithm, ``sim.blocked``, waits a tick);
3. while ``t < duration``, each process sends ``rate`` application messages on average
   (``floor(rate)``, plus one more with probability ``rate - floor(rate)``), each one
   token to an output channel drawn uniformly, when it still holds a token.

An application message sent at tick ``t`` becomes due at ``t + d`` with ``d`` drawn
uniformly from ``1..message_delay``; a marker sent at ``t`` becomes due at
``t + marker_delay``. On a FIFO channel nothing overtakes: a message is never due
before the one ahead of it (head-of-line blocking, as on a TCP connection), so a slow
marker also holds back the messages behind it. On a non-FIFO channel each message is
delivered when its own delay is up, so different delays reorder them. After
``duration`` ticks nothing new is sent and the run goes on until every channel is
empty (the drain), so every snapshot can complete.

Everything is drawn from one ``random.Random(seed)``: same arguments, same trace.

>>> from snapshotlib.workloads import ring
>>> from snapshotlib import Simulator
>>> sim = Simulator(ring(3), "tokens", {"P1": 2, "P2": 2, "P3": 2})
>>> run = TickRun(sim, seed=1, rate=0.5, message_delay=2, marker_delay=3, duration=10)
>>> run.run({5: ["P1"]})
>>> sim.snapshot("s1").complete, sim.has_pending()
(True, False)
>>> run.tick_of(sim.snapshot("s1").processes["P1"].red_from)
5
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence

from ..simulator import Simulator
from ..trace import APP

#: a run that has not drained this many ticks after ``duration`` is stuck (a bug)
DRAIN_LIMIT = 100_000


class TickRun:
    """Drive ``sim`` tick by tick; see the module docstring for the model.

    Parameters
    ----------
    sim
        A fresh simulator running the ``tokens`` application.
    seed
        Seed of the run's own random number generator.
    rate, message_delay, marker_delay, duration
        The traffic and delays, in ticks (module docstring).
    snapshot_id
        The id the initiators start.
    """

    def __init__(
        self,
        sim: Simulator,
        *,
        seed: int | random.Random,
        rate: float,
        message_delay: int,
        marker_delay: int,
        duration: int,
        snapshot_id: str = "s1",
    ) -> None:
        self.sim = sim
        self.rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        self.whole_rate = int(rate)
        self.extra_rate = rate - self.whole_rate
        self.message_delay = message_delay
        self.marker_delay = marker_delay
        self.duration = duration
        self.snapshot_id = snapshot_id
        net = sim.network
        self.fifo = net.fifo
        #: each process that has an output channel, with the indices of its outputs
        self.senders = [
            (p, [net.channel_index(c) for c in net.outputs(p)])
            for p in net.processes
            if net.outputs(p)
        ]
        #: tick -> (channel, message) pairs that become deliverable then, in order
        self.due: dict[int, list[tuple[int, int]]] = {}
        #: per channel: the tick its newest message becomes due (FIFO: none overtakes it)
        self.last_due = [0] * len(net.channels)
        self.scheduled = 0  # messages of the trace that have a due tick
        #: ``tick_start[t]``: number of trace actions before tick ``t``
        self.tick_start: list[int] = []
        #: channel-ticks spent blocked (barrier alignment), and the most messages held
        #: back at once in blocked channels
        self.blocked_time = 0
        self.peak_blocked = 0

    # ------------------------------------------------------------------- time
    @property
    def ticks(self) -> int:
        """Ticks run so far."""
        return len(self.tick_start)

    def tick_of(self, action: int) -> int:
        """The tick in which trace action ``action`` happened."""
        return bisect_right(self.tick_start, action) - 1

    # -------------------------------------------------------------- the run
    def run(self, initiations: Mapping[int, Sequence[str]]) -> None:
        """Run to quiescence; ``initiations`` maps a tick to the processes starting then."""
        sim = self.sim
        t = 0
        last_start = max(initiations, default=-1)  # may be at or after the end of traffic
        while t < self.duration or self.due or t <= last_start:
            if t > self.duration + DRAIN_LIMIT:
                raise RuntimeError(f"the run did not drain within {DRAIN_LIMIT} ticks")
            self.tick_start.append(len(sim.trace.actions))
            for p in initiations.get(t, ()):
                self._initiate(p)
            self._schedule(t)  # the initiators' markers
            self._deliver(t)
            if t < self.duration:
                self._send(t)
            if sim.blocked:
                self.blocked_time += len(sim.blocked)
                held = sum(len(sim.queues[c]) for c in sim.blocked)
                self.peak_blocked = max(self.peak_blocked, held)
            t += 1
        sim.algorithm.finish()

    def _initiate(self, process: str) -> None:
        sim, sid = self.sim, self.snapshot_id
        if sid in sim.snapshot_ids() and process in sim.red_from(sid):
            return  # a marker got there first
        sim.start_snapshot(process, self.snapshot_id)

    def _deliver(self, t: int) -> None:
        batch = self.due.pop(t, None)
        if batch is None:
            return
        sim = self.sim
        queues, blocked, fifo = sim.queues, sim.blocked, self.fifo
        messages = sim.trace.messages
        later = []
        for ch, mid in batch:
            q = queues[ch]
            if ch in blocked or (fifo and q[0] != mid):
                later.append((ch, mid))  # held back, or behind one that is
                continue
            sim.deliver(ch, 0 if fifo else q.index(mid))
            if len(messages) != self.scheduled:
                self._schedule(t)  # the delivery sent markers (or replies)
        if later:
            self.due.setdefault(t + 1, [])[:0] = later  # still first in line next tick

    def _send(self, t: int) -> None:
        sim, random_ = self.sim, self.rng.random
        states, send = sim.states, sim.send
        whole, extra = self.whole_rate, self.extra_rate
        for p, outs in self.senders:
            for _ in range(whole + (random_() < extra)):
                if states[p] < 1:
                    break
                send(p, outs[int(random_() * len(outs))], 1)
        self._schedule(t)

    def _schedule(self, t: int) -> None:
        """Give every message sent since the last call its due tick."""
        messages = self.sim.trace.messages
        n = len(messages)
        if self.scheduled == n:
            return
        random_, queues, last_due, due = self.rng.random, self.sim.queues, self.last_due, self.due
        spread, marker_delay, fifo = self.message_delay, self.marker_delay, self.fifo
        for mid in range(self.scheduled, n):
            msg = messages[mid]
            ch = msg.channel
            # an application message: uniform in t+1 .. t+message_delay; a marker: fixed
            when = t + 1 + int(random_() * spread) if msg.kind == APP else t + marker_delay
            if fifo and queues[ch] and queues[ch][-1] == mid:
                # at the back of a FIFO channel: never due before the one ahead of it
                when = max(when, last_due[ch])
                last_due[ch] = when
            due.setdefault(when, []).append((ch, mid))
        self.scheduled = n

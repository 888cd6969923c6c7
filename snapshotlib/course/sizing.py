"""The memory a slow marker costs, worked out: the sizing arithmetic of lessons 07b and 09.

A system-design lesson on distributed snapshots sizes a cluster of 100 nodes, every
pair joined both ways, 50,000 messages of 200 B per second on every channel, and
markers held up 2 s: "99 input channels × 20 MB ≈ 1.98 GB of RAM" per node.
:class:`Sizing` redoes that computation and says for *which* node it holds. Every node
has ``nodes - 1`` input channels. The initiator records its state first and records
all of them until their markers come. Every other node records its state when its
first marker arrives; the channel that marker came on is recorded empty, so it records
the other ``nodes - 2``.

:func:`check_node_buffer` is the try-it of both lessons: it accepts either framing and
says which one the answer matches.

>>> s = Sizing(nodes=100, rate=50_000, record_bytes=200, delay=2)
>>> s.initiator_bytes, s.other_node_bytes
(1980000000, 1960000000)
>>> small = Sizing(nodes=20, rate=2_000, record_bytes=500, delay=3)
>>> print(check_node_buffer(57_000_000, small).message.split(". ")[0])
Right, for the initiator: 19 input channels × 6,000 records × 500 B = 57,000,000 B (57 MB)
>>> print(check_node_buffer(54_000_000, small).message.split(":")[0])
Right, for a node that records on its first marker
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .feedback import Feedback, is_blank, no_answer_yet
from .tables import Table

__all__ = ["Sizing", "check_node_buffer", "num", "with_unit"]


def num(x: float) -> str:
    """``x`` with thousands separators, and one decimal only when it has one.

    >>> num(1980000000), num(92.5)
    ('1,980,000,000', '92.5')
    """
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def with_unit(n: float) -> str:
    """Bytes, with the size in kB, MB or GB beside them.

    >>> with_unit(20_000_000), with_unit(512)
    ('20,000,000 B (20 MB)', '512 B')
    """
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{num(n)} B ({n / size:.3g} {unit})"
    return f"{num(n)} B"


@dataclass(frozen=True)
class Sizing:
    """``nodes`` processes, every pair joined both ways, ``rate`` records per second on
    every channel, ``record_bytes`` each, and the markers held up ``delay`` seconds, so
    that every channel a node records holds ``rate × delay`` records."""

    nodes: int
    rate: float
    record_bytes: float
    delay: float

    @property
    def channels(self) -> int:
        return self.nodes * (self.nodes - 1)

    @property
    def inputs_per_node(self) -> int:
        return self.nodes - 1

    @property
    def records_per_channel(self) -> float:
        return self.rate * self.delay

    @property
    def bytes_per_channel(self) -> float:
        return self.records_per_channel * self.record_bytes

    @property
    def initiator_bytes(self) -> float:
        """The initiator records every input channel."""
        return self.inputs_per_node * self.bytes_per_channel

    @property
    def other_node_bytes(self) -> float:
        """Any other node records all its inputs but the one its first marker came on."""
        return (self.inputs_per_node - 1) * self.bytes_per_channel

    #: the text's "per node" figure: the initiator's
    per_node_bytes = initiator_bytes

    @property
    def recorded_channels(self) -> int:
        """Channels recorded over the whole cluster, with one initiator."""
        return self.inputs_per_node + (self.nodes - 1) * (self.inputs_per_node - 1)

    @property
    def cluster_bytes(self) -> float:
        return self.recorded_channels * self.bytes_per_channel

    def table(self) -> Table:
        """The computation, one quantity per row."""
        n, k = self.nodes, self.inputs_per_node
        per = self.bytes_per_channel
        return Table(
            ("quantity", "computation", "result"),
            [
                ("channels", f"{n} × {n - 1}", num(self.channels)),
                ("input channels per node", f"{n} − 1", num(k)),
                (
                    "records per channel",
                    f"{num(self.rate)} /s × {num(self.delay)} s",
                    num(self.records_per_channel),
                ),
                (
                    "bytes per channel",
                    f"{num(self.records_per_channel)} × {num(self.record_bytes)} B",
                    with_unit(per),
                ),
                (
                    "the initiator",
                    f"{k} inputs × {with_unit(per)}",
                    with_unit(self.initiator_bytes),
                ),
                (
                    "any other node",
                    f"{k - 1} inputs × {with_unit(per)}",
                    with_unit(self.other_node_bytes),
                ),
                (
                    "whole cluster",
                    f"({k} + {n - 1} × {k - 1}) channels × {with_unit(per)}",
                    with_unit(self.cluster_bytes),
                ),
            ],
        )

    def __str__(self) -> str:
        return str(self.table())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's plain-text view: the table (``repr`` stays the constructor's)."""
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def _close(answer: float, value: float) -> bool:
    return abs(answer - value) <= 0.005 * abs(value)


def check_node_buffer(answer: Any, sizing: Sizing) -> Feedback:
    """How many bytes must one node of ``sizing`` hold while its markers are held up?

    Either framing is right: the initiator (every input recorded) or a node that records
    on its first marker (every input but that marker's). A wrong answer is told which
    slip it looks like, never the number.
    """
    s = sizing
    k = s.inputs_per_node
    if is_blank(answer):
        return no_answer_yet(
            hint="Follow the worked computation above with this cluster's numbers; answer in bytes."
        )
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return Feedback(
            False, f"{answer!r} is not a number of bytes.", "Answer with a number, e.g. 1_000_000."
        )
    steps = (
        f"{num(s.records_per_channel)} records × {num(s.record_bytes)} B = "
        f"{with_unit(s.bytes_per_channel)} per channel"
    )
    both = (
        f"The initiator records all {k} inputs: {with_unit(s.initiator_bytes)}. A node that "
        f"records on its first marker records the other {k - 1}: {with_unit(s.other_node_bytes)}. "
        f"Per channel: {steps}."
    )
    if _close(answer, s.initiator_bytes):
        return Feedback(
            True,
            f"Right, for the initiator: {k} input channels × {num(s.records_per_channel)} "
            f"records × {num(s.record_bytes)} B = {with_unit(s.initiator_bytes)}. A node that "
            f"records on its first marker records {k - 1} of its inputs: "
            f"{with_unit(s.other_node_bytes)}.",
        )
    if _close(answer, s.other_node_bytes):
        return Feedback(
            True,
            f"Right, for a node that records on its first marker: the channel that marker "
            f"came on is recorded empty, so {k - 1} input channels × "
            f"{num(s.records_per_channel)} records × {num(s.record_bytes)} B = "
            f"{with_unit(s.other_node_bytes)}. The initiator records all {k}: "
            f"{with_unit(s.initiator_bytes)}.",
        )
    slips = [
        (
            s.nodes * s.bytes_per_channel,
            f"{num(answer)} B counts {s.nodes} input channels.",
            "A node has no channel to itself: how many inputs does it have?",
        ),
        (
            s.cluster_bytes,
            f"{num(answer)} B is about the whole cluster.",
            "The question is about one node: only its own input channels count.",
        ),
        (
            s.channels * s.bytes_per_channel,
            f"{num(answer)} B counts every channel of the cluster.",
            "The question is about one node: only its own input channels count.",
        ),
        (
            s.bytes_per_channel,
            f"{num(answer)} B is what one channel holds.",
            "A node records several input channels at once.",
        ),
        (
            k * s.records_per_channel,
            f"{num(answer)} looks like a number of records, not of bytes.",
            "How many bytes does each record take?",
        ),
        (
            k * s.rate * s.record_bytes,
            f"{num(answer)} B is one second's worth.",
            "How long are the markers held up?",
        ),
        (
            s.initiator_bytes / 1e6,
            f"{num(answer)} looks like megabytes.",
            "Answer in bytes, not megabytes.",
        ),
        (
            s.initiator_bytes / 1e9,
            f"{num(answer)} looks like gigabytes.",
            "Answer in bytes, not gigabytes.",
        ),
    ]
    for value, message, hint in slips:
        if _close(answer, value):
            return Feedback(False, message, hint, answer=both)
    return Feedback(
        False,
        f"{num(answer)} B matches no step of the computation.",
        "Multiply: input channels the node records × records per channel during the delay "
        "× bytes per record.",
        answer=both,
    )

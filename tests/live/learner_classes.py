"""Snapshot classes as learners write them, saved to files as the live lab loads them:
exercise 2's own solution (taken from its notebook, so this stays the class the course
teaches), and classes with a learner's bugs."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "02_marker_rules.ipynb"

IMPORTS = "from snapshotlib.algorithms import SnapshotAlgorithm\n\n\n"

#: bugs a learner makes, each a subclass of the solution's class
BUGGY = '''
from marker_rules import MarkerRules


class ForgetsChannels(MarkerRules):
    """Records every state, but no message on any channel."""

    def on_app_receive(self, channel, message):
        pass


class KnowsOnlyItsOwn(MarkerRules):
    """Reads a record that a node which did not start the snapshot does not have yet
    (true in the simulator, where one object runs every process)."""

    def on_control(self, process, channel, message, action):
        record = self.records[self.sim.trace.messages[message].tag]
        if process not in record.red_from:
            self.record_and_send_markers(record, process, action)
        self.recording[channel].pop(record.id, None)
        record.closed.add(channel)


class RecordsAgain(MarkerRules):
    """Records its state, and sends markers, on every marker: a node's part is made at
    its last marker, and the markers it sent after that are dropped where they arrive."""

    def on_control(self, process, channel, message, action):
        record = self.records.get(self.sim.trace.messages[message].tag)
        if record is None:
            record = self.new_record(self.sim.trace.messages[message].tag)
        self.record_and_send_markers(record, process, action)
        self.recording[channel].pop(record.id, None)
        record.closed.add(channel)


class StartRaises(MarkerRules):
    """Cannot even start."""

    def start(self, process, snapshot_id, action):
        raise RuntimeError("not written yet")


class CountsInMarkers(MarkerRules):
    """Puts a count on its markers, which a live node does not carry."""

    def record_and_send_markers(self, rec, process, action):
        super().record_and_send_markers(rec, process, action)
        self.sim.emit(self.sim.output_channels(process)[0], action, "marker", rec.id, 1)
'''


def solution_class_source() -> str:
    """The ``MarkerRules`` class of exercise 2's solution notebook (without the call
    that shows the worked example)."""
    cells = json.loads(SOLUTION.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        text = "".join(cell["source"])
        if cell["cell_type"] == "code" and text.startswith("class MarkerRules("):
            return "\n".join(
                line for line in text.splitlines() if not line.startswith("show_worked_example")
            )
    raise AssertionError(f"no MarkerRules class in {SOLUTION}")


def write_learner_files(folder: Path) -> Path:
    """``marker_rules.py`` (the solution) and ``buggy.py`` in ``folder``; ``folder``."""
    (folder / "marker_rules.py").write_text(IMPORTS + solution_class_source() + "\n")
    (folder / "buggy.py").write_text(BUGGY)
    return folder

"""Lesson 10's cluster as a learner meets it: it stays up until stopped (by the explorer's
Stop cluster, by ``lesson_10.stop``, or by the kernel ending), a stopped cluster is said
so in one line, and nothing is left behind."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

from live_support import processes_using, require_live

require_live()

from snapshotlib.course import lesson_10  # noqa: E402
from snapshotlib.widgets import LiveExplorer  # noqa: E402
from snapshotlib.widgets.common import find_button  # noqa: E402

#: a backstop for processes that are slow to go, not a speed requirement
GONE_BACKSTOP_S = 60.0


def gone(folder: Path) -> bool:
    deadline = time.monotonic() + GONE_BACKSTOP_S
    while processes_using(folder) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not processes_using(folder)


def test_stop_cluster_in_the_explorer_stops_every_process_and_the_check_says_so() -> None:
    cluster = lesson_10.start_cluster(nodes=3, state_keys=4, chunk_keys=2)
    folder = Path(cluster.workdir)
    explorer = LiveExplorer(cluster, every_s=0.2)
    try:
        assert len(processes_using(folder)) == 1 + 3
        find_button(explorer.box, "Stop cluster").click()
        assert gone(folder)
        assert "The cluster is stopped" in explorer.status.value
        said = lesson_10.check_restore_choice("snap-0001-aaaaa", cluster)
        assert not said.ok and "cannot be read" in said.message
        assert "Traceback" not in str(said) and len(str(said).splitlines()) <= 2
    finally:
        lesson_10.stop(cluster, explorer)
    assert not folder.exists()


def test_a_kernel_that_ends_without_stopping_its_cluster_takes_it_along(tmp_path: Path) -> None:
    started = subprocess.run(
        [sys.executable, "-c",
         "from snapshotlib.course import lesson_10\n"
         "c = lesson_10.start_cluster(nodes=3, state_keys=4, chunk_keys=2)\n"
         "print(c.workdir, flush=True)\n"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    folder = Path(started.stdout.strip().splitlines()[-1])
    assert gone(folder)
    assert not folder.exists()


def test_a_live_runs_receives_are_named_apart_from_their_sends_and_fit_the_stepper() -> None:
    from snapshotlib.viz.commutation import CHAR_PX, commutation_spec
    from snapshotlib.viz.style import FIGURE_WIDTH
    from snapshotlib.widgets import CommutationStepper

    small = lesson_10.small_check()
    trace = small.simulator.trace
    for message, receive in enumerate(trace.received_by):
        if receive < 0 or trace.messages[message].kind != "app":  # not received, or a marker
            continue
        send = trace.messages[message].sent_by
        assert trace.action_name(receive) == "got-" + trace.action_name(send)
    stepper = CommutationStepper(small.simulator, small.snapshot_id)
    spec = commutation_spec(stepper.colouring, stepper.result, 0)
    actions = spec["data"][0]
    slot = (FIGURE_WIDTH - 20) / (max(len(actions["x"]), 4) + 1)
    for row in ("bottom center", "top center"):  # names on one row do not overlap
        named = [
            (k, text)
            for k, (text, where) in enumerate(
                zip(actions["text"], actions["textposition"], strict=False)
            )
            if text and where == row
        ]
        for (a, text), (b, _) in itertools.pairwise(named):
            assert (b - a) * slot >= len(text) * CHAR_PX * 0.9, (row, a, b, text)


def test_without_jitter_some_writes_are_always_refused_as_the_lesson_says() -> None:
    # a snapshot's 17 writes come at once against a store taking 10 at once: refusals
    # whatever the timing, each run; jitter spreads them over half a second
    notebook = Path(__file__).parents[2] / "notebooks" / "10_live_lab_under_failure.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    said = " ".join("".join(c["source"]).replace("\n", " ") for c in cells)
    assert "Some are always refused and tried again" in said
    for _ in range(2):
        without = lesson_10.jitter_run(0, snapshots=1)
        with_ = lesson_10.jitter_run(500, snapshots=1)
        assert without["slowed"] > 0, without
        assert with_["slowed"] < without["slowed"], (without, with_)

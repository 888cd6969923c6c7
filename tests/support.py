"""Helpers shared by several test modules."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from snapshotlib import Simulator
from snapshotlib.algorithms import BarrierSnapshot
from snapshotlib.trace import (
    APP,
    BarrierOvertook,
    ControlSent,
    InputBlocked,
    InputUnblocked,
    PartDone,
    RecordCrossed,
    RecordingClosed,
    SnapshotComplete,
    SnapshotDiscarded,
    StateRecorded,
)


def whole(sim: Simulator) -> tuple[Any, ...]:
    """Everything observable about a run: the whole trace, states, queues and snapshots."""
    t = sim.trace
    return (
        list(t.actions),
        list(t.messages),
        list(t.received_by),
        dict(sim.states),
        [list(q) for q in sim.queues],
        sim.snapshots(),
    )


ROOT = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    """Whether the tests run under CI, where nothing may be skipped for lack of a tool."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_otter(what: str) -> None:
    """Skip ``what`` without otter-grader locally; fail under CI, which must not skip."""
    if importlib.util.find_spec("otter") is None:
        reason = "needs otter-grader (pip install -e '.[grading]')"
        if in_ci():
            pytest.fail(f"{reason}; CI is set, so {what} may not be skipped", pytrace=False)
        pytest.skip(reason)


#: exercise 1's q1 written honestly, the way a learner may: a local list named like
#: lesson 01's helper, a loop, a helper variable (refused by nothing)
HONEST_OFFENDING_MESSAGE = (
    "def offending_message(trace, frontier):\n"
    "    offending_messages = []  # a local list named like the lesson's helper\n"
    "    inside = set()\n"
    "    for process, count in frontier.items():\n"
    "        inside.update(trace.process_actions(process)[:count])\n"
    "    for index in sorted(inside):\n"
    "        action = trace.actions[index]\n"
    "        if action.kind == 'receive':\n"
    "            if trace.messages[action.message].sent_by not in inside:\n"
    "                offending_messages.append(trace.message_name(action.message))\n"
    "    return offending_messages[0] if offending_messages else None\n"
)


def tool(name: str) -> Any:
    """``tools/NAME.py`` as a module (tools/ is not a package). It is registered under its
    name, as a tool that imports it finds it (and its dataclasses find themselves)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def make_exercises_tool() -> Any:
    """``tools/make_exercises.py`` as a module."""
    return tool("make_exercises")


def fill_in(exercise: dict[str, Any], answers: dict[str, str]) -> dict[str, Any]:
    """A copy of the notebook ``exercise`` with each code cell that starts with a key of
    ``answers`` replaced by its value, as a learner's submission; every key must match."""
    nb: dict[str, Any] = json.loads(json.dumps(exercise))
    used = set()
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        for start, answer in answers.items():
            if cell["cell_type"] == "code" and source.startswith(start):
                cell["source"] = answer.strip("\n")
                used.add(start)
    assert used == set(answers), f"no answer cell starts with {set(answers) - used}"
    return nb


def assert_events_agree_with_records(sim: Simulator) -> None:
    """Every typed event of ``sim``'s trace says what its algorithm's records hold, once
    and at the right action (events of a discarded snapshot, which has no record left,
    are not looked at)."""
    trace, events = sim.trace, sim.trace.events
    assert [e.action for e in events] == sorted(e.action for e in events)  # in trace order
    sent = [e for e in events if isinstance(e, ControlSent)]
    assert [e.message for e in sent] == [m for m, r in enumerate(trace.messages) if r.kind != APP]
    for sid, rec in sim.algorithm.records.items():
        mine = [e for e in events if e.snapshot_id == sid]
        recorded = {e.process: e.action for e in mine if isinstance(e, StateRecorded)}
        assert recorded == rec.red_from
        closed = {e.channel: list(e.messages) for e in mine if isinstance(e, RecordingClosed)}
        assert closed == {c: rec.channels[c] for c in rec.closed}
        done = [e.process for e in mine if isinstance(e, PartDone)]
        assert sorted(done) == sorted(
            p for p in sim.network.processes if rec.part_done(p, sim.input_channels(p))
        )
        complete = [e for e in mine if isinstance(e, SnapshotComplete)]
        assert len(complete) == (1 if rec.complete else 0)
        for e in mine:
            if isinstance(e, BarrierOvertook) and e.channel in rec.closed:
                # the channel's state ends with what its barrier overtook at the writer
                assert rec.channels[e.channel][-len(e.messages) :] == list(e.messages)
        if isinstance(sim.algorithm, BarrierSnapshot):
            crossed = [e.message for e in mine if isinstance(e, RecordCrossed)]
            assert crossed == sim.algorithm.crossed.get(sid, [])
    discarded = [e.snapshot_id for e in events if isinstance(e, SnapshotDiscarded)]
    assert len(set(discarded)) == len(discarded)
    assert not set(discarded) & set(sim.algorithm.records)
    held: set[int] = set()  # the blocks and unblocks, replayed, leave what is held now
    for e in events:
        if isinstance(e, InputBlocked):
            assert e.channel not in held
            held.add(e.channel)
        elif isinstance(e, InputUnblocked):
            held.discard(e.channel)
    assert held == sim.blocked


def opened_states(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The state each widget made from now on opens its channel to the browser with: what
    a browser that draws a view before any later update arrives shows."""
    import ipywidgets.widgets.widget as widget_module  # the widgets extra: only when asked

    states: list[dict[str, Any]] = []
    create = widget_module.comm.create_comm

    def recording(**args: Any) -> Any:
        states.append(args["data"]["state"])
        return create(**args)

    monkeypatch.setattr(widget_module.comm, "create_comm", recording)
    return states


def figure_states(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The opening states of plotly figure widgets among ``states``."""
    return [s for s in states if "_widget_data" in s]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: a backstop for a Jupyter server that never answers, not a speed requirement
JUPYTER_BACKSTOP_S = 120.0


@contextlib.contextmanager
def jupyter_running(
    args: Sequence[str], *, cwd: Path, state: Path, ready_url: str, unset: Sequence[str] = ()
) -> Iterator[None]:
    """``python -m jupyter ARGS`` in ``cwd``, with its configuration, data and runtime
    folders under ``state`` (the user's own stay out) and the variables ``unset`` taken
    out of its environment; returns once ``ready_url`` answers, and stops the server (its
    whole process group) afterwards."""
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(state / "config"),
        "JUPYTER_DATA_DIR": str(state / "data"),
        "JUPYTER_RUNTIME_DIR": str(state / "runtime"),
    }
    for name in unset:
        env.pop(name, None)
    state.mkdir(parents=True, exist_ok=True)
    log_path = state / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", *args], cwd=cwd, env=env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + JUPYTER_BACKSTOP_S
            while True:
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "the Jupyter server never answered"
                try:
                    urllib.request.urlopen(ready_url, timeout=5)
                    break
                except (urllib.error.URLError, ConnectionError, OSError):
                    time.sleep(0.25)
            yield
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)

"""The grader's side of a sandbox: the submission's process, started under its limits,
and spoken to in JSON lines over two pipes.

Whatever comes back is untrusted: a reply that is not one JSON object of at most
:data:`~snapshotlib.grading.wire.MAX_BYTES`, or nested deeper than plain data can be,
ends the conversation (:class:`SandboxGone`) and never reaches the grader's own code as
anything but a reason. While it waits, the grader reads the CPU time of the
submission's control group, if it has one, and ends the submission when all its
processes together have used their CPU seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import jail, wire
from .limits import Group

#: how often, in seconds, the grader looks at a control group's CPU time while it waits
_CPU_LOOK = 0.25


class SandboxGone(RuntimeError):
    """The sandbox died, stopped answering, or said something that is not a reply."""


class Sandbox:
    """The submission's process (one of its runs)."""

    def __init__(
        self, proc: subprocess.Popen[bytes], uid: int | None, deadline: float,
        group: Group | None, cpu_seconds: float,
    ) -> None:  # fmt: skip
        self.proc = proc
        self.uid = uid
        self.deadline = deadline
        self.group = group
        self.cpu_seconds = cpu_seconds
        self.buffer = b""
        self.alive = True
        self.cpu_exceeded = False
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.alive = False
            raise SandboxGone("the submission's process has ended") from None

    def _over_cpu(self) -> bool:
        if self.group is not None and self.group.cpu_seconds() > self.cpu_seconds:
            self.cpu_exceeded = True
            self.group.kill()
        return self.cpu_exceeded

    def receive(self, wall: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        until = min(self.deadline, time.monotonic() + wall)
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = until - time.monotonic()
                if left <= 0:
                    self.alive = False
                    raise SandboxGone("no answer within the wall-clock backstop")
                if self._over_cpu():
                    self.alive = False
                    raise SandboxGone(f"its processes used {self.cpu_seconds:g} s of CPU time")
                if not sel.select(min(left, _CPU_LOOK)):
                    continue
                try:
                    chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                except BlockingIOError:
                    continue
                if not chunk:
                    self.alive = False
                    raise SandboxGone("the submission's process has ended")
                self.buffer += chunk
                if len(self.buffer) > wire.MAX_BYTES:
                    self.alive = False
                    raise SandboxGone("the submission's process sent too much data")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            self.alive = False
            raise SandboxGone("the submission's process sent something that is not JSON") from None
        if not isinstance(reply, dict):
            self.alive = False
            raise SandboxGone("the submission's process sent something that is not a reply")
        return reply

    def ask(self, message: dict[str, Any], wall: float) -> dict[str, Any]:
        if not self.alive:
            raise SandboxGone("the submission's process has ended")
        self.send(message)
        return self.receive(wall)

    def close(self) -> None:
        with contextlib.suppress(SandboxGone, OSError, ValueError):
            if self.alive and self.proc.poll() is None:
                self.send({"op": "end"})
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin:
                self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        if self.group is not None:
            self.group.kill()
        jail.kill_user(self.uid)
        if self.proc.stdout:
            self.proc.stdout.close()


def start(
    scratch: Path, request: dict[str, Any], limits: jail.Limits, wall: float, *,
    contain: bool, hide: list[Path], uid: int, empty: Path, log: Path,
    edition: Path | None, group: Group | None,
) -> Sandbox:  # fmt: skip
    """Start a submission's process in ``scratch`` (not yet existing) and send it
    ``request``; ``edition``: the folder holding the learner edition of the engine it
    runs against (None: the real one)."""
    scratch.mkdir(parents=True)
    cage = jail.prepare(scratch, hide, uid, empty, edition) if contain else None
    if cage is None:
        for sub in ("home", "tmp"):
            (scratch / sub).mkdir()
    env = {
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch / "home"),
        "TMPDIR": str(scratch / "tmp"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    if edition is not None:
        env["PYTHONPATH"] = str(edition)
    procs = group.procs_files if group is not None else ()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "snapshotlib.grading.sandboxed"], cwd=scratch, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=out,
            start_new_session=True, preexec_fn=jail.preexec(limits, cage, procs),
        )  # fmt: skip
    sandbox = Sandbox(proc, cage.uid if cage else None, time.monotonic() + wall, group,
                      float(limits.cpu_seconds))  # fmt: skip
    sandbox.send(request)
    return sandbox

"""The judging workers of a grading run: fresh interpreters that have loaded the grader
once (:mod:`.worker`), each given one submission at a time; kept between runs of the
same process, ended when it exits.

A worker that ends by itself costs only the submission it had in hand (``crashed``,
saying so); another takes its place. A stopped run (Ctrl-C) tells each busy worker to
end, and each closes its submission's sandbox on the way out.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import os
import pickle
import selectors
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import jail
from .gradebook import SubmissionResult
from .judge import Batch, failed
from .submissions import Identities, SubmissionError


@dataclass
class _Worker:
    """A judging worker (:mod:`.worker`), the batch it holds and the job it has in hand."""

    proc: subprocess.Popen[str]
    key: str = ""
    job: dict[str, Any] | None = None

    def send(self, request: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()

    def give(self, batch: Batch, key: str, job: dict[str, Any]) -> None:
        if self.key != key:
            self.send({"key": key, "batch": base64.b64encode(pickle.dumps(batch)).decode()})
            self.key = key
        self.job = job
        self.send({**job, "key": key})


#: workers kept between grading runs of this process (each has loaded the grader)
_IDLE: list[_Worker] = []
_KEEP_IDLE = 4


def _worker() -> _Worker:
    while _IDLE:
        worker = _IDLE.pop()
        if worker.proc.poll() is None:
            return worker
    proc = subprocess.Popen(
        [sys.executable, "-m", "snapshotlib.grading.worker"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True, encoding="utf-8", start_new_session=True,
    )  # fmt: skip
    return _Worker(proc)


def _retire(worker: _Worker) -> None:
    """Keep an idle worker for the next grading run, or end it."""
    if worker.proc.poll() is None and worker.job is None and len(_IDLE) < _KEEP_IDLE:
        _IDLE.append(worker)
        return
    if worker.proc.poll() is None:
        if worker.job is not None:  # stopped part way: the worker closes its sandbox
            worker.proc.terminate()
        else:
            with contextlib.suppress(OSError):
                assert worker.proc.stdin is not None
                worker.proc.stdin.close()
    try:
        worker.proc.wait(20)
    except subprocess.TimeoutExpired:
        worker.proc.kill()
        worker.proc.wait()
    for stream in (worker.proc.stdin, worker.proc.stdout):
        with contextlib.suppress(OSError):
            if stream is not None:
                stream.close()


@atexit.register
def _end_idle_workers() -> None:
    while _IDLE:
        worker = _IDLE.pop()
        worker.job = None
        with contextlib.suppress(OSError):
            assert worker.proc.stdin is not None
            worker.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.proc.wait(5)


def job_for(index: int, path: Path, batch: Batch, identities: Identities, base: Path,
         first_index: int, contain: bool) -> dict[str, Any]:  # fmt: skip
    """What a worker needs to judge one submission (plain data)."""
    settings = batch.settings
    # the grader's own time on a submission: the sandbox's backstop, then its tests
    backstop = settings.wall + 60 + 4 * settings.test_cpu * max(1, len(batch.questions))
    job: dict[str, Any] = {
        "id": index, "path": str(path), "scratch": str(base / f"{index:04d}"),
        "uid": jail.submission_uid(first_index + index) if contain else 0,
        "memory_mb": settings.limits.memory_mb,
        # the grader's own work on what the submission gave (its tests, replays of its
        # data) gets the submission's CPU seconds too, and a little to start
        "cpu_seconds": int(settings.limits.cpu_seconds + 30), "backstop": backstop,
    }  # fmt: skip
    try:
        identity = identities.of(path.name)
        job.update(learner_id=identity.learner_id, identity=identity.source)
    except SubmissionError as e:
        job["invalid"] = str(e)
    return job


def run_all(
    todo: deque[tuple[int, Path]], batch: Batch, identities: Identities, base: Path, jobs: int,
    first_index: int, contain: bool, add: Callable[[SubmissionResult], None],
) -> None:  # fmt: skip
    def job_of(index: int, path: Path) -> dict[str, Any]:
        return job_for(index, path, batch, identities, base, first_index, contain)

    key = f"{os.getpid()}.{time.monotonic_ns()}"
    workers = [_worker() for _ in range(max(1, min(jobs, len(todo))))]

    def give(worker: _Worker) -> None:
        worker.give(batch, key, job_of(*todo.popleft()))

    try:
        for worker in workers:
            if todo:
                give(worker)
        with selectors.DefaultSelector() as sel:
            for worker in workers:
                assert worker.proc.stdout is not None
                sel.register(worker.proc.stdout, selectors.EVENT_READ, worker)
            while any(w.job is not None for w in workers):
                for found, _ in sel.select(timeout=5.0):
                    worker = found.data
                    line = worker.proc.stdout.readline()
                    if not line:  # the worker itself ended: its job crashed, a new one goes on
                        sel.unregister(worker.proc.stdout)
                        worker.proc.wait()
                        if worker.job is not None:
                            why = f"the grader's worker ended (code {worker.proc.returncode})"
                            add(_lost(worker.job, batch, why))
                            worker.job = None
                        if todo:
                            fresh = _worker()
                            workers.append(fresh)
                            assert fresh.proc.stdout is not None
                            sel.register(fresh.proc.stdout, selectors.EVENT_READ, fresh)
                            give(fresh)
                        continue
                    add(_reply(line, worker.job, batch))
                    worker.job = None
                    if todo:
                        give(worker)
    finally:
        for worker in workers:
            _retire(worker)


def _lost(job: dict[str, Any] | None, batch: Batch, why: str) -> SubmissionResult:
    name = Path(job["path"]).name if job else "?"
    return failed(name, batch.questions, "crashed", f"{name}: {why}", 0.0,
                  str((job or {}).get("learner_id", "")))  # fmt: skip


def _reply(line: str, job: dict[str, Any] | None, batch: Batch) -> SubmissionResult:
    try:
        data = json.loads(line)
        return SubmissionResult.from_dict(data["result"])
    except (ValueError, TypeError, KeyError) as e:
        return _lost(job, batch, f"its result could not be read ({e})")

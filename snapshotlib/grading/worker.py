"""A judging worker: a process of its own that loads the grader once and judges
submissions one at a time, each in a child forked for it.

``python -m snapshotlib.grading.worker`` reads requests, one JSON line each: a batch
(what every submission of a grading run is judged with, pickled by the grader that
started the worker, which alone writes to it), or a job of a batch it has. For each job
it forks a child that judges the submission under limits of its own (memory, CPU time)
and hands back the result; whatever happens to the child (an error, a limit, a signal,
no answer by the backstop) becomes that submission's status and reason, and the worker
goes on with the next. Results go back one JSON line each.

The grader starts workers as fresh interpreters rather than forking itself, so grading
can be called from any script, notebook or test run without re-running it.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import resource
import select
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from .gradebook import SubmissionResult
from .judge import Batch, failed, judge
from .submissions import Identity, SubmissionError, read_notebook

#: the child being judged now, for the worker's SIGTERM to pass on
_child = 0


def _judge_here(job: dict[str, Any], batch: Batch) -> SubmissionResult:
    """Judge one submission in this (child) process."""
    name = Path(job["path"]).name
    if job.get("invalid"):
        return judge(SubmissionError(job["invalid"]), name, Identity("", ""), batch,
                     scratch=Path(job["scratch"]), uid=int(job["uid"]))  # fmt: skip
    identity = Identity(str(job["learner_id"]), str(job["identity"]))
    try:
        notebook: Any = read_notebook(Path(job["path"]))
    except SubmissionError as e:
        notebook = e
    return judge(notebook, name, identity, batch, scratch=Path(job["scratch"]), uid=int(job["uid"]))


def _child_main(job: dict[str, Any], batch: Batch, out: int) -> None:
    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(1)

    signal.signal(signal.SIGTERM, stop)
    with open("/proc/self/status", encoding="ascii") as f:
        size = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize")), 0)
    memory = size + int(job["memory_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = int(job["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 10))
    name = Path(job["path"]).name
    started = time.monotonic()
    try:
        result = _judge_here(job, batch)
    except MemoryError:
        result = failed(name, batch.questions, "crashed",
                        f"{name}: the grader ran out of memory judging it",
                        time.monotonic() - started, job.get("learner_id", ""))  # fmt: skip
    except Exception as e:  # a fault of the grader's, kept to this submission
        result = failed(name, batch.questions, "crashed",
                        f"{name}: the grader failed on it: {type(e).__name__}: {e}",
                        time.monotonic() - started, job.get("learner_id", ""))  # fmt: skip
    data = json.dumps(result.to_dict()).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(out, view) :]


def run_job(job: dict[str, Any], batch: Batch) -> SubmissionResult:
    """Judge ``job`` in a forked child; its result, or why there is none."""
    global _child
    name = Path(job["path"]).name
    learner = str(job.get("learner_id", ""))
    started = time.monotonic()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: judge, write the result, leave without running anything else
        code = 0
        try:
            os.close(read_end)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)  # nothing the tests print may reach the worker's channel
            _child_main(job, batch, write_end)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    _child = pid
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = started + float(job["backstop"])
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
            ready, _, _ = select.select([read_end], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(read_end, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
        _child = 0
        shutil.rmtree(job["scratch"], ignore_errors=True)
        shutil.rmtree(job["scratch"] + "-whole", ignore_errors=True)
    seconds = time.monotonic() - started
    if timed_out:
        return failed(name, batch.questions, "timeout",
                      f"{name}: judging it took more than {float(job['backstop']):.0f} s", seconds,
                      learner)  # fmt: skip
    try:
        return SubmissionResult.from_dict(json.loads(b"".join(chunks)))
    except (ValueError, TypeError, KeyError):
        pass
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        why = ("it ran out of memory or CPU time" if sig in (signal.SIGKILL, signal.SIGXCPU)
               else f"it was ended by signal {sig}")  # fmt: skip
    else:
        why = f"it ended with code {os.WEXITSTATUS(status)}"
    return failed(name, batch.questions, "crashed",
                  f"{name}: the grader's process judging it ended without a result: {why}",
                  seconds, learner)  # fmt: skip


def main() -> None:
    channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # stray prints go to the grader's standard error, not the channel

    def stop(signum: int, frame: Any) -> None:
        if _child:
            os.kill(_child, signal.SIGTERM)
            for _ in range(100):
                if os.waitpid(_child, os.WNOHANG)[0]:
                    break
                time.sleep(0.1)
            else:
                os.kill(_child, signal.SIGKILL)
        os._exit(1)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the grader decides when to stop
    import otter.test_files  # noqa: F401 - loaded once, before any child is forked

    batches: dict[str, Batch] = {}
    for line in sys.stdin:
        request = json.loads(line)
        if "batch" in request:  # a new grading run: what its submissions are judged with
            batches.clear()
            batches[request["key"]] = pickle.loads(base64.b64decode(request["batch"]))
            continue
        result = run_job(request, batches[request["key"]])
        channel.write(json.dumps({"id": request["id"], "result": result.to_dict()}) + "\n")


if __name__ == "__main__":
    main()

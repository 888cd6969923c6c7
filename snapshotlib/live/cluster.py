"""A live cluster on this machine, from Python: the controller and the nodes as processes.

>>> with LiveCluster(nodes=5) as c:            # doctest: +SKIP
...     sid = c.trigger()
...     c.wait(sid)["status"]
...     c.check(sid).ok
'COMPLETED'
True

Every process is started in a process group of its own and stopped (SIGTERM, then
SIGKILL after a grace period) when the ``with`` block ends, also on an error or Ctrl-C.
Meanwhile the cluster is supervised, as an orchestrator would: a node that dies (a
crash) is started again holding no state, until a restore gives it some; a controller
that dies is started again on the same registry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from ..named import portable
from .action_log import BASE_FILE
from .algorithm_choice import load_algorithm
from .api_token import TokenError, bearer, create_token, read_token, token_file
from .hub import browser_address
from .log_base import LogBase, load_base, replay_logs
from .parts import CheckedPart, PartError, check_stored_manifest, check_stored_part
from .runlog import LiveCheck, RunLogError, causes_of, check_live_snapshot
from .spec import ClusterSpec, NodeSpec, topology
from .storage import StorageError, parse_storage_uri, read

#: wall-time backstops (seconds) for processes to come up and go down; the work itself
#: is not timed
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0
#: how often the supervisor looks for processes that died (seconds)
SUPERVISE_EVERY_S = 0.2
#: the least time between two starts of one process: one that dies as it starts (its
#: port taken, say) is not started again in a tight loop
RESTART_AFTER_S = 1.0


class LiveClusterError(RuntimeError):
    """The cluster could not start, or a request to it failed (with the answer)."""


#: the ports the cluster listens on are drawn from here, below the ports the OS gives the
#: local end of outgoing connections (Linux from 32768, macOS and Windows from 49152): a
#: port free when the cluster chose it must still be free when its process binds it, and
#: any outgoing connection on the machine could have taken one of those in between
LISTEN_PORTS = range(20000, 32768)
#: starts tried when a process found its port taken all the same (another program chose it)
START_ATTEMPTS = 3
_ports = random.SystemRandom()


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` different ports of :data:`LISTEN_PORTS` nobody listens on now."""
    chosen: list[int] = []
    for _ in range(100 * count):
        port = _ports.choice(LISTEN_PORTS)
        if port in chosen:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
        chosen.append(port)
        if len(chosen) == count:
            return chosen
    raise LiveClusterError(
        f"no {count} free ports between {LISTEN_PORTS[0]} and {LISTEN_PORTS[-1]}"
    )


def _port_taken(log: str) -> bool:
    """Whether a process's error output says its port was taken (gRPC's or uvicorn's words)."""
    return "address already in use" in log.lower()


class LiveCluster:
    """The controller and ``nodes`` node processes on 127.0.0.1 (see the module docstring).

    Parameters
    ----------
    nodes, topology, rate, initial_money, seed, markers, marker_delay_ms, heartbeat_ms, \
    heartbeat_timeout_ms, ttl_ms, state_keys, chunk_keys, key_bytes, upload_jitter_ms, \
    log_segment_lines
        The cluster (see :class:`~snapshotlib.live.spec.ClusterSpec`).
    restart_crashed
        Start a process that died again (see the module docstring).
    workdir
        Where the spec, the logs, the registry and the checkpoints go (a new temporary
        folder by default, kept after the run so the logs can be read).
    registry
        The registry's URL (default: SQLite in ``workdir``).
    storage
        The default ``target_storage_uri`` (default: ``workdir/checkpoints``).
    storage_root, allow_endpoints, allow_buckets
        Where a trigger may have the cluster write (:mod:`.storage_policy`): ``file://``
        targets in ``storage_root`` (default: ``workdir``, or the default storage's folder
        when it is outside ``workdir``), ``http://`` ones on the
        ``host:port`` endpoints and ``s3://`` ones in the buckets listed (the default
        storage's is always allowed).
    retain
        Keep the last this many completed snapshots and prune the older ones
        (:mod:`.retention`); None (the default) keeps every one.
    algorithm
        The snapshot algorithm every node runs, ``MODULE:CLASS`` or ``FILE.py:CLASS``
        (found from the working folder; :mod:`.algorithm_choice`); the engine's
        Chandy–Lamport by default. Loaded and vetted here first, so a class that cannot
        run says why before any process starts.
    """

    def __init__(
        self,
        nodes: int = 5,
        topology: str = "complete",
        rate: float = 50.0,
        initial_money: int = 1000,
        seed: int = 0,
        workdir: str | Path | None = None,
        registry: str | None = None,
        storage: str | None = None,
        host: str = "127.0.0.1",
        markers: str = "in-band",
        marker_delay_ms: int = 0,
        heartbeat_ms: int = 500,
        heartbeat_timeout_ms: int = 5000,
        ttl_ms: int = 30000,
        restart_crashed: bool = True,
        state_keys: int = 1,
        chunk_keys: int = 1,
        key_bytes: int = 0,
        upload_jitter_ms: int = 0,
        storage_root: str | Path | None = None,
        allow_endpoints: tuple[str, ...] = (),
        allow_buckets: tuple[str, ...] = (),
        retain: int | None = None,
        log_segment_lines: int = 50_000,
        algorithm: str = "",
    ) -> None:
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="snapshotlib-live-")).resolve()
        self.host = host
        self.topology = topology
        self.n_nodes = nodes
        self.rate = rate
        self.initial_money = initial_money
        self.seed = seed
        self.markers = markers
        self.marker_delay_ms = marker_delay_ms
        self.heartbeat_ms = heartbeat_ms
        self.heartbeat_timeout_ms = heartbeat_timeout_ms
        self.ttl_ms = ttl_ms
        self.restart_crashed = restart_crashed
        self.state_keys = state_keys
        self.chunk_keys = chunk_keys
        self.key_bytes = key_bytes
        self.upload_jitter_ms = upload_jitter_ms
        self.allow_endpoints = tuple(allow_endpoints)
        self.allow_buckets = tuple(allow_buckets)
        self.retain = retain
        self.log_segment_lines = log_segment_lines
        self.algorithm = self.algorithm_path = ""
        if algorithm:
            load_algorithm(algorithm)  # says now what is wrong, in the caller's words
            self.algorithm, self.algorithm_path = portable(algorithm, Path.cwd(), "algorithm")
        #: processes the supervisor started again: (name, exit status it had)
        self.restarts: list[tuple[str, int]] = []
        self._commands: dict[str, tuple[str, list[str]]] = {}
        self._started: dict[str, float] = {}
        self._lock = threading.Lock()
        self._supervising = threading.Event()
        self._supervisor: threading.Thread | None = None
        self.registry = registry or f"sqlite:///{self.workdir / 'registry.db'}"
        self.storage = storage or (self.workdir / "checkpoints").as_uri() + "/"
        self.storage_root = _storage_root(storage_root, self.storage, self.workdir)
        self.spec: ClusterSpec | None = None
        #: the cluster's API token (:mod:`.api_token`), once started or attached
        self.token: str | None = None
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    # ------------------------------------------------------------- lifecycle
    def __enter__(self) -> LiveCluster:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @classmethod
    def attach(cls, workdir: str | Path) -> LiveCluster:
        """The cluster running from ``workdir`` (started by another process, e.g.
        ``snapshotlib live up``): its API and checks, without owning its processes."""
        folder = Path(workdir).resolve()
        spec_file = folder / "spec.json"
        try:
            spec = ClusterSpec.from_json(spec_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise LiveClusterError(f"no live cluster in {folder} (no spec.json)") from None
        except (ValueError, KeyError, TypeError) as e:
            raise LiveClusterError(f"{spec_file}: {e}") from None
        cluster = cls(len(spec.nodes), workdir=folder)
        cluster.spec = spec
        try:
            cluster.token = read_token(token_file(folder))
        except TokenError as e:
            raise LiveClusterError(str(e)) from None
        return cluster

    def running(self) -> dict[str, int | None]:
        """Each process this object started, with its exit status (``None``: running)."""
        with self._lock:
            return {name: p.poll() for name, p in self.processes.items()}

    @property
    def url(self) -> str:
        """The controller's base URL (its API docs are at ``/docs``)."""
        if self.spec is None:
            raise LiveClusterError("the cluster is not started")
        return self.spec.controller

    @property
    def token_file(self) -> Path:
        """The file holding the cluster's API token (:mod:`.api_token`), its owner's only."""
        return token_file(self.workdir)

    @property
    def browser_url(self) -> str:
        """Where a browser opens the controller: :attr:`url` on one's own machine; in a
        Binder or JupyterHub session, the path through the session's address."""
        return browser_address(self.url)

    def start(self) -> None:
        """Start the controller, then the nodes; return when every one answers. A process
        that finds its port taken (by another program since it was chosen) makes the
        cluster start again on other ports, up to :data:`START_ATTEMPTS` times."""
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                self._start()
                return
            except LiveClusterError as e:
                if attempt == START_ATTEMPTS or not _port_taken(str(e)):
                    raise

    def _start(self) -> None:
        network = topology(self.topology, self.n_nodes, self.seed)
        *node_ports, controller_port = free_ports(len(network.processes) + 1, self.host)
        self.spec = ClusterSpec(
            nodes=tuple(
                NodeSpec(p, self.host, port)
                for p, port in zip(network.processes, node_ports, strict=True)
            ),
            channels=tuple((c.src, c.dst) for c in network.channels),
            initial_money=self.initial_money,
            rate=self.rate,
            markers=self.markers,
            marker_delay_ms=self.marker_delay_ms,
            controller=f"http://{self.host}:{controller_port}",
            heartbeat_ms=self.heartbeat_ms,
            heartbeat_timeout_ms=self.heartbeat_timeout_ms,
            ttl_ms=self.ttl_ms,
            state_keys=self.state_keys,
            chunk_keys=self.chunk_keys,
            key_bytes=self.key_bytes,
            upload_jitter_ms=self.upload_jitter_ms,
            log_segment_lines=self.log_segment_lines,
            seed=self.seed,
            algorithm=self.algorithm,
            algorithm_path=self.algorithm_path,
        )
        # its owner's only when made here (the registry, logs and checkpoints are in it)
        self.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        # a folder of logs per start: a snapshot of an earlier run (the registry keeps
        # them) is checked against the logs of its own run
        runs = self.workdir / "logs"
        log_dir = runs / f"run-{len(list(runs.glob('run-*'))) + 1:03d}"
        spec_file = self.workdir / "spec.json"
        spec_file.write_text(self.spec.to_json(), encoding="utf-8")
        self.token = create_token(self.workdir)
        secret = ["--token-file", str(self.token_file)]
        # the controller and every node check a target against the same policy
        storage = [
            f"--storage={self.storage}",
            f"--storage-root={self.storage_root}",
            *(f"--allow-endpoint={e}" for e in self.allow_endpoints),
            *(f"--allow-bucket={b}" for b in self.allow_buckets),
        ]
        self._commands.clear()
        try:
            self._spawn(
                "controller",
                "snapshotlib.live.serve",
                "--spec",
                str(spec_file),
                "--registry",
                self.registry,
                *storage,
                *(() if self.retain is None else (f"--retain={self.retain}",)),
                "--logs",
                str(log_dir),
                "--journal",
                str(self.workdir / "journal.jsonl"),
                *secret,
                "--exit-with-parent",
            )
            self._wait_until(lambda: self._answers("/v1/cluster"), "the controller")
            for node in self.spec.nodes:
                self._spawn(
                    node.id,
                    "snapshotlib.live.node",
                    "--spec",
                    str(spec_file),
                    "--node",
                    node.id,
                    "--log-dir",
                    str(log_dir),
                    *secret,
                    *storage,
                    "--exit-with-parent",
                )
            self._wait_until(self._all_up, "the nodes")
        except BaseException:
            self.stop()
            raise
        if self.restart_crashed:
            self._supervising.set()
            self._supervisor = threading.Thread(
                target=self._supervise, name="live-supervisor", daemon=True
            )
            self._supervisor.start()

    def _supervise(self) -> None:
        """Start again every process that died (see the module docstring)."""
        while self._supervising.is_set():
            time.sleep(SUPERVISE_EVERY_S)
            with self._lock:
                if not self._supervising.is_set():
                    return
                for name, process in list(self.processes.items()):
                    code = process.poll()
                    if code is None or time.monotonic() - self._started[name] < RESTART_AFTER_S:
                        continue
                    module, args = self._commands[name]
                    if name != "controller" and "--await-restore" not in args:
                        args = [*args, "--await-restore"]
                    self._spawn(name, module, *args)
                    self.restarts.append((name, code))

    def stop(self) -> None:
        """Stop every process: SIGTERM, then SIGKILL for any still running after a grace."""
        self._supervising.clear()
        if self._supervisor is not None:
            self._supervisor.join()
            self._supervisor = None
        for process in self.processes.values():
            if process.poll() is None:
                _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()
        self.processes.clear()

    @property
    def pids(self) -> dict[str, int]:
        """The process id of the controller and of each node."""
        return {name: p.pid for name, p in self.processes.items()}

    # --------------------------------------------------------- the REST API
    def trigger(
        self,
        node: str | None = None,
        snapshot_type: str = "full",
        storage: str | None = None,
    ) -> str:
        """Ask ``node`` (default: the first) to initiate a snapshot; returns its id."""
        spec = self._spec()
        body: dict[str, Any] = {
            "initiated_by_node_id": node or spec.ids[0],
            "snapshot_type": snapshot_type,
        }
        if storage is not None:
            body["target_storage_uri"] = storage
        return str(self.request("POST", "/v1/snapshots/trigger", body)["snapshot_id"])

    def crash(self, node: str) -> dict[str, Any]:
        """Have ``node`` killed (SIGKILL), as a crash would (the controller's API)."""
        return self.request("POST", f"/v1/nodes/{urllib.parse.quote(node)}/crash")

    def restore(self, snapshot_id: str = "latest") -> dict[str, Any]:
        """Roll every node back to ``snapshot_id`` (default: the latest COMPLETED)."""
        return self.request("POST", f"/v1/snapshots/{urllib.parse.quote(snapshot_id)}/restore")

    def cleanup(self, snapshot_id: str) -> dict[str, Any]:
        """What each node freed when the failed ``snapshot_id`` was cleaned up."""
        return self.request("GET", f"/v1/snapshots/{urllib.parse.quote(snapshot_id)}/cleanup")

    def cluster(self) -> dict[str, Any]:
        """The controller's view: each node's health (from its heartbeats), epoch and
        buffers, and the cluster's settings."""
        return self.request("GET", "/v1/cluster")

    def status(self, snapshot_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/snapshots/{urllib.parse.quote(snapshot_id)}")

    def wait(self, snapshot_id: str, timeout: float = 60.0) -> dict[str, Any]:
        """Poll until ``snapshot_id`` is COMPLETED or FAILED; its status then.

        ``timeout`` (wall seconds) is a backstop for a cluster that stopped answering.
        """
        deadline = time.monotonic() + timeout
        while True:
            answer = self.status(snapshot_id)
            if answer["status"] in ("COMPLETED", "FAILED"):
                return answer
            if time.monotonic() > deadline:
                raise LiveClusterError(
                    f"{snapshot_id} is still {answer['status']} after {timeout} s"
                )
            time.sleep(0.05)

    def request(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        """One call of the controller's API; :class:`LiveClusterError` with its answer on
        an error status."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token is not None:
            headers.update(bearer(self.token))
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return dict(json.loads(answer.read()))
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")
            raise LiveClusterError(f"{method} {path}: {e.code} {detail}") from None

    # ---------------------------------------------------------- the check
    def check(self, snapshot_id: str) -> LiveCheck:
        """The engine's verdict on a completed snapshot (see :mod:`.runlog`)."""
        spec = self._spec()
        status = self.status(snapshot_id)
        if status["status"] != "COMPLETED":
            raise LiveClusterError(f"{snapshot_id} is {status['status']}, not COMPLETED")
        parts, raw = stored_parts(spec, snapshot_id, status)
        # The causes of the parts' ends: a node's log up to its own part is on disk
        # before the part is; later actions of it that another part depends on are
        # written when asked for its health (or when it stopped).
        upto = causes_of(spec, (p["done_clock"] for p in raw.values()))
        self.health()
        folders = {str(p.get("log_folder", "")) for p in raw.values()}
        folder = folders.pop() if len(folders) == 1 else ""
        if not folder or "/" in folder or folder.startswith("."):
            raise LiveClusterError(f"{snapshot_id}: its parts do not name one run's logs")
        logs = self.workdir / "logs" / folder
        pruned = LiveClusterError(
            f"{snapshot_id}: its run's logs were pruned past its start "
            f"({logs / BASE_FILE}); only the retained snapshots can be checked"
        )
        base: LogBase | None = None
        for attempt in range(3):
            try:
                base = load_base(spec, logs)
                if base is not None and (
                    snapshot_id in base.start.closed or any(upto[n] < base.upto[n] for n in upto)
                ):
                    raise pruned
                sim = replay_logs(spec, logs, base, upto)
                break
            except RunLogError as e:
                # the controller may have moved the logs' base and deleted segments
                # while they were read: they are read again from the new base
                try:
                    moved = load_base(spec, logs) != base
                except RunLogError:
                    moved = False
                if attempt == 2 or not moved:
                    raise LiveClusterError(
                        f"{snapshot_id}: its run cannot be replayed: {e}"
                    ) from None
        # begun before a base moved meanwhile
        if snapshot_id not in sim.algorithm.snapshot_records():
            raise pruned
        check = check_live_snapshot(spec, parts, sim, snapshot_id)
        return check if base is None else dataclasses.replace(check, from_base=True)

    # ------------------------------------------------------------ helpers
    def _spec(self) -> ClusterSpec:
        if self.spec is None:
            raise LiveClusterError("the cluster is not started")
        return self.spec

    def _spawn(self, name: str, module: str, *args: str) -> None:
        again = name in self._commands  # a restart: what the process said before stays
        self._commands[name] = (module, list(args))
        self._started[name] = time.monotonic()
        err = (self.workdir / f"{name}.err").open("ab" if again else "wb")
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: stopped with everything it started
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        err.close()

    def _answers(self, path: str) -> bool:
        try:
            self.request("GET", path)
        except (OSError, LiveClusterError):
            return False
        return True

    def health(self) -> dict[str, dict[str, int] | None]:
        """Each node's balance, transfers sent and received so far, output streams open
        of all, and epoch (``None``: the node does not answer). Asking also makes each
        node flush its log."""
        import grpc

        from .rpc import protos, services, token_metadata

        answers: dict[str, dict[str, int] | None] = {}
        for node in self._spec().nodes:
            with grpc.insecure_channel(node.address) as channel:
                try:
                    a = services.NodeControlStub(channel).Health(
                        protos.HealthRequest(), timeout=5, metadata=token_metadata(self.token)
                    )
                except grpc.RpcError:
                    answers[node.id] = None
                    continue
            answers[node.id] = {
                "balance": a.balance,
                "sent": a.sent,
                "received": a.received,
                "streams_open": a.streams_open,
                "streams": a.streams,
                "epoch": a.epoch,
            }
        return answers

    def _all_up(self) -> bool:
        """Every node answers, with every output stream open (a snapshot triggered
        earlier would find channels still connecting)."""
        return all(
            answer is not None and answer["streams_open"] == answer["streams"]
            for answer in self.health().values()
        )

    def _wait_until(self, ready: Any, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready():
            for name, process in self.processes.items():
                if process.poll() is not None:
                    err = (self.workdir / f"{name}.err").read_text(errors="replace")
                    raise LiveClusterError(f"{name} exited ({process.returncode}):\n{err}")
            if time.monotonic() > deadline:
                raise LiveClusterError(f"{what} did not answer within {START_TIMEOUT_S} s")
            time.sleep(0.1)


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has gone already
        os.killpg(process.pid, sig)


def _storage_root(given: str | Path | None, storage: str, workdir: Path) -> Path:
    """The folder file:// targets must be in: ``given``; else ``workdir``, or the default
    storage's own folder when that is a file:// one outside ``workdir``."""
    if given is not None:
        return Path(given).resolve()
    try:
        default = parse_storage_uri(storage)
    except StorageError:
        return workdir  # the controller says what is wrong with the storage itself
    if default.scheme == "file":
        folder = Path(default.path).resolve()
        if not folder.is_relative_to(workdir):
            return folder
    return workdir


def stored_parts(
    spec: ClusterSpec, snapshot_id: str, status: dict[str, Any]
) -> tuple[dict[str, CheckedPart], dict[str, dict[str, Any]]]:
    """Each node's part of completed ``snapshot_id`` (whose ``status`` the controller
    gave), read back as a restore reads it: the bytes the manifest's SHA-256 names,
    checked field by field; and each part as stored. :class:`LiveClusterError` naming
    the manifest or the part, and what is wrong."""
    uri = str(status.get("checkpoint_manifest_uri") or "")
    try:
        data = read(uri)
    except (OSError, StorageError) as e:
        raise LiveClusterError(
            f"{snapshot_id}: manifest {uri or '(none)'}: cannot be read ({e})"
        ) from None
    kept = status.get("checkpoint_manifest_sha256")
    try:
        check_stored_manifest(data, uri, kept if isinstance(kept, str) else None)
    except PartError as e:
        raise LiveClusterError(f"{snapshot_id}: {e}") from None
    try:
        manifest = json.loads(data)
        listed = {str(entry["node_id"]): entry for entry in manifest["parts"]}
    except (ValueError, KeyError, TypeError) as e:
        raise LiveClusterError(
            f"{snapshot_id}: manifest {uri or '(none)'}: cannot be read ({e})"
        ) from None
    checked: dict[str, CheckedPart] = {}
    raw: dict[str, dict[str, Any]] = {}
    network = spec.network()
    for node in spec.ids:
        if node not in listed:
            raise LiveClusterError(f"{snapshot_id}: manifest {uri}: no part of {node}")
        part_uri = str(listed[node].get("part_uri", ""))
        try:
            data = read(part_uri)
            recorded_sha256 = listed[node].get("sha256")
            if not isinstance(recorded_sha256, str) or not recorded_sha256:
                raise PartError(f"{snapshot_id}: manifest {uri}: no SHA-256 of {node}'s part")
            checked[node] = check_stored_part(
                data, part_uri, recorded_sha256, snapshot_id=snapshot_id, node_id=node,
                network=network,
            )  # fmt: skip
        except (OSError, StorageError) as e:
            raise LiveClusterError(f"{node}'s part of {snapshot_id}: {e}") from None
        except PartError as e:
            raise LiveClusterError(str(e)) from None
        raw[node] = json.loads(data)
        clock = raw[node].get("done_clock")
        if not (
            isinstance(clock, list)
            and len(clock) == len(spec.ids)
            and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in clock)
        ):
            raise LiveClusterError(
                f"{node}'s part of {snapshot_id} ({part_uri}): done_clock: a list of "
                f"{len(spec.ids)} whole numbers at least 0 expected, got {clock!r:.60}"
            )
    recorded = sum(part.total for part in checked.values())
    if manifest.get("recorded_total") != recorded:
        raise LiveClusterError(
            f"{snapshot_id}: manifest {uri}: its recorded_total says "
            f"{manifest.get('recorded_total')}, its parts hold {recorded}"
        )
    return checked, raw

"""``snapshotlib live up|trigger|status|check|crash|restore|down``: a cluster from the shell.

``up`` runs in the foreground: it starts the controller and the nodes, prints the API's
URL and waits; Ctrl-C (or ``snapshotlib live down`` from another terminal) stops every
process it started. The other commands find the cluster through its folder
(``--workdir``, by default ``./snapshotlib-live``), where ``up`` keeps the cluster's
spec, the nodes' logs, the registry and the checkpoints.

This module imports nothing heavy: the live extra is loaded when a command runs, and a
missing one is a one-line message naming the extra.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from . import hub
from .serve import at_least_one
from .spec import MARKER_MODES
from .up_record import read_record, record_file, write_record

DEFAULT_WORKDIR = "snapshotlib-live"


class LiveCommandError(Exception):
    """A user mistake or a missing piece, said in one line."""


def add_live_commands(sub: Any) -> None:
    """Add ``live`` and its subcommands to the ``snapshotlib`` parser ``sub``."""
    live = sub.add_parser("live", help="run the snapshot service on real processes (live lab)")
    commands = live.add_subparsers(dest="live_command", required=True)

    def workdir(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--workdir",
            default=DEFAULT_WORKDIR,
            help=f"the cluster's folder: spec, logs, registry, checkpoints ({DEFAULT_WORKDIR})",
        )

    p = commands.add_parser("up", help="start the controller and the nodes; Ctrl-C stops them")
    p.add_argument("--nodes", type=int, default=5, help="number of nodes (5)")
    p.add_argument(
        "--topology", choices=("complete", "ring", "random"), default="complete", help="(complete)"
    )
    p.add_argument("--rate", type=float, default=50.0, help="transfers per node per second (50)")
    p.add_argument(
        "--markers",
        choices=MARKER_MODES,
        default="in-band",
        help="in-band: on each channel's ordered stream (FIFO); out-of-band: the text's "
        "SendMarker call on a connection of its own, which data can overtake (in-band)",
    )
    p.add_argument(
        "--marker-delay-ms",
        type=int,
        default=0,
        help="hold every marker up this long: in band, what follows it on its channel "
        "waits too; out of band, data overtakes it (0)",
    )
    p.add_argument("--money", type=int, default=1000, help="money each node starts with (1000)")
    p.add_argument(
        "--ttl-ms", type=int, default=30000, help="a snapshot's time-to-live, in ms (30000)"
    )
    p.add_argument(
        "--heartbeat-ms", type=int, default=500, help="how often nodes send heartbeats (500)"
    )
    p.add_argument(
        "--heartbeat-timeout-ms",
        type=int,
        default=5000,
        help="a node silent this long has left the cluster (5000)",
    )
    p.add_argument(
        "--registry",
        help="registry URL, sqlite:////abs/file.db or postgresql://user@host/db "
        "(default: SQLite in the workdir)",
    )
    p.add_argument(
        "--storage",
        help="default target_storage_uri, file:///abs/dir/, s3://bucket/prefix/ or "
        "http://host:port/prefix/ (default: file:// in the workdir)",
    )
    p.add_argument(
        "--storage-root",
        help="file:// targets of a trigger must be in this folder (default: the workdir, "
        "or the --storage folder when that is outside it)",
    )
    p.add_argument(
        "--allow-endpoint",
        action="append",
        default=[],
        metavar="HOST:PORT",
        help="an http:// server a trigger may target (repeatable; --storage's always may)",
    )
    p.add_argument(
        "--allow-bucket",
        action="append",
        default=[],
        metavar="BUCKET",
        help="an s3:// bucket a trigger may target (repeatable; --storage's always may)",
    )
    p.add_argument(
        "--retain",
        type=at_least_one,
        metavar="N",
        help="keep the last N completed snapshots and prune older parts, chunks, rows and "
        "the log segments only they needed (default: keep every one)",
    )
    p.add_argument(
        "--state-keys", type=int, default=1, help="accounts each node's money is kept in (1)"
    )
    p.add_argument("--chunk-keys", type=int, default=1, help="accounts per checkpoint chunk (1)")
    p.add_argument(
        "--key-bytes", type=int, default=0, help="bytes each account's entry is padded with (0)"
    )
    p.add_argument(
        "--upload-jitter-ms",
        type=int,
        default=0,
        help="a node waits a random 0..N ms before writing its part (0)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the nodes' transfers (0)")
    p.add_argument(
        "--algorithm",
        metavar="MODULE:CLASS",
        default="",
        help="the snapshot algorithm the nodes run: a class of your own, MODULE:CLASS or "
        "FILE.py:CLASS (default: the engine's Chandy-Lamport)",
    )
    workdir(p)
    p.set_defaults(func=cmd_up)

    p = commands.add_parser("trigger", help="ask a node to initiate a snapshot; prints its id")
    p.add_argument("--node", help="initiating node (default: the first)")
    p.add_argument("--type", choices=("full", "incremental"), default="full", help="(full)")
    p.add_argument("--storage", help="target_storage_uri (default: the controller's)")
    p.add_argument("--wait", action="store_true", help="wait until it completes or fails")
    workdir(p)
    p.set_defaults(func=cmd_trigger)

    p = commands.add_parser("status", help="one snapshot's metadata, or all of them")
    p.add_argument("snapshot_id", nargs="?", help="the snapshot (default: list every one)")
    workdir(p)
    p.set_defaults(func=cmd_status)

    p = commands.add_parser("check", help="the engine's checks of a completed snapshot")
    p.add_argument("snapshot_id")
    p.add_argument("--shiviz", metavar="FILE", help="write the assembled run as a ShiViz log")
    p.add_argument(
        "--scenario",
        metavar="FILE",
        help="write the assembled run as a scenario (JSON), for the Explorer, the "
        "CommutationStepper and `snapshotlib run`",
    )
    workdir(p)
    p.set_defaults(func=cmd_check)

    p = commands.add_parser("crash", help="kill a node (SIGKILL), as a crash would")
    p.add_argument("node", help="the node to kill, e.g. P3")
    workdir(p)
    p.set_defaults(func=cmd_crash)

    p = commands.add_parser(
        "restore", help="roll every node back to a completed snapshot (default: the latest)"
    )
    p.add_argument("snapshot_id", nargs="?", default="latest", help="(latest)")
    workdir(p)
    p.set_defaults(func=cmd_restore)

    p = commands.add_parser("down", help="stop the cluster that `live up` started")
    workdir(p)
    p.set_defaults(func=cmd_down)

    p = commands.add_parser(
        "lab",
        help="grade a snapshot algorithm of your own on real processes: random snapshots, "
        "a crash and a restore, every snapshot checked by the engine",
    )
    p.add_argument(
        "--algorithm", metavar="MODULE:CLASS", required=True, help="MODULE:CLASS or FILE.py:CLASS"
    )
    p.add_argument("--snapshots", type=int, default=6, help="snapshots to take (6)")
    p.add_argument("--nodes", type=int, default=4, help="nodes, on a complete graph (4)")
    p.add_argument("--no-crash", action="store_true", help="take the snapshots without a crash")
    p.add_argument("--seed", type=int, default=0, help="seed of the moments, initiators, crash (0)")
    p.add_argument(
        "--workdir",
        help="where the cluster's files go (default: a new temporary folder, kept to read)",
    )
    p.set_defaults(func=cmd_lab)


def run(args: argparse.Namespace) -> int:
    """Run a ``live`` subcommand: its exit status, or 2 with a one-line error."""
    try:
        code: int = args.func(args)
    except LiveCommandError as e:
        print(f"snapshotlib live: error: {e}", file=sys.stderr)
        return 2
    return code


def _live() -> Any:
    """The live lab's cluster module, or a one-line error naming the extra."""
    try:
        import fastapi  # noqa: F401  (the controller's; imported here to name a missing extra)
        import grpc  # noqa: F401
        import sqlalchemy  # noqa: F401
        import uvicorn  # noqa: F401

        from . import cluster
    except ModuleNotFoundError as e:
        if e.name is None or e.name.split(".")[0] == "snapshotlib":
            raise
        raise LiveCommandError(
            f"needs {e.name}: pip install 'snapshotlib[live]' (the live lab's extra)"
        ) from None
    return cluster


def _attach(args: argparse.Namespace) -> Any:
    cluster = _live()
    try:
        return cluster.LiveCluster.attach(args.workdir)
    except cluster.LiveClusterError as e:
        raise LiveCommandError(f"{e} (start one with: snapshotlib live up)") from None


def _call(what: Any) -> Any:
    """``what()``; the controller's refusal or absence as a one-line error."""
    cluster = _live()
    try:
        return what()
    except cluster.LiveClusterError as e:
        raise LiveCommandError(str(e)) from None
    except OSError as e:
        raise LiveCommandError(
            f"the controller does not answer ({e}); is the cluster up?"
        ) from None


def cmd_up(args: argparse.Namespace) -> int:
    cluster_module = _live()
    folder = Path(args.workdir).resolve()
    running = read_record(folder)
    if running is not None and running.running():
        raise LiveCommandError(f"a cluster already runs from {folder} (snapshotlib live down)")
    try:
        cluster = cluster_module.LiveCluster(
            args.nodes,
            args.topology,
            rate=args.rate,
            initial_money=args.money,
            seed=args.seed,
            workdir=folder,
            registry=args.registry,
            storage=args.storage,
            storage_root=args.storage_root,
            allow_endpoints=tuple(args.allow_endpoint),
            allow_buckets=tuple(args.allow_bucket),
            retain=args.retain,
            markers=args.markers,
            marker_delay_ms=args.marker_delay_ms,
            ttl_ms=args.ttl_ms,
            heartbeat_ms=args.heartbeat_ms,
            heartbeat_timeout_ms=args.heartbeat_timeout_ms,
            state_keys=args.state_keys,
            chunk_keys=args.chunk_keys,
            key_bytes=args.key_bytes,
            upload_jitter_ms=args.upload_jitter_ms,
            algorithm=args.algorithm,
        )
    except ValueError as e:
        raise LiveCommandError(str(e)) from None
    stop = False

    def on_signal(signum: int, frame: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    record = None
    try:
        try:
            cluster.start()
        except (cluster_module.LiveClusterError, ValueError) as e:
            raise LiveCommandError(str(e)) from None
        record = write_record(folder)
        late = f", {args.marker_delay_ms} ms late" if args.marker_delay_ms else ""
        shape = f"{args.topology}, markers {args.markers}{late}"
        if args.algorithm:
            shape += f", running {args.algorithm}"
        print(f"live cluster of {args.nodes} nodes ({shape}) up")
        print(f"  API:   {cluster.url}   (docs: {cluster.url}/docs)")
        print(
            f"  token: {cluster.token_file}   (every call sends it: Authorization: Bearer "
            "TOKEN; in the docs, Authorize)"
        )
        through = hub.proxied_path(cluster.url)
        if through is not None:
            print(f"  in your browser: {through}/docs after the address your lab is open at")
        elif hub.inside_a_hub():
            print(hub.NO_PROXY_NOTE)
        print(f"  files: {folder}")
        print(
            "  snapshotlib live trigger | status | check ID | crash NODE | restore | down;"
            "  Ctrl-C stops it",
            flush=True,
        )
        seen = 0
        while not stop:
            for name, code in cluster.restarts[seen:]:  # the supervisor's work, said
                what = "awaiting a restore" if name != "controller" else "on the same registry"
                print(f"  {name} exited ({code}): started again, {what}", flush=True)
            seen = len(cluster.restarts)
            time.sleep(0.2)
        return 0
    finally:
        cluster.stop()
        if record is not None and read_record(folder) == record:  # not another `up`'s
            record_file(folder).unlink(missing_ok=True)
        print("live cluster stopped", flush=True)


def cmd_trigger(args: argparse.Namespace) -> int:
    cluster = _attach(args)
    sid = _call(lambda: cluster.trigger(args.node, args.type, args.storage))
    if not args.wait:
        print(sid)
        return 0
    answer = _call(lambda: cluster.wait(sid))
    print(json.dumps(answer, indent=1))
    return 0 if answer["status"] == "COMPLETED" else 1


def cmd_status(args: argparse.Namespace) -> int:
    cluster = _attach(args)
    if args.snapshot_id:
        print(json.dumps(_call(lambda: cluster.status(args.snapshot_id)), indent=1))
    else:
        print(json.dumps(_call(lambda: cluster.request("GET", "/v1/snapshots")), indent=1))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    cluster = _attach(args)
    check = _call(lambda: cluster.check(args.snapshot_id))
    print(f"{args.snapshot_id}: {'consistent' if check.ok else 'NOT consistent'}")
    print(f"  money recorded {check.recorded_total} of {check.expected_total}")
    print(f"  the engine's replay records the same: {'yes' if check.same_as_engine else 'no'}")
    if check.reason:
        print(f"  {check.reason}")
    if check.from_base:
        print("  replayed from the logs' base (--retain pruned the actions before it)")
    if args.shiviz or args.scenario:
        _write_run(check.simulator, args, check.from_base)
    return 0 if check.ok else 1


def _write_run(sim: Any, args: argparse.Namespace, from_base: bool) -> None:
    """The assembled run, as a ShiViz log and as a scenario that replays it (from the
    logs' base, where the run before it was pruned: its transfers in flight there are
    its first sends)."""
    from ..formats.record import recorded_scenario
    from ..formats.shiviz import to_shiviz

    try:
        if args.shiviz:
            Path(args.shiviz).write_text(to_shiviz(sim), encoding="utf-8")
            print(f"  wrote {args.shiviz} (ShiViz)")
        if args.scenario:
            name = f"live {args.snapshot_id}" + (" (from the logs' base)" if from_base else "")
            scenario = recorded_scenario(sim, name=name)
            Path(args.scenario).write_text(json.dumps(scenario, indent=1), encoding="utf-8")
            print(f"  wrote {args.scenario} (scenario)")
    except OSError as e:
        raise LiveCommandError(str(e)) from None


def cmd_crash(args: argparse.Namespace) -> int:
    cluster = _attach(args)
    answer = _call(lambda: cluster.crash(args.node))
    print(f"{answer['node_id']} {answer['detail']}")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    cluster = _attach(args)
    answer = _call(lambda: cluster.restore(args.snapshot_id))
    print(json.dumps(answer, indent=1))
    return 0


def cmd_lab(args: argparse.Namespace) -> int:
    _live()
    from .lab import run_lab

    print(f"the live lab: {args.algorithm} on {args.nodes} nodes", flush=True)
    try:
        report = run_lab(
            args.algorithm,
            snapshots=args.snapshots,
            nodes=args.nodes,
            crash=not args.no_crash,
            seed=args.seed,
            workdir=args.workdir,
            say=lambda line: print(f"  {line}", flush=True),
        )
    except (ValueError, RuntimeError) as e:  # a class refused, a cluster that cannot start
        raise LiveCommandError(str(e)) from None
    print(report.summary())
    return 0 if report.ok else 1


def cmd_down(args: argparse.Namespace) -> int:
    folder = Path(args.workdir).resolve()
    record = read_record(folder)
    if record is None or not record.running():
        if record_file(folder).exists():  # stale: its process is gone, or is another now
            record_file(folder).unlink(missing_ok=True)
        raise LiveCommandError(f"no live cluster runs from {folder}")
    os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30  # a backstop: `up` stops its processes, then exits
    while record.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    if record.running():
        raise LiveCommandError(f"`live up` (pid {record.pid}) did not stop within 30 s")
    print("live cluster stopped")
    return 0

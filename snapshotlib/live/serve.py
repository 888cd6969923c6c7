"""The controller as a process: ``python -m snapshotlib.live.serve --spec SPEC.json
--registry URL --storage URI --storage-root DIR --token-file WORKDIR/api-token``.

Serves :func:`snapshotlib.live.controller.create_app` with uvicorn on the spec's
controller address; :class:`~snapshotlib.live.cluster.LiveCluster` and ``snapshotlib
live up`` start it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlsplit

from .api_token import TokenError, read_token
from .hub import proxied_path
from .spec import ClusterSpec
from .storage_policy import add_storage_arguments, storage_policy_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the controller of a live snapshotlib cluster")
    parser.add_argument("--spec", type=Path, required=True, help="the cluster's spec (JSON)")
    parser.add_argument("--registry", required=True, help="registry URL, e.g. sqlite:////abs.db")
    parser.add_argument(
        "--exit-with-parent", action="store_true", help="stop when the starting process is gone"
    )
    parser.add_argument("--journal", type=Path, help="append the decisive events here (JSONL)")
    parser.add_argument(
        "--token-file", type=Path, required=True, help="the cluster's API token (api-token)"
    )
    add_storage_arguments(parser)
    parser.add_argument(
        "--retain", type=at_least_one, help="keep the last N completed snapshots (all if unset)"
    )
    parser.add_argument(
        "--logs", type=Path, help="the nodes' log folder (with --retain, pruned as well)"
    )
    args = parser.parse_args(argv)
    try:
        spec = ClusterSpec.from_json(args.spec.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"snapshotlib live controller: {args.spec}: {e}", file=sys.stderr)
        return 2
    try:
        token = read_token(args.token_file)
    except TokenError as e:
        print(f"snapshotlib live controller: {e}", file=sys.stderr)
        return 2
    address = urlsplit(spec.controller)
    if not address.hostname or not address.port:
        print(
            f"snapshotlib live controller: {args.spec}: controller: no host:port", file=sys.stderr
        )
        return 2

    import uvicorn

    from .lifetime import exit_with_parent

    if args.exit_with_parent:
        exit_with_parent()

    from .controller import create_app
    from .registry import RegistryError
    from .storage import StorageError

    try:
        policy = storage_policy_of(args)
        app = create_app(
            spec,
            args.registry,
            args.storage,
            journal=args.journal,
            token=token,
            storage_policy=policy,
            retain=args.retain,
            run_logs=args.logs,
        )
    except (RegistryError, StorageError) as e:  # a user's URL: one line, no traceback
        print(f"snapshotlib live controller: {e}", file=sys.stderr)
        return 2
    # in a hub session a browser reaches the API through jupyter-server-proxy, which
    # strips its path: the API pages must ask for their OpenAPI document under it
    root_path = proxied_path(spec.controller) or ""
    uvicorn.run(
        app, host=address.hostname, port=address.port, log_level="warning", root_path=root_path
    )
    return 0


def at_least_one(text: str) -> int:
    """An option's whole number, at least 1 (``--retain``)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"a whole number at least 1 expected, got {text!r}")
    return value


if __name__ == "__main__":
    sys.exit(main())

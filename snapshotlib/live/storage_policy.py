"""Where a cluster may write and read: fixed when it starts, checked at every trigger,
by every node before it writes a part, and before it reads one in a restore.

A trigger's ``target_storage_uri`` comes over the network. Unchecked, it would have the
nodes and the controller write parts and manifests into any folder the cluster's user
can write (``file:///etc/``, ``..`` in a path, a symbolic link out), or PUT and GET at any
address (``http://``). So the cluster's owner fixes, at ``live up``:

* a **storage root**: a ``file://`` target must be that folder or inside it, after
  ``..`` and symbolic links are resolved (and a URI that spells ``..`` is refused
  outright, whatever it resolves to); the default is the cluster's workdir;
* the **endpoints** an ``http://`` target may name (``host:port``) and the **buckets** an
  ``s3://`` target may (its endpoint is the AWS configuration's); the cluster's default
  storage is always allowed.

A URI longer than :data:`MAX_URI_CHARS` is refused before anything is parsed.

The controller checks a trigger's target before anything is registered; the nodes check
again, since a target reaches them in control calls and in markers (a caller holding
the cluster's token could otherwise send a node one the controller never saw), and a
restore's part and chunk URIs before fetching them.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from .storage import StorageError, StorageLocation, parse_storage_uri

#: the longest target_storage_uri taken
MAX_URI_CHARS = 1024
#: the longest URI of a stored object (a part, a chunk) a node writes or reads: its
#: folder's, percent-encoded (at most three characters for each of a target's), and a name
MAX_OBJECT_URI_CHARS = 3 * MAX_URI_CHARS + 256


@dataclass(frozen=True)
class StoragePolicy:
    """The storage a cluster may write to (see the module docstring).

    Attributes
    ----------
    root
        The folder ``file://`` targets must be in (an absolute path).
    endpoints
        ``host:port`` of the ``http://`` servers allowed.
    buckets
        The ``s3://`` buckets allowed.
    """

    root: str
    endpoints: tuple[str, ...] = field(default=())
    buckets: tuple[str, ...] = field(default=())

    @classmethod
    def around(
        cls,
        root: str,
        default_storage: str,
        endpoints: tuple[str, ...] = (),
        buckets: tuple[str, ...] = (),
    ) -> StoragePolicy:
        """A policy with ``root``, ``endpoints`` and ``buckets``, and whatever
        ``default_storage`` (the cluster's default target) needs: its endpoint or its
        bucket; a default folder outside ``root`` is :class:`StorageError`."""
        default = parse_storage_uri(default_storage)
        hosts, names = list(endpoints), list(buckets)
        if default.scheme == "http":
            hosts.append(default.bucket)
        elif default.scheme == "s3":
            names.append(default.bucket)
        policy = cls(
            os.path.realpath(root), tuple(dict.fromkeys(hosts)), tuple(dict.fromkeys(names))
        )
        if default.scheme == "file" and not policy._inside(default.path):
            raise StorageError(
                f"storage: the default storage {default.uri} is outside the storage root "
                f"{policy.root}"
            )
        return policy

    def check(
        self, uri: str, what: str = "target_storage_uri", longest: int = MAX_URI_CHARS
    ) -> StorageLocation:
        """``uri`` parsed, if the cluster may write (or read) there; :class:`StorageError`
        naming ``what`` (the field the URI came in) and saying what is allowed if not.
        ``longest``: the most characters taken (a stored object's URI is longer than its
        target: :data:`MAX_OBJECT_URI_CHARS`)."""
        if not isinstance(uri, str):
            raise StorageError(f"{what}: a URI expected, got {uri!r}")
        if len(uri) > longest:
            raise StorageError(f"{what}: at most {longest} characters, got {len(uri):,}")
        try:
            location = parse_storage_uri(uri)
        except StorageError as e:
            raise StorageError(f"{what}: {str(e).removeprefix('target_storage_uri: ')}") from None
        if ".." in unquote(urlsplit(uri).path).split("/"):
            raise StorageError(f"{what}: '..' is not allowed in a path, got {uri!r}")
        if location.scheme == "file" and not self._inside(location.path):
            raise StorageError(
                f"{what}: a file:// URI must be in the cluster's storage root "
                f"{self.root} (fixed at `live up --storage-root`), got {uri!r}"
            )
        if location.scheme == "http" and location.bucket not in self.endpoints:
            allowed = ", ".join(self.endpoints) or "none"
            raise StorageError(
                f"{what}: http:// storage only on the endpoints allowed at "
                f"`live up --allow-endpoint` ({allowed}), got {location.bucket!r} in {uri!r}"
            )
        if location.scheme == "s3" and location.bucket not in self.buckets:
            allowed = ", ".join(self.buckets) or "none"
            raise StorageError(
                f"{what}: s3:// storage only in the buckets allowed at "
                f"`live up --allow-bucket` ({allowed}), got {location.bucket!r} in {uri!r}"
            )
        return location

    def _inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return os.path.commonpath([real, self.root]) == self.root


def add_storage_arguments(parser: argparse.ArgumentParser) -> None:
    """The options by which ``live up`` tells the controller and every node the same
    policy: the default storage, the root, the endpoints and the buckets."""
    parser.add_argument("--storage", required=True, help="default target_storage_uri")
    parser.add_argument("--storage-root", required=True, help="file:// targets must be in it")
    parser.add_argument(
        "--allow-endpoint", action="append", default=[], help="an http:// target's host:port"
    )
    parser.add_argument("--allow-bucket", action="append", default=[], help="an s3:// bucket")


def storage_policy_of(args: argparse.Namespace) -> StoragePolicy:
    """The policy the options of :func:`add_storage_arguments` give."""
    return StoragePolicy.around(
        args.storage_root, args.storage, tuple(args.allow_endpoint), tuple(args.allow_bucket)
    )

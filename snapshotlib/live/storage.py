"""Where checkpoints go: storage addressed by a ``target_storage_uri``.

Nodes write their parts and the controller writes each snapshot's manifest through this
module, so both agree on which URIs are valid and on how a file is made durable. Only
``file://`` directories are supported; ``s3://`` URIs are recognised, and refused with a
message saying so. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: what a valid ``target_storage_uri`` looks like, for error messages
EXPECTED = "a file:// URI of an absolute directory, such as file:///var/snapshots/"


class StorageError(ValueError):
    """A storage URI or name that cannot be used, or a write that failed."""


@dataclass(frozen=True)
class StorageLocation:
    """A parsed storage URI: a directory that checkpoint files go into.

    Attributes
    ----------
    scheme
        ``"file"`` (the only scheme this installation writes to).
    path
        The directory's absolute, normalised path.
    """

    scheme: str
    path: str

    @property
    def uri(self) -> str:
        """The directory's canonical URI, ending in ``/``."""
        uri = Path(self.path).as_uri()
        return uri if uri.endswith("/") else uri + "/"

    def file_uri(self, name: str) -> str:
        """The URI of file ``name`` in this directory."""
        return Path(self.path, check_name(name)).as_uri()


def parse_storage_uri(uri: str) -> StorageLocation:
    """Read a ``target_storage_uri``; :class:`StorageError` naming the field if invalid.

    >>> parse_storage_uri("file:///tmp/snaps/").path
    '/tmp/snaps'
    """
    if not isinstance(uri, str) or not uri.strip():
        raise StorageError(f"target_storage_uri: expected {EXPECTED}, got {uri!r}")
    try:
        parts = urlsplit(uri)
    except ValueError as e:
        raise StorageError(f"target_storage_uri: {e} in {uri!r}; expected {EXPECTED}") from None
    scheme = parts.scheme.lower()
    if scheme == "s3":
        if not parts.netloc:
            raise StorageError(
                f"target_storage_uri: an s3:// URI names a bucket (s3://bucket/prefix/), "
                f"got {uri!r}"
            )
        raise StorageError(
            "target_storage_uri: s3:// storage is not available in this installation "
            f"(it needs boto3); use {EXPECTED}"
        )
    if scheme != "file":
        found = f"scheme {scheme + '://'!r}" if scheme else "no scheme"
        raise StorageError(f"target_storage_uri: expected {EXPECTED}, got {found} in {uri!r}")
    if parts.query or parts.fragment:
        raise StorageError(
            f"target_storage_uri: a file:// URI has no query or fragment, got {uri!r}"
        )
    if parts.netloc not in ("", "localhost"):
        # file://snaps/dir reads "snaps" as a host name: the path is relative or mistyped
        raise StorageError(
            f"target_storage_uri: expected {EXPECTED} (three slashes), got host "
            f"{parts.netloc!r} in {uri!r}"
        )
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise StorageError(
            f"target_storage_uri: the path must be absolute, expected {EXPECTED}, got {uri!r}"
        )
    if "\0" in path:
        raise StorageError(f"target_storage_uri: the path contains a NUL byte in {uri!r}")
    return StorageLocation("file", os.path.normpath(path))


def check_name(name: str) -> str:
    """``name`` if it is a plain file name, else :class:`StorageError`.

    Names come from snapshot and node ids; refusing separators and ``..`` keeps every
    file inside its location's directory.
    """
    if (
        not isinstance(name, str)
        or not name
        or name == "."
        or ".." in name
        or any(c in name for c in "/\\\0")
    ):
        raise StorageError(
            f"name: a plain file name (no '/', '\\', '..', not empty) expected, got {name!r}"
        )
    return name


def write_durable(location: StorageLocation, name: str, data: bytes) -> str:
    """Write ``data`` as file ``name`` in ``location``, durably; its ``file://`` URI.

    The bytes go to a temporary file in the same directory, which is flushed, fsynced
    and renamed over ``name``; then the directory is fsynced so the rename survives a
    crash. A reader therefore sees either no file or the whole file, never a torn one.
    Missing directories are created (and their parents fsynced).
    """
    check_name(name)
    if location.scheme != "file":
        raise StorageError(f"target_storage_uri: cannot write to {location.scheme}:// storage")
    target = os.path.join(location.path, name)
    uri = location.file_uri(name)
    try:
        _make_dirs(location.path)
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=location.path)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, target)
        except BaseException:
            # never leave a half-written temporary file behind
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        _fsync_dir(location.path)
    except OSError as e:
        raise StorageError(f"{uri}: could not write: {e.strerror or e}") from e
    return uri


def read(uri: str) -> bytes:
    """The bytes of the file at ``uri`` (a ``file://`` URI, as :func:`write_durable` returns)."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        raise StorageError(f"uri: expected a file:///absolute/path URI, got {uri!r}")
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise StorageError(f"uri: the path must be absolute, got {uri!r}")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise StorageError(f"{uri}: could not read: {e.strerror or e}") from e


def _make_dirs(path: str) -> None:
    """Create ``path`` and any missing parents, fsyncing each new entry's parent."""
    missing: list[str] = []
    current = path
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise
            continue  # made meanwhile by another writer, which syncs its parent
        _fsync_dir(os.path.dirname(directory))


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

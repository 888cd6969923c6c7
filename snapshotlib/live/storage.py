"""Where checkpoints go: storage addressed by a ``target_storage_uri``.

Nodes write their parts and the controller writes each snapshot's manifest through this
module, so both agree on which URIs are valid and on how an object is made durable.
Two kinds of storage:

* ``file://`` directories (the default), written with the standard library only;
* ``s3://bucket/prefix/`` through boto3 (the ``live`` extra), in :mod:`.s3`, which is
  imported only when an ``s3://`` URI is used, so this module imports without boto3.
  Where an installation has no boto3, ``s3://`` URIs are refused with a message saying
  what to install;
* ``http://host:port/prefix/``: an object store taking a PUT per object, such as the
  lab's :mod:`.throttled_store`, which answers "503 Slow Down" as S3 does under load;
  a write answered 503 is tried again after a random, growing backoff (as the AWS SDKs
  do), up to :data:`HTTP_TRIES` times.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import os
import random
import re
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit

#: what a valid ``target_storage_uri`` looks like, for error messages
EXPECTED = (
    "a file:// URI of an absolute directory, such as file:///var/snapshots/, "
    "an s3://bucket/prefix/ URI, or an http://host:port/prefix/ object store"
)
#: tries of an http:// write answered "503 Slow Down", and the first backoff (seconds),
#: doubled each time, of which a random part is waited ("full jitter", as the AWS SDKs)
HTTP_TRIES = 5
HTTP_BACKOFF_S = 0.05
#: a wall-time backstop for one http:// request (seconds)
HTTP_TIMEOUT_S = 30.0

#: how to get s3:// support, for error messages
S3_EXTRA = "it needs boto3: pip install 'snapshotlib[live]'"

#: S3 bucket names: 3 to 63 lowercase letters, digits, '.' and '-' (the other rules of
#: https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html are
#: checked one by one, to say which one a name breaks)
_BUCKET = re.compile(r"[a-z0-9.-]{3,63}")
_IPV4 = re.compile(r"\d{1,3}(\.\d{1,3}){3}")
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
#: the characters S3's documentation calls safe in object keys: they need no escaping in
#: a URI either, so an s3:// URI is the bucket and the key as they are (as the AWS CLI
#: writes them) and the same key always has the same URI
_KEY_PART = re.compile(r"[A-Za-z0-9!_.*'()-]+")
#: S3's limit on a key's length (UTF-8 bytes)
_MAX_KEY_BYTES = 1024


class StorageError(ValueError):
    """A storage URI or name that cannot be used, or a write that failed."""


@dataclass(frozen=True)
class StorageLocation:
    """A parsed storage URI: a directory, or a bucket and key prefix, that checkpoint
    objects go into.

    Attributes
    ----------
    scheme
        ``"file"`` or ``"s3"``.
    path
        ``file``: the directory's absolute, normalised path. ``s3``: the key prefix,
        without leading or trailing ``/`` (``""``: the bucket's top level).
    bucket
        ``s3``: the bucket's name (``""`` for ``file``).
    """

    scheme: str
    path: str
    bucket: str = ""

    @property
    def uri(self) -> str:
        """The location's canonical URI, ending in ``/``.

        >>> StorageLocation("s3", "run/1", "snaps").uri
        's3://snaps/run/1/'
        """
        if self.scheme == "http":
            return f"http://{self.bucket}/{self.path}/" if self.path else f"http://{self.bucket}/"
        if self.scheme == "s3":
            return f"s3://{self.bucket}/{self.path}/" if self.path else f"s3://{self.bucket}/"
        uri = Path(self.path).as_uri()
        return uri if uri.endswith("/") else uri + "/"

    def object_key(self, name: str) -> str:
        """Where object ``name`` is: its key in the bucket (``s3``) or its path (``file``)."""
        check_name(name)
        if self.scheme == "http":
            if not _KEY_PART.fullmatch(name):
                raise StorageError(
                    f"name: an http object name holds only letters, digits and !-_.*'(), "
                    f"got {name!r}"
                )
            return f"{self.path}/{name}" if self.path else name
        if self.scheme != "s3":
            return os.path.join(self.path, name)
        if not _KEY_PART.fullmatch(name):
            raise StorageError(
                f"name: an s3 object name holds only letters, digits and !-_.*'(), got {name!r}"
            )
        key = f"{self.path}/{name}" if self.path else name
        if len(key.encode()) > _MAX_KEY_BYTES:
            raise StorageError(f"name: the S3 key {key!r} is longer than {_MAX_KEY_BYTES} bytes")
        return key

    def object_uri(self, name: str) -> str:
        """The URI of object ``name`` directly in this location.

        >>> StorageLocation("s3", "run", "snaps").object_uri("snap-0001-a1b2c.json")
        's3://snaps/run/snap-0001-a1b2c.json'
        """
        if self.scheme in ("s3", "http"):
            return f"{self.scheme}://{self.bucket}/{self.object_key(name)}"
        return Path(self.object_key(name)).as_uri()


def parse_storage_uri(uri: str) -> StorageLocation:
    """Read a ``target_storage_uri``; :class:`StorageError` naming the field if invalid.

    >>> parse_storage_uri("file:///tmp/snaps/").path
    '/tmp/snaps'
    >>> parse_storage_uri("s3://Snaps/runs/1/")
    Traceback (most recent call last):
    snapshotlib.live.storage.StorageError: target_storage_uri: bucket name 'Snaps' may hold only...
    """
    if not isinstance(uri, str) or not uri.strip():
        raise StorageError(f"target_storage_uri: expected {EXPECTED}, got {uri!r}")
    try:
        parts = urlsplit(uri)
    except ValueError as e:
        raise StorageError(f"target_storage_uri: {e} in {uri!r}; expected {EXPECTED}") from None
    scheme = parts.scheme.lower()
    if scheme == "s3":
        return _parse_s3(uri, parts)
    if scheme == "http":
        return _parse_http(uri, parts)
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


def _parse_s3(uri: str, parts: SplitResult) -> StorageLocation:
    """``s3://bucket/prefix/``: the bucket's name checked, the prefix normalised."""
    if "?" in uri or "#" in uri:
        raise StorageError(
            f"target_storage_uri: an s3:// URI has no query or fragment, got {uri!r}"
        )
    location = StorageLocation("s3", _s3_prefix(parts.path, uri), _s3_bucket(parts.netloc, uri))
    _require_boto3(uri)
    return location


def _parse_http(uri: str, parts: SplitResult) -> StorageLocation:
    """``http://host:port/prefix/``: a host with a port, and a prefix of plain names."""
    if parts.query or parts.fragment or "@" in parts.netloc:
        raise StorageError(
            f"target_storage_uri: an http:// URI has no user, query or fragment, got {uri!r}"
        )
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise StorageError(f"target_storage_uri: an http:// URI needs host:port, got {uri!r}")
    path = parts.path.strip("/")
    for piece in path.split("/") if path else ():
        if not _KEY_PART.fullmatch(piece) or piece in (".", ".."):
            raise StorageError(
                f"target_storage_uri: the prefix {path!r} holds only names of letters, "
                f"digits and !-_.*'() separated by '/', in {uri!r}"
            )
    return StorageLocation("http", path, parts.netloc)


def _require_boto3(uri: str) -> None:
    """:class:`StorageError` saying what to install unless boto3 is there for ``uri``.

    Checked when a URI is parsed, so that a controller without boto3 refuses an ``s3://``
    target when it is asked for, rather than when the manifest is written.
    """
    if importlib.util.find_spec("boto3") is None:
        raise StorageError(
            f"target_storage_uri: s3:// storage is not available in this installation "
            f"({S3_EXTRA}); got {uri!r}"
        )


def _s3_bucket(bucket: str, uri: str) -> str:
    """``bucket`` if it is a valid S3 bucket name, else :class:`StorageError` saying why."""
    if not bucket:
        raise StorageError(
            f"target_storage_uri: an s3:// URI names a bucket (s3://bucket/prefix/), got {uri!r}"
        )
    if any(c in bucket for c in "@:[]"):
        # s3://host:9000/... or s3://key@bucket/...: the endpoint and the credentials are
        # the AWS configuration's, the same for every URI
        raise StorageError(
            f"target_storage_uri: an s3:// URI names a bucket, not a host, port or user (the "
            f"endpoint and credentials come from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...), "
            f"got {bucket!r} in {uri!r}"
        )
    why = _bucket_rule_broken(bucket)
    if why:
        raise StorageError(f"target_storage_uri: bucket name {bucket!r} {why}, in {uri!r}")
    return bucket


def _bucket_rule_broken(bucket: str) -> str:
    """Which S3 bucket naming rule ``bucket`` breaks (``""``: none)."""
    if not 3 <= len(bucket) <= 63:
        return "must be 3 to 63 characters long"
    if not _BUCKET.fullmatch(bucket):
        return "may hold only lowercase letters, digits, '.' and '-'"
    if not (bucket[0].isalnum() and bucket[-1].isalnum()):
        return "must begin and end with a letter or a digit"
    if ".." in bucket:
        return "may not hold two periods in a row"
    if _IPV4.fullmatch(bucket):
        return "may not look like an IP address"
    reserved = [p for p in _RESERVED_PREFIXES if bucket.startswith(p)]
    reserved += [s for s in _RESERVED_SUFFIXES if bucket.endswith(s)]
    if reserved:
        return f"may not use {reserved[0]!r}, which S3 reserves"
    return ""


def _s3_prefix(path: str, uri: str) -> str:
    """The key prefix in ``path``, normalised: no leading, trailing or doubled ``/``.

    A prefix is used as a folder, as a ``file://`` directory is, so ``s3://b/run``,
    ``s3://b/run/`` and ``s3://b//run/`` are one location. ``.`` and ``..`` are refused
    rather than resolved: S3 keys are not paths, and would keep them as they are.
    """
    segments = [s for s in path.split("/") if s]
    for segment in segments:
        if segment in (".", ".."):
            raise StorageError(
                f"target_storage_uri: an s3:// prefix has no '.' or '..' parts, got {uri!r}"
            )
        if not _KEY_PART.fullmatch(segment):
            raise StorageError(
                f"target_storage_uri: an s3:// prefix holds only letters, digits, '/' and "
                f"!-_.*'() (the characters S3 calls safe in keys), got {uri!r}"
            )
    prefix = "/".join(segments)
    if len(prefix.encode()) >= _MAX_KEY_BYTES:
        raise StorageError(
            f"target_storage_uri: the prefix is longer than S3 keys may be, in {uri!r}"
        )
    return prefix


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


class AlreadyWritten(StorageError):
    """An object written once (a snapshot's part or manifest) is there already."""


def write_durable(location: StorageLocation, name: str, data: bytes, *, once: bool = False) -> str:
    """Write ``data`` as object ``name`` in ``location``, durably; the object's URI.

    A reader sees either no object or the whole of it, never a torn one, and once this
    returns the object survives a crash of this process or machine. With ``once`` (a
    snapshot's part, its manifest) an object already there is never replaced: the same
    bytes there already (a retried write, a restarted writer) are taken as written,
    other bytes are :class:`AlreadyWritten`. ``file://``: the finished file is linked
    into place, which fails if the name is taken (where the file system has no links,
    the name is created exclusively and written in place); ``s3://`` and ``http://``: a
    conditional PUT, ``If-None-Match: *``.

    ``file://``: the bytes go to a temporary file in the same directory, which is
    flushed, fsynced and renamed over ``name``; then the directory is fsynced so the
    rename survives a crash. Missing directories are created (and their parents
    fsynced). ``s3://``: one PUT (see :func:`.s3.put`).
    """
    try:
        return _write(location, name, data, once)
    except AlreadyWritten:
        uri = location.object_uri(name)
        with contextlib.suppress(StorageError, OSError):
            if read(uri) == data:
                return uri
        raise


def _write(location: StorageLocation, name: str, data: bytes, once: bool) -> str:
    check_name(name)
    if location.scheme == "s3":
        _require_boto3(location.uri)
        from . import s3

        return s3.put(location, name, data, once=once)
    if location.scheme == "http":
        return _put_http(location.object_uri(name), data, once=once)
    if location.scheme != "file":
        raise StorageError(f"target_storage_uri: cannot write to {location.scheme}:// storage")
    target = location.object_key(name)
    uri = location.object_uri(name)
    try:
        _make_dirs(location.path)
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=location.path)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            if once:
                try:
                    os.link(temp, target)
                except FileExistsError:
                    raise AlreadyWritten(f"{uri}: already written, and written once") from None
                except OSError as e:
                    if e.errno not in _NO_LINKS:
                        raise
                    _create_exclusively(target, data, uri)
                os.unlink(temp)
            else:
                os.replace(temp, target)
        except BaseException:
            # never leave a half-written temporary file behind
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        fsync_dir(location.path)
    except OSError as e:
        raise StorageError(f"{uri}: could not write: {e.strerror or e}") from e
    return uri


#: what a file system without hard links answers os.link with (some FUSE and network
#: mounts, FAT)
_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK}


def _create_exclusively(target: str, data: bytes, uri: str) -> None:
    """Write-once where links are not to be had: the name created exclusively, then
    written and fsynced in place (a reader may see it part-written meanwhile)."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise AlreadyWritten(f"{uri}: already written, and written once") from None
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def read(uri: str) -> bytes:
    """The bytes of the object at ``uri`` (a URI as :func:`write_durable` returns)."""
    parts = urlsplit(uri)
    if parts.scheme.lower() == "s3":
        return _read_s3(uri)
    if parts.scheme.lower() == "http":
        folder, _, name = uri.rpartition("/")
        try:
            parse_storage_uri(folder + "/").object_key(name)
            with urllib.request.urlopen(uri, timeout=HTTP_TIMEOUT_S) as answer:
                return bytes(answer.read())
        except StorageError as e:
            raise StorageError(f"uri: cannot read {uri!r}: {e}") from None
        except OSError as e:
            raise StorageError(f"{uri}: could not read: {e}") from e
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        raise StorageError(
            f"uri: expected a file:///absolute/path or s3://bucket/key URI, got {uri!r}"
        )
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise StorageError(f"uri: the path must be absolute, got {uri!r}")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise StorageError(f"{uri}: could not read: {e.strerror or e}") from e


def delete(uri: str) -> None:
    """Delete the object at ``uri`` (a URI as :func:`write_durable` returns); one that
    is not there is gone already. :class:`StorageError` naming the URI otherwise."""
    folder, _, name = uri.rpartition("/")
    try:
        scheme = urlsplit(uri).scheme.lower()
        location = parse_storage_uri(folder + "/")
        location.object_key(name)
    except (StorageError, ValueError) as e:
        reason = str(e).removeprefix("target_storage_uri: ").removeprefix("name: ")
        raise StorageError(f"uri: cannot delete {uri!r}: {reason}") from None
    if scheme == "s3":
        from . import s3

        s3.delete(location, name)
        return
    if scheme == "http":
        request = urllib.request.Request(uri, method="DELETE")
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S):
                return
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return
            raise StorageError(f"{uri}: could not delete: {e.code} {e.reason}") from None
        except OSError as e:
            raise StorageError(f"{uri}: could not delete: {e}") from e
    try:
        os.unlink(unquote(urlsplit(uri).path))
    except FileNotFoundError:
        return
    except OSError as e:
        raise StorageError(f"{uri}: could not delete: {e.strerror or e}") from e


def _put_http(uri: str, data: bytes, *, once: bool = False) -> str:
    """One PUT of ``data`` to ``uri``; a "503 Slow Down" is tried again (see the module
    docstring), and still refused after :data:`HTTP_TRIES` tries, it fails. With
    ``once``, only if nothing is there (``If-None-Match: *``; 412 if something is)."""
    headers = {"If-None-Match": "*"} if once else {}
    for attempt in range(HTTP_TRIES):
        request = urllib.request.Request(uri, data, headers, method="PUT")
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S):
                return uri
        except urllib.error.HTTPError as e:
            if e.code == 412 and once:
                raise AlreadyWritten(f"{uri}: already written, and written once") from None
            if e.code != 503:
                raise StorageError(f"{uri}: could not write: {e.code} {e.reason}") from None
            if attempt + 1 == HTTP_TRIES:
                raise StorageError(
                    f"{uri}: could not write: 503 {e.reason} after {HTTP_TRIES} tries"
                ) from None
            time.sleep(random.uniform(0, HTTP_BACKOFF_S * 2**attempt))
        except OSError as e:
            raise StorageError(f"{uri}: could not write: {e}") from e
    raise AssertionError("unreachable")


def _read_s3(uri: str) -> bytes:
    """The object at ``s3://bucket/prefix/name``, its URI checked as a written one's."""
    folder, _, name = uri.rpartition("/")
    try:
        location = parse_storage_uri(folder + "/")
        location.object_key(name)
    except StorageError as e:
        reason = str(e).removeprefix("target_storage_uri: ").removeprefix("name: ")
        raise StorageError(f"uri: cannot read {uri!r}: {reason}") from None
    from . import s3

    return s3.get(location, name)


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
        fsync_dir(os.path.dirname(directory))


def fsync_dir(path: str | Path) -> None:
    """Make the entries of folder ``path`` (a file renamed or removed in it) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

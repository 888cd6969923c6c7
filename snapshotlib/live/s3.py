"""``s3://`` checkpoint storage through boto3 (the ``live`` extra); used by :mod:`.storage`.

:mod:`.storage` parses and checks the URIs and imports this module only when an
``s3://`` URI is used, so that the rest of the live lab runs without boto3.

Where the server is and who this process is come from the standard AWS configuration,
which boto3 reads itself: the environment (``AWS_ENDPOINT_URL`` for an S3-compatible
server other than AWS, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_DEFAULT_REGION``, ``AWS_PROFILE``, ...) or the shared files in ``~/.aws``. The node
and controller processes that :class:`~snapshotlib.live.cluster.LiveCluster` starts
inherit its environment, so setting these variables before starting a cluster points
all of them at the same storage.
"""

from __future__ import annotations

import os
import threading
from contextlib import closing
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from .storage import AlreadyWritten, StorageError, StorageLocation

_lock = threading.Lock()
#: the AWS environment the client was made for, and the client
_cached: tuple[tuple[tuple[str, str], ...], Any] | None = None


def client() -> Any:
    """This process's S3 client, made on first use and shared by every thread.

    boto3's clients are thread-safe but its sessions are not, so the client is made
    (with a session of its own) under a lock, then reused: the node writes its parts
    from worker threads and the controller its manifests from a thread pool. A change
    of the ``AWS_*`` environment (a test pointing at another server, say) makes a new
    client, as a new process would.
    """
    global _cached
    environment = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_")))
    with _lock:
        if _cached is None or _cached[0] != environment:
            _cached = (environment, boto3.session.Session().client("s3"))
        return _cached[1]


def put(location: StorageLocation, name: str, data: bytes, *, once: bool = False) -> str:
    """Write ``data`` as object ``name`` in ``location`` (an ``s3`` one); its URI.

    One PUT of the whole object: S3 makes an object visible only once all of it is
    stored, so a reader sees the previous version (or none) or the whole new one,
    never a torn one; and a PUT is answered with success only once the object is
    stored durably, with read-after-write consistency. That is what the temporary
    file, fsync and rename give a ``file://`` write, so no temporary object is needed.
    """
    uri, key = location.object_uri(name), location.object_key(name)
    condition = {"IfNoneMatch": "*"} if once else {}
    try:
        client().put_object(Bucket=location.bucket, Key=key, Body=data, **condition)
    except ClientError as e:
        if once and e.response.get("Error", {}).get("Code") in ("PreconditionFailed", "412"):
            raise AlreadyWritten(f"{uri}: already written, and written once") from None
        raise StorageError(f"{uri}: could not write: {_reason(e)}") from e
    except (BotoCoreError, ValueError) as e:
        raise StorageError(f"{uri}: could not write: {_reason(e)}") from e
    return uri


def get(location: StorageLocation, name: str) -> bytes:
    """The bytes of object ``name`` in ``location`` (an ``s3`` one)."""
    uri, key = location.object_uri(name), location.object_key(name)
    try:
        answer = client().get_object(Bucket=location.bucket, Key=key)
        with closing(answer["Body"]) as body:
            data: bytes = body.read()
    except (BotoCoreError, ClientError, ValueError) as e:
        raise StorageError(f"{uri}: could not read: {_reason(e)}") from e
    return data


def delete(location: StorageLocation, name: str) -> None:
    """Delete object ``name`` in ``location`` (an ``s3`` one); one not there is gone."""
    uri, key = location.object_uri(name), location.object_key(name)
    try:
        client().delete_object(Bucket=location.bucket, Key=key)
    except (BotoCoreError, ClientError, ValueError) as e:
        raise StorageError(f"{uri}: could not delete: {_reason(e)}") from e


def _reason(error: Exception) -> str:
    """What went wrong, in the server's words where it answered (``NoSuchBucket: ...``).

    ``ValueError`` is botocore's answer to a malformed ``AWS_ENDPOINT_URL``.
    """
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        code = details.get("Code") or "error"
        message = details.get("Message") or str(error)
        return f"{code}: {message}"
    return str(error) or type(error).__name__

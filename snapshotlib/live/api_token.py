"""The cluster's secret: only who can read its workdir drives it.

``live up`` (any :class:`~snapshotlib.live.cluster.LiveCluster`) writes a new random
token into ``WORKDIR/api-token``, readable by its owner only. The controller refuses a
REST call without it (401) or with another (403), the internal ones from the nodes
included; the nodes, the CLI, ``LiveCluster.attach`` and the LiveExplorer read it from
the file and send it as ``Authorization: Bearer TOKEN``; every gRPC call between the
cluster's processes carries it in its metadata (:mod:`.rpc`). On a shared host (a
JupyterHub with many users) anyone can reach 127.0.0.1, but not another user's files.

Standard library only.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

#: the token's file in a cluster's workdir
TOKEN_FILE = "api-token"
#: a token is this many random bytes, URL-safe base64 (43 characters)
TOKEN_BYTES = 32


class TokenError(Exception):
    """The token file is missing, unreadable or not one ``live up`` wrote."""


def token_file(folder: Path) -> Path:
    """Where the cluster running from ``folder`` keeps its token."""
    return folder / TOKEN_FILE


def create_token(folder: Path) -> str:
    """A new token in ``folder``'s token file (mode 0600, replacing an old one)."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    path = token_file(folder)
    path.unlink(missing_ok=True)  # a file left by another user or mode is not reused
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(token + "\n")
    return token


def read_token(path: Path) -> str:
    """The token in ``path``; :class:`TokenError` naming the file if there is none."""
    try:
        owned = path.stat()
        token = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise TokenError(f"{path}: no API token (`snapshotlib live up` writes it)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TokenError(f"{path}: the API token cannot be read: {e}") from None
    # a token another user could have written or can read is not the owner's secret
    # (a folder others may write to lets them swap the file before it is read)
    if hasattr(os, "getuid") and owned.st_uid != os.getuid():
        raise TokenError(f"{path}: the API token file belongs to another user")
    if owned.st_mode & 0o077:
        raise TokenError(
            f"{path}: the API token file may be read or written by others "
            f"(mode {stat.S_IMODE(owned.st_mode):o}; `snapshotlib live up` writes it 600)"
        )
    if len(token) < 32 or not all(c.isalnum() or c in "-_" for c in token):
        raise TokenError(f"{path}: not an API token (`snapshotlib live up` writes one)")
    return token


def bearer(token: str) -> dict[str, str]:
    """The header that carries ``token``."""
    return {"Authorization": f"Bearer {token}"}

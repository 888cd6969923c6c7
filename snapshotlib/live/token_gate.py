"""The controller's door: a call without the cluster's token is refused before any of
it is read.

An ASGI middleware, not a FastAPI dependency: FastAPI reads and parses a request's
body before it runs the dependencies, so a caller without the token could still have
the controller read a body of any size and answer what is wrong with it. Here only the
``Authorization`` header is looked at: 401 without a bearer token, 403 with another
one. The API pages (``/docs`` and the schema they read) hold no data and stay open.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

#: what a caller without the token is told
MISSING = (
    "Authorization: the cluster's token expected (`Authorization: Bearer TOKEN`, "
    "TOKEN from the file api-token in the cluster's workdir)"
)
WRONG = "Authorization: not this cluster's token"


class TokenGate:
    """Let through only HTTP calls carrying ``Authorization: Bearer <token>``, and any
    call to ``open_paths``."""

    def __init__(self, app: ASGIApp, *, token: str, open_paths: Collection[str]) -> None:
        self.app = app
        self._expected = token.encode()
        self._open = frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or _route_path(scope) in self._open:
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":  # none is served; closed all the same
            await send({"type": "websocket.close", "code": 1008})
        else:
            await refusal(scope, receive, send)

    def _refusal(self, scope: Scope) -> JSONResponse | None:
        sent = _header(scope, b"authorization")
        scheme, _, credentials = sent.partition(b" ")
        if scheme.lower() != b"bearer" or not credentials.strip():
            return JSONResponse(
                {"detail": MISSING}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        if not secrets.compare_digest(credentials.strip(), self._expected):
            return JSONResponse({"detail": WRONG}, status_code=403)
        return None


def _route_path(scope: Scope) -> str:
    """The path the app routes: behind a proxy (a Jupyter server's) the request's path
    starts with the app's ``root_path``."""
    path, root = str(scope["path"]), str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


def _header(scope: Scope, name: bytes) -> bytes:
    headers: Any = scope.get("headers", ())
    for key, value in headers:
        if key.lower() == name:
            return bytes(value)
    return b""

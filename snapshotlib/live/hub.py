"""Where a browser finds the controller when the course runs on Binder or a JupyterHub.

There, 127.0.0.1 is the session's machine, not the learner's, so the controller's URL
cannot be opened in a browser tab. jupyter-server-proxy (in the course extra) forwards
``<prefix>proxy/<port>/`` on the session's own address to that port on the session's
machine, behind the session's login. The controller is told that path as its ASGI
``root_path`` so that its API pages (``/docs``) ask for their OpenAPI document through the
same path.

Standard library only: ``live up`` and ``snapshotlib.live.serve`` call it before anything
heavy is imported.
"""

from __future__ import annotations

import importlib.util
import os
from urllib.parse import urlsplit


def service_prefix() -> str | None:
    """The session's URL prefix (e.g. ``/user/ada/``) in a Binder or JupyterHub session,
    whose single-user server sets it; ``None`` elsewhere."""
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "").strip()
    if not prefix:
        return None
    return "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"


def inside_a_hub() -> bool:
    """Running in a Binder or JupyterHub session."""
    return service_prefix() is not None


def proxy_installed() -> bool:
    """jupyter-server-proxy is importable beside the Jupyter server of this session."""
    return importlib.util.find_spec("jupyter_server_proxy") is not None


def proxied_path(url: str) -> str | None:
    """The path on the session's address at which a browser reaches the local ``url``
    (``/user/ada/proxy/8123``), or ``None`` where there is none: outside a hub, or when
    jupyter-server-proxy is missing."""
    prefix = service_prefix()
    port = urlsplit(url).port
    if prefix is None or port is None or not proxy_installed():
        return None
    return f"{prefix}proxy/{port}"


def browser_address(url: str) -> str:
    """What to open in a browser for the local ``url``: itself on one's own machine; in a
    hub session, its path through the session's address (to be put after the address
    the lab is open at)."""
    return proxied_path(url) or url


#: what ``live up`` adds in a hub session without jupyter-server-proxy
NO_PROXY_NOTE = (
    "  (that address is inside this session, not in your browser: install"
    " jupyter-server-proxy (in the course extra) to open it, or use the commands below"
    " and lesson 10's notebook, which reach it from inside)"
)

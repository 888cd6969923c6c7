"""A node's calls to its controller: heartbeats and part reports, over HTTP with the
cluster's token. Blocking (urllib): the node runs them on threads of their own.

A heartbeat is sent once: the next one tries again. A part report is tried up to
:data:`REPORT_TRIES` times while the controller is unreachable or answers 5xx (its
registry busy), and not again once it answers 4xx (it said no). Standard library only.
"""

from __future__ import annotations

import http.client
import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any

from .api_token import bearer

#: tries of a part report the controller did not take
REPORT_TRIES = 5
#: how long a part report waits for the controller's answer (seconds; a backstop)
REPORT_TIMEOUT_S = 10.0


class ControllerClient:
    """The controller at ``url`` (``""``: none, every call is dropped), as node ``me``."""

    def __init__(self, url: str, me: str, token: str | None, heartbeat_timeout_s: float) -> None:
        self.url = url
        self.me = me
        self.headers = {"Content-Type": "application/json"}
        if token is not None:
            self.headers.update(bearer(token))
        self.heartbeat_timeout_s = heartbeat_timeout_s
        #: why the controller last refused a heartbeat (said once in the node's log, not
        #: at every beat)
        self.heartbeat_refused = ""

    def heartbeat(self, beat: dict[str, Any]) -> None:
        if not self.url:
            return
        request = urllib.request.Request(
            f"{self.url}/internal/v1/heartbeats",
            json.dumps(beat).encode(),
            self.headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.heartbeat_timeout_s):
                pass
            self.heartbeat_refused = ""
        except urllib.error.HTTPError as e:
            if 400 <= e.code < 500:  # it said no: the node is not a member until it says yes
                why = f"{e.code} {_detail(e)}"
                if why != self.heartbeat_refused:
                    print(f"{self.me}: heartbeat refused: {why}", file=sys.stderr)
                self.heartbeat_refused = why
        except (OSError, http.client.HTTPException):
            pass  # the controller is down or busy: the next beat tries again

    def report(self, snapshot_id: str, report: dict[str, Any]) -> None:
        if not self.url:
            return
        url = f"{self.url}/internal/v1/snapshots/{snapshot_id}/parts"
        body = json.dumps(report).encode()
        for attempt in range(REPORT_TRIES):
            request = urllib.request.Request(url, body, self.headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=REPORT_TIMEOUT_S) as answer:
                    answer.read()
                return
            except urllib.error.HTTPError as e:
                if e.code < 500:  # the controller said no: do not retry
                    print(f"{self.me}: report of {snapshot_id} refused: {e}", file=sys.stderr)
                    return
                time.sleep(0.2 * (attempt + 1))  # its registry is busy or down: again
            except (OSError, http.client.HTTPException):
                time.sleep(0.2 * (attempt + 1))
        print(f"{self.me}: could not report {snapshot_id} to {url}", file=sys.stderr)


def _detail(error: urllib.error.HTTPError) -> str:
    """The controller's reason (its JSON ``detail``), or the status line's."""
    try:
        return str(json.loads(error.read())["detail"])[:500]
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
        return str(error.reason)  # a body cut short or not the controller's: its status

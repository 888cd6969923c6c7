"""A node's heartbeats: one the controller refuses is said in the node's log, once per
reason, not at every beat; a controller that cannot be reached is not an error (the
next beat tries again)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest

from snapshotlib.live.controller_client import ControllerClient


class Refusing(http.server.BaseHTTPRequestHandler):
    answers: ClassVar[list[tuple[int, dict[str, str]]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        code, body = self.answers.pop(0)
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        # a body cut short: it says it is longer than what comes before the connection ends
        self.send_header("Content-Length", str(len(data) + 100 * ("cut" in body)))
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def controller() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_refused_heartbeat_is_said_once_per_reason(
    controller: str, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = (409, {"detail": "epoch: P1 says it is in epoch 9, but no restore gave one above 0"})
    Refusing.answers = [refused, refused, (200, {"changes": []}), refused]
    client = ControllerClient(controller, "P1", "token", heartbeat_timeout_s=30)
    for _ in range(4):
        client.heartbeat({"node_id": "P1"})
    said = capsys.readouterr().err.splitlines()
    line = "P1: heartbeat refused: 409 " + refused[1]["detail"]
    assert said == [line, line]  # twice: the accepted beat in between ended the first


def test_an_unreachable_controller_is_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    server.server_close()  # nobody listens there now
    ControllerClient(url, "P1", None, heartbeat_timeout_s=30).heartbeat({"node_id": "P1"})
    assert capsys.readouterr().err == ""


def test_a_refusal_whose_body_is_cut_short_is_said_with_its_status(
    controller: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # reading the reason must not raise out of the heartbeat: the node's heartbeats are
    # one task, which an exception would end for good
    Refusing.answers = [(403, {"cut": "yes"}), (200, {"changes": []})]
    client = ControllerClient(controller, "P1", "token", heartbeat_timeout_s=30)
    client.heartbeat({"node_id": "P1"})
    client.heartbeat({"node_id": "P1"})
    assert capsys.readouterr().err == "P1: heartbeat refused: 403 Forbidden\n"
    assert client.heartbeat_refused == ""

"""An object store that pushes back as S3 does: "503 Slow Down" beyond a request rate
per key prefix.

The system-design text: when many nodes upload their state "at the exact same
millisecond, the S3 storage endpoint will return HTTP 503 Slow Down rate-limiting
responses". S3 limits the rate of requests per key prefix (3,500 writes a second per
prefix, as its documentation gives it), not the number in flight, and it scales with
the number of prefixes: keys spread over several prefixes get the rate of each. This
store does the same on a small scale: it takes a ``PUT`` per object
(``http://host:port/prefix/name``, the lab's ``http://`` storage), each write taking
``write_ms`` (standing for the upload), and answers 503 with S3's ``SlowDown`` error to
a write beyond ``max_rate`` writes a second under the same prefix (the key up to its
last ``/``): each prefix has a bucket of ``burst`` tokens (``max_rate`` unless told),
refilled at ``max_rate`` a second, and a write takes one, so a burst of ``burst`` passes
at once and the rest wait for the refill. ``GET /_stats`` tells how many writes it
took, refused, and the most it had in flight.

>>> with ThrottledStore(folder, max_rate=10) as store:   # doctest: +SKIP
...     LiveCluster(storage=store.uri, ...)

Or from a shell: ``python -m snapshotlib.live.throttled_store --folder DIR --port 9000
--max-rate 10``. Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

#: what a path segment may be: the names the lab's storage writes
_SEGMENT = re.compile(r"^[A-Za-z0-9!_.*'()-]+$")
SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


class ThrottledStore:
    """The store (see the module docstring), serving ``folder`` on ``host:port`` (a free
    port by default) while the ``with`` block runs."""

    def __init__(
        self,
        folder: str | Path,
        max_rate: int = 10,
        write_ms: int = 50,
        burst: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_rate < 1:
            raise ValueError(f"max_rate: at least 1 write a second, got {max_rate}")
        if burst is not None and burst < 1:
            raise ValueError(f"burst: at least 1 write, got {burst}")
        if write_ms < 0:
            raise ValueError(f"write_ms: at least 0, got {write_ms}")
        self.folder = Path(folder).resolve()
        self.max_rate = max_rate
        #: writes that pass at once when the prefix has been quiet
        self.burst = max_rate if burst is None else burst
        self.write_ms = write_ms
        #: seconds, for the buckets' refill (another clock lets a test stop time)
        self.clock = clock
        self._lock = threading.Lock()
        self._in_flight = 0
        #: prefix -> (tokens left, when they were counted: monotonic seconds)
        self._buckets: dict[str, tuple[float, float]] = {}
        self.counts = {"written": 0, "slowed_down": 0, "most_in_flight": 0, "read": 0}
        self._server = ThreadingHTTPServer((host, port), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def uri(self) -> str:
        """The storage URI to write to (``http://host:port/``)."""
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}/"

    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counts)

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="throttled-store", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:  # shutdown() waits for a serve_forever that ran
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> ThrottledStore:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --------------------------------------------------------------- the work
    def begin_write(self, key: str) -> bool:
        """Whether a write of ``key`` may start now: its prefix's bucket holds a token
        (if so, the write takes it and counts as in flight)."""
        prefix = key.rpartition("/")[0]
        now = self.clock()
        with self._lock:
            tokens, then = self._buckets.get(prefix, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.max_rate)
            if tokens < 1.0:
                self._buckets[prefix] = (tokens, now)
                self.counts["slowed_down"] += 1
                return False
            self._buckets[prefix] = (tokens - 1.0, now)
            self._in_flight += 1
            self.counts["most_in_flight"] = max(self.counts["most_in_flight"], self._in_flight)
            return True

    def end_write(self, ok: bool) -> None:
        with self._lock:
            self._in_flight -= 1
            if ok:
                self.counts["written"] += 1

    def path_of(self, url_path: str) -> Path | None:
        """The file behind a request's path, or ``None`` if the path is not a key."""
        segments = url_path.split("?", 1)[0].strip("/").split("/")
        if not segments or not all(_SEGMENT.match(s) and s not in (".", "..") for s in segments):
            return None
        return self.folder.joinpath(*segments)


def _handler(store: ThrottledStore) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the counts tell what happened

        def _answer(self, code: int, body: bytes, kind: str = "application/xml") -> None:
            self.send_response(code, "Slow Down" if code == 503 else None)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_PUT(self) -> None:
            path = store.path_of(self.path)
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0:
                self._answer(400, b"<Error><Code>MissingContentLength</Code></Error>")
                return
            data = self.rfile.read(length)
            if path is None:
                self._answer(400, b"<Error><Code>InvalidObjectName</Code></Error>")
                return
            if not store.begin_write(self.path.split("?", 1)[0].strip("/")):
                self._answer(503, SLOW_DOWN)
                return
            ok, taken = False, False
            once = self.headers.get("If-None-Match") == "*"  # S3's conditional write
            try:
                time.sleep(store.write_ms / 1000)  # the upload takes its time
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                if once:
                    try:
                        os.link(temp, path)
                    except FileExistsError:
                        taken = True
                    os.unlink(temp)
                else:
                    os.replace(temp, path)
                ok = not taken
            except OSError:
                with contextlib.suppress(OSError, UnboundLocalError):
                    os.unlink(temp)
            finally:
                store.end_write(ok)
            if taken:
                self._answer(412, b"<Error><Code>PreconditionFailed</Code></Error>")
            elif ok:
                self._answer(200, b"")
            else:
                self._answer(500, b"<Error><Code>InternalError</Code></Error>")

        def do_DELETE(self) -> None:
            path = store.path_of(self.path)
            if path is None:
                self._answer(404, b"<Error><Code>NoSuchKey</Code></Error>")
                return
            path.unlink(missing_ok=True)  # as S3: deleting what is not there succeeds
            self._answer(204, b"")

        def do_GET(self) -> None:
            if self.path == "/_stats":
                self._answer(200, json.dumps(store.stats()).encode(), "application/json")
                return
            path = store.path_of(self.path)
            if path is None or not path.is_file():
                self._answer(404, b"<Error><Code>NoSuchKey</Code></Error>")
                return
            with store._lock:
                store.counts["read"] += 1
            self._answer(200, path.read_bytes(), "application/octet-stream")

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", required=True, type=Path, help="where objects are kept")
    parser.add_argument("--port", type=int, default=9000, help="(9000)")
    parser.add_argument(
        "--max-rate", type=int, default=10, help="writes a second per key prefix (10)"
    )
    parser.add_argument("--write-ms", type=int, default=50, help="each write's time (50)")
    args = parser.parse_args(argv)
    with ThrottledStore(args.folder, args.max_rate, args.write_ms, port=args.port) as s:
        print(f"throttled store at {s.uri} (Ctrl-C stops it)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A started process that stops when whoever started it is gone.

:class:`~snapshotlib.live.cluster.LiveCluster` starts the controller and the nodes in
process groups of their own (so Ctrl-C reaches ``snapshotlib live up``, which stops them
in order). If the starting process dies without stopping them (killed, or a test run
cut short), they would run on unseen: each watches its parent and stops itself, with
SIGTERM, the way it is normally stopped.
"""

from __future__ import annotations

import os
import signal
import threading
import time

#: how often the parent is looked at (seconds)
WATCH_EVERY_S = 0.5


def exit_with_parent() -> None:
    """Send this process SIGTERM once its parent process has gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_EVERY_S)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()

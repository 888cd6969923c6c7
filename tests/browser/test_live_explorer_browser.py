"""The LiveExplorer in a real browser, over a real cluster: Trigger, Crash, Restore.

A 3-node live cluster runs in the notebook's kernel. Clicking Trigger must show the new
snapshot in the registry, COMPLETED once its parts are in (the view refreshes itself);
Crash kills the chosen node, which the supervisor starts again holding nothing (the
nodes' table says "awaiting-restore"); Restore latest rolls every node back to that
snapshot, and the table shows every node up in epoch 1.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from labdriver import (
    LabServer,
    html_widget,
    open_notebook,
    require_modules,
    run_all_cells,
    run_new_cell,
    save_screenshot,
    wait_kernel_idle,
    widget_button,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

NOTEBOOK = "live_explorer.ipynb"
CELLS = [
    "import tempfile\n"
    "from snapshotlib.live.cluster import LiveCluster\n"
    "from snapshotlib.widgets import LiveExplorer",
    "folder = tempfile.TemporaryDirectory(prefix='browser-live-')\n"
    # beats often, so the crashed node's restart is seen at once; a long timeout, so a
    # loaded machine never has a node taken for gone (the crash is seen by the restart)
    "cluster = LiveCluster(3, rate=30.0, workdir=folder.name, heartbeat_ms=200,\n"
    "                      heartbeat_timeout_ms=30000)\n"
    "cluster.start()\n"
    "explorer = LiveExplorer(cluster, every_s=0.5)\n"
    "explorer",
]
#: clicks wait for the cluster, which shares the machine with the browser and the lab
CLUSTER_MS = 60_000


@pytest.fixture(autouse=True)
def _packages() -> None:
    require_modules("ipywidgets", "grpc", "fastapi", "uvicorn", "sqlalchemy")


#: every node's epoch as the controller heard it, once all say 1 (or 60 s have passed)
EPOCHS_AFTER_HEARTBEATS = """\
import time
deadline = time.monotonic() + 60
epochs = lambda: [n['epoch'] for n in cluster.cluster()['nodes']]
while epochs() != [1, 1, 1] and time.monotonic() < deadline:
    time.sleep(0.2)
print(epochs())"""


def test_trigger_crash_and_restore_from_the_buttons(
    jupyter_server: LabServer, browser_page: Page
) -> None:
    from playwright.sync_api import expect

    page = browser_page
    write_notebook(jupyter_server.root_dir / NOTEBOOK, CELLS)
    open_notebook(page, jupyter_server, NOTEBOOK)
    try:
        run_all_cells(page)
        nodes = html_widget(page, "live-nodes")
        registry = html_widget(page, "live-registry")
        status = html_widget(page, "live-status")
        expect(registry).to_contain_text("no snapshot yet", timeout=CLUSTER_MS)
        expect(page.locator(".live-network svg circle")).to_have_count(3)  # nobody records

        widget_button(page, "Trigger").click()
        expect(status).to_contain_text(
            re.compile(r"snap-0001-\w{5}: a full snapshot, initiated by P1"), timeout=CLUSTER_MS
        )
        expect(registry).to_contain_text("COMPLETED", timeout=CLUSTER_MS)
        expect(registry).to_contain_text("3/3")

        widget_button(page, "Crash").click()
        expect(status).to_contain_text("P3 killed", timeout=CLUSTER_MS)  # Crash: its own menu
        expect(nodes).to_contain_text("awaiting-restore", timeout=CLUSTER_MS)
        wait_kernel_idle(page)
        save_screenshot(page, "live-explorer-crashed")

        widget_button(page, "Restore latest").click()
        expect(status).to_contain_text(
            re.compile(r"restored snap-0001-\w{5} in epoch 1 .*money 3000"), timeout=CLUSTER_MS
        )
        expect(nodes).not_to_contain_text("awaiting-restore", timeout=CLUSTER_MS)
        wait_kernel_idle(page)
        save_screenshot(page, "live-explorer")
        # each node tells its epoch in its next heartbeat: wait for them (a backstop)
        said = run_new_cell(page, EPOCHS_AFTER_HEARTBEATS)
        assert "[1, 1, 1]" in said, said
    finally:
        run_new_cell(page, "explorer.close(); cluster.stop(); folder.cleanup(); print('stopped')")

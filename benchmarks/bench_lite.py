"""The browser-only site: its size, how soon a lesson shows its first output, and how
long Run All takes per lesson, in headless Chromium on this machine.

The site is built by ``snapshotlib course lite`` and served by Python's static file
server on 127.0.0.1; every request outside it is refused (and counted). Figures:

* the site's size (at most 60 MB is the aim) and its largest parts;
* first output: from opening lesson 00 (Run All asked for at once) to its first code
  cell's output, against a reference in the same run: bare Pyodide, the site's own, started
  on an empty page of the same site until it answers ``1 + 1`` (the aim: at most 30 s);
* Run All per lesson (each in a fresh browser context, so each starts its own kernel),
  and the browser's resident memory after it.

Run from the repository root (needs npm, Debian's chromium and the lite extra)::

    python3 benchmarks/bench_lite.py
    python3 benchmarks/bench_lite.py --lessons 00 02 --site /tmp/site  # reuse a build
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine_info import describe as describe_machine

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import labdriver  # noqa: E402  (the browser tests' helpers: run all, kernel idle)

from snapshotlib.publish.lite import NEEDS_ELSEWHERE  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
BARE_PYODIDE = """<!doctype html><script type="module">
const started = performance.now();
const { loadPyodide } = await import("./static/pyodide/pyodide.mjs");
const py = await loadPyodide({ indexURL: "./static/pyodide/" });
window.answer = [py.runPython("1 + 1"), (performance.now() - started) / 1000];
</script>"""


def build(site: Path) -> float:
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "snapshotlib", "course", "lite", str(site)], check=True, cwd=ROOT
    )
    return time.monotonic() - start


def size(site: Path) -> tuple[int, list[tuple[int, str]]]:
    parts: dict[str, int] = {}
    total = 0
    for path in site.rglob("*"):
        if path.is_file():
            n = path.stat().st_size
            total += n
            rel = path.relative_to(site)
            key = "/".join(rel.parts[:2]) if len(rel.parts) > 2 else rel.parts[0]
            parts[key] = parts.get(key, 0) + n
    return total, sorted(((n, k) for k, n in parts.items()), reverse=True)[:6]


def browser_rss_mb() -> float:
    """The resident memory of every Chromium process now running, in MB."""
    total = 0
    for proc in Path("/proc").iterdir():
        try:
            if "chromium" not in (proc / "cmdline").read_bytes().decode(errors="replace"):
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def lesson_paths(wanted: list[str]) -> list[str]:
    paths = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
    chosen = [p for p in paths if not wanted or any(p.startswith(w + "_") for w in wanted)]
    return [f"notebooks/{p}" for p in chosen if f"notebooks/{p}" not in NEEDS_ELSEWHERE]


class Session:
    """One browser context on the site, refusing (and counting) requests outside it."""

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.base = base
        self.page = self.context.new_page()
        self.outside = labdriver.Outside(self.page, base).__enter__()

    @property
    def refused(self) -> list[str]:
        return self.outside.refused


_FIRST_OUTPUT_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets.some(
    c => c.model.type === 'code' && c.model.outputs && c.model.outputs.length > 0
         && c.model.executionCount !== null)"""


_STOPPED_AT_JS = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.widgets;
    const i = cells.findIndex(c => c.model.type === 'code' && c.model.executionCount === null
                                   && c.model.sharedModel.source.trim() !== '');
    return i < 0 ? null : [i, cells[i].model.sharedModel.source.slice(0, 60)];
}"""


def open_and_run(session: Session, path: str) -> tuple[float, float]:
    """Open ``path``, ask for Run All at once; (seconds to the first output, to the end)."""
    page = session.page
    start = time.monotonic()
    page.goto(f"{session.base}/lab/index.html?path={path}", timeout=240_000)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.content",
        timeout=240_000,
    )
    page.evaluate(labdriver._START_RUN_ALL_JS)
    page.wait_for_function(_FIRST_OUTPUT_JS, timeout=600_000, polling=100)
    first = time.monotonic() - start
    page.wait_for_function(labdriver._RUN_ALL_DONE_JS, timeout=1_200_000)
    labdriver.wait_kernel_idle(page, timeout=600_000)
    outcome = page.evaluate("() => window.__labdriverRunAll")
    if outcome != "ok":
        errors = page.evaluate(labdriver._ERROR_OUTPUTS_JS)
        stopped = page.evaluate(_STOPPED_AT_JS)
        print(f"    {path}: {outcome}: {errors[:1]}; the first cell not run: {stopped}")
    return first, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a site built before (default: build one)")
    parser.add_argument(
        "--lessons",
        nargs="*",
        default=[],
        metavar="NN",
        help="only these lessons (default: every one that runs in a browser)",
    )
    args = parser.parse_args()
    print(describe_machine())
    # the site's service worker fetches on the page's behalf: its requests reach the
    # context's routes only with this set before Playwright starts (Chromium only)
    os.environ.setdefault("PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS", "1")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        if args.site is None:
            print(f"build: {build(site):.1f} s (npm, PyPI and jupyter lite build)")
        else:  # a copy: the drivers' settings and the reference page stay out of it
            shutil.copytree(args.site, site)
        total, parts = size(site)
        print(
            f"site: {total / 1e6:.1f} MB (aim: at most 60 MB); largest parts: "
            + ", ".join(f"{k} {n / 1e6:.1f} MB" for n, k in parts)
        )
        config_path = site / "jupyter-lite.json"
        config = json.loads(config_path.read_text())
        config["jupyter-config-data"]["exposeAppInBrowser"] = True  # for the drivers
        config_path.write_text(json.dumps(config))
        (site / "bare-pyodide.html").write_text(BARE_PYODIDE)
        port = 8700 + os.getpid() % 200
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", "-b", "127.0.0.1", str(port), "-d", str(site)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            time.sleep(1.0)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox"]
                )
                bare = Session(browser, base)
                bare.page.goto(f"{base}/bare-pyodide.html")
                bare.page.wait_for_function("() => window.answer", timeout=240_000)
                answer, bare_s = bare.page.evaluate("() => window.answer")
                bare.context.close()
                print(f"reference: bare Pyodide answered {answer} in {bare_s:.1f} s")
                refused = 0
                for path in lesson_paths(args.lessons):
                    session = Session(browser, base)
                    first, whole = open_and_run(session, path)
                    rss = browser_rss_mb()
                    refused += len(session.refused)
                    session.context.close()
                    line = f"{Path(path).stem}: Run All {whole:.1f} s; browser {rss:.0f} MB"
                    if path.endswith("00_start_here.ipynb"):
                        line += (
                            f"; first output {first:.1f} s after opening "
                            f"({first / bare_s:.1f}x bare Pyodide; aim: at most 30 s)"
                        )
                    print(line, flush=True)
                print(f"requests outside the site: {refused}")
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

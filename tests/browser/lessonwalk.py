"""What a learner sees after Run All: figures drawn, no errors, no fallbacks, no dialogs.

The lesson walks (``test_lessons_walk.py``) open a notebook in a fresh JupyterLab page,
run it with Run All as a learner does, and then ask the page what is on it. The checks
read the rendered page (plotly's own element data, the output areas) and the notebook
model JupyterLab holds, never the kernel's view of things.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# Installed before JupyterLab's own scripts run: remembers every dialog that was ever
# attached (JupyterLab's "Select Kernel", an error dialog), even one closed since.
DIALOG_WATCH_JS = """
window.__labdriverDialogs = [];
new MutationObserver(records => {
    for (const r of records) for (const n of r.addedNodes) {
        if (n.nodeType === 1 && (n.matches('.jp-Dialog') || n.querySelector('.jp-Dialog'))) {
            const d = n.matches('.jp-Dialog') ? n : n.querySelector('.jp-Dialog');
            window.__labdriverDialogs.push(d.innerText.slice(0, 200));
        }
    }
}).observe(document.documentElement, {childList: true, subtree: true});
"""

# Every plotly figure in the open notebook: its CSS classes, the traces plotly holds
# for it (el.data) and how many trace groups it drew in the SVG.
_PLOTS_JS = """() => [...document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .js-plotly-plot')].map(el => ({
    classes: el.className,
    cell: [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')]
        .findIndex(c => c.contains(el)),
    traces: (el.data || []).length,
    drawn: el.querySelectorAll('g.trace, .trace').length,
}))"""

# Outputs the notebook model holds: errors, and widgets' plain-text fallbacks (shown
# when the widget view could not be made).
_OUTPUT_PROBLEMS_JS = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const problems = [];
    panel.content.widgets.forEach((cell, i) => {
        const outputs = cell.model.outputs;
        if (!outputs) return;
        for (let k = 0; k < outputs.length; k++) {
            const o = outputs.get(k).toJSON();
            if (o.output_type === 'error') {
                problems.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
            }
        }
    });
    const shown = [...panel.node.querySelectorAll('.jp-OutputArea-output')];
    for (const el of shown) {
        const text = el.innerText || '';
        if (text.includes('an interactive widget; run the notebook to use it')) {
            problems.push('a widget shows its text fallback: ' + text.slice(0, 120));
        }
        if (text.includes('Error displaying widget') || text.includes('Error rendering')) {
            problems.push('a widget failed to render: ' + text.slice(0, 200));
        }
        if (text.includes('IPython.core.display') && text.includes('object>')) {
            problems.push('an output shows a Python object, not a picture: ' + text.slice(0, 120));
        }
    }
    return problems;
}"""


@dataclass
class PageReport:
    """What the page showed: plotly figures, output problems, dialogs."""

    plots: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    @property
    def blank_plots(self) -> list[dict[str, Any]]:
        return [p for p in self.plots if p["traces"] == 0 or p["drawn"] == 0]


def read_page(page: Any) -> PageReport:
    """Read the current notebook's plots, output problems and the dialogs seen so far."""
    return PageReport(
        plots=page.evaluate(_PLOTS_JS),
        problems=page.evaluate(_OUTPUT_PROBLEMS_JS),
        dialogs=page.evaluate("() => window.__labdriverDialogs || []"),
    )


def wait_for_plots(page: Any, timeout_s: float = 90.0) -> PageReport:
    """Read the page until every figure has drawn traces or ``timeout_s`` passes.

    Widgets render after the kernel is idle (their JavaScript loads, then draws); a
    figure that is still blank at the end of the wait is blank for the learner too.
    """
    deadline = time.monotonic() + timeout_s
    report = read_page(page)
    while report.blank_plots and time.monotonic() < deadline:
        page.wait_for_timeout(1000)
        report = read_page(page)
    return report


def scroll_through(page: Any) -> None:
    """Scroll the notebook from top to bottom, as a reader does.

    JupyterLab 4 renders only the cells near the window by default; scrolling makes
    every output exist in the page, so the checks see all of them.
    """
    page.evaluate(
        """async () => {
        const panel = window.jupyterapp.shell.currentWidget;
        const n = panel.content.widgets.length;
        for (let i = 0; i < n; i++) {
            await panel.content.scrollToItem(i, 'start');
            await new Promise(r => setTimeout(r, 30));
        }
    }"""
    )


@contextlib.contextmanager
def busy_machine(processes: int = 2, limit_s: float = 900.0) -> Iterator[None]:
    """Load every core with a busy process for the duration (each stops itself too)."""
    loop = f"import time\nend = time.monotonic() + {limit_s}\nwhile time.monotonic() < end: pass"
    procs = [
        subprocess.Popen([sys.executable, "-c", loop], stdin=subprocess.DEVNULL)
        for _ in range(processes or os.cpu_count() or 2)
    ]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()

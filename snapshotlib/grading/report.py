"""Text and HTML reports of a :class:`~snapshotlib.grading.Gradebook`.

The HTML report is one self-contained file that opens offline: the score distribution
per question (a plotly figure with plotly's code inlined, where plotly is installed),
then a table per submission with every message and note in full.
"""

from __future__ import annotations

import html
from pathlib import Path

from .gradebook import Gradebook

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em; color: #1b1b1b; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 4px 8px; vertical-align: top; text-align: left; }
th { background: #eee; }
td.num { text-align: right; white-space: nowrap; }
pre { white-space: pre-wrap; margin: 0; font-size: 13px; }
.bad { color: #8a1c1c; }
"""


def text_report(book: Gradebook) -> str:
    """Per submission total and status (with its notes), per question mean/min/max."""
    lines = [f"exercise {book.exercise}: {len(book.results)} submission(s)", ""]
    width = max([len(r.submission) for r in book.results] + [10])
    for r in book.results:
        note = f" ({r.cell_timeouts} cell(s) interrupted)" if r.cell_timeouts else ""
        lines.append(f"  {r.submission:<{width}}  {r.total:6.2f} / {r.possible:<6.2f} "
                     f"{r.status}{note}  [{r.seconds:.1f}s]")  # fmt: skip
        for line in [r.reason, *r.notes]:
            if line:
                lines.append(f"  {'':<{width}}  {line}")
        refused = [s for s in r.scores if "the question scores 0" in s.message]
        for s in refused:
            lines.append(f"  {'':<{width}}  {s.test}: {s.message.splitlines()[0]}")
    lines += ["", f"  {'question':<10} {'mean':>7} {'min':>7} {'max':>7} {'of':>7}"]
    for test, stat in book.question_stats().items():
        lines.append(f"  {test:<10} {stat['mean']:7.2f} {stat['min']:7.2f} {stat['max']:7.2f} "
                     f"{stat['possible']:7.2f}")  # fmt: skip
    formative = book.formative()
    if formative:
        lines += ["", "  formative (no points), passed by:"]
        for test in formative:
            passed = sum(1 for r in book.results for s in r.scores if s.test == test and s.passed)
            lines.append(f"  {test:<10} {passed} of {len(book.results)}")
    lines += ["", "  every message in full: the CSV's message column, and the HTML report"]
    return "\n".join(lines)


def _figure(book: Gradebook) -> str:
    """The score distribution per question as HTML with plotly inlined, or "" without plotly."""
    try:
        import plotly.graph_objects as go
    except ImportError:
        return "<p>(install plotly for the figure of the score distribution)</p>"
    fig = go.Figure()
    for test in book.question_stats():
        fig.add_trace(go.Box(
            y=[r.score(test) for r in book.results], name=test, boxpoints="all",
            text=[r.submission for r in book.results], jitter=0.3,
        ))  # fmt: skip
    fig.update_layout(
        title=f"{book.exercise}: score per question ({len(book.results)} submissions)",
        yaxis_title="points", showlegend=False,
    )  # fmt: skip
    return str(fig.to_html(full_html=False, include_plotlyjs=True))


def write_html_report(book: Gradebook, path: str | Path) -> Path:
    """The report as one HTML file that needs no network."""
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{e(book.exercise)}: grades</title><style>{_STYLE}</style></head><body>",
        f"<h1>{e(book.exercise)}: {len(book.results)} submission(s)</h1>",
        _figure(book),
        "<h2>Questions</h2><table><tr><th>question</th><th>mean</th><th>min</th><th>max</th>"
        "<th>of</th></tr>",
    ]
    for test, stat in book.question_stats().items():
        parts.append(f"<tr><td>{e(test)}</td>" + "".join(
            f"<td class='num'>{stat[k]:.2f}</td>" for k in ("mean", "min", "max", "possible")
        ) + "</tr>")  # fmt: skip
    parts.append("</table>")
    if book.formative():
        parts.append(f"<p>Formative (no points): {e(', '.join(book.formative()))}.</p>")
    parts.append("<h2>Submissions</h2><table><tr><th>submission</th><th>learner</th>"
                 "<th>status</th><th>total</th><th>questions and messages</th></tr>")  # fmt: skip
    for r in book.results:
        rows = []
        for s in r.scores:
            points = (
                "formative: " + ("passed" if s.passed else "not passed")
                if s.formative
                else (f"{s.score:g} / {s.possible:g}")
            )
            message = f"<pre class='bad'>{e(s.message)}</pre>" if s.message else ""
            rows.append(f"<b>{e(s.test)}</b> {e(points)}{message}")
        notes = "".join(f"<pre>{e(n)}</pre>" for n in [r.detail, *r.notes] if n)
        parts.append(
            f"<tr><td>{e(r.submission)}</td><td>{e(r.learner_id)}</td><td>{e(r.status)}</td>"
            f"<td class='num'>{r.total:g} / {r.possible:g}</td>"
            f"<td>{'<br>'.join(rows)}{notes}</td></tr>"
        )
    parts.append("</table></body></html>")
    path = Path(path)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path

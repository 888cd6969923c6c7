"""Text and HTML reports of a :class:`~snapshotlib.grading.Gradebook`."""

from __future__ import annotations

from pathlib import Path

from .gradebook import Gradebook


def text_report(book: Gradebook) -> str:
    """Per submission total and status, per question mean/min/max."""
    lines = [f"exercise {book.exercise}: {len(book.results)} submission(s)", ""]
    width = max([len(r.submission) for r in book.results] + [10])
    for r in book.results:
        note = f" ({r.cell_timeouts} cell(s) interrupted)" if r.cell_timeouts else ""
        lines.append(f"  {r.submission:<{width}}  {r.total:6.2f} / {r.possible:<6.2f} "
                     f"{r.status}{note}  [{r.seconds:.1f}s]")  # fmt: skip
    notes = [(r.submission, line) for r in book.results for line in r.detail.splitlines()[:4]]
    if notes:  # refusals, the learner id used, what stopped a submission
        lines += ["", "  notes:"]
        lines += [f"    {sub}: {line[:150]}" for sub, line in notes if line.strip()]
    lines += ["", f"  {'question':<10} {'mean':>7} {'min':>7} {'max':>7} {'of':>7}"]
    for test, s in book.question_stats().items():
        lines.append(f"  {test:<10} {s['mean']:7.2f} {s['min']:7.2f} {s['max']:7.2f} "
                     f"{s['possible']:7.2f}")  # fmt: skip
    return "\n".join(lines)


def write_html_report(book: Gradebook, path: str | Path) -> Path:
    """A plotly figure of the score distribution per question (box + points), as HTML."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for test in book.tests:
        fig.add_trace(go.Box(
            y=[r.score(test) for r in book.results], name=test, boxpoints="all",
            text=[r.submission for r in book.results], jitter=0.3,
        ))  # fmt: skip
    fig.update_layout(
        title=f"{book.exercise}: score per question ({len(book.results)} submissions)",
        yaxis_title="points", showlegend=False,
    )  # fmt: skip
    path = Path(path)
    fig.write_html(path, include_plotlyjs="cdn")
    return path

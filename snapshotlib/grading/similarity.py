"""How much code submissions share: with each other, with the engine's own
implementations of what the exercise asks for, and with the course's solution.

The comparison is copydetect's (winnowed fingerprints of the code with names and
strings made alike, as MOSS does); what the exercise hands every learner (its notebook's
given code) is left out as boilerplate. The report is a CSV of pairs ranked by the
larger of the two shares, and one HTML file, readable offline, showing each pair side by
side with the shared code marked. A high share is a reason to look, not a verdict.
"""

from __future__ import annotations

import csv
import html
import importlib
import inspect
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .edition import refused_targets
from .submissions import SubmissionError, candidates, read_notebook

#: pairs shown side by side in the HTML report
SHOWN = 30

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em; }
table { border-collapse: collapse; } td, th { border: 1px solid #bbb; padding: 4px 8px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; margin-bottom: 2em; }
pre { white-space: pre-wrap; font-size: 12px; background: #f6f6f6; padding: 6px; }
.highlight-red { background: #ffc9c9; } .highlight-green { background: #c9f2c9; }
"""


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    first_share: float  # of the first's code found in the second
    second_share: float
    tokens: int  # tokens they share


@dataclass(frozen=True)
class SimilarityReport:
    pairs: tuple[Pair, ...]
    csv: Path
    html: Path

    def summary(self) -> str:
        top = self.pairs[0] if self.pairs else None
        most = (f"; most alike: {top.first} and {top.second} "
                f"({max(top.first_share, top.second_share):.0%})") if top else ""  # fmt: skip
        return f"{len(self.pairs)} pair(s) in {self.csv} and {self.html}{most}"


def _references(exercise: str, folder: Path, solution: Path | None) -> None:
    for target in refused_targets(exercise):
        module, _, qualname = target.partition(":")
        obj: object = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        try:
            source = inspect.getsource(obj)  # type: ignore[arg-type]
        except (OSError, TypeError):
            continue
        (folder / f"engine.{module.rpartition('.')[2]}.{qualname}.py").write_text(source)
    if solution is not None and solution.is_file():
        try:
            cells = read_notebook(solution).cells
            (folder / "course-solution.py").write_text("\n\n".join(cells))
        except SubmissionError:
            pass


def similarity_report(
    submissions_dir: str | Path, exercise: str, out: str | Path, *,
    exercise_notebook: str | Path | None = None, solution: str | Path | None = None,
) -> SimilarityReport:  # fmt: skip
    """Compare the code of every submission in ``submissions_dir``; write
    ``out.csv`` and ``out.html``. ``exercise_notebook`` (the notebook learners were given)
    is left out as boilerplate; ``solution`` is compared with like the engine's code."""
    from copydetect import CopyDetector

    out = Path(out)
    work = Path(tempfile.mkdtemp(prefix="snapshotlib-similarity-"))
    try:
        subs, refs, given = work / "submissions", work / "references", work / "given"
        for d in (subs, refs, given):
            d.mkdir()
        for path in candidates(Path(submissions_dir)):
            try:
                cells = read_notebook(path).cells
            except SubmissionError:
                continue
            (subs / f"{path.name[: -len('.ipynb')]}.py").write_text("\n\n".join(cells))
        _references(exercise, refs, Path(solution) if solution else None)
        if exercise_notebook is not None and Path(exercise_notebook).is_file():
            (given / "exercise.py").write_text(
                "\n\n".join(read_notebook(Path(exercise_notebook)).cells)
            )
        detector = CopyDetector(
            test_dirs=[str(subs)], ref_dirs=[str(subs), str(refs)],
            boilerplate_dirs=[str(given)] if any(given.iterdir()) else [], extensions=["py"],
            display_t=0.0, autoopen=False, silent=True, force_language="python",
        )  # fmt: skip
        detector.run()
        found = detector.get_copied_code_list() if len(detector.test_files) > 1 or any(
            refs.iterdir()) else []  # fmt: skip
        pairs = []
        shown = []
        for first_share, second_share, a, b, code_a, code_b, tokens in found:
            if Path(a) == Path(b):
                continue
            pair = Pair(Path(a).stem, Path(b).stem, float(first_share), float(second_share),
                        int(tokens))  # fmt: skip
            pairs.append(pair)
            shown.append((pair, code_a, code_b))
        order = sorted(range(len(pairs)), key=lambda i: -max(pairs[i].first_share,
                                                            pairs[i].second_share))  # fmt: skip
        pairs = [pairs[i] for i in order]
        shown = [shown[i] for i in order]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    csv_path, html_path = out.with_suffix(".csv"), out.with_suffix(".html")
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["first", "second", "share_of_first", "share_of_second", "tokens"])
        for p in pairs:
            writer.writerow([p.first, p.second, f"{p.first_share:.3f}", f"{p.second_share:.3f}",
                             p.tokens])  # fmt: skip
    _write_html(html_path, exercise, shown[:SHOWN], len(pairs))
    return SimilarityReport(tuple(pairs), csv_path, html_path)


def _write_html(path: Path, exercise: str, shown: list[tuple[Pair, str, str]], total: int) -> None:
    e = html.escape
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{e(exercise)}: "
             f"similarity</title><style>{_STYLE}</style></head><body>",
             f"<h1>{e(exercise)}: code shared between submissions</h1>",
             "<p>Names starting with <code>engine.</code> are the engine's own implementations "
             "of what the exercise asks for; <code>course-solution</code> is the course's "
             "solution. A share is the part of one file's code (as tokens, names made alike) "
             "found in the other; code the exercise gives every learner is left out.</p>",
             f"<p>{total} pair(s); the {len(shown)} most alike below.</p>",
             "<table><tr><th>first</th><th>second</th><th>of first</th><th>of second</th>"
             "<th>tokens</th></tr>"]  # fmt: skip
    for pair, _, _ in shown:
        parts.append(f"<tr><td>{e(pair.first)}</td><td>{e(pair.second)}</td>"
                     f"<td>{pair.first_share:.0%}</td><td>{pair.second_share:.0%}</td>"
                     f"<td>{pair.tokens}</td></tr>")  # fmt: skip
    parts.append("</table>")
    for pair, code_a, code_b in shown:  # copydetect's code comes escaped, with marks added
        parts.append(f"<h3>{e(pair.first)} ({pair.first_share:.0%}) and {e(pair.second)} "
                     f"({pair.second_share:.0%})</h3><div class='pair'><pre>{code_a}</pre>"
                     f"<pre>{code_b}</pre></div>")  # fmt: skip
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")

"""``snapshotlib course slides OUT``: every lesson as a static reveal.js deck, for a lecture
without a kernel.

A deck is one HTML file that opens offline: reveal.js, its speaker notes (key S) and,
when the lesson has a figure, plotly.js are inlined, and the stored pictures are in the
page already; nothing is fetched from anywhere. The slides are the ones RISE shows (the
cells' ``slideshow`` metadata, :mod:`snapshotlib.publish.slides`) with the lesson's
stored outputs: the figures drawn; in each live widget's place, and in each try-it's
check (stored with no answer in it), a line saying where it runs.

nbconvert makes the deck (its reveal.js exporter, with the template in
``deck_template/``, which replaces every CDN address of nbconvert's own with inlined
files); reveal.js ships in ``reveal/`` (its README says which release and why).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from .material import material
from .release import ReleaseError
from .slides import SCREEN_HEIGHT, SCREEN_WIDTH, is_answer_cell

HERE = Path(__file__).resolve().parent
REVEAL = HERE / "reveal"
TEMPLATES = HERE / "deck_template"

_WIDGET = "application/vnd.jupyter.widget-view+json"
_PLOTLY = "application/vnd.plotly.v1+json"
#: "[Explorer: an interactive widget; run the notebook to use it]", the widgets' fallback
_WIDGET_NAME = re.compile(r"\[([^:\]]+): an interactive widget")

#: the page of a slide: prose from the left, as in the notebook; no execution counts;
#: a long line of code scrolls, as in the notebook, and printouts wrap at the slide's
#: edge; widget placeholders. The lessons' own slide style (notebooks/rise.css, which
#: RISE reads) comes after it.
_DECK_CSS = """
.reveal .slides { text-align: left; }
.reveal a.anchor-link { display: none; }
.reveal h1, .reveal h2, .reveal h3 { text-transform: none; }
.reveal .slides section { height: 100%; }
.reveal .jp-RenderedHTMLCommon { font-size: 14px; }
.reveal pre, .reveal code { box-shadow: none; }
.reveal .jp-InputPrompt, .reveal .jp-OutputPrompt { display: none; }
.reveal .jp-InputArea pre { overflow-x: auto; }
.reveal .jp-OutputArea pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.reveal img { max-width: 100%; }
.deck-widget { border: 1px dashed #888; padding: 0.6em 1em; color: #444; font-size: 14px; }
"""


def slide_css() -> str:
    """The decks' style: theirs, then the lessons' slide style (``rise.css``)."""
    lessons = material().notebooks / "rise.css"
    own = lessons.read_text(encoding="utf-8") if lessons.is_file() else ""
    return _script_safe(_DECK_CSS + own)


def _script_safe(text: str) -> str:
    """JavaScript or CSS to put inside a <script> or <style> element as is."""
    return text.replace("</script", "<\\/script").replace("</style", "<\\/style")


def _placeholder_output(text: str) -> Any:
    import nbformat

    return nbformat.v4.new_output(  # type: ignore[no-untyped-call]
        "display_data", data={"text/html": text, "text/plain": ""}
    )


def _widget_placeholder(output: dict[str, Any]) -> dict[str, Any]:
    plain = output.get("data", {}).get("text/plain", "")
    plain = plain if isinstance(plain, str) else "".join(plain)
    found = _WIDGET_NAME.search(plain)
    name = found.group(1) if found else "An interactive widget"
    text = (
        f"<div class='deck-widget'><b>{html.escape(name)}</b>: live in the lesson. "
        "Present the lesson in JupyterLab (Run All, then Alt-R) to use it here.</div>"
    )
    return {**output, "data": {"text/html": text, "text/plain": plain}}


#: in a reveal slide's place: the stored check ran on no answer ("No answer yet"), which
#: is not what the room said; without a kernel nothing can run what it says
_CHECK_PLACEHOLDER = (
    "<div class='deck-widget'><b>The check</b> runs the room's answer through the engine "
    "when the lesson is presented in JupyterLab (Run All, then Alt-R). "
    "The explanation follows.</div>"
)


def _plotly_html(figure: dict[str, Any], number: int) -> str:
    """A stored plotly figure as a div and the script that draws it with the deck's
    plotly.js (sized as stored: a slide hidden while drawing gives no size to measure)."""
    layout = dict(figure.get("layout", {}))
    layout.setdefault("height", 420)
    layout.setdefault("width", 780)
    spec = json.dumps({"data": figure.get("data", []), "layout": layout})
    div = f"deck-figure-{number}"
    return (
        f"<div id='{div}' class='deck-figure'></div>"
        f"<script type='text/javascript'>{{const figure = {_script_safe(spec)}; "
        f"Plotly.newPlot('{div}', figure.data, figure.layout, "
        "{displayModeBar: false, staticPlot: false});}</script>"
    )


def static_outputs(notebook: Any) -> bool:
    """Turn what only a kernel or JupyterLab shows into what a static page shows: a
    plotly figure into HTML that draws it, a widget into a line saying where it runs.
    The check after each answer cell becomes a line saying where it runs. Returns
    whether the deck needs plotly.js."""
    figures = 0
    for before, cell in zip([None, *notebook.cells], notebook.cells, strict=False):
        if before is not None and is_answer_cell(before) and cell.get("outputs"):
            cell.outputs = [_placeholder_output(_CHECK_PLACEHOLDER)]
            continue
        for k, output in enumerate(cell.get("outputs", [])):
            data = output.get("data", {})
            if _WIDGET in data:
                cell.outputs[k] = type(output)(_widget_placeholder(output))
            elif _PLOTLY in data:
                figures += 1
                shown = {"text/html": _plotly_html(data[_PLOTLY], figures)}
                cell.outputs[k] = type(output)({**output, "data": shown})
    return figures > 0


def export_deck(notebook_path: Path, out: Path) -> Path:
    """Write ``notebook_path``'s deck to the file ``out``; returns ``out``."""
    import nbformat
    from nbconvert import SlidesExporter

    notebook = nbformat.read(str(notebook_path), as_version=4)  # type: ignore[no-untyped-call]
    needs_plotly = static_outputs(notebook)
    texts = [c.source for c in notebook.cells if c.cell_type == "markdown" and c.source.strip()]
    title = texts[0].splitlines()[0].lstrip("# ") if texts else notebook_path.stem
    deck: dict[str, Any] = {
        "title": title,
        "width": SCREEN_WIDTH,
        "height": SCREEN_HEIGHT,
        "reveal_css": _script_safe((REVEAL / "reveal.css").read_text(encoding="utf-8")),
        "theme_css": _script_safe((REVEAL / "white.css").read_text(encoding="utf-8")),
        "deck_css": slide_css(),
        "reveal_js": _script_safe((REVEAL / "reveal.js").read_text(encoding="utf-8")),
        "notes_js": _script_safe((REVEAL / "notes.js").read_text(encoding="utf-8")),
        "plotly_js": "",
    }
    if needs_plotly:
        from plotly.offline import get_plotlyjs

        deck["plotly_js"] = _script_safe(get_plotlyjs())
    exporter = SlidesExporter(  # type: ignore[no-untyped-call]
        extra_template_basedirs=[str(TEMPLATES)], template_name="snapshotlib-deck"
    )
    body, _ = exporter.from_notebook_node(notebook, resources={"deck": deck})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body, encoding="utf-8")
    return out


def lesson_paths() -> list[Path]:
    """The lessons, 00 first (the numbered notebooks; not the glossary or errata)."""
    folder = material().notebooks
    return sorted(p for p in folder.glob("*.ipynb") if re.match(r"\d\d", p.name))


def export_decks(dest: Path, lessons: list[str] | None = None) -> list[Path]:
    """Write a deck per lesson into ``dest`` (``NN_topic.html``), or only those whose
    file name starts with one of ``lessons`` (e.g. ``["02", "05a"]``)."""
    paths = lesson_paths()
    if lessons:
        paths = [p for p in paths if any(p.name.startswith(w) for w in lessons)]
        missing = [w for w in lessons if not any(p.name.startswith(w) for p in paths)]
        if missing:
            known = ", ".join(p.name.split("_", 1)[0] for p in lesson_paths())
            raise ReleaseError(f"no lesson {', '.join(missing)}: the lessons are {known}")
    if dest.exists() and not dest.is_dir():
        raise ReleaseError(f"{dest} is a file, not a folder to write decks into")
    return [export_deck(p, dest / f"{p.stem}.html") for p in paths]

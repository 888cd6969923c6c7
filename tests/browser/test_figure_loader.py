"""The course figures' browser code (``snapshotlib/widgets/plotly_once.js``) in Chromium.

anywidget fails a model whose ``initialize`` has not finished two seconds after the model
was created, and a failed model never applies an update again. plotly's module can take
longer than that to load on a busy machine, so the loader's ``initialize`` returns at
once, holds the figure changes the kernel sends while the module loads, and applies them
in order when it is there. These tests drive the loader as anywidget does, with a stand-in
for the widget's model (the kernel's side of it) and plotly's real module held back until
the test lets it load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from labdriver import require_modules

if TYPE_CHECKING:
    from playwright.sync_api import Page

from snapshotlib.widgets.figure_widget import LOADER

# Sets up `window.figure(data, layout)`: a stand-in model, the loader's widget for it,
# `initialize` called as anywidget calls it, and plotly's module held until
# `window.releasePlotly()`. `kernel.send(name, value)` is a change the kernel sends
# (`_py2js_<name>` then null, as plotly's Python side does), `kernel.replace(part, value)`
# a whole `_widget_data` or `_widget_layout`.
_SET_UP_JS = """async ([loader, plotly]) => {
    const moduleUrl = (text) =>
        URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    const plotlyUrl = moduleUrl(plotly);
    let release;
    const gate = new Promise((resolve) => { release = resolve; });
    window.releasePlotly = release;
    // the loader's shared import, held at the gate
    globalThis[Symbol.for("snapshotlib.plotly-widget-module")] =
        gate.then(() => import(plotlyUrl));
    const widgetFactory = (await import(moduleUrl(loader))).default;

    class Model {
        constructor(state) { this.state = { ...state }; this.listeners = []; }
        get(key) { return this.state[key]; }
        set(key, value) {
            this.state[key] = value;
            for (const [event, callback] of this.listeners)
                if (event === `change:${key}`) callback();
        }
        on(event, callback) { this.listeners.push([event, callback]); }
        off() {}
        save_changes() {}
        send() {}
    }
    window.figure = (data, layout) => {
        const model = new Model({
            _widget_data: data, _widget_layout: layout, _plotly_esm: plotly, _config: {},
            _last_layout_edit_id: 0, _last_trace_edit_id: 0,
        });
        const widget = widgetFactory();
        const started = widget.initialize({ model, signal: new AbortController().signal });
        const kernel = {
            send(name, value) {
                model.set(`_py2js_${name}`, value);
                model.set(`_py2js_${name}`, null);
            },
            replace(part, value) { model.set(`_widget_${part}`, value); },
        };
        return { model, widget, kernel, initializeReturned: started };
    };
}"""

_FIGURE = [{"type": "scatter", "x": [1], "marker": {"color": "white"}}]


@pytest.fixture
def page(browser_page: Page) -> Page:
    require_modules("plotly")
    from plotly.basewidget import BaseFigureWidget

    browser_page.set_content("<html><body></body></html>")
    browser_page.evaluate(_SET_UP_JS, [LOADER, str(BaseFigureWidget._esm)])
    return browser_page


def figure_after(page: Page, script: str) -> Any:
    """Run ``script`` (with ``f`` a figure as first sent), release plotly, and return
    the browser's copy of the figure once the loader has taken over."""
    return page.evaluate(
        """async ([script, data]) => {
            const f = window.figure(structuredClone(data), {});
            const ran = new Function("f", script);
            ran(f);
            window.releasePlotly();
            const el = document.createElement("div");
            document.body.append(el);
            await f.widget.render({ model: f.model, el });
            return { data: f.model.get("_widget_data"), layout: f.model.get("_widget_layout") };
        }""",
        [script, _FIGURE],
    )


def test_initialize_returns_before_plotly_s_module_has_loaded(page: Page) -> None:
    outcome = page.evaluate(
        """() => {
            const f = window.figure([], {});
            return f.initializeReturned === undefined;
        }"""
    )
    assert outcome is True


def test_changes_sent_while_plotly_loads_are_applied_in_order(page: Page) -> None:
    shown = figure_after(
        page,
        """
        f.kernel.send("restyle", {
            restyle_data: { "marker.color": ["red"] }, restyle_traces: [0],
        });
        f.kernel.send("addTraces", { trace_data: [{ type: "scatter", x: [2] }] });
        f.kernel.send("restyle", { restyle_data: { x: [[3]] }, restyle_traces: [1] });
        f.kernel.send("relayout", { relayout_data: { "title.text": "s1" } });
        """,
    )
    assert [t["marker"]["color"] if "marker" in t else None for t in shown["data"]] == [
        "red",
        None,
    ]
    assert shown["data"][1]["x"] == [3]
    assert shown["layout"] == {"title": {"text": "s1"}}


def test_a_change_already_in_a_later_whole_copy_is_not_applied_again(page: Page) -> None:
    # until a view has drawn, the kernel follows its changes with the whole figure
    shown = figure_after(
        page,
        """
        f.kernel.send("addTraces", { trace_data: [{ type: "scatter", x: [2] }] });
        f.kernel.send("update", {
            style_data: { "marker.color": ["red"] }, style_traces: [0],
            layout_data: { "title.text": "s1" },
        });
        f.kernel.replace("data", [
            { type: "scatter", x: [1], marker: { color: "red" } },
            { type: "scatter", x: [2] },
        ]);
        f.kernel.send("restyle", {
            restyle_data: { "marker.color": ["blue"] }, restyle_traces: [1],
        });
        """,
    )
    # the whole copy already had the added trace and the red; the layout half of the
    # update, not in any whole copy, and the later restyle still apply
    assert len(shown["data"]) == 2
    assert shown["data"][0]["marker"] == {"color": "red"}
    assert shown["data"][1]["marker"] == {"color": "blue"}
    assert shown["layout"] == {"title": {"text": "s1"}}


def test_changes_after_plotly_has_loaded_are_applied_once_by_plotly_itself(page: Page) -> None:
    shown = page.evaluate(
        """async (data) => {
            const f = window.figure(structuredClone(data), {});
            f.kernel.send("addTraces", { trace_data: [{ type: "scatter", x: [2] }] });
            window.releasePlotly();
            const el = document.createElement("div");
            document.body.append(el);
            await f.widget.render({ model: f.model, el });
            f.kernel.send("addTraces", { trace_data: [{ type: "scatter", x: [3] }] });
            return {
                model: f.model.get("_widget_data").map((t) => t.x),
                drawn: el.querySelectorAll("g.trace").length,
            };
        }""",
        _FIGURE,
    )
    assert shown["model"] == [[1], [2], [3]]
    assert shown["drawn"] == 3  # plotly's view drew the held change and the later one

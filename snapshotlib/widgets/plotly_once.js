// Every figure of a page shares one copy of plotly's widget module, and a figure is
// ready for the kernel's updates before that module has loaded.
//
// plotly's FigureWidget ships its 5 MB module as each figure's own code, so the browser
// parsed it again for every figure, all at once after Run All. This loader is each
// figure's code instead: the first figure on the page imports plotly's module (sent
// along in `_plotly_esm`), every other figure waits for that same import.
//
// anywidget gives a model two seconds from its creation to load its code and finish
// `initialize`; a model that misses them never applies an update from the kernel again
// (its figure stays as first drawn). Even once per page, parsing plotly's module can
// take longer than that on a busy machine, so `initialize` does not wait for it: it
// holds the figure changes the kernel sends meanwhile, and when the module is there,
// plotly's own widget takes over and the held changes are applied to the figure in the
// order they came. `render` waits for that, so every view draws the figure up to date.
const SHARED = Symbol.for("snapshotlib.plotly-widget-module");

// The changes plotly's figure model applies to the browser's copy of the figure, as
// `_py2js_<name>`, and which parts of the figure each one changes.
const CHANGES = {
  addTraces: ["data"],
  deleteTraces: ["data"],
  moveTraces: ["data"],
  restyle: ["data"],
  removeTraceProps: ["data"],
  relayout: ["layout"],
  removeLayoutProps: ["layout"],
  update: ["data", "layout"],
  animate: ["data", "layout"],
};

function plotlyModule(model) {
  let loading = globalThis[SHARED];
  if (loading === undefined) {
    const url = URL.createObjectURL(
      new Blob([model.get("_plotly_esm")], { type: "text/javascript" }),
    );
    loading = import(url).finally(() => URL.revokeObjectURL(url));
    loading.catch(() => {
      globalThis[SHARED] = undefined; // let the next figure try again
    });
    globalThis[SHARED] = loading;
  }
  return loading;
}

// What of a held change still applies: the kernel may since have replaced the figure's
// data or layout whole (it does so until a view has drawn), and that copy includes the
// change already. `update` and `animate` change both; their replaced half is emptied.
function stillToApply(name, value, replaced) {
  const parts = CHANGES[name].filter((part) => !replaced.has(part));
  if (parts.length === 0) return null;
  if (parts.length === CHANGES[name].length) return value;
  if (parts[0] === "data") return { ...value, layout_data: {} };
  return { ...value, style_data: name === "animate" ? [] : {}, style_traces: [] };
}

// Applies the held changes with plotly's own figure model, each as if it were the
// change the kernel last sent.
function catchUp(module, model, held) {
  for (const { name, value, replaced } of held) {
    const change = stillToApply(name, value, replaced);
    if (change === null) continue;
    const key = `_py2js_${name}`;
    const asThen = { get: (k) => (k === key ? change : model.get(k)), on() {} };
    new module.FigureModel(asThen, {})[`do_${name}`]();
  }
}

export default () => {
  let widget; // plotly's widget for this figure, once its module has loaded
  let loaded; // settles when `widget` has taken over
  return {
    initialize(context) {
      const { model } = context;
      const held = [];
      for (const name of Object.keys(CHANGES)) {
        const key = `_py2js_${name}`;
        model.on(`change:${key}`, () => {
          const value = model.get(key);
          if (widget === undefined && value !== null) {
            held.push({ name, value, replaced: new Set() });
          }
        });
      }
      for (const part of ["data", "layout"]) {
        model.on(`change:_widget_${part}`, () => {
          if (widget === undefined) for (const change of held) change.replaced.add(part);
        });
      }
      loaded = plotlyModule(model).then(async (module) => {
        const own = await module.default(); // changes are still held while it comes
        const started = own.initialize?.(context); // plotly's: sets its listeners up
        catchUp(module, model, held); // in the same step: no change comes in between
        widget = own;
        return started;
      });
      loaded.catch((error) => console.error("[snapshotlib] plotly's figure code:", error));
      // not returned: see the top of this file
    },
    async render(context) {
      await loaded;
      return widget.render(context);
    },
  };
};

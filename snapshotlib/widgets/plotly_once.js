// Every figure of a page shares one copy of plotly's widget module.
//
// plotly's FigureWidget ships its 5 MB module as each figure's own code, so the browser
// parses it again for every figure, all at once after Run All. anywidget gives a model
// two seconds to load its code; a figure that misses them never applies an update from
// the kernel again and stays as first drawn. This loader is each figure's code instead:
// the first figure on the page imports plotly's module (sent along in `_plotly_esm`),
// every other figure waits for that same import, then each runs plotly's own widget.
const SHARED = Symbol.for("snapshotlib.plotly-widget-module");

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

export default () => {
  let widget; // plotly's widget for this figure: its initialize and render share state
  return {
    async initialize(context) {
      const module = await plotlyModule(context.model);
      widget = await module.default();
      return widget.initialize?.(context);
    },
    render(context) {
      return widget.render(context);
    },
  };
};

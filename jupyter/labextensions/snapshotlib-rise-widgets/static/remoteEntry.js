// snapshotlib-rise-widgets: a prebuilt JupyterLab federated extension of a few lines.
//
// RISE's slideshow page (jupyterlab-rise 0.43) is an application of its own, built
// without @jupyterlab/console. The ipywidgets manager (jupyterlab_widgets 3) asks the
// page for that module (it can show widgets in consoles too), and when the page has
// none the manager fails to load: no widget and no plotly FigureWidget appears on a
// slide (jupyterlab-contrib/rise issues 119 and 126). The manager uses the module
// only for IConsoleTracker, an *optional* service. So this container offers a module
// of that one token to a page that has no console module at all; the manager loads,
// finds no console tracker (there are no consoles in a slideshow) and shows the
// widgets. In JupyterLab itself, which has its own console module, it offers nothing.
var _JUPYTERLAB;
(_JUPYTERLAB = typeof _JUPYTERLAB === "undefined" ? {} : _JUPYTERLAB)["snapshotlib-rise-widgets"] = {
  init: function (shareScope) {
    if (shareScope["@jupyterlab/console"]) {
      return;
    }
    var consoleModule = {
      IConsoleTracker: {
        name: "@jupyterlab/console:IConsoleTracker",
        description: "A console tracker: none in a RISE slideshow."
      }
    };
    shareScope["@jupyterlab/console"] = {
      "0.0.0": {
        from: "snapshotlib-rise-widgets",
        eager: false,
        loaded: 1,
        get: function () {
          return Promise.resolve(function () {
            return consoleModule;
          });
        }
      }
    };
  },
  get: function (module) {
    return Promise.reject(new Error("snapshotlib-rise-widgets has no module " + module));
  }
};

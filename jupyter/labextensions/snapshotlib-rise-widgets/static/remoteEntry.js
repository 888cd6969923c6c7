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
//
// It also has one plugin, for RISE's page only. RISE puts a notes cell, as JupyterLab
// drew it, into the slide's <aside class="notes">, and the speaker view (key T) copies
// that HTML into a window of its own, without JupyterLab's style: the cell's hidden
// editor shows the note's markdown source above the note itself. So each aside gets a
// <style> that hides the editor there; its rules name the speaker view's notes box, so
// they change nothing on the slides.
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
    if (module === "./extension") {
      return Promise.resolve(function () {
        return { __esModule: true, default: [speakerNotesPlugin] };
      });
    }
    return Promise.reject(new Error("snapshotlib-rise-widgets has no module " + module));
  }
};

var SPEAKER_NOTES_STYLE =
  ".speaker-controls-notes .jp-InputArea-editor, .speaker-controls-notes .jp-InputPrompt," +
  " .speaker-controls-notes .jp-Collapser, .speaker-controls-notes .jp-CellHeader," +
  " .speaker-controls-notes .jp-CellFooter { display: none; }";

function styleSpeakerNotes() {
  document.querySelectorAll("aside.notes").forEach(function (aside) {
    if (aside.querySelector("style[data-snapshotlib-notes]")) {
      return;
    }
    var style = document.createElement("style");
    style.setAttribute("data-snapshotlib-notes", "");
    style.textContent = SPEAKER_NOTES_STYLE;
    aside.insertBefore(style, aside.firstChild);
  });
}

var speakerNotesPlugin = {
  id: "snapshotlib-rise-widgets:speaker-notes",
  description: "Presenter's notes in RISE's speaker view without their markdown source.",
  autoStart: true,
  activate: function (app) {
    if (app.name !== "Rise") {
      return;
    }
    styleSpeakerNotes();
    new MutationObserver(styleSpeakerNotes).observe(document.body, {
      childList: true,
      subtree: true
    });
  }
};

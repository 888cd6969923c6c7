"""The wheel carries the learner's course (lessons, glossary, errata, reading list,
exercises in learner form, the JupyterLab settings) inside the package, as
``snapshotlib/_course``, so that ``snapshotlib course init`` can copy it out of an
installed package. In the repository they stay where staff edit them (notebooks/,
exercises/, jupyter/); solutions/ is never copied. Everything else is declared in
pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
#: (folder in the repository, files of it) copied into snapshotlib/_course/
LEARNER_MATERIAL = (
    ("notebooks", "*.ipynb"),
    ("notebooks", "*.css"),  # the lessons' look on RISE's slides
    ("exercises", "*.ipynb"),
    ("jupyter", "*.json"),
)


class BuildWithCourse(build_py):  # type: ignore[misc]
    def run(self) -> None:
        if not self.editable_mode:
            # a build folder left from an earlier build would otherwise still hold the
            # modules, lessons and exercises since deleted or renamed, and the wheel
            # would ship them: the package is built afresh each time
            shutil.rmtree(Path(self.build_lib) / "snapshotlib", ignore_errors=True)
        super().run()
        if self.editable_mode:  # an editable install reads the checkout's folders
            return
        target = Path(self.build_lib) / "snapshotlib" / "_course"
        for folder, pattern in LEARNER_MATERIAL:
            files = sorted((HERE / folder).glob(pattern))
            if not files:
                raise SystemExit(f"setup.py: no {folder}/{pattern} to put in the package")
            (target / folder).mkdir(parents=True, exist_ok=True)
            for path in files:
                shutil.copyfile(path, target / folder / path.name)


#: the prebuilt JupyterLab extension that lets widgets load in RISE's slideshow page
#: (jupyter/labextensions/snapshotlib-rise-widgets/static/remoteEntry.js says why),
#: installed where JupyterLab finds an environment's extensions
RISE_WIDGETS = "jupyter/labextensions/snapshotlib-rise-widgets"
DATA_FILES = [
    (f"share/{RISE_WIDGETS}", [f"{RISE_WIDGETS}/package.json"]),
    (f"share/{RISE_WIDGETS}/static", [f"{RISE_WIDGETS}/static/remoteEntry.js"]),
]

setup(cmdclass={"build_py": BuildWithCourse}, data_files=DATA_FILES)

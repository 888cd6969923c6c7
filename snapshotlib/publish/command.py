"""``snapshotlib examples`` and ``snapshotlib course init|release|slides``."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..shipped import SWEEPS, names, scenario_lines


def cmd_examples(args: argparse.Namespace) -> int:
    print('Scenarios (snapshotlib run NAME, load_scenario("NAME")):')
    print("\n".join(scenario_lines()))
    print("Sweeps (snapshotlib sweep NAME --out DIR):")
    print("\n".join(f"  {name}" for name in names(SWEEPS)))
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from . import release

    dest = Path(args.dest)
    return _written(lambda: release.init(dest), f"the course is in {dest}/", "; start with\n"
                    f"  jupyter lab {dest / 'notebooks' / '00_start_here.ipynb'}")  # fmt: skip


def cmd_release(args: argparse.Namespace) -> int:
    from . import release

    if args.student:
        dest = Path(args.student)
        return _written(lambda: release.student(dest), f"the student release is in {dest}/")
    dest = Path(args.instructor)
    return _written(lambda: release.instructor(dest), f"the instructor release is in {dest}/")


def cmd_slides(args: argparse.Namespace) -> int:
    from .decks import export_decks

    dest = Path(args.dest)
    where = f"the lessons' decks are in {dest}/"
    then = "; open one in a browser (S: the speaker view, F: full screen)"
    return _written(lambda: export_decks(dest, args.lesson), where, then)


def cmd_lite(args: argparse.Namespace) -> int:
    from .lite import build_or_say

    dest = Path(args.dest)
    then = (
        "; serve the folder from any static host, or try it here with\n"
        f"  python -m http.server -d {shlex.quote(str(dest))} 8000  (and open http://127.0.0.1:8000)"
    )
    return _written(lambda: build_or_say(dest, args.binder), f"the site is in {dest}/", then)


def _written(write: Callable[[], list[Path]], where: str, then: str = "") -> int:
    """Run ``write``; say where and how many files, or the error in one line (exit 2)."""
    from .release import ReleaseError

    try:
        written = write()
    except ReleaseError as e:
        print(f"snapshotlib: error: {e}", file=sys.stderr)
        return 2
    print(f"{where} ({len(written)} files){then}")
    return 0


def add_course_commands(sub: Any) -> None:
    p = sub.add_parser("examples", help="list the example scenarios and sweeps that ship "
                       "with the package (run one by name from any folder)")  # fmt: skip
    p.set_defaults(func=cmd_examples)

    p = sub.add_parser("course", help="copy the course out of the package (init), or write "
                       "what staff publish and keep (release)")  # fmt: skip
    what = p.add_subparsers(dest="what", required=True)
    q = what.add_parser("init", help="your own copy of the course: lessons, exercises, "
                        "example scenarios and sweeps")  # fmt: skip
    q.add_argument("dest", metavar="DIR", help="folder to write (new, or empty)")
    q.set_defaults(func=cmd_init)
    about = ("from the course's checkout: the tree learners get (--student: no solutions "
             "or hidden tests; Binder points at it) or the staff's (--instructor: "
             "solutions, autograder zips, guide)")  # fmt: skip
    q = what.add_parser("release", help=about)
    which = q.add_mutually_exclusive_group(required=True)
    which.add_argument("--student", metavar="OUT")
    which.add_argument("--instructor", metavar="OUT")
    q.set_defaults(func=cmd_release)
    q = what.add_parser("slides", help="every lesson as a static reveal.js deck (one HTML "
                        "file each, opens offline) for a lecture without a kernel")  # fmt: skip
    q.add_argument("dest", metavar="OUT", help="folder to write the decks into")
    q.add_argument("--lesson", action="append", metavar="NN",
                   help="only this lesson (its number, e.g. 02 or 05a); repeatable")  # fmt: skip
    q.set_defaults(func=cmd_slides)
    q = what.add_parser("lite", help="from the course's checkout: the student release as a "
                        "static site whose lessons run in the browser (JupyterLite), with no "
                        "server; needs npm and the lite extra")  # fmt: skip
    q.add_argument("dest", metavar="OUT", help="folder to write (new, or empty)")
    q.add_argument("--binder", metavar="URL", help="the course on Binder: the site's lessons "
                   "that cannot run in a browser link it")  # fmt: skip
    q.set_defaults(func=cmd_lite)

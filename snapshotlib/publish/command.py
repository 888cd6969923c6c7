"""``snapshotlib examples`` and ``snapshotlib course init|release``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..shipped import SWEEPS, names, scenario_lines


def cmd_examples(args: argparse.Namespace) -> int:
    print('Scenarios (snapshotlib run NAME, load_scenario("NAME")):')
    print("\n".join(scenario_lines()))
    print("Sweeps (snapshotlib sweep NAME --out DIR):")
    print("\n".join(f"  {name}" for name in names(SWEEPS)))
    return 0


def cmd_course(args: argparse.Namespace) -> int:
    from . import release

    dest = Path(args.dest)
    try:
        if args.what == "init":
            written = release.init(dest)
            print(f"the course is in {dest}/ ({len(written)} files); start with\n"
                  f"  jupyter lab {dest / 'notebooks' / '00_start_here.ipynb'}")  # fmt: skip
            return 0
        written = release.student(dest) if args.student else release.instructor(dest)
    except release.ReleaseError as e:
        print(f"snapshotlib: error: {e}", file=sys.stderr)
        return 2
    kind = "student" if args.student else "instructor"
    print(f"the {kind} release is in {dest}/ ({len(written)} files)")
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
    q.set_defaults(func=cmd_course)
    about = ("from the course's checkout: the tree learners get (--student: no solutions "
             "or hidden tests; Binder points at it) or the staff's (--instructor: "
             "solutions, autograder zips, guide)")  # fmt: skip
    q = what.add_parser("release", help=about)
    which = q.add_mutually_exclusive_group(required=True)
    which.add_argument("--student", dest="student_dest", metavar="OUT")
    which.add_argument("--instructor", dest="instructor_dest", metavar="OUT")
    q.set_defaults(func=_release)


def _release(args: argparse.Namespace) -> int:
    args.student = args.student_dest is not None
    args.dest = args.student_dest or args.instructor_dest
    return cmd_course(args)

"""The ``snapshotlib`` command line.

Exit codes: 0 success, 1 a check failed (``check``, ``check-traces``) or an execution of
a sweep failed, 2 bad input. A user mistake gets one line on stderr naming the file,
line or step, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .checks.predicates import deadlock, termination
from .checks.verdict import run_verdict, snapshot_verdict
from .formats.record import append_record
from .formats.scenario import ScenarioError, load_scenario, run_scenario
from .live.command import add_live_commands
from .live.command import run as run_live
from .publish.command import add_course_commands
from .search.command import add_search_command
from .simulator import Simulator

BAD_INPUT = 2


class UsageError(Exception):
    """A mistake in what the user gave us; printed as one line, exit code 2."""


def _run(path: str) -> Simulator:
    try:
        return run_scenario(load_scenario(path))
    except ScenarioError as e:
        raise UsageError(str(e)) from None


def report(sim: Simulator, name: str = "") -> dict[str, Any]:
    """The ``run --json`` document: snapshots and their checks."""
    snapshots = []
    checks: dict[str, Any] = {}
    for sid, snap in sim.snapshots().items():
        snapshots.append(snap.to_dict(sim.app))
        verdict = snapshot_verdict(sim, sid)
        cut, dijkstra = verdict.cut, verdict.dijkstra
        entry: dict[str, Any] = {
            "consistent": cut.ok,
            "reason": cut.reason,
            "witness": None if cut.witness is None else sim.trace.message_name(cut.witness),
            "dijkstra": {
                "holds": dijkstra.holds,
                "reason": dijkstra.reason,
                "inversions": dijkstra.inversions,
                "witness": (
                    None if dijkstra.witness is None else sim.trace.message_name(dijkstra.witness)
                ),
            },
        }
        if verdict.conserved is not None:
            c = verdict.conserved
            entry["conservation"] = {"holds": c.holds, "reason": c.reason, **c.details}
        entry["termination"] = termination(sim, snap).holds
        entry["deadlock"] = deadlock(sim, snap).holds
        checks[sid] = entry
    return {
        "scenario": name,
        "algorithm": sim.algorithm.name,
        "actions": sim.time,
        "snapshots": snapshots,
        "checks": checks,
    }


def _print_text(sim: Simulator, doc: dict[str, Any]) -> None:
    print(f"{len(sim.network.processes)} processes, {sim.time} actions, app {sim.app.name}")
    for snap in doc["snapshots"]:
        sid = snap["id"]
        state = "complete" if snap["complete"] else "INCOMPLETE"
        print(f"snapshot {sid} ({state}), initiated by {', '.join(snap['initiators']) or '-'}")
        for p, rec in snap["processes"].items():
            print(f"  {p}: events {', '.join(rec['events']) or '(none)'}; state {rec['state']}")
        for c, msgs in snap["channels"].items():
            shown = ", ".join(m["label"] or str(m["payload"]) for m in msgs) or "empty"
            print(f"  {c}: {shown}")
        check = doc["checks"][sid]
        print(f"  consistent: {'yes' if check['consistent'] else 'NO'} - {check['reason']}")
        d = check["dijkstra"]
        print(f"  Dijkstra: {'holds' if d['holds'] else 'FAILS'} - {d['reason']}")
        if "conservation" in check:
            print(f"  conservation: {check['conservation']['reason']}")


def cmd_run(args: argparse.Namespace) -> int:
    sim = _run(args.scenario)
    doc = report(sim, Path(args.scenario).stem)
    if args.record:
        try:
            append_record(sim, args.record, Path(args.scenario).stem)
        except (ScenarioError, OSError) as e:
            raise UsageError(f"{args.record}: cannot record the run: {e}") from None
    if args.json:
        json.dump(doc, sys.stdout, indent=2, default=str)
        print()
    else:
        _print_text(sim, doc)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    sim = _run(args.scenario)
    verdict = run_verdict(sim)
    if not verdict.ok:
        print(f"{args.scenario}: {verdict.reason}" if not verdict.snapshots else verdict.reason)
        return 1
    snapshots = verdict.snapshots
    claim = "each a consistent cut on which Dijkstra's argument holds"
    print(f"ok: {len(snapshots)} snapshot(s), {claim}")
    return 0


def cmd_shiviz(args: argparse.Namespace) -> int:
    from .formats.shiviz import ShivizError, to_shiviz

    try:
        text = to_shiviz(_run(args.scenario))
    except ShivizError as e:
        raise UsageError(f"{args.scenario}: {e}") from None
    if args.output:  # "\n" only: ShiViz's upload splits the header lines on "\n"
        Path(args.output).write_text(text, encoding="utf-8", newline="\n")
    else:
        sys.stdout.write(text)
    return 0


def cmd_cos418(args: argparse.Namespace) -> int:
    from .formats.cos418 import Cos418Error
    from .tick_model import run_cos418, write_snaps

    try:
        result = run_cos418(args.topology, args.events, seed=args.seed)
    except Cos418Error as e:
        raise UsageError(str(e)) from None
    out = Path(args.out)
    paths = write_snaps(result, out)
    for p in paths:
        print(p)
    return 0


def _find_autograder(exercise: str, bases: list[Path]) -> tuple[str, Path]:
    """The exercise's name and autograder zip, from ``N`` or ``NN_name``: in the first of
    ``bases`` whose ``build/autograder/`` has it."""
    prefix = f"{int(exercise):02d}_" if exercise.isdigit() else exercise
    for base in bases:
        zips = sorted((base / "build" / "autograder").glob(f"{prefix}*.zip"))
        if zips:
            return zips[0].stem, zips[0]
    known = [
        (base, p.stem) for base in bases for p in sorted(base.glob(f"solutions/{prefix}*.ipynb"))
    ]
    if not known:
        where = " or ".join(str(b) for b in bases)
        raise UsageError(
            f"no exercise {exercise} in {where} (no solutions/{prefix}*.ipynb): give the "
            "course folder with --course, or the autograder zip with --autograder"
        )
    base, name = known[0]
    raise UsageError(
        f"no autograder zip built for {name} ({base / 'build' / 'autograder'}): "
        "run `make exercises` there"
    )


def cmd_grade(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("otter") is None:
        raise UsageError("grading needs otter-grader: pip install 'snapshotlib[grading]'")
    from .grading import (
        GradingError,
        containment_warning,
        course_folder,
        grade,
        text_report,
        write_html_report,
    )

    folder = Path(args.submissions)
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder")
    if args.timeout <= 0 or args.cpu_seconds <= 0 or args.memory_mb < 256 or args.jobs < 1:
        raise UsageError("--timeout and --cpu-seconds must be > 0, --memory-mb at least 256, "
                         "--jobs at least 1")  # fmt: skip
    try:
        course = course_folder(args.course)
    except GradingError as e:
        raise UsageError(str(e)) from None
    if args.autograder:
        zipped = Path(args.autograder)
        if not zipped.is_file():
            raise UsageError(f"{zipped}: no such autograder zip")
        name = args.exercise if not args.exercise.isdigit() else zipped.stem
    else:
        # a course given is the only place to look; else the current folder, then the
        # source checkout of this package, if it is one
        if course is None:
            bases = [Path.cwd()]
        elif args.course:
            bases = [course]
        else:
            bases = [Path.cwd(), course]
        name, zipped = _find_autograder(args.exercise, bases)
    warning = containment_warning()
    if warning:
        print(warning, file=sys.stderr)
    options: dict[str, Any] = {"timeout": args.timeout, "cpu_seconds": args.cpu_seconds,
                               "memory_mb": args.memory_mb, "roster": args.roster,
                               "id_pattern": args.id_pattern, "resume": args.resume}  # fmt: skip
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    from .grading.gradebook import state_path, wide_path

    written = f"{out}, {wide_path(out)}"
    try:
        if args.spark or args.master:  # a Spark task per submission, CSV and Parquet
            on_spark = _spark_part("grading", True)
            book = _started(lambda: on_spark.grade_on_spark(
                folder, name, out, autograder=zipped, course=course, master=args.master,
                **options))  # fmt: skip
            written += f", {on_spark.parquet_path(out)}"
        else:
            book = grade(folder, name, out, autograder=zipped, course=course, jobs=args.jobs,
                         progress=True, **options)  # fmt: skip
    except GradingError as e:
        raise UsageError(str(e)) from None
    except KeyboardInterrupt:
        print(f"\nstopped: what was graded is in {out} and {state_path(out)}; run the same "
              "command with --resume to grade the rest", file=sys.stderr)  # fmt: skip
        return 130
    print(text_report(book))
    html = write_html_report(book, out.with_name(f"{out.stem}-report.html"))
    print(f"\nwrote {written} and {html}")
    if args.similarity:
        if importlib.util.find_spec("copydetect") is None:
            raise UsageError("--similarity needs copydetect: pip install 'snapshotlib[similarity]'")
        from .grading.similarity import similarity_report

        base = course or Path.cwd()
        report = similarity_report(
            folder, name, out.with_name(f"{out.stem}-similarity"),
            exercise_notebook=base / "exercises" / f"{name}.ipynb",
            solution=base / "solutions" / f"{name}.ipynb",
        )  # fmt: skip
        print(f"similarity: {report.summary()}")
    return 0


# ------------------------------------------------------ sweeps and bulk trace checks
def _spark_part(module: str, local: bool) -> Any:
    """``snapshotlib.spark.<module>``, or a one-line error naming what is missing."""
    import importlib

    try:
        return importlib.import_module(f"snapshotlib.spark.{module}")
    except ModuleNotFoundError as e:
        if e.name is None or e.name.split(".")[0] not in ("pyspark", "pyarrow"):
            raise
        hint = "" if local else " (or run with --local, which needs only pyarrow)"
        raise UsageError(f"needs {e.name}: pip install 'snapshotlib[spark]'{hint}") from None


def _started(run: Any) -> Any:
    """``run()``, with Spark's failure to start as a one-line error."""
    from .spark.session import SparkStartError

    try:
        return run()
    except SparkStartError as e:
        raise UsageError(str(e)) from None


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweeps import SweepConfigError, load_config

    try:
        sweep = load_config(args.config)
    except SweepConfigError as e:
        raise UsageError(str(e)) from None
    if args.partitions is not None and args.partitions < 1:
        raise UsageError(f"--partitions must be at least 1, got {args.partitions}")
    runner = _spark_part("sweep", args.local)
    progress = not args.quiet
    if args.local:
        result = runner.run_sweep_local(sweep, args.out, progress=progress)
    else:
        result = _started(
            lambda: runner.run_sweep(
                sweep, args.out, master=args.master, partitions=args.partitions, progress=progress
            )
        )
    print(
        f"sweep {result.name}: {result.executions} executions ({len(sweep.cells)} cells x "
        f"{len(sweep.seeds)} seeds) in {result.seconds:.1f} s on {result.master}"
    )
    print(f"  rows:    {result.rows} (Parquet, partitioned by algorithm)")
    print(f"  summary: {result.summary} and {result.summary.with_suffix('.csv')}")
    if result.errors:
        print(
            f"snapshotlib: {result.errors} execution(s) failed; their rows say why (column error)",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_check_traces(args: argparse.Namespace) -> int:
    for path in args.files:
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such file")
    checker = _spark_part("traces", args.local)
    if args.local:
        report = checker.check_traces_local(args.files, args.out)
    else:
        report = _started(lambda: checker.check_traces(args.files, args.out, master=args.master))
    for row in report.problems:
        where = f"{row['file']}, line {row['line']}"
        if row["error"] is not None:
            print(f"snapshotlib: corrupt record skipped: {row['error']}", file=sys.stderr)
        else:
            print(f"{where}, {row['snapshot']}: {row['reason']}")
    c = report.counts
    print(
        f"checked {c['records']} record(s) in {len(args.files)} file(s): {c['snapshots']} "
        f"snapshot(s), {c['failed']} failing a check; {c['corrupt']} corrupt record(s) skipped"
    )
    if args.out:
        print(f"  rows: {Path(args.out) / 'rows'} (Parquet)")
    return 0 if report.ok else 1


def _add_spark_commands(sub: Any) -> None:
    p = sub.add_parser(
        "sweep",
        help="simulate a grid of executions (TOML config) on Spark; Parquet rows and a summary",
    )
    p.add_argument("config", help="sweep configuration (TOML), or a shipped one's name")
    p.add_argument("--out", required=True, help="output folder (rows/, summary.parquet, ...)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--master", help="Spark master URL (default local[*]; spark://HOST:7077)")
    where.add_argument("--local", action="store_true", help="run in this process, without Spark")
    p.add_argument(
        "--partitions", type=int, help="Spark tasks (default: about 2500 executions each)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "check-traces",
        help="check every recorded execution (one scenario per JSON line) of FILEs, on Spark",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines files")
    p.add_argument("--out", help="folder to write every row to (rows/, Parquet)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--master", help="Spark master URL (default local[*])")
    where.add_argument("--local", action="store_true", help="run in this process, without Spark")
    p.set_defaults(func=cmd_check_traces)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="snapshotlib",
        description="Run and check distributed snapshot executions.",
    )
    parser.add_argument("--version", action="version", version=f"snapshotlib {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run a scenario and print its snapshots and checks")
    p.add_argument("scenario", help="scenario JSON file, or a shipped example's name "
                   "(snapshotlib examples lists them)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--record", metavar="FILE",
                   help="append the run to FILE (JSON Lines, for check-traces)")  # fmt: skip
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "check",
        help="exit 0 if every snapshot is a consistent cut and Dijkstra's argument holds, else 1",
    )
    p.add_argument("scenario", help="scenario JSON file")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "shiviz", help="write the execution as a ShiViz log (loads in ShiViz's upload box as is)"
    )
    p.add_argument("scenario", help="scenario JSON file")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.set_defaults(func=cmd_shiviz)

    p = sub.add_parser("cos418", help="run a COS 418 topology and events file, write .snap files")
    p.add_argument("topology", help=".top file")
    p.add_argument("events", help=".events file")
    p.add_argument("--seed", type=int, default=0, help="seed of the random delays (default 0)")
    p.add_argument("--out", default=".", help="folder for the .snap files (default: .)")
    p.set_defaults(func=cmd_cos418)

    p = sub.add_parser("grade", help="grade a folder of submitted notebooks, each in a "
                       "sandbox, judged from outside")  # fmt: skip
    p.add_argument("submissions", help="folder of submitted .ipynb files")
    p.add_argument("--exercise", required=True, help="exercise number (1) or name")
    p.add_argument("--out", required=True, help="gradebook CSV; the HTML report goes next to it")
    p.add_argument("--course", help="the course folder (its build/autograder/ holds the zips; "
                   "its solutions/ and .git are hidden from submissions); default: the zip is "
                   "looked for in the current folder, then in this package's source "
                   "checkout")  # fmt: skip
    p.add_argument("--autograder", help="the exercise's autograder zip, instead of finding it "
                   "in the course's build/autograder/")  # fmt: skip
    p.add_argument("--cpu-seconds", type=int, default=300,
                   help="CPU seconds for all of a submission's work (300)")  # fmt: skip
    p.add_argument("--timeout", type=float, default=900,
                   help="wall-clock backstop per submission, in seconds (900)")  # fmt: skip
    p.add_argument("--memory-mb", type=int, default=2048,
                   help="memory of a submission, all its processes together (2048)")  # fmt: skip
    p.add_argument("--jobs", type=int, default=1, help="submissions graded at once (1)")
    p.add_argument("--roster", help="CSV with columns submission,learner_id naming each "
                   "submission's learner (default: the file name names it)")  # fmt: skip
    p.add_argument("--id-pattern", help="regular expression whose first group picks the "
                   "learner id out of a file name, e.g. '^([^_]+)_' for an export named "
                   "ID_anything.ipynb")  # fmt: skip
    p.add_argument("--resume", action="store_true", help="keep what an earlier run of this "
                   "--out graded (for files unchanged since) and grade the rest")  # fmt: skip
    p.add_argument("--similarity", action="store_true", help="also rank pairs of submissions, "
                   "and each against the engine's own implementations, by how much code "
                   "they share (an HTML report beside --out)")  # fmt: skip
    p.add_argument("--spark", action="store_true",
                   help="a Spark task per submission (as many at once as Spark has cores); "
                        "also writes the gradebook as Parquet")  # fmt: skip
    p.add_argument("--master", help="Spark master URL (implies --spark; default local[*], "
                   "or spark://HOST:7077)")  # fmt: skip
    p.set_defaults(func=cmd_grade)

    add_search_command(sub)
    _add_spark_commands(sub)
    add_course_commands(sub)
    add_live_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "live":
        return run_live(args)
    try:
        code: int = args.func(args)
    except UsageError as e:
        print(f"snapshotlib: error: {e}", file=sys.stderr)
        return BAD_INPUT
    except BrokenPipeError:
        return 0
    except OSError as e:
        print(f"snapshotlib: error: {e}", file=sys.stderr)
        return BAD_INPUT
    return code


if __name__ == "__main__":
    sys.exit(main())

"""``snapshotlib search SCENARIO.json``: every schedule of a scenario, checked.

Exit codes: 0 when every interleaving reached satisfies the invariants, 1 with the
shortest counterexample, 2 on bad input, 3 when the search stopped at ``--max-states``
without a violation (not every schedule was checked), 130 when interrupted (Ctrl-C;
the statistics so far are printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import named
from ..formats.scenario import ScenarioError, load_scenario
from .counterexample import counterexample_scenario
from .explore import BUILT_IN, MAX_STATES, Invariant, SearchResult, SearchStats, search
from .system import system_of_scenario

INTERRUPTED = 130
#: the exit code of a search that stopped at its limit of states, with no violation
LIMITED = 3


class SearchUsageError(ValueError):
    """A mistake in the command line or the files it names; one line, exit 2."""


def add_search_command(sub: Any) -> None:
    """The ``search`` subcommand, on an ``argparse`` subparsers object."""
    p = sub.add_parser(
        "search",
        help="check every interleaving of a small scenario; the shortest counterexample",
        description=(
            "Explore every schedule of the scenario (see its 'search' section) breadth "
            "first and check the invariants in every state reached. Exit 0 when all "
            "hold, 1 with the shortest run that breaks one, 2 on bad input, 3 when it "
            "stopped at --max-states with no violation."
        ),
    )
    p.add_argument("scenario", help="scenario JSON file")
    p.add_argument("--depth", type=_whole, help="at most N actions after the prefix")
    p.add_argument(
        "--max-states",
        type=_whole,
        default=MAX_STATES,
        metavar="N",
        help=f"stop after N distinct states (default {MAX_STATES:,}; 0: no limit); "
        "100,000 states take about 250 MB",
    )
    p.add_argument(
        "--no-reduction",
        action="store_true",
        help="explore every interleaving, without partial-order reduction",
    )
    p.add_argument(
        "--invariant",
        action="append",
        metavar="NAME",
        help=f"check only these (repeat it): {', '.join(BUILT_IN)}, or MODULE:FUNCTION / "
        "FILE.py:FUNCTION, a function of the run (a Simulator) returning True, or False "
        "or a reason, checked where nothing more can happen (default: all built-in)",
    )
    p.add_argument("--out", metavar="FILE", help="write the counterexample as a scenario file")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_search)


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def invariant_named(name: str) -> str | Invariant:
    """A built-in invariant's name, or the function ``MODULE:FUNCTION`` or
    ``FILE.py:FUNCTION`` names, as an :class:`Invariant` checked at quiescent states."""
    if name in BUILT_IN:
        return name
    where, sep, function = name.rpartition(":")
    if not sep or not where or not function.isidentifier():
        raise SearchUsageError(
            f"--invariant {name!r}: expected one of {', '.join(BUILT_IN)}, or "
            "MODULE:FUNCTION or FILE.py:FUNCTION"
        )
    try:
        check = named.load(name, "--invariant")
    except named.NamedObjectError as e:
        raise SearchUsageError(str(e)) from None
    if not callable(check):
        raise SearchUsageError(f"--invariant {name!r}: {where} has no function {function}")
    return Invariant(function, check)


def _progress(stats: SearchStats) -> None:
    print(
        f"searching: depth {stats.depth}, {stats.distinct:,} states, "
        f"{stats.states_per_second:,.0f} states/s",
        file=sys.stderr,
        flush=True,
    )


def cmd_search(args: argparse.Namespace) -> int:
    try:
        scenario = load_scenario(args.scenario)
        system = system_of_scenario(scenario, depth=args.depth)
        names = args.invariant or list(BUILT_IN)
        invariants = [invariant_named(n) for n in dict.fromkeys(names)]
    except (ScenarioError, SearchUsageError) as e:
        print(f"snapshotlib: error: {e}", file=sys.stderr)
        return 2
    if not args.json:
        print(f"{system.name}: {system.describe()}")
    result = search(
        system,
        invariants,
        reduction=not args.no_reduction,
        progress=None if args.quiet else _progress,
        max_states=args.max_states or None,
    )
    written = None
    if result.violation is not None and args.out:
        try:
            data = counterexample_scenario(result.violation, system)
        except ScenarioError as e:
            print(f"snapshotlib: not written to {args.out}: {e}", file=sys.stderr)
        else:
            Path(args.out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
            written = args.out
    if args.json:
        print(json.dumps(result_document(result), indent=1))
    else:
        _print_text(result, written)
    if result.violation is None and result.interrupted:
        return INTERRUPTED
    if result.violation is None and result.limited:
        return LIMITED
    return 0 if result.ok else 1


def result_document(result: SearchResult) -> dict[str, Any]:
    """The ``--json`` document."""
    s = result.stats
    doc: dict[str, Any] = {
        "ok": result.ok,
        "exhaustive": result.exhaustive,
        "interrupted": result.interrupted,
        "limited": result.limited,
        "invariants": list(result.invariants),
        "stats": {
            "distinct": s.distinct,
            "explored": s.explored,
            "quiescent": s.quiescent,
            "transitions": s.transitions,
            "depth": s.depth,
            "seconds": round(s.seconds, 3),
            "states_per_second": round(s.states_per_second),
            "reduction": s.reduction,
            "reduction_factor": round(s.reduction_factor, 2),
            "at_bound": s.at_bound,
        },
        "violation": None,
    }
    v = result.violation
    if v is not None:
        doc["violation"] = {
            "invariant": v.invariant,
            "reason": v.reason,
            "snapshot": v.snapshot_id,
            "length": v.depth,
            "shortest": result.shortest_confirmed,
        }
        try:
            doc["violation"]["steps"] = counterexample_scenario(v, result.system)["steps"]
        except ScenarioError as e:
            doc["violation"]["steps"] = None
            doc["violation"]["steps_error"] = str(e)
    return doc


def steps_text(result: SearchResult) -> list[str]:
    """The counterexample's steps, one line each (the prefix's first)."""
    v = result.violation
    if v is None:
        return []
    try:
        steps = counterexample_scenario(v, result.system)["steps"]
    except ScenarioError as e:
        return [f"  (its steps cannot be written as a scenario: {e})"]
    control = v.sim.algorithm.control_kind
    return [f"{k:3}. {describe_step(step, control)}" for k, step in enumerate(steps, start=1)]


def describe_step(step: dict[str, Any], control: str = "marker") -> str:
    """A scenario step as a line of text (``control``: what the algorithm's control
    messages are called, a marker or a barrier)."""
    do = step["do"]
    if do == "deliver":
        what = f" {step['msg']}" if "msg" in step else ""
        what = f" the {control} of {step['marker']}" if "marker" in step else what
        return f"{step['to']} receives{what} from {step['from']}"
    if do == "send":
        label = f" {step['label']}" if "label" in step else ""
        payload = f" ({step['payload']})" if "payload" in step else ""
        return f"{step['from']} sends{label}{payload} to {step['to']}"
    if do == "snapshot":
        return f"{step['at']} starts snapshot {step['id']}"
    return f"{step['at']}: internal event {step.get('label', '')}".rstrip()


def _print_text(result: SearchResult, written: str | None) -> None:
    print(result.summary())
    if result.violation is None:
        if result.limited:
            print(
                "not every schedule was checked: bound the runs with --depth N, shrink "
                "the scenario's 'search' section, or raise --max-states (0: no limit)"
            )
        return
    print("the shortest failing run:" if result.shortest_confirmed else "a failing run:")
    for line in steps_text(result):
        print(line)
    if written:
        print(f"written to {written} (replay it: snapshotlib run {written})")
    else:
        print("write it as a scenario file with --out FILE")

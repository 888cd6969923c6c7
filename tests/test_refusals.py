"""The refusal rule: an answer scores 0 when its code really references the engine's own
implementation of what its question asks for, never for a name that merely looks like
one, hand arithmetic or a cell that checks an answer afterwards. The same rule runs in
``grader.check`` and in staff grading (snapshotlib.grading.refusals)."""

from __future__ import annotations

import pytest

from snapshotlib.course.exercises import ex01, ex02, ex08
from snapshotlib.grading.notebook_code import parse_cell
from snapshotlib.grading.refusals import refusals

CUT = ex01.REFUSE


def refused(cells: list[str], refuse: dict[str, tuple[str, ...]] = CUT) -> dict[str, str]:
    return {answer: r.target for answer, r in refusals(cells, refuse).items()}


# ------------------------------------------------------------------ honest work keeps its marks

HONEST = {
    "a local list named like the lesson's helper": [
        "def offending_message(trace, frontier):\n"
        "    offending_messages = []\n"
        "    for p, n in frontier.items():\n"
        "        offending_messages += trace.process_actions(p)[:n]\n"
        "    return None if not offending_messages else 'm'\n"
    ],
    "hand arithmetic": ["largest_in_f1 = {'P1': 2 + 1 + 1, 'P2': 3 - 1, 'P3': 5}"],
    "a self-check cell that calls the engine on the answer": [
        "from snapshotlib.checks import check_frontier",
        "largest_in_f1 = {'P1': 4, 'P2': 2, 'P3': 5}",
        "assert check_frontier(trace, largest_in_f1).ok, 'not consistent'",
        "print(check_frontier(trace, largest_in_f1))",
    ],
    "a self-check in the same cell, after the answer": [
        "from snapshotlib.checks import check_frontier\n"
        "largest_in_f1 = {'P1': 4, 'P2': 2, 'P3': 5}\n"
        "check_frontier(trace, largest_in_f1).ok"
    ],
    "helper variables and the learner's own function": [
        "def offending_message(trace, frontier):\n    return None",
        "F = ex01.frontiers(variant)\nlimit = F['F1']",
        "largest_in_f1 = dict(limit)\n"
        "while offending_message(trace, largest_in_f1) is not None:\n"
        "    largest_in_f1['P1'] -= 1",
    ],
    "the engine tried in a cell of its own, then the answer written by hand": [
        "from snapshotlib.checks import check_frontier as offending_message",
        "def offending_message(trace, frontier):\n    return None",
    ],
    "a comprehension variable named like an engine result": [
        "from snapshotlib.checks import check_frontier",
        "c = check_frontier(trace, F)",
        "largest_in_f1 = {p: c for p, c in [('P1', 1), ('P2', 2)]}",
    ],
    "a cell magic on the answer's cell": ["%%time\nlargest_in_f1 = {'P1': 4}"],
    "comments and strings that name the engine": [
        "def offending_message(t, f):\n    # check_frontier would do this\n"
        "    return 'check_frontier'"
    ],
}


@pytest.mark.parametrize("case", sorted(HONEST))
def test_honest_work_is_never_refused(case: str) -> None:
    assert refused(HONEST[case]) == {}


def test_a_local_deadlock_list_is_not_the_engines_deadlock() -> None:
    cells = ["def deadlocked(snapshot):\n    deadlock = []\n    return deadlock or None"]
    assert refused(cells, ex08.REFUSE) == {}


def test_a_class_of_ones_own_on_the_engines_base_is_not_refused() -> None:
    cells = [
        "from snapshotlib.algorithms import SnapshotAlgorithm",
        "class MarkerRules(SnapshotAlgorithm):\n    def start(self, *a):\n"
        "        return super().start(*a)",
    ]
    assert refused(cells, ex02.REFUSE) == {}


# ------------------------------------------------------------------ delegation is refused

TARGET = "snapshotlib.checks.cut:check_frontier"
DELEGATING = {
    "a direct call": (
        ["from snapshotlib.checks import check_frontier",
         "def offending_message(t, f):\n    return None if check_frontier(t, f).ok else 'x'"],
        "offending_message", TARGET,
    ),
    "an alias": (
        ["from snapshotlib.checks import check_frontier as cf",
         "def offending_message(t, f):\n    return cf(t, f).witness"],
        "offending_message", TARGET,
    ),
    "a module's attribute": (
        ["import snapshotlib",
         "def offending_message(t, f):\n    return snapshotlib.checks.check_frontier(t, f)"],
        "offending_message", TARGET,
    ),
    "an import inside the function": (
        ["def offending_message(t, f):\n"
         "    from snapshotlib.course.lesson_01 import offending_messages as om\n"
         "    return (om(t, f) or [None])[0]"],
        "offending_message", "snapshotlib.course.lesson_01:offending_messages",
    ),
    "the engine's function as the answer": (
        ["from snapshotlib.checks import check_frontier as offending_message"],
        "offending_message", TARGET,
    ),
    "a star import": (
        ["from snapshotlib.checks import *",
         "def offending_message(t, f):\n    return check_frontier(t, f)"],
        "offending_message", TARGET,
    ),
    "a value computed in a helper cell": (
        ["from snapshotlib.checks.lattice import cut_lattice", "lattice = cut_lattice(sim)",
         "largest_in_f1 = max(lattice.consistent_cuts(100), key=sum)"],
        "largest_in_f1", "snapshotlib.checks.lattice:cut_lattice",
    ),
    "a value chosen by a loop's condition": (
        ["import snapshotlib.checks as C",
         "best = None\nfor f in candidates:\n"
         "    if C.check_frontier(trace, f).ok:\n        best = f",
         "largest_in_f1 = best"],
        "largest_in_f1", TARGET,
    ),
    "a value computed by a helper function": (
        ["from snapshotlib.checks import check_frontier",
         "def ok(f):\n    return check_frontier(trace, f).ok",
         "largest_in_f1 = next(f for f in candidates if ok(f))"],
        "largest_in_f1", TARGET,
    ),
    "a value computed in a cell whose first line is a magic": (
        ["%%time\nfrom snapshotlib.checks import check_frontier\n"
         "largest_in_f1 = [f for f in candidates if check_frontier(trace, f).ok][0]"],
        "largest_in_f1", TARGET,
    ),
    "a value computed on a line magic": (
        ["from snapshotlib.checks import check_frontier",
         "%time largest_in_f1 = [f for f in cs if check_frontier(trace, f).ok][0]"],
        "largest_in_f1", TARGET,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DELEGATING))
def test_an_answer_that_references_the_engines_version_is_refused(case: str) -> None:
    cells, answer, target = DELEGATING[case]
    assert refused(cells)[answer] == target


def test_a_refusal_names_the_engine_object_and_quotes_the_line() -> None:
    cells = ["from snapshotlib.checks import check_frontier",
             "def ok(f):\n    return check_frontier(trace, f).ok",
             "largest_in_f1 = next(f for f in candidates if ok(f))"]  # fmt: skip
    r = refusals(cells, CUT)["largest_in_f1"]
    assert (r.cell, r.line, r.code) == (2, 2, "return check_frontier(trace, f).ok")
    assert r.via == ("ok",)
    message = r.message()
    assert "snapshotlib.checks.cut.check_frontier" in message
    assert "code cell 2, line 2, through ok: `return check_frontier(trace, f).ok`" in message
    assert "In [2]" in refusals(cells, CUT, where="In [{cell}]")["largest_in_f1"].message()


def test_a_class_on_a_refused_class_or_out_of_its_table_is_refused() -> None:
    target = "snapshotlib.algorithms.chandy_lamport:ChandyLamport"
    on_it = ["from snapshotlib.algorithms import ChandyLamport",
             "class MarkerRules(ChandyLamport):\n    pass"]  # fmt: skip
    from_table = ["from snapshotlib.algorithms import ALGORITHMS",
                  "MarkerRules = ALGORITHMS['chandy-lamport']"]  # fmt: skip
    assert refused(on_it, ex02.REFUSE) == {"MarkerRules": target}
    assert refused(from_table, ex02.REFUSE) == {"MarkerRules": target}


def test_magics_and_shell_lines_are_read_as_the_code_they_run() -> None:
    tree = parse_cell("%time x = f()\n!ls\ny = 2")
    assert tree is not None
    assert [type(s).__name__ for s in tree.body] == ["Assign", "Pass", "Assign"]
    cell_magic = parse_cell("%%time\nx = g()")
    assert cell_magic is not None and type(cell_magic.body[-1]).__name__ == "Assign"
    assert parse_cell("%%bash\necho hi") is None  # not Python: nothing to read
    assert parse_cell("def (") is None


#: answers that look up what the tests compare with, or use an engine class that holds
#: the rules asked for: refused in every exercise where they were found
LOOKED_UP = {
    "exercise 14's Lamport times, from the tests' truth": (
        "14",
        "from snapshotlib.course.exercises import ex14\n"
        "def lamport_times(trace):\n"
        "    return ex14.truth(variant)\n",
        "lamport_times",
    ),
    "exercise 14's pair, from the tests' list": (
        "14",
        "from snapshotlib.course.exercises.ex14 import misleading_pairs\n"
        "misleading = misleading_pairs(variant)[0]\n",
        "misleading",
    ),
    "exercise 15's line, from the hidden tests' truth": (
        "15",
        "from snapshotlib.course.exercises import ex15\n"
        "def recovery_line(trace, checkpoints):\n"
        "    return ex15.random_truth(0)\n",
        "recovery_line",
    ),
    "exercise 2's rules, from the unaligned barriers": (
        "02",
        "from snapshotlib.algorithms.barriers import UnalignedBarriers\n"
        "class MarkerRules(UnalignedBarriers):\n"
        "    name = 'mine'\n",
        "MarkerRules",
    ),
    "exercise 1's largest cut, from the lattice's own consistent cuts": (
        "01",
        "from snapshotlib.checks.lattice import _Run\n"
        "largest_in_f1 = max(_Run(sim).consistent_cuts(), key=sum)\n",
        "largest_in_f1",
    ),
    "exercise 16's sink, on the engine's transactional sink": (
        "16",
        "from snapshotlib.dataflow.sinks import TransactionalSink\n"
        "class ExactlyOnceSink(TransactionalSink):\n"
        "    pass\n",
        "ExactlyOnceSink",
    ),
}


@pytest.mark.parametrize("case", sorted(LOOKED_UP))
def test_an_answer_looked_up_from_the_tests_or_a_sibling_class_is_refused(case: str) -> None:
    from snapshotlib.course.exercises import rules_for

    exercise, code, answer = LOOKED_UP[case]
    rules = rules_for(exercise)
    assert rules is not None
    assert answer in refused([code], rules.REFUSE), case

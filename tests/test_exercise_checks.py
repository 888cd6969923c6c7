"""A learner's ``grader.check`` and the staff grade agree: the same public tests pass and
fail, the same answers are refused, a check whose public tests look only at the form
never says "passed", and honest work written the way learners write it is never refused
by either. Each notebook runs in a real Jupyter kernel, as a learner runs it, and is then
graded as course staff grade it.

Runs notebooks in kernels and grades them, so it is marked slow. Without otter-grader it
is skipped locally and fails under CI.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support import HONEST_OFFENDING_MESSAGE, fill_in, require_otter

ROOT = Path(__file__).resolve().parents[1]
LEARNER = "solution"
MARK = "CHECKED:"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _needs_otter() -> None:
    require_otter("check-and-grade tests")


def solution_cell(built: dict[str, Path], start: str) -> str:
    nb = json.loads(built["solution"].read_text())
    return next(
        "".join(c["source"]) for c in nb["cells"]
        if c["cell_type"] == "code" and "".join(c["source"]).startswith(start)
    )  # fmt: skip


def checked_in_a_kernel(
    notebook: dict[str, Any], questions: list[str], folder: Path
) -> dict[str, Any]:
    """Run ``notebook`` top to bottom in a Jupyter kernel, then ``grader.check`` each
    question: its verdict and the public tests that failed."""
    import nbformat
    from nbclient import NotebookClient

    probe = (
        "import json as _json\n_checked = {}\n"
        f"for _q in {questions!r}:\n"
        "    _c = grader.check(_q)\n"
        "    _failed = [r.test_case.body.test_func.__name__\n"
        "               for r in getattr(_c.otter_result, 'test_case_results', [])\n"
        "               if not r.passed]\n"
        "    _checked[_q] = {'verdict': _c.verdict, 'failed': _failed, 'text': repr(_c)}\n"
        f"print({MARK!r} + _json.dumps(_checked))\n"
    )
    nb = json.loads(json.dumps(notebook))
    nb["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [],
                        "execution_count": None, "source": probe})  # fmt: skip
    path = folder / notebook["metadata"]["snapshotlib"]["exercise"]
    path = path.with_suffix(".ipynb")
    path.write_text(json.dumps(nb))
    node = nbformat.reads(json.dumps(nb), as_version=4)
    NotebookClient(node, timeout=900, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()  # fmt: skip
    for output in node.cells[-1].get("outputs", []):
        text = output.get("text", "")
        if MARK in text:
            return json.loads(text.split(MARK, 1)[1])  # type: ignore[no-any-return]
    raise AssertionError(f"the check did not run: {node.cells[-1].get('outputs')}")


def graded(path: Path, zipped: Path) -> Any:
    from snapshotlib.grading.runner import grade_one

    return grade_one(path, zipped, learner_id=LEARNER)


def public_tests(zipped: Path, question: str) -> list[str]:
    import zipfile

    from otter.test_files import ExceptionTestFile

    source = zipfile.ZipFile(zipped).read(f"tests/{question}.py").decode()
    from snapshotlib.grading.judge import test_name

    tf = ExceptionTestFile.from_string(source, path=question)
    return [test_name(tc) for tc in tf.test_cases if not tc.hidden]


def failed_in_grade(message: str, names: list[str]) -> list[str]:
    return [n for n in names if any(line.startswith(f"{n}:") for line in message.splitlines())]


def agree(
    name: str, built: dict[str, Path], answers: dict[str, str], folder: Path
) -> dict[str, Any]:
    """Check ``answers`` in a kernel and grade them; assert the two agree; both sides."""
    exercise = json.loads(built["student"].read_text())
    cell = next(
        (c for c in exercise["cells"] if "".join(c["source"]).startswith("learner_id")), None
    )
    if cell is not None:
        answers = {"learner_id": f'learner_id = "{LEARNER}"', **answers}
    nb = fill_in(exercise, answers)
    questions = sorted(nb["metadata"]["snapshotlib"]["questions"])
    questions = [q for q in questions if nb["metadata"]["snapshotlib"]["questions"][q]["points"]
                 or public_tests(built["zip"], q)]  # fmt: skip
    checked = checked_in_a_kernel(nb, questions, folder)
    result = graded(folder / f"{name}.ipynb", built["zip"])
    assert result.status == "ok", result.detail
    scores = {s.test: s for s in result.scores}
    for q in questions:
        if checked[q]["verdict"] == "unchecked":  # its answer never defined: no marks
            assert scores[q].score == 0, (q, checked[q], scores[q].message)
            continue
        refused_here = checked[q]["verdict"] == "refused"
        refused_there = "the question scores 0" in scores[q].message
        assert refused_here == refused_there, (q, checked[q], scores[q].message)
        if refused_here:
            continue
        public = public_tests(built["zip"], q)
        assert sorted(checked[q]["failed"]) == sorted(failed_in_grade(scores[q].message, public)), (
            q, checked[q], scores[q].message
        )  # fmt: skip
        info = nb["metadata"]["snapshotlib"]["questions"][q]
        if info["public_points"] == 0 and info["hidden"]:
            assert checked[q]["verdict"] != "passed", (q, checked[q])  # never "passed"
    return {"checked": checked, "scores": scores}


@pytest.fixture(scope="module")
def ex01(built_exercises: Mapping[str, dict[str, Path]]) -> dict[str, Path]:
    return built_exercises["01_is_this_cut_consistent"]


def test_honest_work_is_passed_by_the_check_and_the_grade(
    ex01: dict[str, Path], tmp_path: Path
) -> None:
    own = HONEST_OFFENDING_MESSAGE + (
        "from snapshotlib.checks import check_frontier  # a self-check on my own answer\n"
        "whole = {p: len(trace.process_actions(p)) for p in sim.network.processes}\n"
        "assert (offending_message(trace, whole) is None) == check_frontier(trace, whole).ok\n"
    )
    q2 = solution_cell(ex01, "largest_in_f1").replace("  # SOLUTION", "")
    got = agree("01_is_this_cut_consistent", ex01, {"def offending_message": own,
                                                   "largest_in_f1": q2}, tmp_path)  # fmt: skip
    assert got["checked"]["q1"]["verdict"] == "passed"
    assert got["checked"]["q2"]["verdict"] == "form"  # its public test looks at the form
    assert "format accepted" in got["checked"]["q2"]["text"]
    assert {q: s.score for q, s in got["scores"].items()} == {"q1": 7.0, "q2": 3.0}


def test_a_refusal_shows_in_the_check_as_in_the_grade(
    ex01: dict[str, Path], tmp_path: Path
) -> None:
    delegating = (
        "from snapshotlib.checks import check_frontier\n\n"
        "def offending_message(trace, frontier):\n"
        "    return None if check_frontier(trace, frontier).ok else 'x'\n"
    )
    got = agree("01_is_this_cut_consistent", ex01, {"def offending_message": delegating}, tmp_path)
    assert got["checked"]["q1"]["verdict"] == "refused"
    assert (
        "In [" in got["checked"]["q1"]["text"]
        and "check_frontier(trace" in got["checked"]["q1"]["text"]
    )
    assert got["scores"]["q1"].score == 0.0


#: exercise 14 answered as a learner writes it: events taken process by process and put
#: back in the run's order, helper names, float arithmetic; the pair found with vector
#: clocks and checked by hand
HONEST_LAMPORT = (
    "def lamport_times(trace):\n"
    "    processes = {a.process for a in trace.actions}\n"
    "    events = sorted(i for p in processes for i in trace.process_actions(p))\n"
    "    last = {p: 0.0 for p in processes}\n"
    "    stamp = {}\n"
    "    for i in events:\n"
    "        a = trace.actions[i]\n"
    "        t = last[a.process] + 1\n"
    "        if a.kind == 'receive':\n"
    "            t = max(t, stamp[trace.messages[a.message].sent_by] + 1)\n"
    "        last[a.process] = stamp[i] = t\n"
    "    return {trace.action_name(i): t for i, t in stamp.items()}\n"
    "\n"
    "mine = lamport_times(trace)\n"
    "assert mine[trace.action_name(trace.process_actions('P1')[0])] >= 1  # a self-check\n"
)
HONEST_MISLEADING = (
    "from snapshotlib.checks import concurrent, vector_clocks\n"
    "vc = vector_clocks(trace, sim.network.processes)\n"
    "names = {trace.action_name(i): i for i, _ in trace.app_actions()}\n"
    "pairs = [(x, y) for x in names for y in names\n"
    "         if mine[x] < mine[y] and concurrent(vc, names[x], names[y])]\n"
    "misleading = pairs[0]\n"
)


#: exercise 15 answered the other way a learner may: try every combination of
#: checkpoints, keep the consistent ones (checked by hand against the trace), take the
#: latest; a self-check; and a domino run of their own design (a ring built in a loop),
#: with the engine's domino_effect imported, which question 2 allows
HONEST_RECOVERY = (
    "import itertools\n"
    "\n"
    "def consistent(trace, counts):\n"
    "    where = {}\n"
    "    for i, a in enumerate(trace.actions):\n"
    "        if a.kind in ('internal', 'send', 'receive'):\n"
    "            where[i] = sum(1 for j in trace.process_actions(a.process) if j <= i)\n"
    "    for i, a in enumerate(trace.actions):\n"
    "        if a.kind == 'receive' and where[i] <= counts.get(a.process, 0):\n"
    "            send = trace.messages[a.message].sent_by\n"
    "            if where[send] > counts.get(trace.actions[send].process, 0):\n"
    "                return False\n"
    "    return True\n"
    "\n"
    "def recovery_line(trace, checkpoints):\n"
    "    procs = sorted({a.process for a in trace.actions})\n"
    "    options = [sorted(set([0] + list(checkpoints.get(p, [])))) for p in procs]\n"
    "    best = {p: 0 for p in procs}\n"
    "    for combo in itertools.product(*options):\n"
    "        cut = dict(zip(procs, combo))\n"
    "        if consistent(trace, cut) and sum(combo) > sum(best.values()):\n"
    "            best = cut\n"
    "    return best\n"
    "\n"
    "mine = recovery_line(trace, checkpoints)\n"
    "assert consistent(trace, mine)  # a self-check\n"
)
HONEST_DOMINO = (
    "from snapshotlib.checks import domino_effect\n"
    "n, k = wanted['processes'], wanted['checkpoints']\n"
    "procs = ['P' + str(i) for i in range(1, n + 1)]\n"
    "my_run = {'processes': procs, 'steps': []}\n"
    "for round_ in range(k):\n"
    "    for a, b in zip(procs, procs[1:] + procs[:1]):\n"
    "        my_run['steps'].append({'do': 'send', 'from': a, 'to': b, 'label': f'{a}{round_}'})\n"
    "        my_run['steps'].append({'do': 'deliver', 'from': a, 'to': b})\n"
    "my_checkpoints = {}\n"
    "for p in procs:\n"
    "    first = 2 if p == 'P1' else 1\n"
    "    my_checkpoints[p] = [first + 2 * r for r in range(k)]\n"
)


HONEST_SINK = (
    "class ExactlyOnceSink(Sink):\n"
    "    # one list of [checkpoint or None, sink, record]; the order of pre-commits\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.held = []\n"
    "        self.order = []\n"
    "\n"
    "    def invoke(self, sink, origin):\n"
    "        self.held.append([None, sink, origin])\n"
    "\n"
    "    def pre_commit(self, sink, checkpoint):\n"
    "        if checkpoint not in self.order:\n"
    "            self.order.append(checkpoint)\n"
    "        for entry in self.held:\n"
    "            if entry[0] is None and entry[1] == sink:\n"
    "                entry[0] = checkpoint\n"
    "\n"
    "    def commit(self, checkpoint):\n"
    "        if checkpoint not in self.order:\n"
    "            return\n"
    "        upto = self.order.index(checkpoint) + 1\n"
    "        done, self.order = set(self.order[:upto]), self.order[upto:]\n"
    "        for entry in [e for e in self.held if e[0] in done]:\n"
    "            self.write(entry[2])\n"
    "        self.held = [e for e in self.held if e[0] not in done]\n"
    "\n"
    "    def abort(self):\n"
    "        self.held, self.order = [], []\n"
    "\n"
    "\n"
    "try_it(ExactlyOnceSink)\n"
    "job = StreamJob(job_graph, seed=1, interval=10, sink=ExactlyOnceSink)\n"
    "assert not job.run(crash_at=(60, 'C1')).output.duplicates()  # a self-check\n"
)


#: per exercise that asks for something the engine has: honest answers (by the cell
#: each replaces), the questions their public tests pass, the full marks, and an answer
#: that delegates to the engine (which the check and the grade both refuse)
HONEST_AND_DELEGATING = {
    "14_lamport_clocks": (
        {"def lamport_times": HONEST_LAMPORT, "misleading": HONEST_MISLEADING},
        ["q1"],
        {"q1": 5.0, "q2": 3.0},
        (
            "def lamport_times",
            "from snapshotlib.checks import lamport_clocks\n\n"
            "def lamport_times(trace):\n"
            "    times = lamport_clocks(trace, sorted({a.process for a in trace.actions}))\n"
            "    return {trace.action_name(i): t for i, t in enumerate(times) if t}\n",
        ),
    ),
    "15_recovery_line": (
        {"def recovery_line": HONEST_RECOVERY, "my_run": HONEST_DOMINO},
        ["q1", "q2"],
        {"q1": 5.0, "q2": 3.0},
        (
            "def recovery_line",
            "from snapshotlib.checks import recovery_line as engine_line\n\n"
            "def recovery_line(trace, checkpoints):\n"
            "    return engine_line(trace, checkpoints)\n",
        ),
    ),
    "16_exactly_once_output": (
        {"class ExactlyOnceSink": HONEST_SINK},
        ["q1"],
        {"q1": 8.0},
        (
            "class ExactlyOnceSink",
            "from snapshotlib.dataflow.sinks import TransactionalSink\n\n"
            "class ExactlyOnceSink(TransactionalSink):\n"
            "    pass\n",
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(HONEST_AND_DELEGATING))
def test_honest_work_keeps_every_mark_and_a_delegating_answer_is_refused(
    built_exercises: Mapping[str, dict[str, Path]], tmp_path: Path, name: str
) -> None:
    answers, passing, full, (cell, delegating) = HONEST_AND_DELEGATING[name]
    built = built_exercises[name]
    (tmp_path / "honest").mkdir()
    got = agree(name, built, answers, tmp_path / "honest")
    for question in passing:
        assert got["checked"][question]["verdict"] == "passed", question
    assert {q: s.score for q, s in got["scores"].items()} == full
    (tmp_path / "delegating").mkdir()
    got = agree(name, built, {cell: delegating}, tmp_path / "delegating")
    assert got["checked"]["q1"]["verdict"] == "refused"
    assert got["scores"]["q1"].score == 0.0


def test_wrong_values_checked_only_for_form_are_never_called_passed(
    built_exercises: Mapping[str, dict[str, Path]], tmp_path: Path
) -> None:
    ex08 = built_exercises["08_termination_detector"]
    honest_q2 = solution_cell(ex08, "def deadlocked")
    local = honest_q2.replace(
        "def deadlocked(snapshot):",
        "def deadlocked(snapshot):\n    deadlock = []  # a local name like the engine's",
        1,
    )
    answers = {
        "def deadlocked": local,
        "false_alarm": "false_alarm = {'P1': 0, 'P2': 0, 'P3': 0}\nhidden_by = set()",
    }
    got = agree("08_termination_detector", ex08, answers, tmp_path)
    assert got["checked"]["q2"]["verdict"] in ("passed", "failed")
    assert got["checked"]["q2"]["verdict"] != "refused"
    assert got["checked"]["q3"]["verdict"] == "form"
    assert got["scores"]["q3"].score < got["scores"]["q3"].possible


def test_a_practice_question_is_checked_at_once(
    built_exercises: Mapping[str, dict[str, Path]], tmp_path: Path
) -> None:
    ex05 = built_exercises["05_dijkstra_by_hand"]
    answer = solution_cell(ex05, "inversions_worked").replace("  # SOLUTION", "")
    inversions = "inversions = {'worked': 3}  # a dict named like lesson 04's helper\n"
    got = agree("05_dijkstra_by_hand", ex05, {"inversions_worked": inversions + answer}, tmp_path)
    assert got["checked"]["q1"]["verdict"] == "formative"
    assert "practice" in got["checked"]["q1"]["text"]
    assert got["scores"]["q1"].passed and got["scores"]["q1"].formative


def test_the_engines_version_reached_through_another_engine_function_fails_alike(
    ex01: dict[str, Path], tmp_path: Path
) -> None:
    # no reading of the code can see it: the CutChecker widget checks with the engine's
    # cut check; in the check as when graded, that check is absent for the learner's code
    through_a_widget = (
        "from snapshotlib.widgets import CutChecker\n"
        "checker = CutChecker(sim)\n\n"
        "def offending_message(trace, frontier):\n"
        "    checker.set_frontier(**frontier)\n"
        "    verdict = checker.check()\n"
        "    return None if verdict.ok else trace.message_name(verdict.witness)\n"
    )
    got = agree("01_is_this_cut_consistent", ex01, {"def offending_message": through_a_widget},
                tmp_path)  # fmt: skip
    assert got["checked"]["q1"]["verdict"] == "failed"
    assert "NotInThisExercise" in got["checked"]["q1"]["text"]
    assert "offending_message: not defined when the notebook ran" in got["scores"]["q1"].message
    assert "NotInThisExercise" in got["scores"]["q1"].message
    assert got["scores"]["q1"].score == 0.0


def test_a_check_before_the_cells_it_needs_have_run_says_so_and_tests_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # otter gives a test None for a name the notebook lacks: the check would judge a run
    # made from no id, or call None, and name a TypeError deep in a test
    from snapshotlib.course.checking import Notebook

    shutil.copy(ROOT / "exercises" / "01_is_this_cut_consistent.ipynb", tmp_path)
    monkeypatch.chdir(tmp_path)  # where otter writes its log
    grader = Notebook("01_is_this_cut_consistent.ipynb")

    def offending_message(trace: Any, frontier: Any) -> None:
        return None

    env: dict[str, Any] = {"learner_id": "", "offending_message": offending_message}
    blank_id = grader.check("q1", env)
    assert (blank_id.verdict, blank_id.passed, blank_id.otter_result) == ("unchecked", False, None)
    assert repr(blank_id) == (
        "q1: not checked: `variant` is not defined yet. Enter your id in the cell at the top "
        '(learner_id = "..."), run the cells from there down to this one, then check again: '
        "your runs are made from your id"
    )
    not_run = grader.check("q1", {"learner_id": "ab12"})
    assert repr(not_run).startswith(
        "q1: not checked: `offending_message`, `variant` are not defined yet. Run the cells "
        "above this one"
    )
    env["variant"] = 3
    assert grader.check("q1", env).verdict == "failed"  # now it tests: None is wrong here


HONEST_RING_BYTES = '''
def ring_bytes(size, rate, message_bytes, marker_delay):
    """Bytes a Chandy–Lamport snapshot records on the ring, by the model."""
    hops = size - 1  # channels the marker crosses before the last process records
    ticks = hops * marker_delay
    messages = rate * ticks + rate  # and the ones already on the wire
    total = messages * message_bytes
    assert total >= 0, "a size cannot be negative"
    return total


{d: ring_bytes(ring["size"], ring["rate"], ring["message_bytes"], d) for d in ring["delays"]}
'''

HONEST_MAX_DELAY = """
size, rate, nbytes = ring["size"], ring["rate"], ring["message_bytes"]
d = 0
while ring_bytes(size, rate, nbytes, d + 1) <= ring["budget"]:
    d += 1
max_delay = d
print(ex10.within_budget(variant, max_delay))  # checked on a run, as the question says
max_delay
"""


HONEST_DEFINITELY = '''
from functools import lru_cache


def definitely(cuts, holding):
    """Whether every path from the bottom to the top meets a cut in ``holding``."""
    cuts = set(map(tuple, cuts))
    holding = set(map(tuple, holding))
    n = len(next(iter(cuts)))
    bottom = tuple([0] * n)  # nothing has happened yet
    top = max(cuts, key=sum)

    @lru_cache(maxsize=None)
    def escapes(cut):  # can we climb from cut to the top without meeting the predicate?
        if cut in holding:
            return False
        if cut == top:
            return True
        ups = [cut[:k] + (cut[k] + 1,) + cut[k + 1:] for k in range(n)]
        return any(escapes(up) for up in ups if up in cuts)

    return not escapes(bottom)


assert definitely(cuts, cuts)  # every path meets a predicate that always holds
definitely(cuts, holding)
'''

HONEST_RUN = """
def send(a, b, tokens, label):
    return {"do": "send", "from": a, "to": b, "label": label, "payload": tokens}


def deliver(a, b, label):
    return {"do": "deliver", "from": a, "to": b, "label": label}


steps = [send("P1", "P2", 2, "x"), deliver("P1", "P2", "get-x")]
steps += [send("P2", "P1", 2, "y"), deliver("P2", "P1", "get-y")]
steps.append(send("P3", "P2", 2, "z"))  # P3 empties while P1 waits for y
steps.append({"do": "run"})
my_run = {"processes": ["P1", "P2", "P3"], "steps": steps}
"""


HONEST_TTL = """
seconds = 5.5  # after trying 4 and 5 s with ex09.outcomes: too many healthy ones failed
ttl_ms = seconds * 1000  # a float, but a whole number of milliseconds
print(ex09.outcomes(variant, ttl_ms=round(ttl_ms), heartbeat_timeout_ms=2000))
ttl_ms
"""

HONEST_HEARTBEAT = """
import numpy as np

margins = np.array([200, 300, 400])  # tried each with ex09.outcomes
heartbeat_timeout_ms = 1000 + margins[1]  # a NumPy integer
heartbeat_timeout_ms
"""


HONEST_MARKER_RULES = '''
class MarkerRules(SnapshotAlgorithm):
    """Chandy–Lamport's marker rules, for any number of snapshots and initiators."""

    name = "marker-rules"

    def bind(self, sim):
        super().bind(sim)
        # channel -> {snapshot id: the list its accepted messages go to}
        self.recording = [{} for _ in sim.network.channels]
        self.listening = self.recording  # on_app_receive only hears channels being recorded

    def record_and_send_markers(self, rec, process, action):
        """Rule 1: record the state, send markers, start recording every input channel."""
        rec.red_from[process] = action
        rec.states[process] = self.sim.states[process]
        for ch in self.sim.output_channels(process):
            self.sim.emit(ch, action, "marker", rec.id)
        for ch in self.sim.input_channels(process):
            rec.channels[ch] = []
            self.recording[ch][rec.id] = rec.channels[ch]

    def start(self, process, snapshot_id, action):
        rec = self.records.get(snapshot_id) or self.new_record(snapshot_id)
        rec.initiators.append(process)
        self.record_and_send_markers(rec, process, action)

    def on_control(self, process, channel, message, action):
        """``process`` accepted a marker on ``channel``: rules 2 and 3."""
        marker = self.sim.trace.messages[message]
        sid = marker.tag
        rec = self.records[sid]
        first = process not in rec.red_from
        if first:
            self.record_and_send_markers(rec, process, action)
            assert rec.channels[channel] == []  # nothing can have arrived on it yet
        recording_here = self.recording[channel]
        if sid in recording_here:
            recording_here.pop(sid)
        rec.closed.add(channel)

    def on_app_receive(self, channel, message):
        """An application message was accepted on ``channel``."""
        for sid in list(self.recording[channel]):
            messages = self.recording[channel][sid]
            messages.append(message)


show_worked_example(MarkerRules)
'''

HONEST_MARKERS_SENT = """
# every process sends one marker on each of its output channels, once per snapshot,
# however many initiators start it
per_process = {p: sum(1 for c in net.channels if c.src == p) for p in net.processes}
markers_sent = sum(per_process.values())
assert markers_sent == len(net.channels)
markers_sent
"""


# a learner's statuses: a helper, an elif for each kind of event, the failed event
# handled on its own, a self-check on the small journal printed at the end
HONEST_STATUSES = """
OPEN = {"INITIATED", "IN_PROGRESS"}


def statuses(journal, nodes, ttl_ms):
    status = {}
    start_time = {}
    have = {}

    def fail_every_open_one():
        for snap in status:
            if status[snap] in OPEN:
                status[snap] = "FAILED"

    for e in sorted(journal, key=lambda e: e["t"]):
        now = e["t"]
        for snap in list(status):  # the time-to-live first, whatever the event
            if status[snap] in OPEN and now - start_time[snap] >= ttl_ms:
                status[snap] = "FAILED"
        if "trigger" in e:
            snap = e["trigger"]
            status[snap] = "INITIATED"
            start_time[snap] = now
            have[snap] = set()
        elif "part" in e:
            snap = e["part"]
            if status.get(snap) not in OPEN:
                continue
            if e["ok"] == False:
                status[snap] = "FAILED"
                continue
            have[snap].add(e["node"])
            if all(n in have[snap] for n in nodes):
                status[snap] = "COMPLETED"
            else:
                status[snap] = "IN_PROGRESS"
        elif "start_failed" in e:
            if status.get(e["start_failed"]) in OPEN:
                status[e["start_failed"]] = "FAILED"
        elif "failed" in e:
            snap = e["failed"]
            if snap in status and status[snap] in OPEN:
                status[snap] = "FAILED"
        elif "left" in e or "joined" in e:
            fail_every_open_one()
        elif "restore" in e:
            fail_every_open_one()
        elif "controller_started" in e:
            fail_every_open_one()
    return status


mine = statuses([{"t": 0, "trigger": "s1", "node": "P1"},
                 {"t": 1, "part": "s1", "node": "P1", "ok": True},
                 {"t": 2, "failed": "s1", "error": "manifest not written"}], ["P1", "P2"], 100)
print(mine)
"""

#: honest learner-style answers per exercise: the cells they fill, the marks they must
#: keep, and whether question 1's own check must say "passed" (for exercise 9: that it
#: does not refuse the answer)
HONEST_WORK = {
    "02_marker_rules": (
        {"class MarkerRules": HONEST_MARKER_RULES, "markers_sent": HONEST_MARKERS_SENT},
        {"q1": 13.0, "q2": 2.0},
        True,
    ),
    "09_ttl_and_heartbeat_timeout": (
        {"ttl_ms": HONEST_TTL, "heartbeat_timeout_ms": HONEST_HEARTBEAT},
        {"q1": 2.0, "q2": 2.0},
        False,
    ),
    "10_predict_then_measure": (
        {"def ring_bytes": HONEST_RING_BYTES, "max_delay": HONEST_MAX_DELAY},
        {"q1": 4.0, "q2": 0.0},
        True,
    ),
    "12_live_controller": ({"def statuses": HONEST_STATUSES}, {"q1": 7.0}, True),
    "13_possibly_definitely": (
        {"def definitely": HONEST_DEFINITELY, "my_run": HONEST_RUN},
        {"q1": 4.0, "q2": 3.0},
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(HONEST_WORK))
def test_honest_work_keeps_every_mark_in_the_check_and_the_grade(
    name: str, built_exercises: Mapping[str, dict[str, Path]], tmp_path: Path
) -> None:
    answers, full, q1_passes = HONEST_WORK[name]
    got = agree(name, built_exercises[name], answers, tmp_path)
    assert {q: s.score for q, s in got["scores"].items()} == full
    assert all(s.passed for s in got["scores"].values())
    verdict = got["checked"]["q1"]["verdict"]
    assert verdict == "passed" if q1_passes else verdict != "refused"


def test_exercise_15s_brief_counts_every_process_the_run_declares() -> None:
    """A two-process domino with two idle processes does not pass for four processes."""
    from snapshotlib.course.exercises.ex15 import play

    there_and_back = [("P1", "P2"), ("P2", "P1")] * 2
    steps = [
        {"do": do, "from": a, "to": b} for a, b in there_and_back for do in ("send", "deliver")
    ]
    run = {"processes": ["P1", "P2", "P3", "P4"], "steps": steps}
    with pytest.raises(AssertionError, match="P3, P4 took no part in my_run"):
        play(run, {"P1": [2, 4], "P2": [1, 3]}, {"processes": 4, "checkpoints": 2})
    two = {"processes": ["P1", "P2"], "steps": steps}
    assert play(two, {"P1": [2, 4], "P2": [1, 3]}, {"processes": 2, "checkpoints": 2})

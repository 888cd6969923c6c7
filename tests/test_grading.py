"""`snapshotlib grade`: a class's submissions judged from outside their sandboxes. Every
class of attack on the grader is a hostile submission graded in one batch beside honest
controls (the solution, and honest work written the way learners write it): whatever a
hostile one does, it scores what its real answers earn, costs no other submission
anything, and the batch ends with a gradebook.

The module runs the real grader on about fifty submissions (two at a time), so it is
marked slow. Without otter-grader it is skipped locally and fails under CI.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import pickle
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import HONEST_OFFENDING_MESSAGE, fill_in, make_exercises_tool, require_otter

ROOT = Path(__file__).resolve().parents[1]
NAME = "01_is_this_cut_consistent"
SOLUTION = ROOT / "solutions" / f"{NAME}.ipynb"
EXPECTED = json.loads((ROOT / "solutions" / f"{NAME}.expected.json").read_text())
WRONG = EXPECTED["wrong_submission"]
FULL = EXPECTED["full_marks"]
Q1, Q2 = list(WRONG["answers"])  # the answer cells of q1 and q2, by how they start
#: every submission answers for this learner's runs (the roster says so), unless named
LEARNER = "solution"
#: the limits of the batch: CPU seconds for work (a loaded machine does not make a fair
#: submission use more), a wall-clock backstop far beyond what a fair one needs
LIMITS = {"cpu_seconds": 20, "cell_cpu": 5, "timeout": 90, "memory_mb": 1536}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _needs_otter() -> None:
    require_otter("grading tests")


def answer_cell(nb: dict[str, Any], start: str) -> str:
    return next(
        "".join(c["source"]) for c in nb["cells"]
        if c["cell_type"] == "code" and "".join(c["source"]).startswith(start)
    )  # fmt: skip


def hostile(first_cell: str) -> dict[str, str]:
    """The wrong submission (q1 3 points, q2 1 point) with its first answer cell hostile."""
    return {Q1: first_cell, Q2: WRONG["answers"][Q2]}


STUB = "def offending_message(trace, frontier):\n    return None\n"

#: a listener of the grading machine that unpickles what it is sent: a submission that
#: reaches it runs code in the grader (the test's process), which would plant this file
PLANTED = "snapshotlib-test-unpickled"
#: a file the submission that forks workers leaves in its scratch folder, so the test's
#: monitor knows which sandbox is its
HOG_MARK = "snapshotlib-test-hog"


def attacks(exercise: dict[str, Any], ctx: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Hostile submissions on the sandbox and the grader's own process; each answers q1
    with the stub (or its attack) and q2 as the wrong submission does."""
    stubbed = {
        # hooks left in the process that would see or rewrite what runs later
        "hooks": "import sys\n"
        "sys.addaudithook(lambda event, args: None)\n"
        "sys.settrace(lambda *a: None)\n"
        "ip = get_ipython()\n"
        "ip.input_transformers_post.append(\n"
        "    lambda lines: [l.replace('assert ', 'assert True or ') for l in lines])\n"
        "import builtins\n"
        "builtins.AssertionError = type('Never', (Exception,), {})\n",
        # the test runner's own classes and cached results, replaced in the process
        "runner_patch": "import sys, types, json, pathlib\n"
        "otter = sys.modules.get('otter') or types.ModuleType('otter')\n"
        "tf = types.ModuleType('otter.test_files')\n"
        "class ExceptionTestFile:\n"
        "    def run(self, env): pass\n"
        "    score = possible = 1e9\n"
        "tf.ExceptionTestFile = ExceptionTestFile\n"
        "sys.modules['otter.test_files'] = tf\n"
        "otter.test_files = tf\n"
        "otter.Notebook.check = lambda *a, **k: True\n"
        "for d in ('.', 'results', '/tmp'):\n"
        "    p = pathlib.Path(d, 'results.json')\n"
        "    try:\n"
        "        p.parent.mkdir(exist_ok=True)\n"
        "        p.write_text(json.dumps({'tests': [{'name': 'q1', 'score': 1e9}]}))\n"
        "    except OSError:\n"
        "        pass\n",
        # a local service that turns data into code, on the grader's loopback and as a
        # Unix socket in the shared /tmp
        "service": "import pickle, socket, os\n"
        "class Plant:\n"
        "    def __reduce__(self):\n"
        f"        return (open, ({str(ctx['planted'])!r}, 'w'))\n"
        "payload = pickle.dumps(Plant())\n"
        "for family, address in [(socket.AF_INET, ('127.0.0.1', "
        f"{ctx['port']})), (socket.AF_UNIX, {str(ctx['unix'])!r})]:\n"
        "    try:\n"
        "        s = socket.socket(family, socket.SOCK_STREAM)\n"
        "        s.settimeout(5)\n"
        "        s.connect(address)\n"
        "        s.sendall(payload)\n"
        "        s.close()\n"
        "    except OSError as e:\n"
        "        print(e)\n",
        # leftovers in kernel-level shared objects, bigger than the memory limit
        "ipc": "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.shmat.restype = ctypes.c_void_p\n"
        "for key in range(0x5EED0, 0x5EED4):\n"
        "    shm = libc.shmget(key, 2**30, 0o1666)\n"
        "    if shm >= 0:\n"
        "        address = libc.shmat(shm, None, 0)\n"
        "        if address not in (None, ctypes.c_void_p(-1).value):\n"
        "            ctypes.memset(address, 1, 2**20)\n"
        "    libc.msgget(key, 0o1666)\n"
        "    libc.semget(key, 4, 0o1666)\n",
        # filling the disk through the scratch folder, and holding file descriptors
        "disk_and_files": "import os\n"
        "written = 0\n"
        "try:\n"
        "    for i in range(10_000):\n"
        "        with open(f'fill{i}', 'wb') as f:\n"
        "            for _ in range(60):\n"
        "                f.write(b'x' * 2**20)\n"
        "                written += 1\n"
        "except OSError:\n"
        "    pass\n"
        "held = []\n"
        "try:\n"
        "    while len(held) < 50_000:\n"
        "        held.append(os.open(os.devnull, os.O_RDONLY))\n"
        "except OSError:\n"
        "    pass\n"
        "raise RuntimeError(f'wrote {written} MiB; held {len(held)} descriptors')\n",
        # garbage written to the grader's channel: deeply nested, and forged replies
        "channel_nested": "import os\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, b'[' * 1_000_000 + b'\\n')\n"
        "    except OSError:\n"
        "        pass\n",
        "channel_forged": "import json, os\n"
        "forged = [{'op': 'ran', 'errors': [], 'cell_timeouts': -5, 'absent_used': 7},\n"
        "          {'answers': {'offending_message': {'kind': 'data', 'value': {'$trace': 1}},\n"
        "                       'largest_in_f1': [1] * 3, 'learner_id': 5}},\n"
        "          {'value': {'$tuple': 'x'}}, 'just a string', [1, 2]]\n"
        "for fd in range(3, 64):\n"
        "    for line in forged:\n"
        "        try:\n"
        "            os.write(fd, json.dumps(line).encode() + b'\\n')\n"
        "        except OSError:\n"
        "            pass\n",
        # answering the grader's calls itself: whatever it says, it is as if its
        # function had said it
        "protocol_answer": "import sys\n"
        "session = sys.modules['snapshotlib.grading.sandboxed']._Session\n"
        "session.call = lambda self, work: {'value': None}\n"
        "session.handle_original = session.handle\n",
    }
    notebooks = {name: fill_in(exercise, {Q1: STUB + "\n" + cell, Q2: WRONG["answers"][Q2]})
                 for name, cell in stubbed.items()}  # fmt: skip
    # the course's version-control history: the solutions and hidden tests are in it
    notebooks["history"] = fill_in(
        exercise,
        hostile(
            "import subprocess, pathlib\n"
            f"root = pathlib.Path({str(ROOT)!r})\n"
            "old = subprocess.run(['git', '-C', str(root), 'log', '-p', '--all'],\n"
            "                     capture_output=True, text=True).stdout\n"
            "objects = list((root / '.git').rglob('*'))\n"
            "if 'BEGIN SOLUTION' in old or objects:  # it could read the history\n"
            f"    exec({ctx['solution_q1']!r})\n"
        ),
    )
    # a score that is not a number
    notebooks["not_a_number"] = fill_in(
        exercise,
        {Q1: STUB + "\nimport json, pathlib\n"
         "forged = '{\"tests\": [{\"name\": \"q1\", \"score\": NaN}]}'\n"
         "pathlib.Path('results.json').write_text(forged)\n",
         Q2: f"{Q2} = {{'P1': float('nan'), 'P2': float('inf'), 'P3': float('nan')}}"},
    )  # fmt: skip
    return notebooks


def repair(check: str) -> str:
    """q2 answered by repairing each frontier with ``check`` (the engine's cut check,
    under some name): look, move back the receiver of the witness, look again."""
    return (
        "def inside(limit):\n"
        "    best = dict(limit)\n"
        f"    while not (v := {check}(trace, best)).ok:\n"
        "        receive = trace.received_by[v.witness]\n"
        "        p = trace.actions[receive].process\n"
        "        best[p] = trace.process_actions(p).index(receive)\n"
        "    return best\n"
        "largest_in_f1 = inside(ex01.frontiers(variant)['F1'])\n"
        "largest_in_f2 = inside(ex01.frontiers(variant)['F2'])\n"
    )


def delegations(exercise: dict[str, Any], solution_q1: str, subs: Path) -> dict[str, Any]:
    """Submissions that use the engine's own cut check for what the exercise asks them
    to write, openly or hidden from a reading of their code; and one that runs a
    classmate's cells."""
    dynamic = (
        "import importlib, sys\n"
        "sys.setprofile(None)\n"
        "checks = importlib.import_module('snapshotlib.' + 'checks')\n"
        "judge = getattr(checks, 'check_' + 'front' + 'ier')\n"
    )
    notebooks = {
        "delegator": hostile(
            "from snapshotlib.checks import check_frontier\n\n"
            "def offending_message(trace, frontier):\n"
            "    return None if check_frontier(trace, frontier).ok else 'x'\n"
        ),
        # a name built at run time, after switching any profiler off
        "hidden_delegator": hostile(
            dynamic + "\ndef offending_message(trace, frontier):\n"
            "    return None if judge(trace, frontier).ok else 'x'\n"
        ),
        # the engine's function rebuilt from its code object, and its source read and run
        "rebuilt": hostile(
            "import types, snapshotlib.checks.cut as cut\n"
            "code = getattr(cut, 'check_' + 'frontier').__code__\n"
            "check = types.FunctionType(code, globals())\n"
            "def offending_message(trace, frontier):\n"
            "    return None if check(trace, frontier).ok else 'x'\n"
        ),
        "source_read": hostile(
            "import glob, importlib.util, sys\n"
            "source = None\n"
            f"for path in glob.glob({str(ROOT / 'snapshotlib' / 'checks' / 'cut.py')!r}) + "
            "glob.glob(sys.prefix + '/lib/python3*/site-packages/snapshotlib/checks/cut.py'):\n"
            "    text = open(path).read()\n"
            "    if 'absent.refuse' not in text:\n"
            "        source = text\n"
            "space = {'__name__': 'snapshotlib.checks.cut'}\n"
            "exec(compile(source or 'pass', 'cut', 'exec'), space)\n"
            "def offending_message(trace, frontier):\n"
            "    return None if space['check_frontier'](trace, frontier).ok else 'x'\n"
        ),
        # q2's values computed by the engine: in a helper cell, in a cell whose first line
        # is a magic, and through a name built at run time
        "helper_value": {
            Q1: solution_q1,
            Q2: "from snapshotlib.checks import check_frontier\n" + repair("check_frontier"),
        },
        "magic_value": {
            Q1: solution_q1,
            Q2: "%%time\nfrom snapshotlib.checks import check_frontier\n"
            + repair("check_frontier"),
        },
        "dynamic_value": {
            Q1: solution_q1,
            Q2: dynamic + repair("judge"),
        },
        # a classmate's cells, found through the grader's command line or the folder
        "classmate": hostile(
            "import glob, json, os\n"
            f"paths = [{str(subs / 'solution.ipynb')!r}]\n"
            "for pid in os.listdir('/proc'):\n"
            "    try:\n"
            "        parts = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\\0')\n"
            "    except OSError:\n"
            "        continue\n"
            "    for part in parts:\n"
            "        folder = part.decode(errors='ignore')\n"
            "        if folder and os.path.isdir(folder):\n"
            "            paths += glob.glob(os.path.join(folder, '*.ipynb'))\n"
            "for path in paths:\n"
            "    try:\n"
            "        cells = json.load(open(path))['cells']\n"
            "    except (OSError, ValueError):\n"
            "        continue\n"
            "    for c in cells:\n"
            "        text = ''.join(c['source'])\n"
            "        if c['cell_type'] == 'code' and text.startswith('def offending_message'):\n"
            "            exec(text)\n"
        ),
    }
    return {name: fill_in(exercise, answers) for name, answers in notebooks.items()}


def honest(exercise: dict[str, Any], solution_q1: str) -> dict[str, dict[str, Any]]:
    """Honest work written the way learners write it: none of it may lose a mark."""
    own_q1 = HONEST_OFFENDING_MESSAGE + (
        "\n# a self-check with the engine, on my own answer\n"
        "from snapshotlib.checks import check_frontier\n"
        "whole = {p: len(trace.process_actions(p)) for p in sim.network.processes}\n"
        "assert (offending_message(trace, whole) is None) == check_frontier(trace, whole).ok\n"
    )
    own_q2 = (
        "largest_in_f1 = {'P1': 2 + 1 + 1, 'P2': 2, 'P3': 5}  # worked out by hand\n"
        "largest_in_f2 = {'P1': 3, 'P2': 6 - 3, 'P3': 3}\n"
        "from snapshotlib.checks import check_frontier\n"
        "print(check_frontier(trace, largest_in_f1).ok, check_frontier(trace, largest_in_f2).ok)\n"
    )
    big = fill_in(exercise, {Q1: solution_q1, Q2: own_q2})
    for cell in big["cells"]:  # 20 MiB of outputs: code, not outputs, is limited
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout",
                                "text": ["x" * 1023 + "\n"] * 20_480}]  # fmt: skip
            break
    return {
        "honest_learner": fill_in(exercise, {Q1: own_q1, Q2: own_q2}),
        "honest_magic": fill_in(exercise, {Q1: "%%time\n" + solution_q1, Q2: own_q2}),
        "honest_big_outputs": big,
    }


def limits_attacks(exercise: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Submissions that would take more than their share of the machine."""
    return {
        "loop": fill_in(exercise, hostile("while True:\n    pass")),
        "stubborn_loop": fill_in(exercise, hostile(
            "import signal\nfor s in (signal.SIGINT, signal.SIGPROF, signal.SIGALRM):\n"
            "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass")),
        "sleeper": fill_in(exercise, hostile(
            "import signal, time\n"
            "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF, signal.SIGALRM})\n"
            "time.sleep(10**6)")),
        "memory": fill_in(exercise, hostile(
            "def hog():\n    blob = []\n    while True:\n"
            "        blob.append(bytearray(2**26))\nhog()")),
        # three forked workers, each with 1000 MB and CPU for 30 s: 3 GB and 90 s together
        "fork_hogs": fill_in(exercise, hostile(
            "import os, time\n"
            f"open({HOG_MARK!r}, 'w').close()\n"
            "started = []\n"
            "for i in range(3):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError as e:\n"
            "        print('fork refused:', e)\n"
            "        break\n"
            "    if pid == 0:\n"
            "        try:\n"
            "            blob = bytearray(1000 * 2**20)\n"
            "            for j in range(0, len(blob), 4096):\n"
            "                blob[j] = 1\n"
            "            t = time.process_time()\n"
            "            while time.process_time() - t < 30:\n"
            "                pass\n"
            "        finally:\n"
            "            os._exit(0)\n"
            "    started.append(pid)\n"
            "for pid in started:\n"
            "    os.waitpid(pid, 0)\n"
            "raise RuntimeError(f'forked {len(started)} workers')\n")),
        "escapee": fill_in(exercise, hostile(
            "import os, subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)'],\n"
            "                 start_new_session=True)\n"
            "while True:  # a fork bomb of sleepers, stopped by the process limit\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(900)\n"
            "        os._exit(0)\n")),
        "exit": fill_in(exercise, hostile("import sys\nsys.exit(0)")),
        "kernel_death": fill_in(exercise, hostile("import os\nos._exit(1)")),
    }  # fmt: skip


class Monitor(threading.Thread):
    """Measures, from outside, the processes of the sandbox that leaves ``HOG_MARK`` in
    its folder and of its descendants: their memory together at its highest, and the CPU
    time each was seen to use (the last fraction of a second of a process may be missed)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.peak_rss = 0
        self.cpu: dict[int, float] = {}
        self.seen = False

    @staticmethod
    def _children() -> dict[int, list[int]]:
        tree: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
                tree.setdefault(ppid, []).append(int(stat.parent.name))
        return tree

    def run(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while not self.stop.wait(0.05):
            roots = []
            for cmd in Path("/proc").glob("[0-9]*/cmdline"):
                with contextlib.suppress(OSError):
                    if (
                        b"snapshotlib.grading.sandboxed" in cmd.read_bytes()
                        and Path(cmd.parent, "cwd", HOG_MARK).exists()
                    ):
                        roots.append(int(cmd.parent.name))
            if not roots:
                continue
            self.seen = True
            tree, todo, group = self._children(), list(roots), set()
            while todo:  # (its forked workers share its folder and command line: once each)
                pid = todo.pop()
                if pid not in group:
                    group.add(pid)
                    todo += tree.get(pid, [])
            rss = 0
            for pid in group:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    status = Path(f"/proc/{pid}/status").read_text()
                    rss += next((int(line.split()[1]) * 1024 for line in status.splitlines()
                                 if line.startswith("VmRSS")), 0)  # fmt: skip
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                    self.cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
            self.peak_rss = max(self.peak_rss, rss)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from snapshotlib.grading import grade

    work = tmp_path_factory.mktemp("grading")
    (work / "scratch").mkdir()
    student, zipped = make_exercises_tool().make_exercise(
        SOLUTION, work / "exercises", work / "autograder", run_tests=False, dist=work / "dist"
    )
    solution = json.loads((work / "dist" / "autograder" / f"{NAME}.ipynb").read_text())
    exercise = json.loads(student.read_text())
    outside = work / "outside"
    outside.mkdir()
    sentinel = outside / "sentinel.txt"
    sentinel.write_text("untouched\n")
    subs = work / "submissions"
    subs.mkdir()
    solution_q1 = answer_cell(solution, Q1)
    notebooks: dict[str, Any] = {
        "solution": solution,
        "unmodified": exercise,
        "wrong": fill_in(exercise, WRONG["answers"]),
        "stub": fill_in(exercise, {Q1: STUB, Q2: WRONG["answers"][Q2]}),
        # the solution's answers and id, handed in by another learner
        "bob": solution,
        **honest(exercise, solution_q1),
        **limits_attacks(exercise),
        **delegations(exercise, solution_q1, subs),
        "deleter": fill_in(exercise, hostile(
            "import os, shutil, subprocess\n"
            f"for p in [{str(sentinel)!r}, {str(subs / 'solution.ipynb')!r}]:\n"
            "    try:\n        os.remove(p)\n    except OSError as e:\n        print(e)\n"
            f"subprocess.run(['rm', '-rf', {str(outside)!r}, {str(subs)!r}])\n"
            f"open({str(outside / 'planted.txt')!r}, 'w').write('x')\n")),
        "reader": fill_in(exercise, hostile(
            "import os\nfound = []\n"
            # where the grader's copies are (scratch, temporary folders, the zip's folder,
            # the course), not other world-readable copies a machine may hold
            f"for top in ['/tmp', '/var/tmp', '/dev/shm', os.path.expanduser('~'), '..',\n"
            f"            '../..', {str(zipped.parent)!r}, {str(ROOT)!r}]:\n"
            "    for path, dirs, files in os.walk(top):\n"
            "        dirs[:] = [d for d in dirs if d != '.venv']\n"
            "        found += [f for f in files if f in ('q1.py', 'q2.py')\n"
            f"                  or f.endswith('.zip') and {NAME!r} in f]\n"
            f"if found:  # had it read a hidden test, it would answer q1 right\n"
            f"    exec({solution_q1!r})\n")),
    }  # fmt: skip
    monitor = Monitor()
    with unpickling_listeners(work) as ctx:
        ctx["solution_q1"] = solution_q1
        notebooks.update(attacks(exercise, ctx))
        for name, nb in notebooks.items():
            (subs / f"{name}.ipynb").write_text(json.dumps(nb))
        # files a learner can hand in that are not notebooks, and names for a spreadsheet
        odd = {
            "nested.ipynb": "[" * 200_000 + "]" * 200_000,
            "cell_string.ipynb": json.dumps({"cells": ["x = 1"], "nbformat": 4}),
            "not_json.ipynb": "{cells: ",
            "binary.ipynb": "\udcff",
        }
        for name, text in odd.items():
            (subs / name).write_bytes(text.encode("utf-8", "surrogateescape"))
        (subs / "folder.ipynb").mkdir()
        (subs / "link.ipynb").symlink_to(subs / "solution.ipynb")
        for formula in ("=1+2", "+cmd", "-x", "@SUM(A1)"):
            (subs / f"{formula}.ipynb").write_text(json.dumps(fill_in(exercise, WRONG["answers"])))
        before = sorted(p.name for p in subs.iterdir())
        roster = {name: LEARNER for name in before if name != "bob.ipynb"} | {"bob.ipynb": "bob"}
        out = work / "grades.csv"
        monitor.start()
        try:
            book = grade(subs, NAME, out, autograder=zipped, jobs=2, workdir=work / "scratch",
                         roster=roster, **LIMITS)  # fmt: skip
        finally:
            monitor.stop.set()
            monitor.join()
        received = list(ctx["received"])
    return {"book": book, "csv": out, "sentinel": sentinel, "outside": outside,
            "subs": subs, "before": before, "received": received, "monitor": monitor,
            "planted": ctx["planted"], "scratch": work / "scratch", "zip": zipped,
            "work": work}  # fmt: skip


@contextlib.contextmanager
def unpickling_listeners(work: Path) -> Iterator[dict[str, Any]]:
    """A TCP listener on the loopback and a Unix socket in /tmp, open to anyone, that
    unpickle whatever they receive (as a careless logging listener would)."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    unix_path = Path(tempfile.mkdtemp(prefix="snapshotlib-test-")) / "listener.sock"
    os.chmod(unix_path.parent, 0o777)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(unix_path))
    os.chmod(unix_path, 0o777)
    unix.listen()
    ctx: dict[str, Any] = {"port": tcp.getsockname()[1], "unix": unix_path, "received": [],
                           "planted": work / PLANTED}  # fmt: skip
    stop = threading.Event()

    def serve(server: socket.socket) -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                data = conn.recv(1 << 16)
                ctx["received"].append(data)
                with contextlib.suppress(Exception):
                    pickle.loads(data)

    threads = [threading.Thread(target=serve, args=(s,), daemon=True) for s in (tcp, unix)]
    for t in threads:
        t.start()
    try:
        yield ctx
    finally:
        stop.set()
        for t in threads:
            t.join()
        tcp.close()
        unix.close()
        shutil.rmtree(unix_path.parent, ignore_errors=True)


def with_learner_id(exercise: dict[str, Any]) -> dict[str, Any]:
    """The exercise with the solution's learner id filled in (if it asks for one)."""
    nb: dict[str, Any] = json.loads(json.dumps(exercise))
    source = json.loads(SOLUTION.read_text())
    given = next((c for c in source["cells"] if "".join(c["source"]).startswith("learner_id")),
                 None)  # fmt: skip
    for cell in nb["cells"]:
        if given and "".join(cell["source"]).startswith("learner_id"):
            cell["source"] = given["source"]
    return nb


def result(graded: dict[str, Any], name: str) -> Any:
    return graded["book"].by_submission()[f"{name}.ipynb"]


def scores(graded: dict[str, Any], name: str) -> dict[str, float]:
    return graded["book"].scores(f"{name}.ipynb")  # type: ignore[no-any-return]


def status(graded: dict[str, Any], name: str) -> str:
    return result(graded, name).status  # type: ignore[no-any-return]


def messages(graded: dict[str, Any], name: str) -> str:
    r = result(graded, name)
    return "\n".join([r.detail, *r.notes, *(s.message for s in r.scores)])


# ------------------------------------------------------------------ honest work


def test_solution_scores_full_marks(graded: dict[str, Any]) -> None:
    assert scores(graded, "solution") == FULL
    assert status(graded, "solution") == "ok"


def test_unmodified_exercise_scores_zero(graded: dict[str, Any]) -> None:
    assert scores(graded, "unmodified") == dict.fromkeys(FULL, 0.0)


def test_wrong_submission_gets_partial_credit(graded: dict[str, Any]) -> None:
    assert scores(graded, "wrong") == WRONG["scores"]


@pytest.mark.parametrize("name", ["honest_learner", "honest_magic", "honest_big_outputs"])
def test_honest_work_never_loses_a_mark(graded: dict[str, Any], name: str) -> None:
    # local names like the engine's, arithmetic, self-checks with the engine, a magic on
    # the answer's cell, 20 MiB of outputs: full marks, and no accusation
    r = result(graded, name)
    assert (r.status, scores(graded, name)) == ("ok", FULL), messages(graded, name)
    assert "the question scores 0" not in messages(graded, name)


# ------------------------------------------------------------------ a batch that always ends


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("nested", "nested too deeply"),
        ("cell_string", "cell 1 is a string, not a cell"),
        ("not_json", "not JSON"),
        ("binary", "not text"),
        ("folder", "is a folder"),
        ("link", "is a symbolic link"),
    ],
)
def test_a_file_that_is_not_a_notebook_is_invalid_naming_itself(
    graded: dict[str, Any], name: str, why: str
) -> None:
    r = result(graded, name)
    assert (r.status, r.total) == ("invalid", 0.0)
    assert r.reason.startswith(f"{name}.ipynb") and why in r.reason, r.reason


@pytest.mark.parametrize("name", ["channel_nested", "channel_forged", "protocol_answer"])
def test_garbage_on_the_graders_channel_costs_only_its_own_submission(
    graded: dict[str, Any], name: str
) -> None:
    r = result(graded, name)
    stub = scores(graded, "stub")
    if r.status == "ok":  # it says what it likes: that is what its answers earn
        assert scores(graded, name)["q1"] <= stub["q1"], messages(graded, name)
    else:
        assert r.status == "crashed" and r.total == 0.0, r.detail
        assert r.reason.startswith(f"{name}.ipynb"), r.reason


def test_every_submission_has_a_row_and_the_batch_wrote_its_gradebook(
    graded: dict[str, Any],
) -> None:
    book = graded["book"]
    assert sorted(r.submission for r in book.results) == graded["before"]
    rows = list(csv.DictReader(graded["csv"].open()))
    assert len(rows) == len(graded["before"]) * (len(book.tests) + 1)


# ------------------------------------------------------------------ delegation


@pytest.mark.parametrize("name", ["delegator", "helper_value", "magic_value"])
def test_an_answer_that_references_the_engines_version_is_refused_with_the_line(
    graded: dict[str, Any], name: str
) -> None:
    question = "q1" if name == "delegator" else "q2"
    got = scores(graded, name)
    assert got[question] == 0.0
    message = next(s.message for s in result(graded, name).scores if s.test == question)
    assert "snapshotlib.checks.cut.check_frontier" in message and "scores 0" in message
    assert "check_frontier(trace" in message  # the line is quoted
    if question == "q2":
        assert got["q1"] == FULL["q1"]  # the rest is graded as usual


@pytest.mark.parametrize("name", ["hidden_delegator", "rebuilt", "dynamic_value"])
def test_the_engines_version_is_absent_however_it_is_reached(
    graded: dict[str, Any], name: str
) -> None:
    question = "q2" if name == "dynamic_value" else "q1"
    assert scores(graded, name)[question] == 0.0, messages(graded, name)
    assert "NotInThisExercise" in messages(graded, name)


def test_the_engines_source_cannot_be_read_and_run(graded: dict[str, Any]) -> None:
    if os.geteuid() != 0:
        pytest.skip("the real package is covered by the learner edition only as root")
    assert scores(graded, "source_read")["q1"] == 0.0


# ------------------------------------------------------------------ identity


def test_answers_copied_with_a_classmates_id_are_graded_as_the_submitter(
    graded: dict[str, Any],
) -> None:
    r = result(graded, "bob")
    assert r.learner_id == "bob" and r.identity == "roster"
    assert scores(graded, "bob")["q2"] < FULL["q2"]  # bob's runs, not the solution's
    assert any("'solution'" in n and "'bob'" in n for n in r.notes), r.notes


def test_a_submission_sees_no_classmates_notebook(graded: dict[str, Any]) -> None:
    if os.geteuid() != 0:
        pytest.skip("the submissions folder and /proc are hidden only as root")
    assert scores(graded, "classmate")["q1"] == 0.0


# ------------------------------------------------------------------ limits


@pytest.mark.parametrize("name", ["loop", "memory", "exit", "deleter", "reader", "escapee",
                                  "history"])  # fmt: skip
def test_hostile_first_cell_loses_only_its_question(graded: dict[str, Any], name: str) -> None:
    r = result(graded, name)
    assert r.status == "ok", r.detail
    assert scores(graded, name) == {"q1": 0.0, "q2": WRONG["scores"]["q2"]}


@pytest.mark.parametrize("name", ["hooks", "runner_patch", "service", "ipc", "disk_and_files"])
def test_an_attack_scores_what_its_answers_earn(graded: dict[str, Any], name: str) -> None:
    # the stub alone scores less than full marks on q1; the attack must not add to it
    stub = scores(graded, "stub")
    assert stub["q1"] < FULL["q1"]
    r = result(graded, name)
    assert r.status == "ok", r.detail
    assert scores(graded, name) == stub


def test_a_score_is_always_a_finite_number(graded: dict[str, Any]) -> None:
    import math

    got = scores(graded, "not_a_number")
    assert all(math.isfinite(v) for v in got.values()), got
    assert got == {"q1": scores(graded, "stub")["q1"], "q2": 0.0}


def test_all_processes_of_a_submission_stay_within_its_limits_together(
    graded: dict[str, Any],
) -> None:
    r = result(graded, "fork_hogs")
    assert r.total == 0.0
    monitor = graded["monitor"]
    assert monitor.seen, "the monitor never saw the submission's sandbox"
    memory = LIMITS["memory_mb"] * 2**20
    assert monitor.peak_rss <= 1.05 * memory, (monitor.peak_rss / 2**20, r.detail)
    # three workers would use 90 s of CPU together; they get the submission's 20 s
    assert sum(monitor.cpu.values()) <= 1.2 * LIMITS["cpu_seconds"] + 3, (monitor.cpu, r.detail)
    from snapshotlib.grading.limits import Groups

    probe = Groups()
    grouped = probe.available
    probe.close()
    if grouped:
        assert r.status in ("cpu-limit", "memory"), r.detail
        assert len(monitor.cpu) > 1  # it could fork: the limits held for all together
    else:  # no control group: one process, which cannot fork
        assert "fork refused" in r.detail or len(monitor.cpu) == 1, r.detail


def test_no_local_service_of_the_grader_was_reached(graded: dict[str, Any]) -> None:
    if os.geteuid() != 0:
        pytest.skip("submissions get a network namespace of their own only as root")
    assert graded["received"] == []
    assert not graded["planted"].exists()


def test_the_scratch_folder_and_open_files_are_limited(graded: dict[str, Any]) -> None:
    import re

    detail = result(graded, "disk_and_files").detail
    found = re.search(r"wrote (\d+) MiB; held (\d+) descriptors", detail)
    assert found, detail
    assert int(found.group(2)) < 256  # RLIMIT_NOFILE
    if os.geteuid() == 0:  # a private tmpfs of 256 MiB (the default scratch_mb)
        assert int(found.group(1)) <= 256
    else:  # without root only each file's size is limited
        pytest.skip("the scratch folder's size is limited only as root")


def ipc_keys_left() -> set[int]:
    """System V objects (shared memory, queues, semaphores) with the ipc attack's keys."""
    keys = set()
    for kind in ("shm", "msg", "sem"):
        for line in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]:
            keys.add(int(line.split()[0]))
    return keys & set(range(0x5EED0, 0x5EED4))


@pytest.mark.skipif(os.geteuid() != 0, reason="IPC namespaces need root")
def test_no_ipc_object_outlives_a_submission(graded: dict[str, Any]) -> None:
    assert ipc_keys_left() == set()


def test_a_dead_kernel_scores_nothing_and_says_why(graded: dict[str, Any]) -> None:
    r = result(graded, "kernel_death")
    assert r.status == "crashed"
    assert r.total == 0.0
    assert "process ended" in r.detail, r.detail


def _graders_of_other_test_workers() -> set[int]:
    """Each live process of the other pytest-xdist workers, as the part of a submission's
    user id that names its grader (``pid % 10_000``, see jail.submission_uid): another
    worker may be grading at this moment, and its submissions are not left behind.

    A worker's processes are its descendants (the worker grades in its own process too),
    and every process whose environment names another worker: a grader that Spark started
    for it and whose parent ended stays one of them.
    """
    mine = os.environ.get("PYTEST_XDIST_WORKER")
    if mine is None:
        return set()
    children: dict[int, list[int]] = {}
    others = set()
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(proc.name))
            for entry in (proc / "environ").read_bytes().split(b"\0"):
                name, _, worker = entry.partition(b"=")
                if name == b"PYTEST_XDIST_WORKER" and worker != mine.encode():
                    others.add(int(proc.name) % 10_000)
    # the workers are the children of pytest's own process; this one is left out
    todo = [pid for pid in children.get(os.getppid(), []) if pid != os.getpid()]
    while todo:
        pid = todo.pop()
        others.add(pid % 10_000)
        todo += children.get(pid, [])
    others.discard(os.getpid() % 10_000)  # this worker's own submissions always count
    return others


def submission_processes() -> list[int]:
    """Processes running under a submission's own user id (see jail._UID_BASE), but for
    those of a grader that another test worker runs."""
    from snapshotlib.grading.jail import _UID_BASE

    left, busy = [], _graders_of_other_test_workers()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
        except (OSError, ValueError):
            continue  # ended meanwhile
        zombie = fields["State"].split()[0] == "Z"  # killed, waiting for init to reap it
        uid = int(fields["Uid"].split()[0])
        if uid >= _UID_BASE and not zombie and (uid - _UID_BASE) // 10_000 not in busy:
            left.append(int(status.parent.name))
    return left


@pytest.mark.skipif(os.geteuid() != 0, reason="submissions get their own user id only as root")
def test_no_process_of_a_submission_outlives_it(graded: dict[str, Any]) -> None:
    # the escapee left a process in a session of its own and many forked sleepers
    assert submission_processes() == []


def test_looping_cell_is_interrupted(graded: dict[str, Any]) -> None:
    assert result(graded, "loop").cell_timeouts >= 1


def test_loop_ignoring_interrupts_is_stopped_by_its_cpu_limit(graded: dict[str, Any]) -> None:
    r = result(graded, "stubborn_loop")
    assert r.status == "cpu-limit", r.detail
    assert r.total == 0.0


def test_a_sleeper_is_stopped_by_the_wall_clock_backstop(graded: dict[str, Any]) -> None:
    r = result(graded, "sleeper")
    assert r.status == "timeout", r.detail
    assert r.total == 0.0


def test_nothing_outside_the_scratch_folder_changes(graded: dict[str, Any]) -> None:
    assert graded["sentinel"].read_text() == "untouched\n"
    assert list(graded["scratch"].iterdir()) == []  # every scratch folder removed
    assert sorted(p.name for p in graded["outside"].iterdir()) == ["sentinel.txt"]
    assert sorted(p.name for p in graded["subs"].iterdir()) == graded["before"]


@pytest.mark.skipif(os.geteuid() != 0, reason="writes outside are only contained as root")
def test_deleter_could_not_write_outside(graded: dict[str, Any]) -> None:
    assert not (graded["outside"] / "planted.txt").exists()


# ------------------------------------------------------------------ the gradebook


def test_the_csv_has_every_message_in_full_and_a_total_per_submission(
    graded: dict[str, Any],
) -> None:
    rows = list(csv.DictReader(graded["csv"].open()))
    total = next(r for r in rows if r["submission"] == "solution.ipynb" and r["test"] == "TOTAL")
    assert float(total["score"]) == sum(FULL.values())
    wrong_q1 = next(r for r in rows if r["submission"] == "wrong.ipynb" and r["test"] == "q1")
    want = next(s.message for s in result(graded, "wrong").scores if s.test == "q1")
    assert wrong_q1["message"] == want and len(want) > 150  # not cut
    refused = next(r for r in rows if r["submission"] == "delegator.ipynb" and r["test"] == "q1")
    assert "scores 0" in refused["message"]
    assert {r["learner_id"] for r in rows if r["submission"] == "bob.ipynb"} == {"bob"}


def test_cells_that_would_start_a_formula_are_neutralised(graded: dict[str, Any]) -> None:
    from snapshotlib.grading.gradebook import wide_path

    for path in (graded["csv"], wide_path(graded["csv"])):
        cells = [cell for row in csv.reader(path.open()) for cell in row]
        assert not [c for c in cells if c[:1] in ("=", "+", "@") or c.startswith("-x")], path
        assert "'=1+2.ipynb" in cells and "'@SUM(A1).ipynb" in cells


def test_the_wide_csv_has_a_row_per_submission_and_a_column_per_question(
    graded: dict[str, Any],
) -> None:
    from snapshotlib.grading.gradebook import wide_path

    rows = list(csv.DictReader(wide_path(graded["csv"]).open()))
    assert len(rows) == len(graded["before"])
    solution = next(r for r in rows if r["submission"] == "solution.ipynb")
    assert {q: float(solution[q]) for q in FULL} == FULL
    assert float(solution["total"]) == sum(FULL.values())
    assert not solution["notes"]  # no note where none applies
    link = next(r for r in rows if r["submission"] == "link.ipynb")
    assert link["status"] == "invalid" and "symbolic link" in link["notes"]


def test_the_html_report_works_offline_and_holds_every_message(
    graded: dict[str, Any], tmp_path: Path
) -> None:
    import re

    from snapshotlib.grading import write_html_report

    page = write_html_report(graded["book"], tmp_path / "report.html").read_text()
    assert not re.search(r"<(script|link)[^>]+(src|href)=['\"]?https?:", page)
    assert "check_frontier(trace" in page  # a refusal, quoted
    assert "symbolic link" in page


def test_the_text_report_names_refusals_and_invalid_files(graded: dict[str, Any]) -> None:
    from snapshotlib.grading import text_report

    text = text_report(graded["book"])
    assert "link.ipynb" in text and "is a symbolic link" in text
    assert "delegator.ipynb" in text and "scores 0" in text


# ------------------------------------------------------------------ resume, stop, progress


def test_a_stopped_batch_keeps_what_it_graded_and_resume_grades_the_rest(
    graded: dict[str, Any], tmp_path: Path
) -> None:
    from snapshotlib.grading import grade
    from snapshotlib.grading.gradebook import read_state, state_path

    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("solution", "wrong", "stub"):
        shutil.copy(graded["subs"] / f"{name}.ipynb", subs)
    out = tmp_path / "grades.csv"
    seen: list[str] = []

    def stop_after_first(r: Any) -> None:
        seen.append(r.submission)
        raise KeyboardInterrupt

    roster = dict.fromkeys(["solution.ipynb", "wrong.ipynb", "stub.ipynb"], LEARNER)
    with pytest.raises(KeyboardInterrupt):
        grade(subs, NAME, out, autograder=graded["zip"], roster=roster,
              on_result=stop_after_first, **LIMITS)  # fmt: skip
    assert [r.submission for r in read_state(state_path(out))] == seen[:1]
    assert len(list(csv.DictReader(out.open()))) == len(FULL) + 1  # one submission so far
    again: list[str] = []
    book = grade(subs, NAME, out, autograder=graded["zip"], resume=True, roster=roster,
                 on_result=lambda r: again.append(r.submission), **LIMITS)  # fmt: skip
    assert sorted(again) == sorted({"solution.ipynb", "wrong.ipynb", "stub.ipynb"} - set(seen))
    assert len(book.results) == 3
    assert book.scores("solution.ipynb") == FULL
    assert book.scores("wrong.ipynb") == WRONG["scores"]


def test_the_cli_shows_progress_and_says_what_it_cannot_do(
    graded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from snapshotlib.cli import main

    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(graded["subs"] / "solution.ipynb", subs)
    (subs / "folder.ipynb").mkdir()
    argv = ["grade", str(subs), "--exercise", "1", "--out", str(tmp_path / "g.csv"),
            "--autograder", str(graded["zip"]), "--timeout", "90"]  # fmt: skip
    started = time.monotonic()
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "2/2" in err  # the count, with tqdm's rate and time left
    assert "folder.ipynb is a folder" in out
    assert time.monotonic() - started < 600
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda n, *a: None if n == "otter" else real(n, *a))  # fmt: skip
    assert main(argv) == 2
    assert "pip install 'snapshotlib[grading]'" in capsys.readouterr().err


def test_a_roster_that_cannot_be_read_is_a_grading_error(
    graded: dict[str, Any], tmp_path: Path
) -> None:
    from snapshotlib.grading import GradingError, grade

    roster = tmp_path / "roster.csv"
    roster.write_text("submission,name\nsolution.ipynb,ada\n")
    with pytest.raises(GradingError, match=r"roster\.csv, line 1: the header must name"):
        grade(graded["subs"], NAME, autograder=graded["zip"], roster=roster)
    roster.write_text("submission,learner_id\nsolution.ipynb,ada\nsolution.ipynb,bob\n")
    with pytest.raises(GradingError, match=r"line 3: solution\.ipynb is listed twice"):
        grade(graded["subs"], NAME, autograder=graded["zip"], roster=roster)


# ------------------------------------------------------------------ the command line


def test_cli_rejects_a_missing_autograder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from snapshotlib.cli import main

    (tmp_path / "a.ipynb").write_text("{}")
    code = main(["grade", str(tmp_path), "--exercise", "99", "--out", str(tmp_path / "g.csv")])
    assert code == 2
    assert "no exercise 99" in capsys.readouterr().err


def test_cli_looks_for_the_autograder_in_the_course_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from snapshotlib.cli import main

    (tmp_path / "a.ipynb").write_text("{}")
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    (course / "solutions" / "01_some_exercise.ipynb").write_text("{}")
    argv = ["grade", str(tmp_path), "--exercise", "1", "--out", str(tmp_path / "g.csv")]
    assert main([*argv, "--course", str(course)]) == 2
    err = capsys.readouterr().err
    assert "no autograder zip built for 01_some_exercise" in err
    assert str(course / "build" / "autograder") in err
    assert main([*argv, "--course", str(tmp_path / "elsewhere")]) == 2
    assert "not a course folder" in capsys.readouterr().err
    assert main([*argv, "--autograder", str(tmp_path / "missing.zip")]) == 2
    assert "missing.zip: no such autograder zip" in capsys.readouterr().err


def test_the_course_defaults_to_the_source_checkout_and_can_be_given(tmp_path: Path) -> None:
    from snapshotlib.grading import GradingError, course_folder

    assert course_folder() == ROOT
    (tmp_path / "build" / "autograder").mkdir(parents=True)
    assert course_folder(tmp_path) == tmp_path.resolve()
    with pytest.raises(GradingError, match="not a course folder"):
        course_folder(tmp_path / "build")


def test_cli_rejects_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from snapshotlib.cli import main

    code = main(["grade", str(tmp_path / "nope"), "--exercise", "1", "--out", "g.csv"])
    assert code == 2
    assert "no such folder" in capsys.readouterr().err

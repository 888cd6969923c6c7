"""`snapshotlib grade`: a folder of submissions judged from outside their sandboxes; every
class of attack on the grader, as a hostile submission graded beside the honest solution.

Each hostile submission answers q1 with a stub (or its attack) and q2 as the wrong
submission does: whatever it does, it must score what its real answers earn. The module
runs the real grader on two dozen submissions (two at a time), so it is marked slow.
Without otter-grader it is skipped locally and fails under CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import fill_in, make_exercises_tool, require_otter

ROOT = Path(__file__).resolve().parents[1]
NAME = "01_is_this_cut_consistent"
SOLUTION = ROOT / "solutions" / f"{NAME}.ipynb"
EXPECTED = json.loads((ROOT / "solutions" / f"{NAME}.expected.json").read_text())
WRONG = EXPECTED["wrong_submission"]
Q1, Q2 = list(WRONG["answers"])  # the answer cells of q1 and q2, by how they start

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


def attacks(exercise: dict[str, Any], ctx: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Hostile submissions, one per class of attack on the grader; each answers q1 with
    the stub (or nothing) and q2 as the wrong submission does."""
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


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from snapshotlib.grading import grade

    work = tmp_path_factory.mktemp("grading")
    (work / "scratch").mkdir()
    student, zipped = make_exercises_tool().make_exercise(
        SOLUTION, work / "exercises", work / "autograder", run_tests=False, dist=work / "dist"
    )
    solution = work / "dist" / "autograder" / f"{NAME}.ipynb"
    exercise = with_learner_id(json.loads(student.read_text()))
    outside = work / "outside"
    outside.mkdir()
    sentinel = outside / "sentinel.txt"
    sentinel.write_text("untouched\n")
    subs = work / "submissions"
    subs.mkdir()
    notebooks = {
        "solution": json.loads(solution.read_text()),
        "unmodified": exercise,
        "wrong": fill_in(exercise, WRONG["answers"]),
        "stub": fill_in(exercise, {Q1: STUB, Q2: WRONG["answers"][Q2]}),
        "loop": fill_in(exercise, hostile("while True:\n    pass")),
        "stubborn_loop": fill_in(
            exercise,
            hostile(
                "import signal\nfor s in (signal.SIGINT, signal.SIGPROF, signal.SIGALRM):\n"
                "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass"
            ),
        ),
        "sleeper": fill_in(
            exercise,
            hostile(
                "import signal, time\n"
                "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF, signal.SIGALRM})\n"
                "time.sleep(10**6)"
            ),
        ),
        "memory": fill_in(
            exercise,
            hostile(
                "def hog():\n    blob = []\n    while True:\n"
                "        blob.append(bytearray(2**26))\nhog()"
            ),
        ),
        "exit": fill_in(exercise, hostile("import sys\nsys.exit(0)")),
        "deleter": fill_in(
            exercise,
            hostile(
                "import os, shutil, subprocess\n"
                f"for p in [{str(sentinel)!r}, {str(subs / 'solution.ipynb')!r}]:\n"
                "    try:\n        os.remove(p)\n    except OSError as e:\n        print(e)\n"
                f"subprocess.run(['rm', '-rf', {str(outside)!r}, {str(subs)!r}])\n"
                f"open({str(outside / 'planted.txt')!r}, 'w').write('x')\n"
            ),
        ),
    }
    solution_q1 = answer_cell(notebooks["solution"], Q1)
    notebooks["reader"] = fill_in(
        exercise,
        hostile(
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
            f"    exec({solution_q1!r})\n"
        ),
    )
    notebooks["escapee"] = fill_in(
        exercise,
        hostile(
            "import os, subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)'],\n"
            "                 start_new_session=True)\n"
            "while True:  # a fork bomb of sleepers, stopped by the process limit\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(900)\n"
            "        os._exit(0)\n"
        ),
    )
    notebooks["kernel_death"] = fill_in(exercise, hostile("import os\nos._exit(1)"))
    # the engine's own check, called openly and behind a name built at run time
    notebooks["delegator"] = fill_in(
        exercise,
        hostile(
            "from snapshotlib.checks import check_frontier\n\n"
            "def offending_message(trace, frontier):\n"
            "    return None if check_frontier(trace, frontier).ok else 'x'\n"
        ),
    )
    notebooks["hidden_delegator"] = fill_in(
        exercise,
        hostile(
            "import importlib\n"
            "checks = importlib.import_module('snapshotlib.' + 'checks')\n"
            "judge = getattr(checks, 'check_' + 'front' + 'ier')\n\n"
            "def offending_message(trace, frontier):\n"
            "    return None if judge(trace, frontier).ok else 'x'\n"
        ),
    )
    with unpickling_listeners(work) as ctx:
        ctx["solution_q1"] = solution_q1
        notebooks.update(attacks(exercise, ctx))
        for name, nb in notebooks.items():
            (subs / f"{name}.ipynb").write_text(json.dumps(nb))
        before = sorted(p.name for p in subs.iterdir())
        out = work / "grades.csv"
        # Two at a time on two cores. The limits are CPU seconds (a loaded machine does
        # not make a fair submission use more), and a wall-clock backstop far beyond what
        # a fair submission needs even on a slow machine.
        book = grade(subs, NAME, out, autograder=zipped, cpu_seconds=20, cell_cpu=5,
                     timeout=60, memory_mb=1536, jobs=2, workdir=work / "scratch")  # fmt: skip
        received = list(ctx["received"])
    return {"book": book, "csv": out, "sentinel": sentinel, "outside": outside,
            "subs": subs, "before": before, "received": received,
            "planted": ctx["planted"], "scratch": work / "scratch"}  # fmt: skip


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
    """The exercise with the solution's learner id filled in (if it asks for one), so that
    every submission answers the solution's variant."""
    nb: dict[str, Any] = json.loads(json.dumps(exercise))
    source = json.loads(SOLUTION.read_text())
    given = next((c for c in source["cells"] if "".join(c["source"]).startswith("learner_id")),
                 None)  # fmt: skip
    for cell in nb["cells"]:
        if given and "".join(cell["source"]).startswith("learner_id"):
            cell["source"] = given["source"]
    return nb


def scores(graded: dict[str, Any], name: str) -> dict[str, float]:
    return graded["book"].scores(f"{name}.ipynb")  # type: ignore[no-any-return]


def status(graded: dict[str, Any], name: str) -> str:
    return graded["book"].by_submission()[f"{name}.ipynb"].status  # type: ignore[no-any-return]


def test_solution_scores_full_marks(graded: dict[str, Any]) -> None:
    assert scores(graded, "solution") == EXPECTED["full_marks"]
    assert status(graded, "solution") == "ok"


def test_unmodified_exercise_scores_zero(graded: dict[str, Any]) -> None:
    assert scores(graded, "unmodified") == dict.fromkeys(EXPECTED["full_marks"], 0.0)


def test_wrong_submission_gets_partial_credit(graded: dict[str, Any]) -> None:
    assert scores(graded, "wrong") == WRONG["scores"]


@pytest.mark.parametrize("name", ["loop", "memory", "exit", "deleter", "reader", "escapee",
                                  "history"])  # fmt: skip
def test_hostile_first_cell_loses_only_its_question(graded: dict[str, Any], name: str) -> None:
    result = graded["book"].by_submission()[f"{name}.ipynb"]
    assert result.status == "ok", result.detail
    assert scores(graded, name) == {"q1": 0.0, "q2": WRONG["scores"]["q2"]}


@pytest.mark.parametrize("name", ["hooks", "runner_patch", "service", "ipc", "disk_and_files"])
def test_an_attack_scores_what_its_answers_earn(graded: dict[str, Any], name: str) -> None:
    # the stub alone scores less than full marks on q1; the attack must not add to it
    stub = scores(graded, "stub")
    assert stub["q1"] < EXPECTED["full_marks"]["q1"]
    result = graded["book"].by_submission()[f"{name}.ipynb"]
    assert result.status == "ok", result.detail
    assert scores(graded, name) == stub


@pytest.mark.parametrize("name", ["delegator", "hidden_delegator"])
def test_an_answer_that_delegates_to_the_engine_is_refused(
    graded: dict[str, Any], name: str
) -> None:
    result = graded["book"].by_submission()[f"{name}.ipynb"]
    assert result.status == "ok", result.detail
    assert scores(graded, name) == {"q1": 0.0, "q2": WRONG["scores"]["q2"]}
    assert "check_frontier" in result.detail and "scores 0" in result.detail, result.detail


def test_a_score_is_always_a_finite_number(graded: dict[str, Any]) -> None:
    import math

    got = scores(graded, "not_a_number")
    assert all(math.isfinite(v) for v in got.values()), got
    assert got == {"q1": scores(graded, "stub")["q1"], "q2": 0.0}


def test_no_local_service_of_the_grader_was_reached(graded: dict[str, Any]) -> None:
    if os.geteuid() != 0:
        pytest.skip("submissions get a network namespace of their own only as root")
    assert graded["received"] == []
    assert not graded["planted"].exists()


def test_the_scratch_folder_and_open_files_are_limited(graded: dict[str, Any]) -> None:
    import re

    detail = graded["book"].by_submission()["disk_and_files.ipynb"].detail
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
    result = graded["book"].by_submission()["kernel_death.ipynb"]
    assert result.status == "crashed"
    assert result.total == 0.0
    assert "process ended" in result.detail, result.detail


def submission_processes() -> list[int]:
    """Processes running under a submission's own user id (see jail._UID_BASE)."""
    from snapshotlib.grading.jail import _UID_BASE

    left = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
        except (OSError, ValueError):
            continue  # ended meanwhile
        zombie = fields["State"].split()[0] == "Z"  # killed, waiting for init to reap it
        if int(fields["Uid"].split()[0]) >= _UID_BASE and not zombie:
            left.append(int(status.parent.name))
    return left


@pytest.mark.skipif(os.geteuid() != 0, reason="submissions get their own user id only as root")
def test_no_process_of_a_submission_outlives_it(graded: dict[str, Any]) -> None:
    # the escapee left a process in a session of its own and many forked sleepers
    assert submission_processes() == []


def test_looping_cell_is_interrupted(graded: dict[str, Any]) -> None:
    assert graded["book"].by_submission()["loop.ipynb"].cell_timeouts >= 1


def test_loop_ignoring_interrupts_is_stopped_by_its_cpu_limit(graded: dict[str, Any]) -> None:
    result = graded["book"].by_submission()["stubborn_loop.ipynb"]
    assert result.status == "cpu-limit", result.detail
    assert result.total == 0.0


def test_a_sleeper_is_stopped_by_the_wall_clock_backstop(graded: dict[str, Any]) -> None:
    result = graded["book"].by_submission()["sleeper.ipynb"]
    assert result.status == "timeout", result.detail
    assert result.total == 0.0


def test_nothing_outside_the_scratch_folder_changes(graded: dict[str, Any]) -> None:
    assert graded["sentinel"].read_text() == "untouched\n"
    assert list(graded["scratch"].iterdir()) == []  # every scratch folder removed
    assert sorted(p.name for p in graded["outside"].iterdir()) == ["sentinel.txt"]
    assert sorted(p.name for p in graded["subs"].iterdir()) == graded["before"]


@pytest.mark.skipif(os.geteuid() != 0, reason="writes outside are only contained as root")
def test_deleter_could_not_write_outside(graded: dict[str, Any]) -> None:
    assert not (graded["outside"] / "planted.txt").exists()


def test_csv_has_a_row_per_submission_and_test_with_totals(graded: dict[str, Any]) -> None:
    import csv

    rows = list(csv.DictReader(graded["csv"].open()))
    assert len(rows) == len(graded["before"]) * 3
    total = next(r for r in rows if r["submission"] == "solution.ipynb" and r["test"] == "TOTAL")
    assert float(total["score"]) == sum(EXPECTED["full_marks"].values())


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

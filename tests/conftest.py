"""Shared fixtures: the site, built once per test session from the committed notebooks."""

import subprocess
import sys
from pathlib import Path

import pytest

from tools.toc import ROOT

HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def built_site() -> Path:
    """Build the book with Sphinx warnings as errors; return the HTML folder."""
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run([str(jupyter_book), "build", ".", "--all", "--warningiserror",
                             "--keep-going"], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail("the site does not build with warnings as errors:\n"
                    + (result.stdout + result.stderr)[-4000:])
    return HTML

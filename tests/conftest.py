"""Shared fixtures: the site, built once per test session from the committed notebooks, and a
real browser on it (Debian's Chromium driven by Playwright, see tools/browser.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.browser import INSTALL_HINT, chromium, chromium_path, local_only, serve
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


@pytest.fixture(scope="session")
def server(built_site):
    """The built site on 127.0.0.1; its base URL."""
    with serve(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium; without it the test is skipped, except in CI (CI=true): a failure."""
    if chromium_path() is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed; .ci/run installs Debian's chromium package")
        pytest.skip(f"no Chromium on this machine ({INSTALL_HINT}): browser tests skipped")
    with chromium() as browser:
        yield browser


@pytest.fixture()
def page(browser, server):
    """A fresh page; requests to anything but the local server are aborted and recorded in
    ``page.external_requests``, console errors in ``page.console_errors``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ko-KR")
    external = []
    local_only(context, server, external)
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    page.external_requests = external
    yield page
    context.close()

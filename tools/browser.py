"""The built site in Chromium (or Google Chrome), driven by Playwright, fully offline.

Shared by the browser tests (tests/) and the PDF step (tools/pdf.py): the site is served from
127.0.0.1 on a free port, and every request that does not go to that server is aborted.

The browser is the one named by the environment variable COURSE_BROWSER (a path, or ``none``
for no browser), else the first Chromium or Chrome on PATH, else one in the standard places of
macOS and Windows (and of a snap on Linux). Only the standard library is imported here at first:
tools/course.py and tools/system_packages.py use the lookup before the venv exists.
"""

from __future__ import annotations

import functools
import http.server
import os
import platform
import shutil
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
BROWSER_VARIABLE = "COURSE_BROWSER"
# Names on PATH: Debian's chromium, Ubuntu's chromium-browser, Google's packages for Linux.
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
LINUX_PLACES = ("/snap/bin/chromium",)  # a snap's folder is not on every PATH
MACOS_APPS = ("Google Chrome.app/Contents/MacOS/Google Chrome",
              "Chromium.app/Contents/MacOS/Chromium")
WINDOWS_APPS = (("Google", "Chrome", "Application", "chrome.exe"),
                ("Chromium", "Application", "chrome.exe"))


def standard_places(system: str, environ: Mapping[str, str]) -> list[Path]:
    """Where installers put Chrome and Chromium on ``system`` (platform.system()'s name), in
    order, besides PATH: /Applications and ~/Applications on macOS, Program Files and the
    per-user folder on Windows."""
    if system == "Darwin":
        folders = [Path("/Applications")]
        if environ.get("HOME"):
            folders.append(Path(environ["HOME"]) / "Applications")
        return [folder / app for folder in folders for app in MACOS_APPS]
    if system == "Windows":
        roots = [environ[name] for name in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")
                 if environ.get(name)]
        return [Path(root, *app) for root in roots for app in WINDOWS_APPS]
    return [Path(place) for place in LINUX_PLACES]


def chromium_path(environ: Mapping[str, str] | None = None,
                  system: str | None = None) -> str | None:
    """The Chromium (or Chrome) executable to use, or None if there is none.

    ``environ`` (default os.environ) gives COURSE_BROWSER and PATH and the folders of
    standard_places; ``system`` defaults to this machine's platform.system().
    """
    environ = os.environ if environ is None else environ
    system = platform.system() if system is None else system
    chosen = environ.get(BROWSER_VARIABLE, "").strip()
    if chosen:
        if chosen.lower() == "none":
            return None
        return chosen if _executable(Path(chosen)) else None
    for name in NAMES:
        found = shutil.which(name, path=environ.get("PATH", ""))
        if found:
            return found
    for place in standard_places(system, environ):
        if _executable(place):
            return str(place)
    return None


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def install_hint(system: str | None = None) -> str:
    """How a reader of ``system`` (default: this machine) gets a browser the course can use."""
    system = platform.system() if system is None else system
    if system == "Darwin":
        how = "install Google Chrome, or: brew install --cask chromium"
    elif system == "Windows":
        how = "install Google Chrome"
    else:
        how = "sudo apt-get install chromium fonts-noto-cjk (a build as root does this itself)"
    return f"{how}, or set {BROWSER_VARIABLE} to a Chrome or Chromium executable"


INSTALL_HINT = install_hint()


class ChromiumMissing(RuntimeError):
    pass


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(folder: Path, handler_class: type = QuietHandler) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) while in the block; yield its base URL.
    ``handler_class``: a ``QuietHandler`` (tools/lighthouse.py's compresses what it sends)."""
    handler = functools.partial(handler_class, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextmanager
def chromium():
    """Launch headless Chromium with Playwright; a clear error if it is not installed."""
    executable = chromium_path()
    if executable is None:
        raise ChromiumMissing(f"no Chrome or Chromium found; to get one: {INSTALL_HINT}")
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only once Chromium is found

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def local_only(context, base_url: str, blocked: list[str] | None = None) -> None:
    """Abort every request of a browser context that does not go to ``base_url``.

    The aborted URLs are appended to ``blocked`` when given.
    """
    def route(request_route):
        url = request_route.request.url
        if url.startswith(base_url + "/"):
            request_route.continue_()
        else:
            if blocked is not None:
                blocked.append(url)
            request_route.abort()

    context.route("**/*", route)

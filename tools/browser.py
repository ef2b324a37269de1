"""The built site in Debian's Chromium, driven by Playwright, fully offline.

Shared by the browser tests (tests/) and the PDF step (tools/pdf.py): the site is served from
127.0.0.1 on a free port, and every request that does not go to that server is aborted.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
INSTALL_HINT = "install it with: apt-get install chromium"


def chromium_path() -> str | None:
    """The Chromium (or Chrome) executable on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


class ChromiumMissing(RuntimeError):
    pass


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) while in the block; yield its base URL."""
    handler = functools.partial(QuietHandler, directory=str(folder))
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
        raise ChromiumMissing(f"Chromium is not installed; {INSTALL_HINT}")
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

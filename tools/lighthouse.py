"""Lighthouse's scores of every page of the built site, as a phone sees it.

    .venv/bin/python tools/lighthouse.py            # every page of the toc; table into status.md
    .venv/bin/python tools/lighthouse.py chapters/03_multi_head_attention --no-write

The built site (_build/html) is served on 127.0.0.1 with gzip compression, as GitHub Pages
serves it, and Lighthouse (the npm package pinned in package.json, installed by
tools/course.py) audits each page with its default mobile preset: a simulated mid-range phone
on a slow 4G network. The browser is the course's Chromium (tools/browser.py, given to
Lighthouse as CHROME_PATH), headless, without a sandbox. Nothing is downloaded. The scores of
performance, accessibility, best practices and SEO, with the page's transfer size, first and
largest contentful paint and total blocking time, go into status.md between the lighthouse
markers. A measurement, not a test: the numbers vary a little from run to run and with the
machine's load (each page is measured RUNS times; the table gives the median run).
tools/benchmark.py calls it after the chapters' timings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.browser import QuietHandler, chromium_path, serve  # noqa: E402
from tools.markers import replace_block  # noqa: E402
from tools.toc import toc_files  # noqa: E402

SITE = ROOT / "_build" / "html"
LIGHTHOUSE = ROOT / "node_modules" / "lighthouse" / "cli" / "index.js"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
TARGETS = {"performance": 90, "accessibility": 95, "best-practices": 95, "seo": 95}
RUNS = 3
# What GitHub Pages compresses (text); images and fonts are sent as they are
COMPRESSED = (".html", ".js", ".css", ".json", ".svg", ".txt", ".xml", ".map", ".ipynb")


class GzipHandler(QuietHandler):
    """Static files, gzip-compressed (text types) when the browser accepts it."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.suffix in COMPRESSED and path.is_file()):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")  # as GitHub Pages
        self.end_headers()
        return _Body(body)


class _Body:
    """A file-like body for SimpleHTTPRequestHandler.copyfile."""

    def __init__(self, data: bytes):
        self.data, self.done = data, False

    def read(self, size=-1):
        if self.done:
            return b""
        self.done = True
        return self.data

    def close(self):
        pass


def audit(url: str) -> dict:
    """One Lighthouse run of ``url`` (mobile preset); its scores and key numbers."""
    node, chrome = shutil.which("node"), chromium_path()
    if node is None or chrome is None or not LIGHTHOUSE.exists():
        raise SystemExit("lighthouse.py needs Node.js, Chromium and the npm packages: run "
                         "python3.11 tools/course.py setup (as root it installs them)")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run([node, LIGHTHOUSE, url, "--output=json", f"--output-path={report}",
                        f"--only-categories={','.join(CATEGORIES)}", "--quiet",
                        "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
                        "--max-wait-for-load=60000"],
                       check=True, env=dict(os.environ, CHROME_PATH=chrome), cwd=tmp,
                       capture_output=True)
        data = json.loads(report.read_text(encoding="utf-8"))
    audits = data["audits"]
    return {
        **{c: round(100 * data["categories"][c]["score"]) for c in CATEGORIES},
        "kb": audits["total-byte-weight"]["numericValue"] / 1024,
        "fcp": audits["first-contentful-paint"]["numericValue"] / 1000,
        "lcp": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "tbt": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "failed": sorted(k for c in CATEGORIES for k in _failed(data, c)),
        "version": data["lighthouseVersion"],
        # Lighthouse's own measure of this machine's CPU speed at the time (higher is faster;
        # a busy machine gets a low index, and its pages lower performance scores)
        "benchmark": data["environment"]["benchmarkIndex"],
    }


def _failed(data: dict, category: str) -> list[str]:
    """The audits of a category that did not pass (score below 0.9), for the console."""
    if category == "performance":
        return []
    return [ref["id"] for ref in data["categories"][category]["auditRefs"]
            if ref["weight"] and (data["audits"][ref["id"]]["score"] or 0) < 0.9]


def measure(pages: list[str], runs: int = RUNS) -> dict[str, dict]:
    """{page: the median run by performance score} of every page."""
    results = {}
    with serve(SITE, GzipHandler) as base:
        for page in pages:
            samples = sorted((audit(f"{base}/{page}.html") for _ in range(runs)),
                             key=lambda r: r["performance"])
            results[page] = samples[len(samples) // 2]
            r = results[page]
            print(f"{page:48s} " + " ".join(f"{r[c]:3d}" for c in CATEGORIES)
                  + f"  {r['kb']:7.0f} KB  FCP {r['fcp']:.1f} s  LCP {r['lcp']:.1f} s  "
                  f"TBT {r['tbt']:.0f} ms  CLS {r['cls']:.3f}"
                  + (f"  failed: {', '.join(r['failed'])}" if r["failed"] else ""), flush=True)
    return results


def table(results: dict[str, dict], runs: int = RUNS) -> str:
    """The status page's table: one row per page, its median run of ``runs``."""
    version = next(iter(results.values()))["version"]
    benchmark = sorted(r["benchmark"] for r in results.values())[len(results) // 2]
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    # Six columns, so that the table fits the page's column on screen and in print; the paint
    # times (FCP, LCP, TBT) are printed by this tool, not shown on the page.
    lines = ["| 페이지 | 성능 | 접근성 | 권장사항 | 검색엔진 최적화 | 전송량 (KB) |",
             "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {label(page)} | {r['performance']} | {r['accessibility']} | "
              f"{r['best-practices']} | {r['seo']} | {r['kb']:,.0f} |"
              for page, r in results.items()]
    return "\n".join(lines) + (
        f"\n\n({when}, Lighthouse {version}, 모바일 기본 설정(느린 4G, CPU 4배 느리게), "
        f"이 기계의 CPU 벤치마크 지수 {benchmark:.0f}(Lighthouse가 잰 값, 중앙값; 높을수록 빠름), "
        f"gzip으로 압축해 127.0.0.1에서 제공, "
        + (f"페이지마다 {runs}회 중 성능 스코어의 중앙값인 실행)" if runs > 1
           else "페이지마다 1회)"))


def label(page: str) -> str:
    """A page of the toc as the table names it: ``chapters/07_attention_cost`` is ``7장``."""
    found = re.fullmatch(r"chapters/(\d+)_\w+", page)
    return f"{int(found.group(1))}장" if found else page


def below_target(results: dict[str, dict]) -> list[str]:
    return [f"{page}: {c} {r[c]} < {TARGETS[c]}" for page, r in results.items()
            for c in CATEGORIES if r[c] < TARGETS[c]]


def update_status(runs: int = RUNS) -> None:
    """Measure every page of the toc and write the table into status.md; with no built site or
    no Lighthouse, say so and leave the table as it is (tools/benchmark.py calls this)."""
    if not (SITE / "index.html").exists():
        print("lighthouse: skipped, no built site (python3.11 tools/course.py build)")
        return
    if shutil.which("node") is None or chromium_path() is None or not LIGHTHOUSE.exists():
        print("lighthouse: skipped, it needs Node.js, Chromium and the npm packages "
              "(python3.11 tools/course.py setup installs them as root)")
        return
    results = measure(toc_files(), runs)
    replace_block(ROOT / "status.md", "lighthouse", table(results, runs))
    for problem in below_target(results):
        print(f"below the target: {problem}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pages", nargs="*", help="pages of the toc (default: all)")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--no-write", action="store_true", help="print only; status.md as is")
    args = parser.parse_args()
    if not (SITE / "index.html").exists():
        raise SystemExit("no built site: run python3.11 tools/course.py build first")
    results = measure(args.pages or toc_files(), args.runs)
    if not args.no_write:
        replace_block(ROOT / "status.md", "lighthouse", table(results, args.runs))
    for problem in below_target(results):
        print(f"below the target: {problem}", file=sys.stderr)


if __name__ == "__main__":
    main()

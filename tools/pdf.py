"""The whole course as one PDF: every page of _toc.yml printed by Chromium, merged with pypdf.

    .venv/bin/python tools/pdf.py   # after the HTML build; `tools/course.py build` runs it

Why Chromium's print-to-PDF of the built pages and not LaTeX: the PDF shows what the site
shows, drawn by the same renderer. Formulas are MathJax's output exactly as on the web, figures
are the site's PNGs, code and outputs keep their highlighting, and Korean text is set in the
same font (Noto Sans CJK). The browser tests already drive this Chromium, while LaTeX would need
a multi-gigabyte TeX installation with Korean support and a second rendering of every page to
check. Every request that does not go to the local server is aborted: the PDF is made offline.

Each page is printed on its own (A4, with the theme's print styles plus PRINT_CSS; answers and
folded code opened; code in a 10 px (7.5 pt) font so that 88 columns fit, never wrapped, and
making the PDF fails if a line of code would be cut off), then the parts are merged into one
file: one bookmark per page, titled with its H1, with the page's headings below it, and links
between pages point inside the PDF.
A printed contents page after the introduction lists every page of the toc with the number
of the page where it starts. Every page of the merged book then gets its number at the foot,
from one more print of a page per number laid over it, and the PDF's page labels give viewers
the same numbers.

Chromium embeds fonts with CFF outlines (Noto Sans CJK, MathJax's fonts) as Type 3 fonts: the
glyph outlines are in the file, with a ToUnicode map, so the text can be searched and copied.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, Destination, Fit, NameObject, TextStringObject

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.browser import ChromiumMissing, chromium, local_only, serve  # noqa: E402
from tools.toc import toc_files  # noqa: E402

HTML = ROOT / "_build" / "html"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
PDF_NAME = CONFIG["sphinx"]["config"]["course_pdf"]  # relative to the site's root
MARGIN = {"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"}

PRINT_CSS = """
*, *::before, *::after { animation: none !important; transition: none !important; }
pre { white-space: pre !important; font-size: 10px !important; padding-inline: 8px !important; }
div.cell_output pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
div.cell_input { break-after: avoid; }
details > summary, button.toggle-button { display: none !important; }
div.cell_input, div.cell_output, img { break-inside: avoid; }
div.cell.print-keep { break-inside: avoid; }
.print-split { break-inside: auto !important; }
div.cell_input.print-split-after { break-after: auto; }
.admonition > .admonition-title, :is(h1, h2, h3, h4) { break-after: avoid; }
:is(h1, h2, h3, h4) { word-break: keep-all; }
"""

# The height of A4 within the margins, in CSS pixels (96 per inch).
PAGE_HEIGHT_PX = (297 - 16 - 16) * 96 / 25.4
# A block that is kept whole (a code cell with its output, a code block, an admonition, a
# table) moves to the next page when it does not fit, leaving the rest of the page empty. Only
# blocks up to half a page are kept whole, so a page left behind is more than half full; taller
# ones may break across pages like text. (Figures cannot break and are kept whole anyway.)
KEEP_WHOLE = 0.5

# Runs in each page before printing. Waits for formulas, fonts and images; opens answers and
# folded code; titles the printed page with its numbered H1; makes every element with an id a
# link target, so that Chromium writes a destination for it; returns the H1 and the section
# headings (formulas in them as TeX, lightly simplified) for the bookmarks.
PREPARE_JS = r"""async ([pageHeight, keepWhole]) => {
  // Formulas are typeset when the site is built (_ext/page_loading); MathJax typesets in the
  // browser only those that were not (a build without Node.js)
  if (document.querySelector('.math:not(:has(mjx-container))')) {
    for (let i = 0; !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++) {
      if (i > 400) throw new Error('MathJax did not start');
      await new Promise(resolve => setTimeout(resolve, 50));
    }
    await MathJax.startup.promise;
  }
  // Formulas below the first screen wait in placeholders until printing (show-formulas.js)
  window.dispatchEvent(new Event('beforeprint'));
  await document.fonts.ready;
  document.querySelectorAll('img[loading="lazy"]').forEach(img => { img.loading = 'eager'; });
  await Promise.all([...document.images].map(img => img.decode().catch(() => null)));
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));

  const tex = new Map((window.MathJax && MathJax.startup && MathJax.startup.document)
    ? MathJax.startup.document.getMathItemsWithin(document.body).map(m => [m.typesetRoot, m.math])
    : []);
  const source = node => tex.get(node) ?? (node.dataset && node.dataset.tex);
  const text = node => source(node) !== undefined
    ? source(node).replace(/\\sqrt/g, '√').replace(/[{}\\]/g, '')
    : node.nodeType === Node.TEXT_NODE ? node.data
    : node.classList && node.classList.contains('headerlink') ? ''
    : [...node.childNodes].map(text).join('');
  const title = text(document.querySelector('article h1')).trim();
  const printed = document.querySelector('#jb-print-docs-body h1');
  if (printed) printed.textContent = title;
  const headings = [...document.querySelectorAll('article section > :is(h2, h3)')]
    .map(h => [Number(h.tagName[1]), h.parentElement.id, text(h).trim()]);

  const targets = document.createElement('div');
  targets.hidden = true;
  for (const el of document.querySelectorAll('article [id]')) {
    const a = document.createElement('a');
    a.href = '#' + el.id;
    targets.append(a);
  }
  document.body.append(targets);

  // Page breaks (the viewport has the printed width, so heights are as printed). A code cell
  // up to KEEP_WHOLE of a page is kept whole, its code with all of its output; any taller
  // block that the theme keeps whole may break. In a taller cell whose output starts with a
  // figure, the code may end one page and the figure start the next: keeping them together
  // would push the code onto a page that the figure does not fit either.
  const keep = pageHeight * keepWhole;
  const tall = el => el.getBoundingClientRect().height > keep;
  for (const el of document.querySelectorAll('article *')) {
    if (getComputedStyle(el).breakInside.startsWith('avoid') && tall(el)) {
      el.classList.add('print-split');
    }
  }
  for (const cell of document.querySelectorAll('article div.cell')) {
    if (!tall(cell)) {
      cell.classList.add('print-keep');
      continue;
    }
    const input = cell.querySelector('div.cell_input');
    const first = cell.querySelector('div.cell_output')?.firstElementChild;
    if (input && first && first.querySelector('img, svg')) {
      input.classList.add('print-split-after');
    }
  }

  const clipped = [...document.querySelectorAll('article pre')]
    .filter(pre => !pre.closest('.cell_output') && pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => pre.textContent.split('\n').reduce((a, b) => (b.length > a.length ? b : a)));
  return {title, headings, clipped};
}"""


@dataclass
class Part:
    """One page of the toc, printed, and where it starts in the merged PDF."""
    name: str  # as in _toc.yml, e.g. chapters/01_attention_intuition
    title: str  # its H1
    headings: list  # [level (2 for h2), section id, text], in order
    reader: PdfReader
    start: int = 0
    clipped: list = field(default_factory=list)  # code lines wider than the printed column


def print_page(page, url: str, name: str) -> Part:
    """Open one page of the site, make it ready for print, and print it."""
    response = page.goto(f"{url}/{name}.html", wait_until="load")
    if response is None or response.status != 200:
        raise RuntimeError(f"{name}.html: HTTP {response and response.status}")
    page.add_style_tag(content=PRINT_CSS)
    found = page.evaluate(PREPARE_JS, [PAGE_HEIGHT_PX, KEEP_WHOLE])
    data = page.pdf(format="A4", margin=MARGIN, print_background=True)
    return Part(name, found["title"], found["headings"], PdfReader(io.BytesIO(data)),
                clipped=found["clipped"])


def print_course(page, url: str) -> list[Part]:
    """Print every page of the toc, in order."""
    return [print_page(page, url, name) for name in toc_files()]


# One printed page per number, blank but for the number centred in the bottom margin; each is
# laid over the page of the merged book with that number. Chromium draws the digits, so their
# font is embedded like every other font of the PDF.
NUMBERS_HTML = """<!doctype html><html lang="ko"><head><style>
@page {{ size: A4; margin: 0; }}
html, body {{ margin: 0; background: transparent; }}
div {{ height: 297mm; position: relative; break-after: page; }}
span {{ position: absolute; bottom: 8mm; left: 0; right: 0; text-align: center;
        font: 9pt "Noto Sans CJK KR", sans-serif; color: #555; }}
</style></head><body>{pages}</body></html>"""


def print_numbers(page, count: int) -> PdfReader:
    """``count`` A4 pages, numbered 1 to ``count`` at the foot and otherwise empty."""
    pages = "".join(f"<div><span>{n}</span></div>" for n in range(1, count + 1))
    page.set_content(NUMBERS_HTML.format(pages=pages))
    page.evaluate("document.fonts.ready.then(() => true)")
    data = page.pdf(format="A4", margin={"top": "0", "bottom": "0", "left": "0", "right": "0"},
                    print_background=False)
    return PdfReader(io.BytesIO(data))


def number_pages(writer: PdfWriter, numbers: PdfReader) -> None:
    """Print each page's number at its foot, and label the pages 1, 2, … for PDF viewers."""
    if len(numbers.pages) != len(writer.pages):
        raise RuntimeError(f"{len(numbers.pages)} page numbers for {len(writer.pages)} pages")
    for page, number in zip(writer.pages, numbers.pages):
        page.merge_page(number)
        page.compress_content_streams()  # merging leaves the page's drawing uncompressed
    writer.set_page_label(0, len(writer.pages) - 1, style="/D", start=1)


def locate(part: Part, anchor: str) -> tuple[int, Fit]:
    """Page in the merged PDF and position of an element of a part (its first page if unknown)."""
    dest = part.reader.named_destinations.get("/" + anchor)
    if dest is None:
        return part.start, Fit.fit()
    return part.start + part.reader.get_destination_page_number(dest), Fit.xyz(dest.left, dest.top)


def add_bookmarks(writer: PdfWriter, part: Part) -> None:
    """A bookmark titled with the part's H1 and, nested below it, one per section heading."""
    parents = {1: writer.add_outline_item(title=part.title, page_number=part.start,
                                          is_open=False)}
    for level, anchor, text in part.headings:
        page, fit = locate(part, anchor)
        parents[level] = writer.add_outline_item(title=text, page_number=page, fit=fit,
                                                 parent=parents[level - 1], is_open=False)


def relink(writer: PdfWriter, parts: list[Part], url: str) -> None:
    """Point links within the course at pages of the PDF; drop links to other local pages.

    Chromium writes a link within a page as a named destination (names repeat from page to
    page) and a link to another page as its URL on the local server.
    """
    by_name = {part.name: part for part in parts}
    for part in parts:
        for page in writer.pages[part.start:part.start + len(part.reader.pages)]:
            if "/Annots" not in page:
                continue
            kept = ArrayObject()
            for ref in page["/Annots"]:
                annot = ref.get_object()
                uri = str(annot.get("/A", {}).get("/URI", ""))
                if isinstance(annot.get("/Dest"), str):  # a name
                    target, anchor = part, annot["/Dest"].lstrip("/")
                elif uri.startswith(url + "/"):
                    link = urlsplit(uri)
                    target = by_name.get(link.path.lstrip("/").removesuffix(".html"))
                    anchor = link.fragment
                else:
                    kept.append(ref)  # a link out of the site: it stays
                    continue
                if target is not None:
                    index, fit = locate(target, anchor)
                    annot.pop("/A", None)
                    annot[NameObject("/Dest")] = Destination(
                        "", writer.pages[index].indirect_reference, fit).dest_array
                    kept.append(ref)
            page[NameObject("/Annots")] = kept


def merge(parts: list[Part], url: str, title: str) -> PdfWriter:
    """One PDF: the parts in order, one top-level bookmark per part, links inside the PDF."""
    writer = PdfWriter()
    for part in parts:
        part.start = len(writer.pages)
        writer.append(part.reader, import_outline=False)
        if part.title:  # the contents page has no bookmark of its own
            add_bookmarks(writer, part)
    relink(writer, parts, url)
    writer.root_object.pop("/Names", None)  # the parts' named destinations, no longer used
    writer.add_metadata({"/Title": title})
    writer.root_object[NameObject("/Lang")] = TextStringObject("ko")
    writer.page_mode = "/UseOutlines"
    return writer


# The printed contents, placed after the introduction: every page of the toc with the number of
# the page where it starts, each entry a link to that page.
CONTENTS_HTML = """<!doctype html><html lang="ko"><head><style>
body {{ margin: 0; font: 11pt/1.5 "Noto Sans CJK KR", sans-serif; color: #222; }}
h1 {{ font-size: 20pt; margin: 0 0 8mm; }}
a {{ display: flex; align-items: baseline; gap: 2mm; color: inherit; text-decoration: none;
     margin: 0 0 2.5mm; break-inside: avoid; }}
.fill {{ flex: 1; border-bottom: 1px dotted #999; }}
</style></head><body><h1>차례</h1>{entries}</body></html>"""


def print_contents(page, url: str, parts: list[Part], shift: int) -> PdfReader:
    """The contents page(s), for the parts' pages once ``shift`` contents pages follow part 0."""
    entries = "".join(
        f'<a href="{url}/{part.name}.html"><span>{escape(part.title)}</span>'
        f'<span class="fill"></span><span>{start + 1}</span></a>'
        for part, start in zip(parts, starts(parts, shift)))
    page.set_content(CONTENTS_HTML.format(entries=entries))
    page.evaluate("document.fonts.ready.then(() => true)")
    return PdfReader(io.BytesIO(page.pdf(format="A4", margin=MARGIN)))


def starts(parts: list[Part], shift: int) -> list[int]:
    """Where each part starts (from 0) when ``shift`` pages come between parts 0 and 1."""
    found, at = [], 0
    for i, part in enumerate(parts):
        found.append(at)
        at += len(part.reader.pages) + (shift if i == 0 else 0)
    return found


def with_contents(page, url: str, parts: list[Part]) -> list[Part]:
    """The parts with the contents page inserted after the first (the introduction)."""
    shift = 1
    while True:
        reader = print_contents(page, url, parts, shift)
        if len(reader.pages) == shift:
            return [parts[0], Part("contents", "", [], reader), *parts[1:]]
        shift = len(reader.pages)


def make_pdf(browser, url: str, out: Path) -> Path:
    """Print the site served at ``url`` into one PDF at ``out`` (used by the build and tests)."""
    context = browser.new_context(locale="ko-KR")
    local_only(context, url)  # requests to anything but ``url`` are aborted
    page = context.new_page()
    page.emulate_media(media="print")
    # The width of A4 within the margins (182 mm), so that PREPARE_JS measures code as printed.
    page.set_viewport_size({"width": 688, "height": 1000})
    try:
        parts = with_contents(page, url, print_course(page, url))
        clipped = [f"{part.name}: {line!r}" for part in parts for line in part.clipped]
        if clipped:  # printed code does not wrap, so a wider line would be cut off
            raise RuntimeError("code wider than the printed column:\n" + "\n".join(clipped))
        writer = merge(parts, url, CONFIG["title"])
        number_pages(writer, print_numbers(page, len(writer.pages)))
    finally:
        context.close()
    writer.compress_identical_objects()  # what several parts share (icons, glyphs) stored once
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        writer.write(f)
    return out


def main() -> None:
    if not (HTML / "intro.html").exists():
        sys.exit(f"no built site in {HTML}: build it first (python3.11 tools/course.py build)")
    try:
        with serve(HTML) as url, chromium() as browser:
            out = make_pdf(browser, url, HTML / PDF_NAME)
    except ChromiumMissing as err:
        sys.exit(f"the course PDF needs Chromium: {err}\n"
                 "(or build without the PDF: python3.11 tools/course.py build --no-pdf)")
    print(f"pdf: {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()

"""The whole course as one PDF, made once per session by the function the build uses
(tools/pdf.py) from the freshly built site, and read back with pypdf.

Like the browser tests, the tests that read the PDF need Chromium: without it they are skipped
with a reason, except in CI (CI=true), where they fail. The download-menu check reads the HTML.
"""

import re
import urllib.request
from pathlib import Path
from urllib.parse import urljoin
from xml.etree import ElementTree

import pytest
import yaml
from bs4 import BeautifulSoup
from pypdf import PdfReader

from tools.pdf import MARGIN, PDF_NAME, make_pdf
from tools.toc import ROOT, toc_files

HANGUL = re.compile(r"[가-힣]")
RAW_TEX = [r"\frac", r"\sqrt", r"\begin", r"\mathbb", r"\top", r"\(", r"\[", "$$"]
CJK_FONT = re.compile(r"Noto(Sans|Serif)CJK")
FONT_FILES = ("/FontFile", "/FontFile2", "/FontFile3")


def squeeze(text: str) -> str:
    """Text without whitespace: pypdf puts spaces where the layout has gaps."""
    return re.sub(r"\s+", "", text)


def html(built_site, name) -> BeautifulSoup:
    return BeautifulSoup((built_site / f"{name}.html").read_text(encoding="utf-8"), "html.parser")


def h1_title(soup) -> str:
    h1 = soup.select_one("article h1")
    for link in h1.select(".headerlink"):
        link.decompose()
    return " ".join(h1.get_text().split())


@pytest.fixture(scope="session")
def course_pdf(browser, server, built_site) -> PdfReader:
    return PdfReader(make_pdf(browser, server, built_site / PDF_NAME))


@pytest.fixture(scope="session")
def page_texts(course_pdf) -> list[str]:
    return [page.extract_text() for page in course_pdf.pages]


@pytest.fixture(scope="session")
def ranges(course_pdf) -> dict[str, range]:
    """Each toc page's pages in the PDF, from the top-level bookmarks (in toc order)."""
    tops = [item for item in course_pdf.outline if not isinstance(item, list)]
    starts = [course_pdf.get_destination_page_number(item) for item in tops]
    assert len(starts) == len(toc_files()), "not one top-level bookmark per toc page"
    ends = starts[1:] + [len(course_pdf.pages)]
    return {name: range(a, b) for name, a, b in zip(toc_files(), starts, ends)}


def test_one_bookmark_per_toc_page_titled_with_its_h1(course_pdf, built_site):
    tops = [item for item in course_pdf.outline if not isinstance(item, list)]
    assert [item.title for item in tops] == [h1_title(html(built_site, n)) for n in toc_files()]
    starts = [course_pdf.get_destination_page_number(item) for item in tops]
    assert starts[0] == 0 and starts == sorted(set(starts)), f"bookmarks out of order: {starts}"
    title = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["title"]
    assert course_pdf.metadata.title == title


def test_every_page_is_numbered(course_pdf, page_texts):
    """Viewers show the page labels 1, 2, …, and each page prints the same number at its foot
    (the last text drawn on the page), counted through the whole book, not per toc page."""
    count = len(course_pdf.pages)
    assert course_pdf.page_labels == [str(n) for n in range(1, count + 1)], "page labels"
    wrong = [(i + 1, text.split()[-1:]) for i, text in enumerate(page_texts)
             if text.split()[-1:] != [str(i + 1)]]
    assert not wrong, f"pages whose printed number is not their page number: {wrong[:5]}"


def test_contents_page_lists_every_toc_page_with_its_page_number(course_pdf, page_texts, ranges):
    """After the introduction, a printed contents page lists every page of the toc, in order,
    each with the number of the page its bookmark points to."""
    at = [i for i, text in enumerate(page_texts) if text.split()[:1] == ["차례"]]
    assert at, "no contents page (a page starting with 차례)"
    first_chapter = ranges[toc_files()[1]].start
    assert at[0] < first_chapter, "the contents page comes after the first chapter"
    lines = [re.fullmatch(r"(.*?)\s*(\d+)", line.strip())
             for line in page_texts[at[0]].splitlines()[1:]]
    listed = [(squeeze(m[1]), int(m[2])) for m in lines if m and m[1]]
    tops = [item for item in course_pdf.outline if not isinstance(item, list)]
    expected = [(squeeze(item.title), course_pdf.get_destination_page_number(item) + 1)
                for item in tops]
    assert listed == expected, "the contents page (titles, page numbers) and the bookmarks differ"


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_korean_text_is_extractable(built_site, ranges, page_texts, name):
    text = squeeze("".join(page_texts[i] for i in ranges[name]))
    soup = html(built_site, name)
    title = h1_title(soup)
    assert squeeze(title) in text, f"{name}: the H1 {title!r} is not in the PDF's text"
    paragraph = next(p.get_text() for p in soup.select("article p")
                     if HANGUL.search(p.get_text()) and not p.select(".math"))
    sentence = next(s for s in re.split(r"(?<=[.?!])\s+", paragraph.strip()) if HANGUL.search(s))
    assert squeeze(sentence) in text, f"{name}: {sentence!r} is not in the PDF's text"


def images_on(page) -> set[int]:
    """The image XObjects a PDF page draws, also inside form XObjects."""
    found, todo = set(), [page.get("/Resources")]
    while todo:
        resources = todo.pop()
        xobjects = resources.get_object().get("/XObject", {}) if resources else {}
        for ref in xobjects.values():
            xobject = ref.get_object()
            if xobject.get("/Subtype") == "/Image":
                found.add(ref.idnum)
            elif xobject.get("/Subtype") == "/Form":
                todo.append(xobject.get("/Resources"))
    return found


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_every_figure_is_in_the_pdf(built_site, course_pdf, ranges, name):
    figures = [img for img in html(built_site, name).select("article img")  # matplotlib's PNGs
               if not img["src"].endswith(".svg")]  # diagrams print as vectors, tested below
    drawn = sum(len(images_on(course_pdf.pages[i])) for i in ranges[name])
    assert drawn >= len(figures), f"{name}: {len(figures)} figures, {drawn} images in the PDF"


def test_fonts_are_embedded(course_pdf):
    """No font comes from the reader's machine: TrueType/CFF fonts carry their font file and
    Type 3 fonts (Chromium's form for CFF outlines, such as Noto Sans CJK) their glyphs."""
    names, missing = set(), set()
    for page in course_pdf.pages:
        for ref in page["/Resources"].get_object().get("/Font", {}).values():
            font = ref.get_object()
            if font["/Subtype"] == "/Type0":
                font = font["/DescendantFonts"][0].get_object()
            descriptor = font.get("/FontDescriptor")
            descriptor = descriptor.get_object() if descriptor else {}
            name = str(descriptor.get("/FontName") or font.get("/BaseFont"))
            names.add(name)
            if font["/Subtype"] == "/Type3":
                embedded = len(font["/CharProcs"]) > 0
            else:
                embedded = any(key in descriptor for key in FONT_FILES)
            if not embedded:
                missing.add(name)
    assert not missing, f"fonts not embedded: {sorted(missing)}"
    assert any(CJK_FONT.search(name) for name in names), f"no Noto CJK font among {sorted(names)}"


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_formulas_are_rendered_not_raw_tex(built_site, ranges, page_texts, name):
    """Raw TeX in the PDF's text only where the page shows code (a matplotlib label, say)."""
    text = "".join(page_texts[i] for i in ranges[name])
    soup = html(built_site, name)
    code = "".join(e.get_text() for e in soup.select("article pre, article code")
                   if not e.find_parent("pre"))
    raw = {tex: text.count(tex) for tex in RAW_TEX if text.count(tex) > code.count(tex)}
    assert not raw, f"{name}: raw TeX in the PDF's text (count): {raw}"


def test_links_stay_inside_the_pdf(course_pdf):
    local, pages = [], {page.indirect_reference.idnum for page in course_pdf.pages}
    for number, page in enumerate(course_pdf.pages):
        for ref in page.get("/Annots", []):
            annot = ref.get_object()
            uri = str(annot.get("/A", {}).get("/URI", ""))
            if re.match(r"https?://(127\.0\.0\.1|localhost)", uri):
                local.append((number, uri))
            dest = annot.get("/Dest")
            if dest is not None:  # [page, fit...]; a name would be one of several parts'
                assert isinstance(dest, list) and dest[0].idnum in pages, \
                    f"page {number}: a link to {dest!r}, not to a page of the PDF"
    assert not local, f"links to the local build server: {local[:5]}"


def test_intro_and_download_menu_link_to_the_pdf(course_pdf, page, server):
    pdf_url = f"{server}/{PDF_NAME}"
    page.goto(f"{server}/intro.html", wait_until="load")
    intro_links = page.eval_on_selector_all("article a", "as => as.map(a => a.href)")
    assert pdf_url in intro_links, "intro.md does not link to the course PDF"
    item = page.locator(".dropdown-download-buttons a.btn-download-course-pdf-button")
    assert item.get_attribute("href") and urljoin(page.url, item.get_attribute("href")) == pdf_url
    assert HANGUL.search(item.inner_text() or item.text_content()), "the menu item is not Korean"
    with urllib.request.urlopen(pdf_url) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == "application/pdf"
        assert response.read().startswith(b"%PDF-")


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_every_page_has_the_pdf_in_its_download_menu(built_site, server, name):
    menu = html(built_site, name).select_one(".dropdown-download-buttons")
    items = menu.select("a.btn-download-course-pdf-button") if menu else []
    assert len(items) == 1, f"{name}: {len(items)} course PDF items in the download menu"
    assert urljoin(f"{server}/{name}.html", items[0]["href"]) == f"{server}/{PDF_NAME}"


# The architecture diagrams (helpers.diagrams) and the page that shows each.
DIAGRAM_PAGES = {
    "fig-ch3-diagram-heads": "chapters/03_multi_head_attention",
    "fig-ch3-diagram-split": "chapters/03_multi_head_attention",
    "fig-ch2-diagram-mask-broadcast": "chapters/02_scaled_dot_product_attention",
    "fig-ch6-diagram-encoder-decoder": "chapters/06_seq2seq_cross_attention",
    "fig-ch8-diagram-layers": "chapters/08_transformer_block",
    "fig-ch9-diagram-kv-cache": "chapters/09_decoder_only_generation",
    "fig-ch10-diagram-groups": "chapters/10_grouped_query_sliding_window",
    "fig-ch12-diagram-mla": "chapters/12_multi_head_latent_attention",
    "fig-ch13-diagram-forms": "chapters/13_linear_attention_delta_rule",
    "fig-ch13-diagram-hybrid": "chapters/13_linear_attention_delta_rule",
    "fig-ch14-diagram-recall": "chapters/14_associative_recall",
    "fig-ch13-diagram-delta-write": "chapters/13_linear_attention_delta_rule",
    "fig-ch13-diagram-ut": "chapters/13_linear_attention_delta_rule",
    "fig-ch9-diagram-decoder-only": "chapters/09_decoder_only_generation",
    "fig-ch10-diagram-ring-buffer": "chapters/10_grouped_query_sliding_window",
    "fig-ch10-diagram-window-cone": "chapters/10_grouped_query_sliding_window",
    "fig-ch11-diagram-rope": "chapters/11_rotary_alibi_length",
    "fig-ch1-diagram-bottleneck": "chapters/01_attention_intuition",
    "fig-ch5-diagram-models": "chapters/05_lstm_attention_time_series",
    "fig-ch7-diagram-tiling": "chapters/07_attention_cost",
    "fig-ch15-diagram-llama": "chapters/15_pretrained_language_model",
    "fig-ch16-diagram-sink-gate": "chapters/16_attention_sinks",
    "fig-ch17-diagram-dsa": "chapters/17_sparse_attention",
    "fig-ch17-diagram-nsa": "chapters/17_sparse_attention",
    "fig-ch4-diagram-layers": "chapters/04_keras_attention_layers",
}


@pytest.mark.parametrize("name", DIAGRAM_PAGES)
def test_diagrams_print_their_korean_labels_as_text(built_site, ranges, page_texts, name):
    """A diagram's SVG is printed as vectors: every Korean label of the SVG is text in the PDF
    (crisp at any zoom, searchable), on the pages of its chapter."""
    page_name = DIAGRAM_PAGES[name]
    img = html(built_site, page_name).select_one(f"figure#{name} img")
    assert img is not None and img["src"].endswith(".svg"), f"{name}: no SVG on {page_name}"
    svg = ElementTree.parse(built_site / Path(page_name).parent / img["src"]).getroot()
    labels = {"".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    korean = sorted(label for label in labels if HANGUL.search(label))
    assert len(korean) >= 3, f"{name}: too few Korean labels in the SVG: {korean}"
    text = squeeze("".join(page_texts[i] for i in ranges[page_name]))
    missing = [label for label in korean if squeeze(label) not in text]
    assert not missing, f"{name}: labels not in the PDF's text: {missing}"


def layout(page) -> tuple[float, list[tuple[float, float]]]:
    """How far down the printed area (A4 within tools/pdf.py's margins) a page's content
    reaches, from 0 (empty) to 1 (full), and the images on it as (top, height) in the same unit.
    The content's end is the lowest line of text or the bottom of the lowest image; the page
    number below the bottom margin does not count."""
    margin = {side: float(MARGIN[side].removesuffix("mm")) * 72 / 25.4 for side in MARGIN}
    top = float(page.mediabox.height) - margin["top"]
    height = top - margin["bottom"]
    xobjects = page["/Resources"].get("/XObject", {})
    lows, images = [], []

    def text(chars, cm, tm, font, size):
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        if chars.strip() and y > margin["bottom"]:
            lows.append(y)

    def operator(op, args, cm, tm):
        if op == b"Do" and xobjects.get(args[0], {}).get("/Subtype") == "/Image":
            images.append(((top - cm[5] - cm[3]) / height, cm[3] / height))
            lows.append(cm[5])

    page.extract_text(visitor_text=text, visitor_operand_before=operator)
    return (top - min(lows)) / height if lows else 0.0, images


# A page is nearly empty when its content ends in the top third of the page. tools/pdf.py keeps
# a block whole (a code cell with its output, an admonition, a table) only up to half a page, so
# the page a moved block leaves behind is more than half full; a third leaves room for a heading
# kept with the block after it. The one break that may leave less is before a figure (an image
# cannot be split) taller than the rest of the page. The last page of a part ends where the part
# ends.
NEARLY_EMPTY = 1 / 3


def test_no_nearly_empty_pages_from_avoidable_breaks(course_pdf, ranges, page_texts):
    intro = ranges[toc_files()[0]]
    contents = next(i for i in intro if squeeze(page_texts[i]).startswith("차례"))
    last_pages = {r.stop - 1 for r in ranges.values()} | {contents - 1, contents}
    pages = [layout(page) for page in course_pdf.pages]
    empty = []
    for i, (reach, _) in enumerate(pages[:-1]):
        if i in last_pages or reach >= NEARLY_EMPTY:
            continue
        room = 1 - reach
        _, images = pages[i + 1]
        if any(top < 0.05 and height > room - 0.1 for top, height in images):
            continue  # the next page starts with a figure that did not fit in the room left
        empty.append(f"page {i + 1}: content ends {reach:.0%} down the page")
    assert not empty, "nearly empty pages:\n" + "\n".join(empty)

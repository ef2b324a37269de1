"""The built site in a real browser (Debian's Chromium driven by Playwright), fully offline.

Every request that does not go to the local server is aborted, so formulas, fonts and search
must work from the site's own files. Screenshots go to _build/screenshots/ for people to look
at. Without Chromium these tests are skipped with a reason, except in CI (CI=true), where a
missing browser is a failure. The fixtures (server, browser, page) are in conftest.py.
"""

import base64
import hashlib
import json
import re
import subprocess
import urllib.request
from urllib.parse import quote

import nbformat
import pytest
import yaml
from axe_playwright_python.sync_playwright import Axe

from tools.browser import local_only
from tools.toc import ROOT, toc_files, toc_notebooks

SHOTS = ROOT / "_build" / "screenshots"
HANGUL = re.compile(r"[가-힣]{2,}")
# A page fetches its pictures as they come near (loading="lazy"); the tests look at all of them
LOAD_LAZY_IMAGES_JS = """() => Promise.all([...document.images].map(img => {
  img.loading = 'eager';
  return img.decode().catch(() => null);
}))"""


def open_page(page, server, name):
    response = page.goto(f"{server}/{name}.html", wait_until="load")
    page.wait_for_load_state("networkidle")
    page.evaluate(LOAD_LAZY_IMAGES_JS)
    return response


def wait_for_math(page):
    if page.locator(".math").count():
        page.wait_for_function(
            "document.querySelectorAll('mjx-container').length >= "
            "document.querySelectorAll('.math').length", timeout=20000)


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_page_renders_offline(page, server, name):
    response = open_page(page, server, name)
    assert response.status == 200
    wait_for_math(page)
    broken = page.evaluate("[...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
                           ".map(i => i.src)")
    assert not broken, f"{name}: images that did not load: {broken}"
    main_text = page.inner_text("main")
    assert HANGUL.search(main_text), f"{name}: no Korean text"
    assert "$$" not in main_text and "\\frac" not in main_text, f"{name}: raw LaTeX is visible"
    assert not page.console_errors, f"{name}: console errors {page.console_errors}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"{name.replace('/', '_')}.png", full_page=True)


# axe-core (the engine of browsers' own accessibility audits), from the pinned
# axe-playwright-python package: the script is injected into the page, nothing is fetched.
# Every rule tagged WCAG 2.0/2.1 level A or AA runs. label-content-name-mismatch (WCAG 2.5.3,
# level A: a control's name contains the text it shows) is one of axe's "experimental" rules,
# which axe skips unless they are named, so it is named here. No rule is turned off.
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
    "rules": {"label-content-name-mismatch": {"enabled": True}},
    "resultTypes": ["violations"],
}


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_pages_pass_axe_wcag_a_and_aa(page, server, name, mode):
    """No WCAG 2.1 A or AA violation that axe-core finds, in the default light mode and in
    the dark mode a reader can choose (the theme keeps the choice in localStorage)."""
    page.add_init_script(f"localStorage.setItem('mode', '{mode}')")
    open_page(page, server, name)
    wait_for_math(page)
    assert page.evaluate("document.documentElement.dataset.theme") == mode
    violations = Axe().run(page, options=AXE_OPTIONS).response["violations"]
    report = [f"{v['id']} ({v['impact']}, {v['helpUrl']}): {v['help']}\n"
              + "\n".join(f"    {' '.join(map(str, n['target']))}" for n in v["nodes"])
              for v in violations]
    assert not report, f"{name} ({mode} mode): axe-core finds\n" + "\n".join(report)


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_formulas_are_typeset_by_mathjax(page, server, nb_path):
    open_page(page, server, nb_path.with_suffix("").as_posix())
    wait_for_math(page)
    assert page.locator("mjx-container").count() > 0
    assert not [u for u in page.external_requests if "mathjax" in u.lower()], \
        "MathJax must come from the site itself"


SEARCHES = {  # query: pages that must be among the results
    "어텐션": ["chapters/01_attention_intuition", "chapters/02_scaled_dot_product_attention"],
    "마스크": ["chapters/02_scaled_dot_product_attention"],
    "소프트맥스": ["chapters/01_attention_intuition", "chapters/02_scaled_dot_product_attention"],
    "쿼리를": ["chapters/01_attention_intuition"],
    "패딩": ["chapters/02_scaled_dot_product_attention"],
    "softmax": ["chapters/02_scaled_dot_product_attention"],
}


@pytest.mark.parametrize("query", SEARCHES, ids=str)
def test_korean_search_finds_pages(page, server, query):
    page.goto(f"{server}/search.html?q={quote(query)}", wait_until="load")
    # Sphinx adds the results one by one, a few milliseconds apart, and writes the summary
    # ("... found N pages") only after the last one: wait for the summary, not the first result
    page.wait_for_function("(document.querySelector('#search-results p.search-summary')"
                           " ?.innerText || '').trim().length > 0", timeout=20000)
    links = page.eval_on_selector_all("#search-results ul.search li a",
                                      "as => as.map(a => a.getAttribute('href'))")
    found = {re.sub(r"\.html.*$", "", href) for href in links}
    missing = [p for p in SEARCHES[query] if p not in found]
    assert not missing, f"search '{query}' misses {missing}; found {sorted(found)}"
    assert not page.console_errors, page.console_errors
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"search_{query}.png", full_page=True)


def repository():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]
    slug = re.sub(r"^https://github.com/", "", repo["url"].rstrip("/"))
    return slug, repo.get("branch", "main")


def built_commit():
    """The commit the site was built from: the tests build this checkout."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_launch_and_download_links_point_at_this_chapter(page, server, nb_path):
    """Binder and Colab open this chapter at the commit the page was built from (a full hash,
    which cannot move), never at a branch."""
    open_page(page, server, nb_path.with_suffix("").as_posix())
    slug, branch = repository()
    commit = built_commit()
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    hrefs = page.eval_on_selector_all("a", "as => as.map(a => a.href)")
    binder = f"https://mybinder.org/v2/gh/{slug}/{commit}?urlpath=tree/{nb_path.as_posix()}"
    colab = f"https://colab.research.google.com/github/{slug}/blob/{commit}/{nb_path.as_posix()}"
    assert binder in hrefs, f"no Binder link {binder}"
    assert colab in hrefs, f"no Colab link {colab}"
    launch = [h for h in hrefs if h.startswith(("https://mybinder.org", "https://colab."))]
    assert not [h for h in launch if f"/{branch}/" in h or f"/{branch}?" in h], launch
    download = f"{server}/_sources/{nb_path.as_posix()}"
    assert download in hrefs, f"no download link {download}"
    with urllib.request.urlopen(download) as response:
        notebook = json.loads(response.read())
    assert notebook["cells"][0]["source"], "the downloaded notebook is empty"


def test_solution_opens_on_click(page, server):
    name = toc_notebooks()[0].with_suffix("").as_posix()
    open_page(page, server, name)
    solution = page.locator("div.solution").first
    body = solution.locator("section, .admonition-title ~ *").first
    assert not body.is_visible(), "solutions must start hidden"
    names = page.eval_on_selector_all("div.solution button.toggle-button",
                                      "buttons => buttons.map(b => b.getAttribute('aria-label'))")
    assert names and set(names) == {"펼치기"}, f"solution buttons named {set(names)}"
    solution.locator(".admonition-title").click()
    body.wait_for(state="visible", timeout=5000)
    solution.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / "solution_opened.png")


MIN_TEXT_PX = 9  # the smallest figure text, in CSS pixels as shown at the standard width


def notebook_figures(nb_path):
    """{file name myst-nb gives the figure on the site: (smallest text in pixels of the
    image's natural size, alt text)}. The site shows a diagram's SVG, not its PNG twin."""
    figures = {}
    for cell in nbformat.read(ROOT / nb_path, as_version=4).cells:
        alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/svg+xml" in data:  # a diagram; myst-nb hashes its lines rejoined
                svg = "\n".join(data["image/svg+xml"].splitlines()).encode()
                size = output["metadata"]["image/svg+xml"]["smallest_text_px"]
                figures[hashlib.sha256(svg).hexdigest() + ".svg"] = (size, alt)
            elif "image/png" in data:
                png = base64.b64decode(data["image/png"])
                size = output["metadata"]["image/png"]["smallest_text_px"]
                figures[hashlib.sha256(png).hexdigest() + ".png"] = (size, alt)
    return figures


# What a reader sees without JavaScript and in print: the static pictures of interactive figures
STATIC_VIEW_CSS = """figure .course-interactive { display: none !important; }
figure .course-static { display: inline !important; }"""


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_figures_are_readable_numbered_and_described(page, server, nb_path):
    figures = notebook_figures(nb_path)
    open_page(page, server, nb_path.with_suffix("").as_posix())
    page.add_style_tag(content=STATIC_VIEW_CSS)  # measure the pictures as print shows them
    shown = page.evaluate("""[...document.querySelectorAll('img')].map(i => ({
        file: i.src.split('/').pop(), natural: i.naturalWidth,
        width: i.getBoundingClientRect().width, alt: i.alt,
        caption: i.closest('figure')?.querySelector('figcaption')?.innerText ?? ''}))""")
    shown = {s["file"]: s for s in shown if s["file"] in figures}
    assert set(shown) == set(figures), f"{nb_path}: figures missing from the page"
    for file, (smallest_png_px, alt) in figures.items():
        img = shown[file]
        text_px = smallest_png_px * img["width"] / img["natural"]
        assert text_px >= MIN_TEXT_PX, \
            f"{nb_path}: '{img['caption'][:40]}' shows its smallest text {text_px:.1f} px high"
        assert img["alt"] == alt, f"{nb_path}: {file} has alt {img['alt']!r}"
        assert re.match(r"그림 \d+\.\d+", img["caption"]), \
            f"{nb_path}: figure without a numbered caption: {img['caption']!r}"


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_nothing_scrolls_sideways(page, server, nb_path):
    open_page(page, server, nb_path.with_suffix("").as_posix())
    wide = page.evaluate("""[...document.querySelectorAll('.cell_input pre, .cell_output pre')]
        .filter(p => p.scrollWidth > p.clientWidth + 1)
        .map(p => p.innerText.split('\\n').reduce((a, b) => b.length > a.length ? b : a))""")
    assert not wide, f"{nb_path}: code or output scrolls sideways; longest lines: {wide}"
    overflowing = page.evaluate("""(() => {
        const bar = document.querySelector('.bd-sidebar-secondary');
        const right = bar.getBoundingClientRect().right;
        return [...bar.querySelectorAll('a')]
            .filter(a => a.getBoundingClientRect().right > right + 1).map(a => a.innerText);
    })()""")
    assert not overflowing, f"{nb_path}: headings overflow the contents column: {overflowing}"


PHONE = {"width": 360, "height": 740}  # the narrowest common phone screen, in CSS pixels

# The elements that stick out of the viewport and whose box does not clip them: the culprits
WIDER_THAN_VIEWPORT_JS = r"""() => {
  const width = document.documentElement.clientWidth;
  const clipped = el => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== 'visible') {
        return p.getBoundingClientRect().right <= width + 1;
      }
    }
    return false;
  };
  return [...document.querySelectorAll('body *')]
    .filter(el => el.getBoundingClientRect().right > width + 1 && !clipped(el))
    .slice(-5).map(el => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} ` +
      `(${Math.round(el.getBoundingClientRect().right)} px): ` +
      `'${(el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 50)}'`);
}"""


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_no_page_is_wider_than_a_phone(browser, server, name):
    """At a 360-px viewport nothing makes the page scroll sideways: wide tables, code, outputs
    and figures scroll or shrink inside their own box. Checked with the formulas typeset and
    every interactive figure drawn (scrolled into view), as a reader on a phone sees them."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                  has_touch=True, locale="ko-KR")
    local_only(context, server)
    try:
        page = context.new_page()
        page.goto(f"{server}/{name}.html", wait_until="load")
        page.evaluate(LOAD_LAZY_IMAGES_JS)
        page.evaluate(MATH_DONE_JS)
        draw_figures(page)
        page.evaluate("window.scrollTo(0, 0)")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (
            f"{name} is {width} px wide at a {PHONE['width']}-px viewport; sticking out:\n"
            + "\n".join(page.evaluate(WIDER_THAN_VIEWPORT_JS)))
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SHOTS / f"phone_{name.replace('/', '_')}.png", full_page=True)
    finally:
        context.close()


def print_width_px():
    """The width of the printed page's content box in CSS pixels: A4 less tools/pdf.py's margins."""
    from tools.pdf import MARGIN  # noqa: PLC0415 - imports pypdf, needed by this test only

    def px(length):
        assert length.endswith("mm"), length
        return float(length[:-2]) * 96 / 25.4
    return int(px("210mm") - px(MARGIN["left"]) - px(MARGIN["right"]))


# Every display formula and table whose box is wider than the block that holds it (the content
# column, or a cell or admonition inside it), with the first 60 characters of its text.
TOO_WIDE_JS = r"""() => {
  const column = el => {
    let parent = el.parentElement;
    while (getComputedStyle(parent).display.startsWith('inline')) parent = parent.parentElement;
    return parent;
  };
  return [...document.querySelectorAll('article mjx-container[display="true"], article table')]
    .map(el => ({el, width: Math.max(el.scrollWidth, el.getBoundingClientRect().width),
                 room: column(el).clientWidth}))
    .filter(m => m.width > m.room + 1)
    .map(m => `${m.el.tagName === 'TABLE' ? 'table' : 'formula'} ` +
              `'${m.el.textContent.replace(/\s+/g, ' ').trim().slice(0, 60)}' ` +
              `is ${Math.round(m.width)} px wide in ${m.room} px`);
}"""

# Every formula typeset and in place: those that wait in placeholders (show-formulas.js) are
# put in place as before printing, and MathJax finishes any the build did not typeset.
MATH_DONE_JS = """async () => {
  window.dispatchEvent(new Event('beforeprint'));
  await document.fonts.ready;
  if (!document.querySelector('.math:not(:has(mjx-container))')) return;
  for (let i = 0; !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++) {
    if (i > 400) throw new Error('MathJax did not start');
    await new Promise(resolve => setTimeout(resolve, 50));
  }
  await MathJax.startup.promise;
  await document.fonts.ready;
}"""


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_formulas_and_tables_fit_their_column(page, server, name):
    """At 1280 px on screen, and printed on A4 the way tools/pdf.py prints (print media, its
    margins and print CSS), no display formula or table is wider than its column: on screen
    it would scroll or stick out, in the PDF it is cut off."""
    from tools.pdf import PRINT_CSS  # noqa: PLC0415 - imports pypdf, needed by this test only

    open_page(page, server, name)
    page.evaluate(MATH_DONE_JS)
    problems = [f"on screen at 1280 px: {m}" for m in page.evaluate(TOO_WIDE_JS)]
    width = print_width_px()
    page.set_viewport_size({"width": width, "height": 1100})
    page.emulate_media(media="print")
    page.add_style_tag(content=PRINT_CSS)
    page.evaluate(MATH_DONE_JS)
    page.wait_for_timeout(100)  # let the layout settle at the new width
    problems += [f"printed ({width} px): {m}" for m in page.evaluate(TOO_WIDE_JS)]
    assert not problems, f"{name}: wider than the column:\n" + "\n".join(problems)


# Every character that the page draws with Font Awesome's web font (in a ::before or ::after:
# an admonition's icon, a download link's), and the sizes of the icon fonts the page fetched
FONT_ICONS_JS = r"""() => {
  const drawn = new Set();
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg')) continue;  // SVG draws no ::before or ::after
    for (const pseudo of ['::before', '::after']) {
      const style = getComputedStyle(el, pseudo);
      if (!style.fontFamily.includes('Font Awesome') || style.display === 'none') continue;
      for (const c of style.content) {
        if (c.codePointAt(0) >= 0xe000 && c.codePointAt(0) <= 0xf8ff) drawn.add(c.codePointAt(0));
      }
    }
  }
  return {drawn: [...drawn], fetched: performance.getEntriesByType('resource')
    .filter(r => r.name.includes('/webfonts/')).map(r => [r.name, r.decodedBodySize])};
}"""


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_icons_drawn_with_the_web_font_are_in_the_small_font(page, server, name):
    """The theme draws a few icons with Font Awesome's web fonts; the pages get those fonts cut
    down to those icons (_ext/static_icons.py), a few KB instead of 156 KB, and every icon a
    page draws with them is in them."""
    from fontTools.ttLib import TTFont  # noqa: PLC0415

    webfonts = ROOT / "_build" / "html" / "_static" / "vendor" / "fontawesome" / "webfonts"
    fonts = set().union(*(TTFont(font).getBestCmap() for font in webfonts.glob("*-course.woff")))
    open_page(page, server, name)
    found = page.evaluate(FONT_ICONS_JS)
    missing = sorted(hex(c) for c in found["drawn"] if c not in fonts)
    assert not missing, f"{name}: icons not in the page's icon font: {missing}"
    assert all(size < 10_000 for _, size in found["fetched"]), found["fetched"]


# --- Formulas below the first screen (_ext/page_loading, show-formulas.js) --------------------

SHOW_FORMULAS = ROOT / "_ext" / "page_loading" / "show-formulas.js"
# Each placeholder on the page (that is laid out: not in a closed box), then its formula put in
# its place: the two boxes, and the formula's TeX.
PLACEHOLDER_AND_FORMULA_JS = r"""() => [...document.querySelectorAll('mjx-lazy')]
  .filter(lazy => lazy.getClientRects().length).map(lazy => {
    const container = lazy.parentElement;
    const box = r => ({top: r.top, bottom: r.bottom, width: r.width});
    const before = box(lazy.getBoundingClientRect());
    const math = document.createElement('template');
    math.innerHTML = lazy.firstElementChild.textContent;
    lazy.replaceWith(math.content);
    return {tex: container.dataset.tex, before,
            after: box(container.querySelector('mjx-math').getBoundingClientRect())};
  })"""
# Placeholders a reader can scroll to: laid out, and not in a closed box (an answer)
WAITING_JS = """() => [...document.querySelectorAll('mjx-lazy')]
  .filter(l => l.getClientRects().length && !l.closest('.toggle-hidden, details:not([open])'))
  .length"""


def formula_count(name):
    return (ROOT / "_build" / "html" / f"{name}.html").read_text(encoding="utf-8").count(
        "<mjx-container ")


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_a_placeholder_holds_the_place_of_its_formula(browser, server, name):
    """A formula that waits below the first screen takes the same room as the formula itself,
    so putting it in place moves no text: the same top, bottom and width to a pixel and a half
    (a tall matrix adds up the rounding of its parts; text in \\text{} has its width estimated
    when the site is built, so only its height is compared)."""
    from _ext.page_loading import LIVE_FORMULAS  # noqa: PLC0415

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    local_only(context, server)
    context.route("**/show-formulas.js", lambda route: route.abort())
    try:
        page = context.new_page()
        page.goto(f"{server}/{name}.html", wait_until="load")
        page.evaluate("document.fonts.ready")
        pairs = page.evaluate(PLACEHOLDER_AND_FORMULA_JS)
    finally:
        context.close()
    formulas = formula_count(name)
    assert len(pairs) >= formulas - LIVE_FORMULAS - 2, (
        f"{name}: {formulas} formulas, only {len(pairs)} in placeholders")
    off = [f"{p['tex'][:50]!r}: {k} {p['before'][k]:.1f} -> {p['after'][k]:.1f} px"
           for p in pairs for k in ("top", "bottom", "width")
           if abs(p["after"][k] - p["before"][k]) > 1.5
           and not (k == "width" and "\\text" in p["tex"])]
    assert not off, f"{name}: placeholders not the size of their formulas:\n" + "\n".join(off)


def phone_without_show_formulas(browser, server, name):
    """A phone's context and page at ``name`` as it loads, before show-formulas.js runs: the
    test adds the script when it wants it (add_show_formulas)."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    local_only(context, server)
    context.route("**/show-formulas.js", lambda route: route.abort())
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(f"{server}/{name}.html", wait_until="load")
    return context, page


def add_show_formulas(page):
    page.add_script_tag(content=SHOW_FORMULAS.read_text(encoding="utf-8"))


# Scrolls a screen down once the browser has drawn two frames and run the tasks queued then (the
# observer's callback is one), and counts the placeholders on the screen at once, before the
# browser draws again: those the observer did not put in place when they were near (not in a
# closed box).
SCROLL_JS = """async height => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  await new Promise(r => setTimeout(r, 20));
  window.scrollBy(0, height);
  return [...document.querySelectorAll('mjx-lazy')].filter(l => {
    const r = l.getBoundingClientRect();
    return l.getClientRects().length && r.top < innerHeight && r.bottom > 0
      && !l.closest('.toggle-hidden, details:not([open])');
  }).length;
}"""


def test_formulas_come_in_before_a_phone_scrolls_to_them(browser, server):
    """On a phone, the formulas of the first screen come with the page and the others wait
    in placeholders; scrolling down, a screen at a time, puts each in place before it is on
    the screen."""
    context, page = phone_without_show_formulas(
        browser, server, "chapters/13_linear_attention_delta_rule")
    try:
        assert page.evaluate(SCROLL_JS, 0) == 0, "formulas of the first screen wait"
        assert page.evaluate(WAITING_JS) > 100
        add_show_formulas(page)
        on_screen = []
        while not page.evaluate("scrollY + innerHeight >= document.body.scrollHeight - 1"):
            on_screen.append(page.evaluate(SCROLL_JS, PHONE["height"]))
        assert len(on_screen) > 20 and max(on_screen) == 0, "a placeholder was on the screen"
        assert not page.evaluate(WAITING_JS), "formulas in placeholders after scrolling"
        assert not page.errors
    finally:
        context.close()


def test_printing_puts_every_formula_in_place(browser, server):
    """Also those in boxes the reader has not opened (chapter 1's answers)."""
    context, page = phone_without_show_formulas(
        browser, server, "chapters/01_attention_intuition")
    try:
        waiting = page.locator("mjx-lazy").count()
        assert waiting > page.evaluate(WAITING_JS), "the test needs a closed box"
        add_show_formulas(page)
        page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        assert page.locator("mjx-lazy").count() == 0
        assert page.locator("mjx-math").count() == formula_count("chapters/01_attention_intuition")
        assert not page.errors
    finally:
        context.close()


def test_a_link_to_a_section_stays_on_its_heading_as_formulas_come_in(browser, server):
    """Opened at a section far down the page, the heading stays where the browser put it
    while the formulas around it are put in place."""
    name = "chapters/13_linear_attention_delta_rule"
    context, page = phone_without_show_formulas(browser, server, name)
    try:
        sections = page.evaluate("[...document.querySelectorAll('article section[id]')]"
                                 ".map(s => s.id)")
        target = sections[len(sections) * 2 // 3]
        page.goto(f"{server}/{name}.html#{target}", wait_until="load")
        heading = page.locator(f"#{target} > :is(h2, h3)")
        before = heading.bounding_box()["y"]
        waiting = page.locator("mjx-lazy").count()
        add_show_formulas(page)
        page.wait_for_function("n => document.querySelectorAll('mjx-lazy').length < n",
                               arg=waiting)
        assert page.evaluate(SCROLL_JS, 0) == 0
        assert abs(heading.bounding_box()["y"] - before) <= 2
    finally:
        context.close()


def test_without_javascript_every_formula_shows(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  java_script_enabled=False)
    local_only(context, server)
    try:
        page = context.new_page()
        page.goto(f"{server}/chapters/13_linear_attention_delta_rule.html", wait_until="load")
        sizes = page.evaluate("""[...document.querySelectorAll('article mjx-container')]
          .filter(c => c.getClientRects().length)
          .map(c => c.querySelector('mjx-math')?.getBoundingClientRect().height ?? 0)""")
        assert len(sizes) > 100 and min(sizes) > 5
    finally:
        context.close()


# --- Interactive figures (_ext/interactive_figures, helpers.plotting) ---------------------------

PLOTLY_MIME = "application/vnd.plotly.v1+json"


def interactive_figures(nb_path):
    """[(figure name, plotly.js specification)] of the notebook's interactive figures."""
    return [(cell.metadata["mystnb"]["figure"]["name"], output["data"][PLOTLY_MIME])
            for cell in nbformat.read(ROOT / nb_path, as_version=4).cells
            for output in cell.get("outputs", []) if PLOTLY_MIME in output.get("data", {})]


INTERACTIVE = [p for p in toc_notebooks() if interactive_figures(p)]

DRAWN_JS = """() => [...document.querySelectorAll('figure.course-interactive-figure')].map(f => {
  const div = f.querySelector('div.course-interactive');
  const img = f.querySelector('img.course-static');
  const column = f.closest('article').getBoundingClientRect().width;
  const texts = [...div.querySelectorAll('svg text')].filter(t => t.textContent.trim())
    .map(t => parseFloat(getComputedStyle(t).fontSize));
  return {id: f.id, ready: f.classList.contains('course-interactive-ready'),
          drawn: div.querySelectorAll('svg.main-svg').length > 0,
          width: div.getBoundingClientRect().width, column,
          label: div.getAttribute('role') === 'img' ? div.getAttribute('aria-label') : null,
          alt: img.alt, imgShown: getComputedStyle(img).display !== 'none',
          smallest: Math.min(...texts), modebar: div.querySelectorAll('.modebar').length,
          caption: f.querySelector('figcaption')?.innerText ?? ''};
})"""


def draw_figures(page, names=None):
    """Scroll each interactive figure (or those named) into view, as a reader does, and wait
    until plotly.js has drawn it: the page loads plotly.js only for a figure near the screen."""
    ids = names or page.eval_on_selector_all("figure.course-interactive-figure",
                                             "fs => fs.map(f => f.id)")
    for name in ids:
        page.locator(f"#{name}").scroll_into_view_if_needed()
        page.wait_for_selector(f"#{name}.course-interactive-ready", timeout=30000)
        page.locator(f"#{name}").scroll_into_view_if_needed()  # drawn, it may be taller
    return ids


def test_interactive_figures_are_the_attention_heatmaps_and_the_explorables():
    names = {name for path in INTERACTIVE for name, _ in interactive_figures(path)}
    assert {"fig-ch1-temperature", "fig-ch7-online-softmax", "fig-ch8-positional-sliders",
            "fig-ch2-causal", "fig-ch3-heads", "fig-ch6-eight-digits",
            "fig-ch9-generation-attention"} <= names, sorted(names)


@pytest.mark.parametrize("nb_path", INTERACTIVE, ids=str)
def test_interactive_figures_draw_offline_in_the_column(page, server, nb_path):
    expected = [name for name, _ in interactive_figures(nb_path)]
    open_page(page, server, nb_path.with_suffix("").as_posix())
    draw_figures(page)
    figures = page.evaluate(DRAWN_JS)
    assert [f["id"] for f in figures] == expected
    for f in figures:
        where = f"{nb_path} {f['id']}"
        assert f["ready"] and f["drawn"] and not f["imgShown"], f"{where}: not drawn: {f}"
        assert f["width"] <= min(672, f["column"]) + 1, f"{where} is {f['width']} px wide"
        assert f["label"] == f["alt"] and HANGUL.search(f["label"]), \
            f"{where}: the interactive figure must carry the picture's alt text"
        assert re.match(r"그림 \d+\.\d+", f["caption"]), f"{where}: caption {f['caption']!r}"
        assert f["smallest"] >= MIN_TEXT_PX, f"{where}: text {f['smallest']} px high"
        assert f["modebar"] == 0, f"{where}: plotly's English toolbar is shown"
    scripts = page.eval_on_selector_all("script[src*='plotly.min.js']", "s => s.map(x => x.src)")
    assert len(scripts) == 1 and scripts[0].startswith(server), scripts
    assert not page.external_requests, page.external_requests
    assert not page.console_errors, page.console_errors


def test_pages_without_interactive_figures_do_not_load_plotly(page, server):
    open_page(page, server, "intro")
    assert page.locator("script[src*='plotly']").count() == 0


def test_plotly_loads_after_the_page_and_only_when_a_figure_comes_near(page, server):
    """plotly.js (4.8 MB) is no part of loading the page: a phone shows the text first."""
    nb_path = next(p for p in INTERACTIVE if p.name.startswith("03_"))
    page.set_viewport_size({"width": 360, "height": 740})
    open_page(page, server, nb_path.with_suffix("").as_posix())
    first = page.locator("figure.course-interactive-figure").first
    assert first.bounding_box()["y"] > 2 * 740, "the test needs a figure below the first screens"
    assert page.locator("script[src*='plotly']").count() == 0, "plotly.js loaded with the page"
    assert page.locator("figure.course-interactive-ready").count() == 0
    draw_figures(page, [first.get_attribute("id")])
    assert page.locator("script[src*='plotly.min.js']").count() == 1
    assert not page.external_requests and not page.console_errors


HEATMAP_CELL_JS = """([id, trace, row, col]) => {
  const gd = document.querySelector(`#${id} div.course-interactive`);
  const full = gd._fullData[trace];
  const xa = gd._fullLayout[full.xaxis === 'x' ? 'xaxis' : 'xaxis' + full.xaxis.slice(1)];
  const ya = gd._fullLayout[full.yaxis === 'y' ? 'yaxis' : 'yaxis' + full.yaxis.slice(1)];
  const box = gd.getBoundingClientRect();
  return {x: box.left + xa._offset + xa.l2p(col), y: box.top + ya._offset + ya.l2p(row)};
}"""


def test_hovering_a_heatmap_cell_shows_query_key_and_weight(page, server):
    nb_path = next(p for p in INTERACTIVE if p.name.startswith("02_"))
    name, spec = interactive_figures(nb_path)[0]
    open_page(page, server, nb_path.with_suffix("").as_posix())
    draw_figures(page, [name])
    tokens = spec["layout"]["xaxis"]["ticktext"]
    for trace, (row, col) in ((0, (2, 1)), (1, (3, 0))):
        point = page.evaluate(HEATMAP_CELL_JS, [name, trace, row, col])
        page.mouse.move(point["x"], point["y"])
        hover = page.locator(f"#{name} .hoverlayer .hovertext")
        hover.wait_for(timeout=5000)
        text = hover.text_content()
        weight = spec["data"][trace]["z"][row][col]
        assert f"쿼리 ‘{tokens[row]}’" in text and f"키 ‘{tokens[col]}’" in text, text
        assert f"어텐션 가중치 {weight:.3f}" in text, text
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(f"#{name}").screenshot(path=SHOTS / "heatmap_hover.png")
    assert not page.external_requests and not page.console_errors


EXPLORABLES = {"fig-ch1-temperature": "01_", "fig-ch7-online-softmax": "07_",
               "fig-ch8-positional-sliders": "08_"}

SLIDER_JS = """([id, s]) => {
  const gd = document.querySelector(`#${id} div.course-interactive`);
  const rail = gd.querySelectorAll('.slider-group')[s].querySelector('.slider-rail-rect');
  rail.scrollIntoView({block: 'center', inline: 'nearest'});  // a tall figure: into the screen
  const box = rail.getBoundingClientRect();
  return {x: box.right - 2, y: box.top + box.height / 2, active: gd.layout.sliders[s].active,
          ys: gd.data.map(t => t.y)};
}"""


@pytest.mark.parametrize("name", EXPLORABLES, ids=str)
def test_a_slider_moves_its_figure(page, server, name):
    nb_path = next(p for p in INTERACTIVE if p.name.startswith(EXPLORABLES[name]))
    spec = dict(interactive_figures(nb_path))[name]
    open_page(page, server, nb_path.with_suffix("").as_posix())
    draw_figures(page, [name])
    figure = page.locator(f"#{name}")
    sliders = spec["layout"]["sliders"]
    for s, slider in enumerate(sliders):
        before = page.evaluate(SLIDER_JS, [name, s])
        page.mouse.click(before["x"], before["y"])  # the right end of the rail: the last step
        page.wait_for_timeout(300)
        after = page.evaluate(SLIDER_JS, [name, s])
        last = slider["steps"][-1]
        assert after["active"] == len(slider["steps"]) - 1, f"{name}: slider {s} did not move"
        for trace, y in zip(last["args"][2], last["args"][0]["y"]):
            assert after["ys"][trace] == y, f"{name}: trace {trace} was not updated"
            assert after["ys"][trace] != before["ys"][trace]
        current = figure.locator(".slider-group > .slider-label").nth(s)  # its current value
        assert current.text_content() == slider["currentvalue"]["prefix"] + last["label"]
        assert HANGUL.search(current.text_content())
    SHOTS.mkdir(parents=True, exist_ok=True)
    figure.screenshot(path=SHOTS / f"{name}.png")
    assert not page.external_requests and not page.console_errors


def test_without_javascript_the_static_picture_shows(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{server}/chapters/01_attention_intuition.html", wait_until="load")
        img = page.locator("#fig-ch1-temperature img.course-static")
        assert img.is_visible() and HANGUL.search(img.get_attribute("alt"))
        assert not page.locator("#fig-ch1-temperature div.course-interactive").is_visible()
    finally:
        context.close()


@pytest.mark.parametrize("with_plotly", [True, False], ids=["plotly.js", "no plotly.js"])
def test_the_notebook_html_output_draws_or_keeps_its_picture(page, server, with_plotly):
    """The text/html output Colab and Jupyter without the plotly extension show: drawn where
    the page has plotly.js, its static picture where it has none (and it is not Colab)."""
    nb_path = next(p for p in INTERACTIVE if p.name.startswith("01_"))
    output = next(o for cell in nbformat.read(ROOT / nb_path, as_version=4).cells
                  for o in cell.get("outputs", []) if PLOTLY_MIME in o.get("data", {}))
    head = f'<script src="{server}/_static/plotly/plotly.min.js"></script>' if with_plotly else ""
    page.goto(f"{server}/_static/interactive-figures.js")  # any page of the server
    page.set_content(f"<html><head>{head}</head><body>{output['data']['text/html']}</body></html>")
    fid = output["data"][PLOTLY_MIME]["layout"]["meta"]["id"]
    if with_plotly:
        page.wait_for_selector(f"#{fid} svg.main-svg", timeout=20000)
        assert page.locator(f"#{fid} img.course-static").count() == 0
    else:
        page.wait_for_timeout(500)
        assert page.locator(f"#{fid} img.course-static").is_visible()
    assert not page.external_requests and not page.console_errors

"""How a page loads on a phone: its text and formulas first, everything else when needed.

On a mid-range phone on a slow network (Lighthouse's mobile preset, tools/lighthouse.py) three
things held back the first paint or kept the phone busy afterwards:

- **Stylesheets.** The theme stack links a dozen stylesheets in ``<head>`` (one of them
  ``@import``-s another), and the browser paints nothing before it has fetched them all, a few
  at a time. After the build, each page's stylesheets become one file with the same rules in the
  same order (``_static/course-styles-NAME.css``, made again at every build, incremental or
  not; ``url()`` paths rewritten to point where they pointed before), so a page waits for one
  request instead of twelve.
- **MathJax** (1 MB of script) typeset every formula in the reader's browser, in one task of over
  a second on a phone, on every page, with formulas or not; the text moved as formulas replaced
  their TeX. Now the build typesets them: the same offline MathJax the site would load
  (sphinx-mathjax-offline) runs once in Node.js (``typeset-math.js``) over every formula of the
  site, and its CommonHTML, with the MathML that screen readers read, goes into the page in place
  of the TeX (kept in ``data-tex``; tools/pdf.py names bookmarks with it). The pages link the one
  stylesheet those formulas need (``_static/course-math.css``, MathJax's fonts from
  ``_static/mathjax``) and load no MathJax. Without Node.js the build says so, and MathJax typesets
  in the browser after the page has loaded (``load-mathjax.js`` replaces Sphinx's ``<script>``;
  pages without formulas load none); tests/test_site.py fails such a site.
- **Formulas below the first screen.** Laying out a formula's CommonHTML is the phone's
  longest work on a page (chapter 13 has some 6,000 elements in its 192 formulas, half its
  page). After the first ``LIVE_FORMULAS`` of a page, each formula's typeset ``<mjx-math>``
  is written inside a ``<noscript>`` in a placeholder of its size (``<mjx-lazy>``, the width,
  height and depth MathJax gives it): with JavaScript the browser keeps it as text, not
  elements, and ``show-formulas.js`` puts it in place when it comes within a screen of the
  viewport, and every one before printing; without JavaScript it is the formula, and the
  placeholder's box goes (``@media (scripting: none)``). The MathML that screen readers read
  is in the page from the start.
- **Pictures** below the first screen were fetched with the page. Figures in the article are
  now ``loading="lazy"`` (with their width and height when the page does not set a size), so the
  browser fetches them as they come near; tools/pdf.py loads them all before printing.

Plotly (interactive_figures) and Font Awesome (static_icons) are handled where they are added.
Nothing here is downloaded.
"""

from __future__ import annotations

import hashlib
import html
import importlib
import itertools
import json
import posixpath
import re
import shutil
import struct
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from sphinx.util import logging

logger = logging.getLogger(__name__)

LOADER_JS = "load-mathjax.js"
SHOW_JS = "show-formulas.js"
# The formulas of a page that are laid out with it: enough for its first screen, where a
# formula that arrived later would be seen arriving.
LIVE_FORMULAS = 8
TYPESET_JS = Path(__file__).with_name("typeset-math.js")
MATH_CSS = "course-math.css"
FONT_URL = "mathjax/output/chtml/fonts/woff-v2"  # relative to _static, where MATH_CSS is
# In the browser, MathJax scales formulas so that their x-height matches the text's
# (matchFontHeight): in Noto Sans CJK, the site's Korean font, Chromium measures 0.563 em, and
# over MathJax's 0.442 em that is the 127.3% MathJax applied to the formulas of the text.
# Typeset at build time there is no text to measure, so the stylesheet applies that scale.
MATH_SCALE = 'mjx-container[jax="CHTML"] {\n  font-size: 127.3%;\n}\n'
# A placeholder's box is the formula's: MathJax gives <mjx-math> 1px of padding above and below,
# except in a displayed formula, around its content (the theme's box-sizing puts padding
# inside a set height); its size is set per formula by _placeholder.
PLACEHOLDER_CSS = ('mjx-lazy {\n  display: inline-block;\n  box-sizing: content-box;\n'
                   '  padding: 1px 0;\n}\n'
                   'mjx-container[display="true"] mjx-lazy {\n  padding: 0;\n}\n'
                   '@media (scripting: none) {\n  mjx-lazy {\n    display: contents;\n  }\n}\n')
MJX_MATH = re.compile(r"<mjx-math\b.*</mjx-math>", re.S)
# A formula as Sphinx writes it: its TeX, delimited, as the element's only content
FORMULA = re.compile(r'(<(span|div) class="math notranslate nohighlight"[^>]*>)([^<]*)(</\2>)')
DELIMITERS = ((r"\(", r"\)", False), (r"\[", r"\]", True), ("$$", "$$", True))
MATHJAX_SCRIPTS = re.compile(r'[ \t]*<script>window\.MathJax = .*?</script>\n?'
                             r'|[ \t]*<script\b[^>]*load-mathjax\.js[^>]*></script>\n?')
HTML_BUILDERS = ("html", "dirhtml")
MATH = re.compile(r'class="math\b')
STYLESHEET = re.compile(r'[ \t]*<link\b[^>]*\brel="stylesheet"[^>]*>\n?')
HREF = re.compile(r'\bhref="([^"]+)"')
IMPORT = re.compile(r'@import\s+(?:url\()?\s*["\']?([^"\')\s]+)["\']?\s*\)?\s*;')
URL = re.compile(r'url\(\s*(["\']?)([^"\')]+)\1\s*\)')
IMG = re.compile(r"<img\b[^>]*>")
BUNDLE_PREFIX = "course-styles-"


# --- MathJax: only on pages with formulas, after the page has loaded -------------------------

def load_mathjax_later(app, pagename, templatename, context, doctree) -> None:
    """Replace Sphinx's MathJax ``<script>`` with the loader, or drop it on pages without math."""
    scripts = context.get("script_files")
    path = app.config.mathjax_path
    if not scripts or not path:
        return
    names = (path, f"_static/{path}")  # as set, and as Sphinx adds a file of _static
    kept = [s for s in scripts if str(getattr(s, "filename", s) or "") not in names]
    if len(kept) == len(scripts):
        return
    config = "window.MathJax = "
    has_math = bool(MATH.search(context.get("body", "")))
    if not has_math:  # its configuration goes too
        kept = [s for s in kept if not str((getattr(s, "attributes", {}) or {}).get("body", ""))
                .startswith(config)]
    context["script_files"] = kept
    if has_math:
        from sphinx.builders.html._assets import _JavaScript  # noqa: PLC0415
        kept.append(_JavaScript(f"_static/{LOADER_JS}", priority=800, defer="defer",
                                **{"data-mathjax": path}))


def copy_scripts(app, exception) -> None:
    if exception is None and app.builder.name in HTML_BUILDERS:
        for name in (LOADER_JS, SHOW_JS):
            shutil.copyfile(Path(__file__).with_name(name), Path(app.outdir) / "_static" / name)


# --- Formulas: typeset at build time ----------------------------------------------------------

def _tex(content: str, display: bool) -> tuple[str, bool]:
    """The TeX of a formula element's content, and whether it is displayed."""
    tex = html.unescape(content).strip()
    for start, end, shown in DELIMITERS:
        if tex.startswith(start) and tex.endswith(end):
            return tex[len(start):len(tex) - len(end)].strip(), shown
    return tex, display  # an amsmath environment, as it is


def _mathjax_folder() -> Path:
    """The offline MathJax that sphinx-mathjax-offline copies into the site."""
    package = importlib.import_module("sphinx-mathjax-offline")
    return Path(package.__file__).parent / "static" / "mathjax"


def typeset(items: list[tuple[str, bool]]) -> tuple[list[str], list[list[float]], str]:
    """MathJax's CommonHTML of each (TeX, displayed), its size ([width, height, depth] in em),
    and the stylesheet they need."""
    request = {"mathjax": _mathjax_folder().as_posix(), "fontURL": FONT_URL,
               "items": [list(item) for item in items]}
    done = subprocess.run([shutil.which("node"), str(TYPESET_JS)], input=json.dumps(request),
                          capture_output=True, text=True, encoding="utf-8", check=False)
    if done.returncode != 0:
        raise RuntimeError(f"typesetting the formulas failed:\n{done.stderr}")
    answer = json.loads(done.stdout)
    return answer["html"], answer["boxes"], answer["css"]


def _placeholder(container: str, box: list[float], display: bool) -> str:
    """``container`` (a typeset formula) with its ``<mjx-math>`` in a ``<noscript>`` inside
    a ``<mjx-lazy>`` of the same box: ``box`` is [width, height, depth] in em."""
    width, height, depth = box
    # An empty inline-block sits on its bottom edge: lowered by the depth (and the 1px of
    # padding an inline formula has), it sits where the formula will.
    lower = f"{-depth:g}em" if display else f"calc({-depth:g}em - 1px)"
    style = f"width: {width:g}em; height: {height + depth:g}em; vertical-align: {lower}"
    return MJX_MATH.sub(lambda m: f'<mjx-lazy aria-hidden="true" style="{style}">'
                        f"<noscript>{m.group(0)}</noscript></mjx-lazy>", container, count=1)


CSS_RULE = re.compile(r"[^{}]+\{[^{}]*\}\s*")  # MathJax's rules are flat: no @media in them


def merged_math_css(css: str, earlier: str) -> str:
    """The stylesheet for ``css``, MathJax's rules for this build's formulas, that keeps
    the rules of ``earlier`` (the file an earlier build wrote) which ``css`` lacks.

    A build typesets only the pages it writes; the pages it leaves as they are still need
    the rules for their characters (``mjx-c.mjx-c1D465::before``: the glyph of x), so the
    file only grows until a clean build. The course's own rules (``MATH_SCALE``,
    ``PLACEHOLDER_CSS``) come once, last.
    """
    ours = MATH_SCALE + PLACEHOLDER_CSS
    earlier = earlier.replace(ours, "")
    have = {rule.strip() for rule in CSS_RULE.findall(css)}
    kept = [rule for rule in CSS_RULE.findall(earlier) if rule.strip() not in have]
    return css.rstrip("\n") + "\n" + "".join(kept) + ours


def typeset_pages(pages: dict[Path, str], static: Path) -> None:
    """Every formula of ``pages`` ({path: HTML}, changed in place) typeset in the HTML, the
    stylesheet linked, and no MathJax on pages whose formulas are all typeset."""
    items = sorted({_tex(m.group(3), m.group(2) == "div") for page in pages.values()
                    for m in FORMULA.finditer(page)})
    if not items:
        return
    if shutil.which("node") is None:
        logger.info("page_loading: no Node.js, so MathJax typesets the formulas in the browser")
        return
    typeset_html, boxes, css = typeset(items)
    stylesheet = static / MATH_CSS
    earlier = stylesheet.read_text(encoding="utf-8") if stylesheet.exists() else ""
    stylesheet.write_text(merged_math_css(css, earlier), encoding="utf-8")
    done = dict(zip(items, zip(typeset_html, boxes, strict=True), strict=True))

    def typeset_page(page: str) -> tuple[str, int]:
        """The page with its formulas typeset, those after the first few as placeholders;
        and how many it has."""
        formulas = itertools.count(1)

        def replaced(match):
            tex = _tex(match.group(3), match.group(2) == "div")
            container, box = done[tex]
            container = container.replace(
                "<mjx-container ", f'<mjx-container data-tex="{html.escape(tex[0])}" ', 1)
            if next(formulas) > LIVE_FORMULAS:
                container = _placeholder(container, box, tex[1])
            return match.group(1) + container + match.group(4)

        return FORMULA.subn(replaced, page)

    for path, page in pages.items():
        page, count = typeset_page(page)
        if not count:
            continue
        rel = posixpath.relpath(static.as_posix(), path.parent.as_posix())
        head = f'  <link rel="stylesheet" href="{rel}/{MATH_CSS}" />\n'
        if count > LIVE_FORMULAS:
            head += f'  <script defer="defer" src="{rel}/{SHOW_JS}"></script>\n'
        page = page.replace("</head>", head + "</head>", 1)
        if not re.search(r'class="math\b[^"]*"[^>]*>(?!<mjx-container)', page):
            page = MATHJAX_SCRIPTS.sub("", page)
        pages[path] = page


# --- Stylesheets: one file per set of stylesheets ---------------------------------------------

def _local(url: str) -> bool:
    return not re.match(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", url, re.I)


def _inline_css(file: Path, bundle_dir: Path, seen: set[Path]) -> str:
    """``file``'s rules with its relative ``@import``-s inlined and its ``url()``-s made
    relative to ``bundle_dir``."""
    seen.add(file)
    text = file.read_text(encoding="utf-8")

    def moved(match):
        quote, url = match.groups()
        if not _local(url):
            return match.group(0)
        parts = urlsplit(url)
        target = posixpath.normpath((file.parent / parts.path).as_posix())
        new = posixpath.relpath(target, bundle_dir.as_posix())
        new += (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}"
                                                              if parts.fragment else "")
        return f"url({quote}{new}{quote})"

    out, last = [f"/* {file.name} */\n"], 0
    for match in IMPORT.finditer(text):
        target = (file.parent / urlsplit(match.group(1)).path).resolve()
        if _local(match.group(1)) and target not in seen and target.is_file():
            out += [URL.sub(moved, text[last:match.start()]),
                    _inline_css(target, bundle_dir, seen)]
            last = match.end()
    return "".join([*out, URL.sub(moved, text[last:]), "\n"])


def _bundle(files: list[Path], outdir: Path, bundles: dict) -> tuple[str, str]:
    """The name and content version of the bundle of ``files``, written once per build.

    The name comes from the files' paths, so it stays the same from build to build and a
    page that the next (incremental) build does not rewrite still finds its bundle; the
    version (``?v=``) comes from the content, so a browser fetches a changed bundle anew.
    """
    paths = "\n".join(f.relative_to(outdir).as_posix() for f in files)
    name = f"{BUNDLE_PREFIX}{hashlib.sha256(paths.encode()).hexdigest()[:12]}.css"
    if name not in bundles:
        static = outdir / "_static"
        css = "".join(_inline_css(f, static, set()) for f in files)
        (static / name).write_text(css, encoding="utf-8")
        bundles[name] = (files, hashlib.sha256(css.encode()).hexdigest()[:12])
    return name, bundles[name][1]


def bundle_stylesheets(page: str, page_path: Path, outdir: Path, bundles: dict) -> str:
    """The page with its ``<head>`` stylesheets replaced by one bundle (written once per set).

    ``bundles`` maps each bundle's name to (its stylesheets, its version); see
    :func:`_bundle`.
    """
    head_end = page.find("</head>")
    links = [m for m in STYLESHEET.finditer(page, 0, head_end)
             if "media=" not in m.group(0)]
    files = []
    for link in links:
        href = HREF.search(link.group(0)).group(1)
        file = (page_path.parent / urlsplit(href).path).resolve()
        if not _local(href) or not file.is_file():
            return page
        files.append(file)
    if len(files) < 2:
        return page
    name, version = _bundle(files, outdir.resolve(), bundles)
    href = posixpath.relpath((outdir / "_static" / name).as_posix(),
                             page_path.parent.as_posix())
    first, rest = links[0], links[1:]
    out = page[:first.start()] + f'  <link rel="stylesheet" href="{href}?v={version}" />\n'
    last = first.end()
    for link in rest:
        out += page[last:link.start()]
        last = link.end()
    return out + page[last:]


def rebundle(outdir: Path, pages: dict[Path, str]) -> dict[Path, str]:
    """Every page with its stylesheets bundled, after a full or an incremental build.

    Pages that Sphinx wrote in this build have the theme's links; pages it left from an
    earlier build already link a bundle, made from stylesheets that may have changed since.
    The bundles listed in ``_static/course-styles.json`` are made again from their
    stylesheets, every page's link gets the current version, and bundles that no page links
    are removed.
    """
    outdir = outdir.resolve()
    static = outdir / "_static"
    manifest = static / f"{BUNDLE_PREFIX}manifest.json"
    bundles: dict = {}
    listed = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
    for paths in listed.values():
        files = [outdir / path for path in paths]
        if all(f.is_file() for f in files):
            _bundle(files, outdir, bundles)
    fresh = {path: bundle_stylesheets(page, path, outdir, bundles)
             for path, page in pages.items()}

    def current(match):
        known = bundles.get(match.group(1))
        return f"{match.group(1)}?v={known[1]}" if known else match.group(0)

    linked = re.compile(rf"({BUNDLE_PREFIX}[0-9a-f]{{12}}\.css)(?:\?v=[0-9a-f]+)?")
    fresh = {path: linked.sub(current, page) for path, page in fresh.items()}
    manifest.write_text(json.dumps(
        {name: [f.relative_to(outdir).as_posix() for f in files]
         for name, (files, _) in sorted(bundles.items())}, indent=1), encoding="utf-8")
    linked_names = {m.group(1) for page in fresh.values() for m in linked.finditer(page)}
    for old in static.glob(f"{BUNDLE_PREFIX}*.css"):
        if old.name not in bundles and old.name not in linked_names:
            old.unlink()
    return fresh


# --- Pictures: their size known, fetched when they come near ----------------------------------

def _png_size(file: Path) -> tuple[int, int] | None:
    with file.open("rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def lazy_images(page: str, page_path: Path) -> str:
    """The article's ``<img>``-s with ``loading="lazy"`` and, for PNGs without a set size,
    their width and height."""
    start, end = page.find("<article"), page.find("</article>")
    if start < 0 or end < 0:
        return page

    def fixed(match):
        tag = match.group(0)
        if "loading=" in tag:
            return tag
        extra = ' loading="lazy"'
        src = re.search(r'\bsrc="([^"]+)"', tag)
        file = (page_path.parent / urlsplit(src.group(1)).path) if src else None
        if (file is not None and _local(src.group(1)) and file.suffix == ".png"
                and file.is_file() and not re.search(r'\b(width|height|style)=', tag)):
            size = _png_size(file)
            if size:
                extra += f' width="{size[0]}" height="{size[1]}"'
        return tag[:-1].rstrip("/").rstrip() + extra + (" />" if tag.endswith("/>") else ">")

    return page[:start] + IMG.sub(fixed, page[start:end]) + page[end:]


def rewrite_pages(app, exception) -> None:
    if exception is not None or app.builder.name not in HTML_BUILDERS:
        return
    outdir = Path(app.outdir).resolve()
    static = outdir / "_static"
    originals = {path: path.read_text(encoding="utf-8") for path in outdir.rglob("*.html")}
    pages = dict(originals)
    typeset_pages(pages, static)
    for path, page in rebundle(outdir, pages).items():
        fixed = lazy_images(page, path)
        if fixed != originals[path]:
            path.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("html-page-context", load_mathjax_later, priority=950)  # after site_fixes
    app.connect("build-finished", copy_scripts)
    # Last: after the theme has written its final pygments.css and static_icons its icons
    app.connect("build-finished", rewrite_pages, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

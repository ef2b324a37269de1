"""The theme's icons as inline SVG in the HTML, instead of Font Awesome's script on every page.

pydata-sphinx-theme 0.17 draws its icons (search, menu, download, launch, colour mode, ...) with
Font Awesome's JavaScript: a 1.5 MB script that every page downloads, parses and runs, and that
turns each ``<i class="fa-solid fa-NAME">`` into an ``<svg>`` only after it has run. A phone
spends seconds on it (Lighthouse, tools/lighthouse.py). After the build this extension does
that replacement once, in the written pages: each icon becomes the same ``<svg>`` Font Awesome
would make (its path from the theme's own copy of the script, so icons match the pinned theme),
and the pages no longer load the script. _static/course.css carries the few rules of Font
Awesome's own stylesheet that those icons use.

A few icons are still drawn with Font Awesome's web fonts by the theme's stylesheet (the icon
of an admonition's title, of a link to GitHub, ...). The solid font alone is 156 KB, fetched
as the page is first drawn, on a slow phone network a second of it. The fonts the pages use
are those fonts cut down to the characters the site's stylesheets draw (fontTools, from the
theme's own TTFs, as WOFF): a few KB.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from fontTools import subset

FONTAWESOME_JS = Path("_static") / "scripts" / "fontawesome.js"
HTML_BUILDERS = ("html", "dirhtml")
# An icon element of the theme: an empty <i> or <span> with Font Awesome's classes (the
# <span>-s are drawn by Font Awesome's web font, which a page then no longer needs at first)
ICON = re.compile(r'<(?P<tag>i|span) (?P<attrs>[^>]*\bclass="(?P<classes>[^"]*\bfa-[^"]*)"'
                  r'[^>]*)></(?P=tag)>')
SCRIPT = re.compile(r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\s*')
# The icon packs the script defines, in the order it defines them: d("fab",p) ends each pack
PACK_END = re.compile(r'\b\w\("(fab|far|fas)",\w\)')
# An icon of a pack: name:[width,height,[aliases],"unicode","path"] (name quoted if it has -)
ENTRY = re.compile(r'[,{]"?([a-z0-9-]+)"?:\[(\d+),(\d+),\[[^\]]*\],"[0-9a-f]+","([^"]+)"\]')
PREFIX = {"fa-solid": "fas", "fas": "fas", "fa-regular": "far", "far": "far",
          "fa-brands": "fab", "fab": "fab"}


WEBFONTS = Path("_static") / "vendor" / "fontawesome" / "webfonts"
THEME_CSS = Path("_static") / "styles" / "pydata-sphinx-theme.css"
FONTS = ("fa-solid-900", "fa-regular-400", "fa-brands-400")
SUBSET = "{}-course.woff"
# A font's @font-face source in the theme's stylesheet
FONT_SRC = re.compile(r'src:url\((?P<dir>[^)]*/)(?P<font>fa-[a-z]+-\d+)\.woff2\) format\("woff2"\),'
                      r'url\([^)]*/(?P=font)\.ttf\) format\("truetype"\)')
RULE = re.compile(r"([^{}]*)\{([^{}]*)\}")
# A character of Font Awesome's (Unicode's private use area), as itself or as a CSS escape
PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\([ef][0-9a-fA-F]{3})(?![0-9a-fA-F])")
# Font Awesome's own rule for a class, such as .fa-bell:before (no page uses those classes)
ICON_CLASS = re.compile(r"\.fa-[a-z0-9-]+::?(?:before|after)")


class UnknownIcon(LookupError):
    pass


def icon_table(script: str) -> dict[tuple[str, str], tuple[int, int, str]]:
    """{(pack, name): (width, height, SVG path)} of every icon in Font Awesome's script."""
    table, start = {}, 0
    for end in PACK_END.finditer(script):
        for entry in ENTRY.finditer(script, start, end.start()):
            name, width, height, path = entry.groups()
            table.setdefault((end.group(1), name), (int(width), int(height), path))
        start = end.end()
    return table


def svg_for(attrs: str, classes: str, table: dict) -> str:
    """The ``<svg>`` of one ``<i>`` icon: its attributes kept, as Font Awesome's script does."""
    names = classes.split()
    pack = next((PREFIX[n] for n in names if n in PREFIX), "fas")
    icon = next((n[3:] for n in names if n.startswith("fa-") and n not in PREFIX
                 and (pack, n[3:]) in table), None)
    if icon is None:
        raise UnknownIcon(f"no Font Awesome icon for class {classes!r}")
    width, height, path = table[(pack, icon)]
    others = re.sub(r'\s*\bclass="[^"]*"', "", attrs).strip()
    kept = f" {others}" if others else ""
    return (f'<svg class="svg-inline--fa {html.escape(classes)}"{kept} aria-hidden="true" '
            f'focusable="false" role="img" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {width} {height}"><path fill="currentColor" d="{path}"></path></svg>')


def inline_icons(page: str, table: dict) -> str:
    """The page with its icons inline and without the Font Awesome script."""
    page = ICON.sub(lambda m: svg_for(m.group("attrs"), m.group("classes"), table), page)
    return SCRIPT.sub("", page)


def drawn_characters(css: str) -> set[int]:
    """The Font Awesome characters (code points) that the rules of ``css`` draw, besides Font
    Awesome's own rules for its classes."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    found = set()
    for rule in RULE.finditer(css):
        selectors = [sel.strip() for sel in rule.group(1).split(",")]
        if all(ICON_CLASS.fullmatch(sel) for sel in selectors):
            continue
        found |= {int(m.group(1), 16) if m.group(1) else ord(m.group(0))
                  for m in PRIVATE_USE.finditer(rule.group(2))}
    return found


def subset_fonts(outdir: Path) -> None:
    """Cut the icon fonts down to the characters the site's stylesheets draw, and point the
    theme's @font-face-s at them (again at every build; the theme's files are copied anew)."""
    static = outdir / "_static"
    characters = set()
    for sheet in static.rglob("*.css"):
        if not sheet.name.startswith("course-styles-"):  # the bundles repeat the others
            characters |= drawn_characters(sheet.read_text(encoding="utf-8"))
    options = subset.Options()
    options.flavor = "woff"  # zlib; WOFF2 would need brotli
    for name in FONTS:  # each keeps those of the characters it has
        font = subset.load_font(outdir / WEBFONTS / f"{name}.ttf", options)
        cutter = subset.Subsetter(options)
        cutter.populate(unicodes=characters)
        cutter.subset(font)
        subset.save_font(font, outdir / WEBFONTS / SUBSET.format(name), options)
    theme_css = outdir / THEME_CSS
    text = theme_css.read_text(encoding="utf-8")
    fixed = FONT_SRC.sub(lambda m: f'src:url({m.group("dir")}{SUBSET.format(m.group("font"))})'
                         ' format("woff")', text)
    if fixed != text:
        theme_css.write_text(fixed, encoding="utf-8")


def rewrite_pages(app, exception) -> None:
    if exception is not None or app.builder.name not in HTML_BUILDERS:
        return
    outdir = Path(app.outdir)
    subset_fonts(outdir)
    table = icon_table((outdir / FONTAWESOME_JS).read_text(encoding="utf-8"))
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = inline_icons(text, table)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", rewrite_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

"""The theme's icons as inline SVG in the HTML, instead of Font Awesome's script on every page.

pydata-sphinx-theme 0.17 draws its icons (search, menu, download, launch, colour mode, ...) with
Font Awesome's JavaScript: a 1.5 MB script that every page downloads, parses and runs, and that
turns each ``<i class="fa-solid fa-NAME">`` into an ``<svg>`` only after it has run. A phone
spends seconds on it (Lighthouse, tools/lighthouse.py). After the build this extension does
that replacement once, in the written pages: each icon becomes the same ``<svg>`` Font Awesome
would make (its path from the theme's own copy of the script, so icons match the pinned theme),
and the pages no longer load the script. _static/course.css carries the few rules of Font
Awesome's own stylesheet that those icons use.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

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


def rewrite_pages(app, exception) -> None:
    if exception is not None or app.builder.name not in HTML_BUILDERS:
        return
    outdir = Path(app.outdir)
    table = icon_table((outdir / FONTAWESOME_JS).read_text(encoding="utf-8"))
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = inline_icons(text, table)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", rewrite_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

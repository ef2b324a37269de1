"""Markup fixes so that every page passes axe-core's WCAG 2.1 A and AA rules.

Two pieces of the page body come from extensions whose HTML fails them; this extension rewrites
them in each page's body before the theme renders it (``html-page-context``):

- myst-nb's ``hide-input`` cells fold their code in a ``<summary>`` labelled in English,
  "Toggle hidden content", while it shows 코드 보기 or 코드 숨기기. A name that does not contain
  the visible text fails WCAG 2.5.3 (label in name), and speech input ("코드 보기 누르기") does not
  find the control. Without the label the summary's name is the text it shows.
- The bibliography (docutils' citation list, filled by sphinxcontrib-bibtex) marks each entry
  ``role="doc-biblioentry"``, which DPUB-ARIA 1.1 deprecates; the entries of a
  ``role="list"`` must be ``listitem`` (WAI-ARIA 1.2), which is what the role becomes.

The theme's buttons are fixed where they are made, in ``_templates/`` (the search field and the
colour-mode switch), and the contrast of links in ``_static/course.css``.

The themes' own labels are translated by their Korean message catalogs, but pydata-sphinx-theme
has none and sphinx-book-theme's lacks the launch button ("Launch interactive content").
``locale/ko/LC_MESSAGES/course.po`` beside this file holds those strings; :func:`add_catalog`
compiles it into the build's doctree folder and adds it behind the themes' catalogs, so that
it only fills in what they leave out. sphinx-togglebutton writes its buttons' English name in
JavaScript; ``_static/course.js`` renames them once the page has loaded. Two navigation
landmarks are named in English in sphinx-book-theme's templates ("Main", "Page");
:func:`korean_landmarks` renames them in the written pages.
"""

import re
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

PO = Path(__file__).parent / "locale" / "ko" / "LC_MESSAGES" / "course.po"
CATALOGS = ("sphinx", "booktheme")  # pydata-sphinx-theme's and sphinx-book-theme's domains

SUMMARY = re.compile(r'<summary aria-label="Toggle hidden content">')
BIBLIOENTRY = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')


def accessible_body(body: str) -> str:
    """The page body with the two fixes above."""
    body = SUMMARY.sub("<summary>", body)
    return BIBLIOENTRY.sub(r'\1 role="listitem"', body)


def fix_page(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = accessible_body(context["body"])


LANDMARKS = {'<nav class="bd-links bd-docs-nav" aria-label="Main">':
             '<nav class="bd-links bd-docs-nav" aria-label="사이트 목차">',
             '<nav aria-label="Page">': '<nav aria-label="이 페이지의 목차">'}


def korean_landmarks(html: str) -> str:
    """The page with the theme's two English landmark names in Korean."""
    for english, korean in LANDMARKS.items():
        html = html.replace(english, korean)
    return html


def rename_landmarks(app, exception) -> None:
    """Rewrite every written HTML page with :func:`korean_landmarks` (``build-finished``)."""
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = korean_landmarks(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def add_catalog(app) -> None:
    """Compile course.po into ``<doctreedir>/locale`` and add it to the themes' catalogs."""
    folder = Path(app.doctreedir) / "locale" / "ko" / "LC_MESSAGES"
    folder.mkdir(parents=True, exist_ok=True)
    with PO.open("rb") as source:
        catalog = read_po(source, locale="ko")
    for name in CATALOGS:
        with (folder / f"{name}.mo").open("wb") as target:
            write_mo(target, catalog)
        app.add_message_catalog(name, str(folder.parent.parent))


def setup(app):
    app.connect("html-page-context", fix_page)
    app.connect("build-finished", rename_landmarks)
    if app.config.language == "ko":
        add_catalog(app)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

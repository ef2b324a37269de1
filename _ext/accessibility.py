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
"""

import re

SUMMARY = re.compile(r'<summary aria-label="Toggle hidden content">')
BIBLIOENTRY = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')


def accessible_body(body: str) -> str:
    """The page body with the two fixes above."""
    body = SUMMARY.sub("<summary>", body)
    return BIBLIOENTRY.sub(r'\1 role="listitem"', body)


def fix_page(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = accessible_body(context["body"])


def setup(app):
    app.connect("html-page-context", fix_page)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

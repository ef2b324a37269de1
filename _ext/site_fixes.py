"""Small fixes to the pages Jupyter Book 1.0's theme stack produces.

sphinx-thebe 0.3 adds its configuration script once per ``env-before-read-docs`` event; in
this book that event fires twice, so every page declared ``const THEBE_JS_URL`` twice and the
browser logged a SyntaxError. Here each page keeps one copy of every identical script.

Every script file a page loads in its ``<head>`` is deferred (``defer``): Sphinx and the theme's
extensions add theirs as plain ``<script src>``, each of which stops the browser from showing
anything until it has been fetched and run; on a phone on a slow network that held the first
paint back by seconds (tools/lighthouse.py). Deferred scripts still run in the same order, before
``DOMContentLoaded``, and the inline scripts among them only set variables. The search page keeps
its scripts as they are: its own template loads the search code, which needs them at once.

Every page also gets a ``<meta name="description">`` (search engines show it; Lighthouse's SEO
audit asks for it): the page's first paragraph, shortened to DESCRIPTION_CHARS characters.

In a table cell, code may break after an underscore, or after a dot before a letter
(``ch5_accuracy_<wbr>lstm``, ``keras.<wbr>layers``), and nowhere else: a table then shares out
its columns by the parts of its longest names and no name is cut mid-word (_static/course.css).
"""

import html
import re

DESCRIPTION_CHARS = 150


def _script_key(script) -> tuple:
    """Filename and attributes; an inline script's filename is None or '' by who added it."""
    attributes = getattr(script, "attributes", {}) or {}
    filename = str(getattr(script, "filename", script) or "")
    return filename, tuple(sorted((k, str(v)) for k, v in attributes.items()))


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    """Remove repeated, identical entries from the page's ``script_files``."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def defer_scripts(app, pagename, templatename, context, doctree) -> None:
    """Load every script file of the page with ``defer`` (except on the search page)."""
    from sphinx.builders.html._assets import _JavaScript  # noqa: PLC0415

    scripts = context.get("script_files")
    if not scripts or pagename == "search":
        return
    deferred = []
    for script in scripts:
        attributes = dict(getattr(script, "attributes", {}) or {})
        filename = getattr(script, "filename", None)
        if filename and not {"async", "defer"} & set(attributes) and "body" not in attributes:
            attributes["defer"] = "defer"
            script = _JavaScript(filename, priority=script.priority, **attributes)
        deferred.append(script)
    context["script_files"] = deferred


def description(body: str, fallback: str) -> str:
    """The text of the first paragraph of ``body`` (HTML), at most DESCRIPTION_CHARS long."""
    for paragraph in re.findall(r"<p\b[^>]*>(.*?)</p>", body, re.S):
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", paragraph)).split())
        if len(text) >= 20:
            break
    else:
        text = fallback
    if len(text) > DESCRIPTION_CHARS:
        text = text[:DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text


def add_description(app, pagename, templatename, context, doctree) -> None:
    text = description(context.get("body", ""), context.get("docstitle") or app.config.project)
    context["metatags"] = (context.get("metatags", "")
                           + f'\n<meta name="description" content="{html.escape(text)}" />')


CELL = re.compile(r"<td\b.*?</td>", re.S)
CODE_TEXT = re.compile(r'(<span class="pre">)([^<]*)(</span>)')
NAME_BREAK = re.compile(r"_|\.(?=[A-Za-z])")


def break_names_in_cells(body: str) -> str:
    """``body`` with a ``<wbr>`` after each underscore, and each dot before a letter, of the
    code in its table cells."""
    def cell(match):
        return CODE_TEXT.sub(lambda m: m.group(1) + NAME_BREAK.sub(r"\g<0><wbr>", m.group(2))
                             + m.group(3), match.group(0))
    return CELL.sub(cell, body)


def table_names_break_at_parts(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = break_names_in_cells(context["body"])


def setup(app):
    app.connect("html-page-context", table_names_break_at_parts)
    app.connect("html-page-context", drop_duplicate_scripts)
    app.connect("html-page-context", add_description)
    app.connect("html-page-context", defer_scripts, priority=900)  # after every script is added
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

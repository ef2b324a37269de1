"""Small fixes to the pages Jupyter Book 1.0's theme stack produces.

sphinx-thebe 0.3 adds its configuration script once per ``env-before-read-docs`` event; in
this book that event fires twice, so every page declared ``const THEBE_JS_URL`` twice and the
browser logged a SyntaxError. Here each page keeps one copy of every identical script.
"""


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


def setup(app):
    app.connect("html-page-context", drop_duplicate_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

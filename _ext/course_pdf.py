"""The whole course as one PDF, as an item of every page's download menu.

sphinx-book-theme's download menu offers the page's own files (.ipynb or .md, and .pdf, which
prints the page). This adds the course PDF that tools/pdf.py writes after the HTML build; its
path, relative to the site's root, is the ``course_pdf`` setting in _config.yml.
"""

LABEL = "강의 전체 PDF"
TOOLTIP = "강의 전체를 PDF 한 파일로 내려받기"


def add_course_pdf(app, pagename, templatename, context, doctree) -> None:
    """Append the course PDF to the theme's download menu (built just before, at priority 501)."""
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            button["buttons"].append({
                "type": "link",
                "url": context["pathto"](app.config.course_pdf, 1),
                "text": LABEL,
                "tooltip": TOOLTIP,
                "icon": "fas fa-book",
                "label": "download-course-pdf-button",
            })


def setup(app):
    app.add_config_value("course_pdf", "attention-course.pdf", "html")
    app.connect("html-page-context", add_course_pdf, priority=502)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

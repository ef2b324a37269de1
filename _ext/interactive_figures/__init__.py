"""Interactive figures on the site: plotly.js draws what helpers.plotting specifies.

A notebook output of a figure with an interactive twin holds three versions of it
(``helpers.plotting.describe_figure_outputs``): the plotly.js specification
(``application/vnd.plotly.v1+json``), an HTML version for Colab, and the static PNG. On the
site the figure stays myst-nb's PNG figure, with its number, caption and alt text; next to the
picture this extension puts an empty ``<div>`` and the specification as JSON. The page's
script (``interactive-figures.js``) draws the figure into the ``<div>`` with plotly.js and hides
the picture. Without JavaScript, and in print (the PDF), the picture shows instead.

plotly.js comes from the pinned ``plotly`` package (requirements.txt); it is copied into
``_static/plotly/``. Only pages that have an interactive figure get the drawing script, and
that script loads plotly.js (4.8 MB) only after the page has loaded and a figure comes near the
screen, so that a phone shows the page first (tools/lighthouse.py measures it). Nothing is
requested from another site.
"""

from __future__ import annotations

import html
import json
import shutil
from importlib import resources
from pathlib import Path

import myst_nb.core.render as nb_render
from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

PLOTLY_MIME = "application/vnd.plotly.v1+json"
SPEC_FORMAT = "plotly-json"  # a raw node no writer writes; the transform below consumes it
PLOTLY_JS = "plotly/plotly.min.js"
DRAW_JS = "interactive-figures.js"
MARKER = 'class="course-interactive"'
HTML_BUILDERS = ("html", "dirhtml", "singlehtml")


class PlotlyMimeRenderer:
    """myst-nb renderer of the plotly mime type: keeps the specification for the transform."""

    mime_priority_overrides = ()

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != PLOTLY_MIME or inline:
            return None
        content = data.content if isinstance(data.content, dict) else json.loads(data.content)
        return [nodes.raw("", json.dumps(content, ensure_ascii=False, sort_keys=True),
                          format=SPEC_FORMAT)]


def _with_plotly_renderer(load=nb_render.load_mime_renders):
    def load_mime_renders():
        return [*load(), PlotlyMimeRenderer]
    load_mime_renders.course_interactive = True
    return load_mime_renders


def _is_bundle(node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "mime_bundle"


def _spec_html(spec: dict, alt: str) -> str:
    meta = spec["layout"]["meta"]
    body = json.dumps(spec, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    body = body.replace("</", "<\\/")  # JSON that cannot end the script element
    return (f'<div {MARKER} id="{meta["id"]}" role="img" aria-label="{html.escape(alt)}" '
            f'style="max-width:{int(meta["width"])}px"></div>'
            f'<script type="application/json" class="course-interactive-spec">'
            f'{body}</script>')


class InteractiveFigures(SphinxPostTransform):
    """Before myst-nb picks one output per bundle: the PNG figure plus the interactive div."""

    default_priority = 3  # myst_nb's SelectMimeType runs at 4

    def run(self, **kwargs) -> None:
        html_builder = self.app.builder.name in HTML_BUILDERS
        for bundle in list(self.document.findall(_is_bundle)):
            outputs = {child.get("mime_type"): child for child in bundle.children}
            spec_output = outputs.get(PLOTLY_MIME)
            if spec_output is None:
                continue
            bundle.remove(spec_output)
            if "text/html" in outputs:  # Colab's version; the site has its own
                bundle.remove(outputs["text/html"])
            picture = outputs.get("image/png")
            if not html_builder or picture is None:
                continue
            image = next(iter(picture.findall(nodes.image)))
            image["classes"].append("course-static")
            spec = json.loads(spec_output.astext())
            picture.append(nodes.raw("", _spec_html(spec, image.get("alt", "")),
                                     format="html"))
            figure = bundle.parent
            if isinstance(figure, nodes.figure):
                figure["classes"].append("course-interactive-figure")


def add_scripts(app, pagename, templatename, context, doctree) -> None:
    """The drawing script (which loads plotly.js when needed) on pages with an interactive
    figure only."""
    if MARKER in context.get("body", ""):
        app.add_js_file(DRAW_JS, loading_method="defer")


def copy_scripts(app, exception) -> None:
    if exception is not None or app.builder.name not in HTML_BUILDERS:
        return
    static = Path(app.outdir) / "_static"
    (static / "plotly").mkdir(parents=True, exist_ok=True)
    plotly_js = resources.files("plotly") / "package_data" / "plotly.min.js"
    with resources.as_file(plotly_js) as source:
        shutil.copyfile(source, static / PLOTLY_JS)
    shutil.copyfile(Path(__file__).with_name(DRAW_JS), static / DRAW_JS)


def setup(app):
    if not getattr(nb_render.load_mime_renders, "course_interactive", False):
        nb_render.load_mime_renders = _with_plotly_renderer()
    app.add_post_transform(InteractiveFigures)
    app.connect("html-page-context", add_scripts, priority=400)  # before site_fixes copies the list
    app.connect("build-finished", copy_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

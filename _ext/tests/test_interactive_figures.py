"""Tests of _ext/interactive_figures: the HTML beside a figure, the mime renderer, the scripts."""

import json
from types import SimpleNamespace

import myst_nb.core.render as nb_render
from docutils import nodes

from _ext import interactive_figures as ext

SPEC = {"data": [{"type": "heatmap", "text": [["</script><b>"]]}],
        "layout": {"meta": {"id": "course-fig-0123456789ab", "width": 600}}, "config": {}}


def test_spec_html_is_an_empty_div_with_alt_text_and_the_spec_as_json():
    page = ext._spec_html(SPEC, 'alt "text" <here>')
    assert page.startswith('<div class="course-interactive" id="course-fig-0123456789ab" '
                           'role="img" aria-label="alt &quot;text&quot; &lt;here&gt;" '
                           'style="max-width:600px"></div>')
    assert page.count("</script>") == 1  # the JSON's </script> cannot end the element
    spec = page.split('class="course-interactive-spec">')[1].removesuffix("</script>")
    assert json.loads(spec.replace("<\\/", "</")) == SPEC


def test_the_plotly_output_is_kept_for_the_transform_and_nothing_else_is():
    data = SimpleNamespace(mime_type=ext.PLOTLY_MIME, content=SPEC)
    (node,) = ext.PlotlyMimeRenderer.handle_mime(None, data, False)
    assert isinstance(node, nodes.raw) and node["format"] == ext.SPEC_FORMAT
    assert json.loads(node.astext()) == SPEC
    other = SimpleNamespace(mime_type="text/html", content="<p>")
    assert ext.PlotlyMimeRenderer.handle_mime(None, other, False) is None


def test_setup_adds_the_renderer_once():
    app = SimpleNamespace(add_post_transform=lambda t: None, connect=lambda *a, **k: None)
    ext.setup(app)
    ext.setup(app)
    renderers = nb_render.load_mime_renders()
    assert renderers.count(ext.PlotlyMimeRenderer) == 1


def test_scripts_load_only_on_pages_with_an_interactive_figure():
    added = []
    app = SimpleNamespace(add_js_file=lambda name, **kw: added.append((name, kw)))
    ext.add_scripts(app, "intro", "page.html", {"body": "<p>어텐션</p>"}, None)
    assert added == []
    ext.add_scripts(app, "ch", "page.html", {"body": ext._spec_html(SPEC, "그림")}, None)
    assert added == [(ext.DRAW_JS, {"loading_method": "defer"})]  # it loads plotly.js

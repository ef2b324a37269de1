"""Tests of _ext/site_fixes.py: scripts deferred, a description on every page."""

from types import SimpleNamespace

from sphinx.builders.html._assets import _JavaScript

from _ext.site_fixes import add_description, break_names_in_cells, defer_scripts, description


def scripts():
    return [_JavaScript("_static/doctools.js", priority=200),
            _JavaScript("_static/sphinx-thebe.js", priority=500, **{"async": "async"}),
            _JavaScript(None, priority=500, body="let x = 1;"),
            _JavaScript("_static/mathjax/tex-chtml.js", priority=500, defer="defer")]


def test_script_files_are_deferred_in_order_and_inline_scripts_left_alone():
    context = {"script_files": scripts()}
    defer_scripts(None, "chapters/01", "page.html", context, None)
    loaded = [(s.filename, s.attributes) for s in context["script_files"]]
    assert loaded == [("_static/doctools.js", {"defer": "defer"}),
                      ("_static/sphinx-thebe.js", {"async": "async"}),
                      (None, {"body": "let x = 1;"}),
                      ("_static/mathjax/tex-chtml.js", {"defer": "defer"})]
    assert context["script_files"][0].priority == 200


def test_the_search_page_keeps_its_scripts():
    context = {"script_files": scripts()}
    defer_scripts(None, "search", "search.html", context, None)
    assert context["script_files"][0].attributes == {}


def test_description_is_the_first_real_paragraph_shortened():
    body = ("<p>짧다</p><p>이 장은 <a href='x'>어텐션</a>을 &amp; 구현한다. " + "가나다 " * 60
            + "</p>")
    text = description(body, "제목")
    assert text.startswith("이 장은 어텐션을 & 구현한다.") and text.endswith("…")
    assert len(text) <= 150
    assert description("<div>표만</div>", "코스 제목") == "코스 제목"


def test_every_page_gets_a_meta_description():
    app = SimpleNamespace(config=SimpleNamespace(project="코스"))
    text = "어텐션은 가중 평균이다. 쿼리가 키와 맞는 만큼 값을 섞는다."
    context = {"body": f"<p>{text}</p>", "metatags": '<meta charset="utf-8" />'}
    add_description(app, "p", "page.html", context, None)
    assert context["metatags"].endswith(f'<meta name="description" content="{text}" />')


def test_code_in_a_table_cell_breaks_only_between_the_parts_of_a_name():
    cell = ('<td><p><code class="literal"><span class="pre">ch5_accuracy_lstm</span> '
            '<span class="pre">keras.layers</span> <span class="pre">0.96</span></code></p></td>')
    assert break_names_in_cells(cell + '<p><span class="pre">a_b</span></p>') == (
        '<td><p><code class="literal"><span class="pre">ch5_<wbr>accuracy_<wbr>lstm</span> '
        '<span class="pre">keras.<wbr>layers</span> <span class="pre">0.96</span></code></p>'
        '</td><p><span class="pre">a_b</span></p>')

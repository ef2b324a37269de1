"""Tests of _ext/page_loading: one stylesheet per page, formulas typeset at build time,
pictures fetched lazily."""

import re
import shutil

import pytest

from _ext.page_loading import (
    LIVE_FORMULAS,
    _placeholder,
    _tex,
    bundle_stylesheets,
    lazy_images,
    rebundle,
    typeset,
    typeset_pages,
)

PNG_3x2 = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x03\x00\x00\x00\x02"
           b"\x08\x02\x00\x00\x00")


@pytest.fixture
def site(tmp_path):
    static = tmp_path / "_static"
    (static / "styles").mkdir(parents=True)
    (static / "styles" / "theme.css").write_text('@import "../basic.css";\n.t{color:red}\n')
    (static / "basic.css").write_text("div{background:url(file.png)}\n")
    (static / "course.css").write_text(
        ".c{background:url('images/x.svg#a')}\n.d{background:url(data:image/png;base64,AA)}\n")
    (tmp_path / "chapters").mkdir()
    return tmp_path


HEAD = ('<head>\n  <link href="../_static/styles/theme.css?digest=1" rel="stylesheet" />\n'
        '    <link rel="stylesheet" type="text/css" href="../_static/course.css?v=2" />\n'
        '  <link rel="icon" href="../_static/favicon.svg"/>\n</head><body></body>')


def test_stylesheets_become_one_file_with_the_same_rules_in_order(site):
    page_path = site / "chapters" / "one.html"
    bundles = {}
    page = bundle_stylesheets(HEAD, page_path, site, bundles)
    links = [line for line in page.splitlines() if 'rel="stylesheet"' in line]
    assert len(links) == 1 and 'href="../_static/course-styles-' in links[0]
    assert '<link rel="icon"' in page  # other links stay
    css = (site / "_static" / next(iter(bundles))).read_text()
    # the @import is inlined before theme.css's own rules, then course.css
    assert css.index("div{") < css.index(".t{") < css.index(".c{")
    assert "@import" not in css
    # url()s point where they pointed from their own file
    assert "url(file.png)" in css  # _static/basic.css -> _static/file.png
    assert "url('images/x.svg#a')" in css
    assert "url(data:image/png;base64,AA)" in css


def test_pages_with_the_same_stylesheets_share_one_bundle(site):
    bundles = {}
    first = bundle_stylesheets(HEAD, site / "chapters" / "one.html", site, bundles)
    second = bundle_stylesheets(HEAD, site / "chapters" / "two.html", site, bundles)
    assert first == second and len(bundles) == 1
    assert len(list((site / "_static").glob("course-styles-*.css"))) == 1


def test_an_incremental_build_keeps_every_page_linked_to_a_current_bundle(site):
    one, two = site / "chapters" / "one.html", site / "chapters" / "two.html"
    first = rebundle(site, {one: HEAD, two: HEAD})
    # the next build rewrites only page two; course.css has changed meanwhile
    (site / "_static" / "course.css").write_text(".c{color:blue}\n")
    second = rebundle(site, {one: first[one], two: HEAD})
    hrefs = {path: re.search(r'href="([^"]*course-styles-[^"]*)"', page).group(1)
             for path, page in second.items()}
    assert hrefs[one] == hrefs[two] != re.search(r'href="([^"]*course-styles-[^"]*)"',
                                                   first[one]).group(1)
    bundle = (one.parent / hrefs[one].split("?")[0]).resolve()
    assert ".c{color:blue}" in bundle.read_text()
    assert [p.name for p in (site / "_static").glob("course-styles-*.css")] == [bundle.name]


def test_a_missing_stylesheet_leaves_the_page_as_it_is(site):
    page = HEAD.replace("course.css", "missing.css")
    assert bundle_stylesheets(page, site / "chapters" / "one.html", site, {}) == page


def test_article_pictures_are_lazy_and_sized(site):
    (site / "_images").mkdir()
    (site / "_images" / "a.png").write_bytes(PNG_3x2)
    page = ('<header><img src="../_static/logo.png"></header><article>'
            '<img alt="a" src="../_images/a.png" />'
            '<img alt="b" src="../_images/a.png" style="width: 2px;" /></article>')
    fixed = lazy_images(page, site / "chapters" / "one.html")
    assert '<img src="../_static/logo.png">' in fixed  # outside the article: as it was
    assert '<img alt="a" src="../_images/a.png" loading="lazy" width="3" height="2" />' in fixed
    assert '<img alt="b" src="../_images/a.png" style="width: 2px;" loading="lazy" />' in fixed


@pytest.mark.parametrize(("content", "display", "expected"), [
    (r"\(x_i\)", False, ("x_i", False)),
    ("\\[\n a &amp; b \n\\]", True, ("a & b", True)),
    ("$$y$$", True, ("y", True)),
    (r"\begin{align}a\end{align}", True, (r"\begin{align}a\end{align}", True)),
])
def test_tex_of_a_formula(content, display, expected):
    assert _tex(content, display) == expected


needs_node = pytest.mark.skipif(shutil.which("node") is None,
                                reason="typesetting at build time needs Node.js")


@needs_node
def test_mathjax_typesets_with_the_mathml_screen_readers_read():
    html, boxes, css = typeset([(r"\sqrt{d_k}", False), (r"\boldsymbol{x}", True)])
    assert html[0].startswith('<mjx-container class="MathJax" jax="CHTML"')
    (root_w, root_h, root_d), (x_w, x_h, x_d) = boxes  # em: the root is wider and taller
    assert root_w > 2 * x_w > 0 and root_h > x_h > 0 and root_d > x_d >= 0
    assert "<mjx-assistive-mml" in html[0] and "<msqrt><msub><mi>d</mi><mi>k</mi>" in html[0]
    assert 'display="true"' in html[1] and 'mathvariant="bold-italic"' in html[1]
    assert "@font-face" in css and "mathjax/output/chtml/fonts/woff-v2/" in css


@needs_node
def test_typeset_pages_leave_no_formula_and_no_mathjax(tmp_path):
    static = tmp_path / "_static"
    static.mkdir()
    page = ('<head>\n    <script>window.MathJax = {"options": {}}</script>\n'
            '    <script data-mathjax="mathjax/tex-chtml.js" defer="defer" '
            'src="_static/load-mathjax.js?v=1"></script>\n</head><body>'
            '<p><span class="math notranslate nohighlight">\\(a^2\\)</span></p></body>')
    pages = {tmp_path / "one.html": page, tmp_path / "none.html": "<head></head><p>x</p>"}
    typeset_pages(pages, static)
    one = pages[tmp_path / "one.html"]
    assert '<span class="math notranslate nohighlight"><mjx-container data-tex="a^2"' in one
    assert "MathJax" not in one.split("</head>")[0].replace("course-math.css", "")
    assert '<link rel="stylesheet" href="_static/course-math.css" />' in one
    assert pages[tmp_path / "none.html"] == "<head></head><p>x</p>"
    assert (static / "course-math.css").read_text().count("@font-face") > 0


@needs_node
def test_formulas_after_the_first_few_wait_in_placeholders_of_their_size(tmp_path):
    static = tmp_path / "_static"
    static.mkdir()
    formulas = "".join(f'<p><span class="math notranslate nohighlight">\\(x_{i}\\)</span></p>'
                       for i in range(LIVE_FORMULAS + 2))
    pages = {tmp_path / "many.html": f"<head></head><body>{formulas}</body>",
             tmp_path / "few.html": "<head></head><body>"
                                    + formulas.split("</p>")[0] + "</p></body>"}
    typeset_pages(pages, static)
    many, few = pages[tmp_path / "many.html"], pages[tmp_path / "few.html"]
    assert many.count("<mjx-lazy ") == 2 and many.count("<mjx-math ") == LIVE_FORMULAS + 2
    assert re.search(r'<mjx-lazy aria-hidden="true" style="width: [\d.]+em; height: [\d.]+em; '
                     r'vertical-align: calc\(-[\d.]+em - 1px\)"><noscript><mjx-math ', many)
    assert many.count("show-formulas.js") == 1 and "show-formulas.js" not in few
    assert "<mjx-lazy" not in few and "mjx-lazy" in (static / "course-math.css").read_text()


def test_a_displayed_placeholder_has_no_padding_to_allow_for():
    container = '<mjx-container display="true"><mjx-math class="x">a</mjx-math></mjx-container>'
    lazy = _placeholder(container, [2.5, 1.25, 0.5], display=True)
    assert lazy == ('<mjx-container display="true"><mjx-lazy aria-hidden="true" style="width: '
                    '2.5em; height: 1.75em; vertical-align: -0.5em"><noscript><mjx-math '
                    'class="x">a</mjx-math></noscript></mjx-lazy></mjx-container>')

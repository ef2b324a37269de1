"""The built site: every page, every figure, and nothing the reader should not see."""

import re
from xml.etree import ElementTree

import nbformat
import pytest
from bs4 import BeautifulSoup

from tools.toc import ROOT, toc_files, toc_notebooks

HIDDEN_TAGS = {"remove-cell", "remove-output"}
HANGUL = re.compile(r"[가-힣]")
# What must never reach a rendered output: framework logs, warnings, tracebacks.
BAD_OUTPUT = [
    (re.compile(r"Traceback \(most recent call last\)"), "a traceback"),
    (re.compile(r"\w+Warning\b"), "a Python warning"),
    (re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d", re.M), "an absl/TensorFlow log line"),
    (re.compile(r"tensorflow/core|oneDNN|cuda|XLA", re.I), "a TensorFlow log line"),
    (re.compile(r"^WARNING:|^INFO:", re.M), "a log line"),
]
# What would give away the build machine anywhere in a page.
MACHINE_PATHS = [str(ROOT), "/root/", "/home/", "/tmp/", "site-packages", "C:\\Users"]


def page(built_site, name):
    return (built_site / name).with_suffix(".html")


def soup(path):
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def visible_png_outputs(nb_path):
    """Figures a chapter shows: matplotlib's PNGs and the diagrams' SVGs."""
    nb = nbformat.read(ROOT / nb_path, as_version=4)
    return sum(bool({"image/png", "image/svg+xml"} & set(out.get("data", {})))
               for cell in nb.cells if not HIDDEN_TAGS & set(cell.metadata.get("tags", []))
               for out in cell.get("outputs", []))


def test_every_toc_page_is_built(built_site):
    missing = [f for f in toc_files() if not page(built_site, f).exists()]
    assert not missing, f"pages missing from the build: {missing}"
    assert (built_site / "index.html").exists()


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_chapter_page_shows_all_its_figures(built_site, nb_path):
    html_path = page(built_site, nb_path.with_suffix(""))
    images = [img for img in soup(html_path).select("div.cell_output img")]
    expected = visible_png_outputs(nb_path)
    assert expected > 0, f"{nb_path} has no figure"
    assert len(images) == expected, f"{nb_path}: {len(images)} images, expected {expected}"
    for img in images:
        target = (html_path.parent / img["src"]).resolve()
        assert target.is_file() and target.stat().st_size > 1000, f"broken image {img['src']}"


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_no_logs_warnings_or_tracebacks_in_outputs(built_site, name):
    outputs = soup(page(built_site, name)).select("div.cell_output")
    for out in outputs:
        text = out.get_text("\n")
        for pattern, what in BAD_OUTPUT:
            match = pattern.search(text)
            assert not match, f"{name}: {what} in an output: {match.group(0)!r}"


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_no_paths_of_the_build_machine(built_site, name):
    html = page(built_site, name).read_text(encoding="utf-8")
    found = [p for p in MACHINE_PATHS if p in html]
    assert not found, f"{name}: the page shows paths of the build machine: {found}"


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_removed_cells_stay_hidden(built_site, nb_path):
    nb = nbformat.read(ROOT / nb_path, as_version=4)
    html = page(built_site, nb_path.with_suffix("")).read_text(encoding="utf-8")
    for cell in nb.cells:
        if "remove-cell" in cell.metadata.get("tags", []) and cell.source.strip():
            first_line = cell.source.strip().splitlines()[0]
            assert first_line not in html, f"{nb_path}: a remove-cell cell is visible"


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_cell_toggles_speak_korean(built_site, name):
    html = page(built_site, name).read_text(encoding="utf-8")
    assert "Show code cell" not in html and "Hide code cell" not in html, \
        f"{name}: an English toggle label (set nb_code_prompt_show/hide in _config.yml)"
    if name.startswith("chapters/") and "hide-input" in html:
        assert "코드 보기" in html


CONTROLS = ["button", "input", "nav", "summary", "aside", "dialog", "form"]
LABELS = ["aria-label", "title", "placeholder"]


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_controls_are_named_in_korean(built_site, name):
    """Buttons, fields and landmarks are named in Korean (a name may add Binder, PDF, …)."""
    english = [f"<{element.name} {attribute}={element[attribute]!r}>"
               for element in soup(page(built_site, name)).find_all(CONTROLS)
               for attribute in LABELS
               if element.get(attribute) and not HANGUL.search(element[attribute])]
    assert not english, f"{name}: controls named in English: {english}"

def test_citations_and_bibliography_use_the_same_author_year_labels(built_site):
    """A citation's text is exactly the label of the entry it links to (no [1], [2], ...)."""
    entries = {div["id"]: div.select_one("span.label").get_text().strip("[]")
               for div in soup(page(built_site, "bibliography")).select("div.citation")}
    assert len(entries) >= 20, "the bibliography lists too few entries"
    numeric = [label for label in entries.values() if re.fullmatch(r"\d+", label)]
    assert not numeric, f"numeric bibliography labels: {numeric}"
    cited = 0
    for nb_path in toc_notebooks():
        for a in soup(page(built_site, nb_path.with_suffix("").as_posix())).select(
                "a[href*='bibliography.html#']"):
            target = a["href"].split("#")[1]
            assert a.get_text() == entries[target], \
                f"{nb_path}: cites '{a.get_text()}' but the entry is '{entries[target]}'"
            cited += 1
    assert cited >= 20


# Directive and role source text, and dollar signs MathJax did not get (unparsed $...$ math).
RAW_MYST = re.compile(r"```\{|:::\{|\{(?:term|glue:text|numref|cite)\}`|^:class:|(?<!\\)\$", re.M)


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_no_unparsed_myst_syntax_in_the_prose(built_site, name):
    """A directive, role or formula MyST did not recognise shows up as its source text."""
    main = soup(page(built_site, name)).select_one("main")
    for code in main.select("pre, code, div.cell_input"):
        code.decompose()
    match = RAW_MYST.search(main.get_text("\n"))
    assert not match, f"{name}: MyST syntax left as text: {match.group(0)!r}"


# The architecture diagrams (helpers.diagrams): the page that shows each, and words its SVG
# must hold as <text>, so that they stay sharp, searchable and readable aloud.
DIAGRAMS = {
    "fig-ch3-diagram-heads": ("chapters/03_multi_head_attention",
                              ["헤드 1", "헤드 2", "헤드마다 어텐션", "이어 붙이기 (n, 2·4)"]),
    "fig-ch3-diagram-split": ("chapters/03_multi_head_attention",
                              ["헤드 0 성분", "reshape 뒤 전치 (올바름)", "토큰 5"]),
    "fig-ch2-diagram-mask-broadcast": ("chapters/02_scaled_dot_product_attention",
                                       ["인과 마스크 (n, n)", "패딩 마스크 (B, 1, n)",
                                        "합친 마스크 (B, n, n)", "pad[:, None]"]),
    "fig-ch6-diagram-encoder-decoder": ("chapters/06_seq2seq_cross_attention",
                                        ["인코더", "디코더", "크로스 어텐션", "키·값", "쿼리",
                                         "임베딩과 양방향 GRU", "다음 토큰"]),
    "fig-ch8-diagram-layers": ("chapters/08_transformer_block",
                               ["인코더 레이어", "디코더 레이어", "더한 뒤 레이어 정규화",
                                "셀프 어텐션 (인과 마스크)", "크로스 어텐션",
                                "사후 정규화: 출력 = LN(x + 서브레이어(x))"]),
    "fig-ch9-diagram-kv-cache": ("chapters/09_decoder_only_generation",
                                 ["계산", "K, V", "레이어 1", "레이어 2"]),
    "fig-ch10-diagram-groups": ("chapters/10_grouped_query_sliding_window",
                                ["쿼리 헤드", "KV 헤드",
                                 "그룹 쿼리 어텐션: 쿼리 헤드 8개, KV 헤드 2개"]),
    "fig-ch12-diagram-mla": ("chapters/12_multi_head_latent_attention",
                             ["잠재 벡터", "RoPE 키 (헤드 공유)", "헤드별 늘리는 투영"]),
    "fig-ch13-diagram-forms": ("chapters/13_linear_attention_delta_rule",
                               ["행렬 형태", "순환 형태", "청크 형태", "대각 블록: 행렬 곱"]),
    "fig-ch14-diagram-recall": ("chapters/14_associative_recall",
                                ["같은 키를 섞어 다시 묻는다", "토큰 이동", "혼합 레이어"]),
    "fig-ch13-diagram-hybrid": ("chapters/13_linear_attention_delta_rule",
                                ["어텐션", "KV 캐시", "상태"]),
    "fig-ch13-diagram-delta-write": ("chapters/13_linear_attention_delta_rule",
                                     ["① 읽기", "② 오차", "③ 쓰기", "새 상태"]),
    "fig-ch13-diagram-ut": ("chapters/13_linear_attention_delta_rule",
                            ["전진 대입", "T: (I + A)의 역행렬", "실제 쓰기"]),
    "fig-ch9-diagram-decoder-only": ("chapters/09_decoder_only_generation",
                                     ["셀프 어텐션 (인과 마스크)", "마지막 레이어 정규화",
                                      "로짓 (n, 어휘)"]),
    "fig-ch10-diagram-ring-buffer": ("chapters/10_grouped_query_sliding_window",
                                     ["칸 0", "위치 4"]),
    "fig-ch15-diagram-llama": ("chapters/15_pretrained_language_model",
                               ["그룹 쿼리 어텐션 (헤드 9, KV 헤드 3)", "마지막 RMSNorm",
                                "임베딩의 전치 (공유)", "RoPE, RMSNorm, SwiGLU"]),
    "fig-ch16-diagram-sink-gate": ("chapters/16_attention_sinks",
                                   ["싱크 로짓 b_h", "소프트맥스 뒤에 그 열을 버린다",
                                    "헤드마다, 특징마다 0과 1 사이의 σ를 곱한다"]),
    "fig-ch17-diagram-dsa": ("chapters/17_sparse_attention",
                             ["라이트닝 인덱서", "슬라이딩 윈도", "고른 토큰의 키·값만 읽는다"]),
    "fig-ch17-diagram-nsa": ("chapters/17_sparse_attention",
                             ["압축", "선택", "윈도", "블록마다 평균 하나"]),
    "fig-ch10-diagram-window-cone": ("chapters/10_grouped_query_sliding_window",
                                     ["레이어 3", "가장 먼 입력"]),
    "fig-ch11-diagram-rope": ("chapters/11_rotary_alibi_length", ["사이 각 2θ", "q1"]),
    "fig-ch1-diagram-bottleneck": ("chapters/01_attention_intuition",
                                   ["어텐션 없이", "요약 벡터 하나", "컨텍스트 벡터", "인코더"]),
    "fig-ch5-diagram-models": ("chapters/05_lstm_attention_time_series",
                               ["LSTM + 가산 어텐션", "멀티 헤드 셀프 어텐션", "시간 축 평균",
                                "마지막 은닉 상태만"]),
    "fig-ch7-diagram-tiling": ("chapters/07_attention_cost",
                               ["쿼리 블록 2", "키·값 청크 3 (지금 읽는 것)", "지수의 합 ℓ"]),
    "fig-ch4-diagram-layers": ("chapters/04_keras_attention_layers",
                               ["layer([query, value, key])", "layer(query, value, key)",
                                "투영 없음 (필요하면 Dense를 밖에)", "파라미터 288개",
                                "헤드마다 소프트맥스, 값의 가중 평균"]),
}
SVG_NS = "{http://www.w3.org/2000/svg}"


def diagram_svg(built_site, name):
    """(the <figure> element of diagram ``name``, the text of its SVG file)."""
    page_name, _ = DIAGRAMS[name]
    html_path = page(built_site, page_name)
    figure = soup(html_path).find("figure", id=name)
    assert figure is not None, f"{page_name}: no figure {name}"
    img = figure.find("img")
    assert img is not None and img["src"].endswith(".svg"), f"{name}: not an SVG image: {img}"
    return figure, (html_path.parent / img["src"]).resolve().read_text(encoding="utf-8")


@pytest.mark.parametrize("name", DIAGRAMS)
def test_diagrams_are_vector_images_with_their_labels_as_text(built_site, name):
    figure, svg = diagram_svg(built_site, name)
    root = ElementTree.fromstring(svg)
    assert root.tag == SVG_NS + "svg"
    assert not list(root.iter(SVG_NS + "image")), f"{name}: a raster image inside the SVG"
    texts = {"".join(t.itertext()) for t in root.iter(SVG_NS + "text")}
    missing = [w for w in DIAGRAMS[name][1] if w not in texts]
    assert not missing, f"{name}: labels not drawn as <text>: {missing}"
    assert "@font-face" in svg and "font/ttf;base64," in svg, f"{name}: its font is not inside"
    assert re.match(r"그림 \d+\.\d+", figure.find("figcaption").get_text(" ", strip=True))
    assert HANGUL.search(figure.find("img").get("alt", "")), f"{name}: no Korean alt text"


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_no_token_is_read_as_an_html_tag(built_site, name):
    """A token such as <s>, </s> or <pad> written bare in a caption is read by the browser as
    a tag (<s> strikes out the rest of the page): in prose and captions it goes in backticks."""
    found = [str(tag)[:80] for tag in soup(page(built_site, name)).find_all(["s", "pad"])]
    assert not found, f"{name}: tokens read as HTML tags: {found}"


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_one_stylesheet_holds_back_the_first_paint(built_site, name):
    """A phone paints nothing before it has every stylesheet of <head>: each page links one
    (_ext/page_loading), versioned by its content, and every file that stylesheet names
    exists."""
    html_path = page(built_site, name)
    links = soup(html_path).select('head link[rel="stylesheet"]')
    assert len(links) == 1, f"{name}: {len(links)} stylesheets in <head>"
    href, _, version = links[0]["href"].partition("?v=")
    assert re.fullmatch(r"[0-9a-f]{12}", version), f"{name}: the stylesheet has no version"
    css_path = (html_path.parent / href).resolve()
    css = css_path.read_text(encoding="utf-8")
    assert "@import" not in css
    for url in re.findall(r'url\(\s*["\']?([^"\')]+)', css):
        if not re.match(r"data:|[a-z]+://|#", url):
            target = (css_path.parent / url.split("?")[0].split("#")[0]).resolve()
            assert target.is_file(), f"{name}: the stylesheet names {url}, which is missing"


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_every_typeset_character_has_its_glyph_rule(built_site, name):
    """A typeset formula shows a character only through the stylesheet's ``mjx-c.mjx-cXXXX
    ::before`` rule: without it x, θ or a decimal point vanish from the page and the PDF."""
    html_path = page(built_site, name)
    href = soup(html_path).select_one('head link[rel="stylesheet"]')["href"].split("?")[0]
    css = (html_path.parent / href).resolve().read_text(encoding="utf-8")
    used = set(re.findall(r'<mjx-c class="([^"]+)"', html_path.read_text(encoding="utf-8")))
    missing = [classes for classes in used
               if "mjx-c." + ".".join(classes.split()) + "::before" not in css]
    assert not missing, f"{name}: characters without a glyph rule: {sorted(missing)[:8]}"


def test_an_incremental_build_keeps_the_glyph_rules_of_pages_it_leaves():
    """A build typesets only the pages it writes: the math stylesheet keeps the rules an
    earlier build wrote for the other pages, each once, with the course's rules last."""
    from _ext.page_loading import MATH_SCALE, PLACEHOLDER_CSS, merged_math_css  # noqa: PLC0415

    x = 'mjx-c.mjx-c1D465.TEX-I::before {\n  content: "x";\n}\n\n'
    theta = 'mjx-c.mjx-c3B8.TEX-I::before {\n  content: "\\3B8";\n}\n\n'
    dot = 'mjx-c.mjx-c2E::before {\n  content: ".";\n}\n\n'
    earlier = merged_math_css(x + theta, "")
    merged = merged_math_css(theta + dot, earlier)
    for rule in (x, theta, dot):
        assert merged.count(rule.strip()) == 1, rule
    assert merged.endswith(MATH_SCALE + PLACEHOLDER_CSS)
    assert merged.count(MATH_SCALE) == 1
    assert merged_math_css(theta + dot, merged) == merged      # building again adds nothing


@pytest.mark.parametrize("name", toc_files(), ids=str)
def test_formulas_come_typeset_and_no_page_loads_mathjax(built_site, name):
    """Every formula is MathJax's output already in the page, with the TeX it came from (those
    below the first screen in a placeholder, with the script that puts them in place); no page
    loads MathJax's script (1 MB) to typeset in the reader's browser."""
    html = soup(page(built_site, name))
    formulas = html.select(".math")
    untypeset = [f.get_text()[:60] for f in formulas if f.find("mjx-container") is None]
    assert not untypeset, f"{name}: formulas not typeset: {untypeset[:5]}"
    assert all(f.find("mjx-container").get("data-tex") for f in formulas)
    placeholders = html.select("mjx-lazy")  # formulas below the first screen, put in place later
    assert all(p.select_one("noscript > mjx-math") for p in placeholders)
    assert bool(placeholders) == bool(html.select('script[defer][src$="show-formulas.js"]'))
    assert not [s["src"] for s in html.select("script[src]") if "mathjax" in s["src"].lower()]
    assert not [s for s in html.select("script:not([src])") if "MathJax" in s.get_text()]


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_article_pictures_are_fetched_as_they_come_near(built_site, nb_path):
    """A phone fetches the pictures of a chapter as the reader scrolls to them, not with the
    page (loading="lazy"); tools/pdf.py and the browser tests load them all."""
    images = soup(page(built_site, nb_path.with_suffix(""))).select("article img")
    assert images, f"{nb_path}: no pictures"
    eager = [img["src"] for img in images if img.get("loading") != "lazy"]
    assert not eager, f"{nb_path}: pictures loaded with the page: {eager}"

"""Tests of the Korean search extension (_ext/korean_search.py).

The extension is checked at three levels: the Python splitter and stemmer on
real Korean phrases, the search index of a small Sphinx site built with it, and
the JavaScript shipped in that site (run with node), which must reduce every
word to the same stem as the Python side.
"""

import json
import shutil
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))

import korean_search  # noqa: E402
from korean_search import SearchKorean, split_words  # noqa: E402


@pytest.fixture(scope="module")
def korean():
    """A search language instance, as the HTML builder creates it."""
    return SearchKorean({})


# --- Python splitter ---------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("어텐션은 쿼리와 키를 비교한다.", ["어텐션은", "쿼리와", "키를", "비교한다"]),
        ("QK^T를 √d_k로 나눈다", ["QK", "T", "를", "d_k", "로", "나눈다"]),
        ("Q와 K의 내적", ["Q", "와", "K", "의", "내적"]),
        ("3차원 텐서, 헤드 8개", ["3", "차원", "텐서", "헤드", "8", "개"]),
        ("softmax를 적용한 word2vec 임베딩", ["softmax", "를", "적용한", "word2vec", "임베딩"]),
        ("셀프 어텐션(self-attention)에서는", ["셀프", "어텐션", "self", "attention", "에서는"]),
    ],
)
def test_split_separates_hangul_from_latin_and_digits(text, tokens):
    assert split_words(text) == tokens


def test_split_normalises_decomposed_hangul():
    decomposed = "\u1106\u1161\u1109\u1173\u110f\u1173"  # 마스크 written as jamo
    assert split_words(decomposed + "를") == ["마스크를"]


# --- Python stemmer ----------------------------------------------------------------------

@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("어텐션은", "어텐션"), ("어텐션을", "어텐션"), ("어텐션의", "어텐션"),
        ("어텐션이", "어텐션"), ("어텐션에서", "어텐션"), ("어텐션도", "어텐션"),
        ("마스크를", "마스크"), ("마스크로", "마스크"), ("마스크가", "마스크"),
        ("헤드마다", "헤드"), ("인코더에서", "인코더"), ("인코더에서는", "인코더"),
        ("가중치는", "가중치"), ("값을", "값"), ("값으로", "값"), ("값과", "값"),
        ("키를", "키"), ("쿼리와", "쿼리"), ("행렬로", "행렬"), ("행렬보다", "행렬"),
        ("소프트맥스처럼", "소프트맥스"), ("시퀀스까지", "시퀀스"), ("처음부터", "처음"),
        ("벡터입니다", "벡터"), ("벡터이다", "벡터"), ("마스크라는", "마스크"),
        ("행렬이라는", "행렬"), ("계산한다", "계산"), ("계산하는", "계산"),
        ("정규화된다", "정규화"), ("정규화된", "정규화"),
        ("토큰들", "토큰"), ("토큰들을", "토큰"), ("단어들의", "단어"),
        # Two particles in a row.
        ("마스크만으로도", "마스크"), ("어텐션만으로", "어텐션"), ("토큰들만으로", "토큰"),
        ("바이트인가", "바이트"), ("행렬이므로", "행렬"), ("키뿐이므로", "키"),
    ],
)
def test_stem_strips_particles_and_endings(korean, word, stem):
    assert korean.stem(word) == stem


@pytest.mark.parametrize(
    "word",
    [
        # Nouns that must come out unchanged.
        "가중치", "마스크", "디코더", "인코더", "어텐션", "쿼리", "소프트맥스", "임베딩",
        # The particle would need the other kind of syllable before it.
        "평가", "마을", "경로", "차이", "효과",
        # Protected words whose ending looks like a particle.
        "결과", "인과", "정의", "주의", "질의", "길이", "유사도", "정도", "지도", "서로",
    ],
)
def test_stem_does_not_over_strip(korean, word):
    assert korean.stem(word) == word


@pytest.mark.parametrize(
    ("word", "stem"),
    [("결과를", "결과"), ("결과도", "결과"), ("인과는", "인과"), ("정의에서", "정의"),
     ("길이다", "길이"), ("길이가", "길이"), ("유사도를", "유사도"), ("경로는", "경로"),
     ("풀이를", "풀이"), ("고양이가", "고양이"), ("결과들을", "결과"), ("정의에서는", "정의"),
     ("정보다", "정보"), ("미만입니다", "미만"), ("카메라는", "카메라")],
)
def test_stem_keeps_protected_words_whole(korean, word, stem):
    assert korean.stem(word) == stem


@pytest.mark.parametrize(
    ("word", "stem"),
    [("Attention", "attent"), ("masks", "mask"), ("masking", "mask"),
     ("heads", "head"), ("softmax", "softmax"), ("d_k", "d_k")],
)
def test_stem_uses_porter_for_latin_words(korean, word, stem):
    assert korean.stem(word) == stem


def test_particles_alone_are_not_indexed(korean):
    for particle in ["를", "와", "의", "에서", "으로", "입니다"]:
        assert not korean.word_filter(korean.stem(particle))


def test_stem_never_returns_a_stop_word_for_a_content_word(korean):
    # "its" would stem to the stop word "it"; it is indexed as itself instead.
    assert korean.stem("its") == "its"
    assert korean.word_filter(korean.stem("its"))


def test_setup_declares_parallel_safety():
    class FakeApp:
        def add_search_language(self, cls):
            self.language = cls

    app = FakeApp()
    metadata = korean_search.setup(app)
    assert app.language is SearchKorean
    assert metadata["parallel_read_safe"] and metadata["parallel_write_safe"]
    assert metadata["version"] == korean_search.__version__


def test_book_config_loads_the_extension():
    from jupyter_book.config import get_final_config

    config, _ = get_final_config(
        user_yaml=ROOT / "_config.yml",
        cli_config={"latex_individualpages": False},  # what `jupyter-book build` passes
        sourcedir=ROOT,
        use_external_toc=False,
    )
    assert "korean_search" in config["extensions"]
    assert config["language"] == "ko"


# --- A small site built with the extension ---------------------------------------------

PAGES = {
    "index.rst": "시작\n====\n\n.. toctree::\n\n   attention\n   masks\n",
    "attention.rst": (
        "첫째 장\n=======\n\n"
        "어텐션은 쿼리와 키를 비교하여 가중치를 계산한다. "
        "Attention weights sum to one.\n"
    ),
    "masks.rst": (
        "둘째 장\n=======\n\n"
        "디코더는 마스크를 씌워 미래의 토큰들을 가린다.\n"
    ),
}


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    """Build the pages above to HTML and return the output directory."""
    src = tmp_path_factory.mktemp("site")
    for name, text in PAGES.items():
        (src / name).write_text(text, encoding="utf-8")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['korean_search']\nlanguage = 'ko'\nhtml_theme = 'basic'\n",
        encoding="utf-8",
    )
    out = src / "_build"
    warnings = StringIO()
    app = Sphinx(src, src, out, out / ".doctrees", "html",
                 status=None, warning=warnings, freshenv=True)
    app.build()
    assert warnings.getvalue() == ""
    return out


def load_index(site):
    """Return the search index that a site's searchindex.js registers."""
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    assert text.startswith("Search.setIndex(") and text.endswith(")")
    return json.loads(text[len("Search.setIndex("):-1])


def pages_for(index, term):
    """Return the names of the pages whose text contains ``term``."""
    found = index["terms"].get(term, [])
    found = [found] if isinstance(found, int) else found
    return {index["docnames"][i] for i in found}


def test_index_maps_stems_to_pages(small_site):
    index = load_index(small_site)
    assert pages_for(index, "어텐션") == {"attention"}
    assert pages_for(index, "가중치") == {"attention"}
    assert pages_for(index, "마스크") == {"masks"}
    assert pages_for(index, "토큰") == {"masks"}
    assert pages_for(index, "디코더") == {"masks"}
    assert pages_for(index, "weight") == {"attention"}


def test_index_holds_no_inflected_forms_or_particles(small_site):
    terms = load_index(small_site)["terms"]
    for form in ["어텐션은", "마스크를", "토큰들을", "를", "의"]:
        assert form not in terms


# --- The JavaScript shipped in the site --------------------------------------------------

NODE_SCRIPT = r"""
const fs = require("fs");
const vm = require("vm");
const [languageData, inputPath] = process.argv.slice(2);
const input = JSON.parse(fs.readFileSync(inputPath, "utf8"));
const context = {};
vm.createContext(context);
vm.runInContext(fs.readFileSync(languageData, "utf8"), context);
const stemmer = vm.runInContext("new Stemmer()", context);
const split = (text) => Array.from(vm.runInContext("splitQuery", context)(text));
// The query handling of Sphinx's searchtools.js: split, lower-case, drop stop
// words and numbers, stem.
const queryTerms = (query) => split(query.trim())
  .map((term) => term.toLowerCase())
  .filter((term) => context.stopwords.indexOf(term) === -1 && !/^\d+$/.test(term))
  .map((term) => stemmer.stemWord(term));
console.log(JSON.stringify({
  stems: input.words.map((word) => stemmer.stemWord(word.toLowerCase())),
  splits: input.texts.map(split),
  queries: input.queries.map(queryTerms),
}));
"""

NOUNS = ["어텐션", "마스크", "가중치", "디코더", "값", "키", "행렬", "결과", "길이",
         "정의", "유사도", "경로", "차이", "토큰들", "서로", "계산"]
OTHER_WORDS = ["Attention", "masking", "Its", "softmax", "QK", "d_k", "word2vec",
               "를", "에서", "하는", "ㅋㅋ", "12", "ÉTÉ"]
TEXTS = ["QK^T를 √d_k로 나눈다", "3차원 텐서, 헤드 8개", "셀프 어텐션(self-attention)에서는",
         "softmax를 적용한 word2vec 임베딩", "\u1106\u1161\u1109\u1173\u110f\u1173를"]
QUERIES = {"어텐션": "attention", "어텐션은": "attention", "마스크": "masks",
           "마스크로": "masks", "토큰": "masks", "weights": "attention"}


# Nouns ending in a vowel, a consonant, in ㄹ, and a protected word.
NOUNS_FOR_PAIRS = ["마스크", "어텐션", "행렬", "길이"]


def words_to_compare():
    """Nouns with every particle and every pair of particles, and other words."""
    suffixes = [""] + [suffix for suffix, _ in korean_search.PARTICLE_RULES]
    singles = [noun + suffix for noun in NOUNS for suffix in suffixes]
    pairs = [noun + first + second for noun in NOUNS_FOR_PAIRS
             for first in suffixes for second in suffixes]
    return singles + pairs + OTHER_WORDS


@pytest.fixture(scope="module")
def javascript_results(small_site, tmp_path_factory):
    """Run the site's language_data.js in node on the words, texts and queries."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript stemmer was not checked")
    work = tmp_path_factory.mktemp("node")
    script, inputs = work / "run.js", work / "input.json"
    script.write_text(NODE_SCRIPT, encoding="utf-8")
    inputs.write_text(json.dumps({"words": words_to_compare(), "texts": TEXTS,
                                  "queries": list(QUERIES)}), encoding="utf-8")
    language_data = small_site / "_static" / "language_data.js"
    result = subprocess.run([node, script, language_data, inputs], capture_output=True,
                            text=True, encoding="utf-8", check=False, timeout=30)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_javascript_stemmer_agrees_with_python(korean, javascript_results):
    words = words_to_compare()
    expected = [korean.stem(word) for word in words]
    disagreements = {word: (py, js) for word, py, js
                     in zip(words, expected, javascript_results["stems"]) if py != js}
    assert disagreements == {}


def test_javascript_splitter_agrees_with_python(javascript_results):
    assert javascript_results["splits"] == [split_words(text) for text in TEXTS]


def test_javascript_queries_find_the_right_page(small_site, javascript_results):
    index = load_index(small_site)
    for (query, page), terms in zip(QUERIES.items(), javascript_results["queries"]):
        assert len(terms) == 1, query
        assert pages_for(index, terms[0]) == {page}, query

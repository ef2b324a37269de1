"""Korean full-text search for the Sphinx HTML builder.

Sphinx ships no search language for Korean, so with ``language = "ko"`` the
index stores every inflected form as a separate word: a page that only says
``어텐션은`` or ``마스크를`` is not found by a search for ``어텐션`` or
``마스크``.  This extension registers :class:`SearchKorean` for the language
code ``ko``.  It

* splits text into runs of Hangul and runs of other word characters, so that
  particles written right after Latin letters or digits (``softmax를``,
  ``3차원``) become tokens of their own;
* stems Hangul words by removing trailing particles and endings (``어텐션은``
  becomes ``어텐션``, ``값으로`` becomes ``값``) and then a plural ``들``;
* stems every other word with the Porter stemmer, as the English search does;
* generates the browser-side splitter and stemmer from the same rule tables,
  so that queries are reduced to the same stems as the index.

Enable it with ``extensions = ["korean_search"]`` and ``language = "ko"``.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

import snowballstemmer
import sphinx
from sphinx.search import SearchLanguage
from sphinx.search.en import english_stopwords

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__version__ = "1.0.0"

# --- Rule tables: the single source for the Python and the JavaScript side ------------------

#: Code point ranges treated as Hangul: jamo, compatibility jamo, jamo
#: extensions A and B, and the precomposed syllables.
HANGUL_RANGES = (
    (0x1100, 0x11FF),
    (0x3130, 0x318F),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7A3),
    (0xD7B0, 0xD7FF),
)

# Which syllable a suffix may follow.  Korean particles come in pairs chosen by
# whether the preceding syllable ends in a consonant (받침): 은/는, 이/가, 을/를,
# 과/와, 으로/로.  Checking this keeps nouns such as 평가, 마을 or 경로 intact.
ANY = "any"
AFTER_CONSONANT = "consonant"
AFTER_VOWEL = "vowel"
AFTER_VOWEL_OR_RIEUL = "vowel_or_rieul"  # 로 also follows a final ㄹ: 행렬로

#: Particles and endings removed from the end of a Hangul word, with the kind
#: of syllable they must follow.  The longest one that fits is removed, up to
#: :data:`MAX_PARTICLES` times (마스크만으로도 -> 마스크만 -> 마스크).
PARTICLE_RULES: tuple[tuple[str, str], ...] = (
    # Case and topic particles.
    ("은", AFTER_CONSONANT), ("는", AFTER_VOWEL),
    ("이", AFTER_CONSONANT), ("가", AFTER_VOWEL),
    ("을", AFTER_CONSONANT), ("를", AFTER_VOWEL),
    ("과", AFTER_CONSONANT), ("와", AFTER_VOWEL),
    ("으로", AFTER_CONSONANT), ("로", AFTER_VOWEL_OR_RIEUL),
    ("의", ANY), ("에", ANY), ("에서", ANY), ("에게", ANY), ("에게서", ANY),
    ("한테", ANY), ("도", ANY), ("만", ANY), ("까지", ANY), ("부터", ANY),
    ("마다", ANY), ("보다", ANY), ("처럼", ANY), ("뿐", ANY), ("쯤", ANY),
    # Particles followed by a second particle.
    ("에서는", ANY), ("에서도", ANY), ("에서의", ANY), ("에서만", ANY),
    ("에게는", ANY), ("에는", ANY), ("에도", ANY), ("에만", ANY),
    ("으로는", AFTER_CONSONANT), ("로는", AFTER_VOWEL_OR_RIEUL),
    ("으로도", AFTER_CONSONANT), ("로도", AFTER_VOWEL_OR_RIEUL),
    ("으로서", AFTER_CONSONANT), ("로서", AFTER_VOWEL_OR_RIEUL),
    ("으로써", AFTER_CONSONANT), ("로써", AFTER_VOWEL_OR_RIEUL),
    ("으로의", AFTER_CONSONANT), ("로의", AFTER_VOWEL_OR_RIEUL),
    ("과는", AFTER_CONSONANT), ("와는", AFTER_VOWEL),
    ("과의", AFTER_CONSONANT), ("와의", AFTER_VOWEL),
    ("까지는", ANY), ("까지의", ANY), ("부터는", ANY), ("보다는", ANY),
    ("만을", ANY), ("만의", ANY), ("만으로", ANY),
    # The copula "to be".
    ("이다", ANY), ("입니다", ANY),
    ("이라는", AFTER_CONSONANT), ("라는", AFTER_VOWEL),
    ("이라고", AFTER_CONSONANT), ("라고", AFTER_VOWEL),
    ("이란", AFTER_CONSONANT), ("란", AFTER_VOWEL),
    ("이며", AFTER_CONSONANT), ("이고", AFTER_CONSONANT), ("이나", AFTER_CONSONANT),
    ("이면", AFTER_CONSONANT), ("이지만", AFTER_CONSONANT), ("이라도", AFTER_CONSONANT),
    ("이므로", ANY), ("인가", ANY), ("인지", ANY),
    # "Because": 있으므로, 되므로.
    ("으므로", AFTER_CONSONANT), ("므로", AFTER_VOWEL_OR_RIEUL),
    # Endings of 하다/되다 verbs built on nouns: 계산한다, 정규화된다.
    ("하다", ANY), ("하는", ANY), ("한다", ANY), ("합니다", ANY), ("하여", ANY),
    ("하고", ANY), ("하면", ANY), ("하며", ANY), ("하지", ANY), ("해서", ANY),
    ("했다", ANY), ("하기", ANY), ("하게", ANY),
    ("되다", ANY), ("된다", ANY), ("되는", ANY), ("되어", ANY), ("되고", ANY),
    ("되면", ANY), ("됩니다", ANY), ("된", ANY),
)

#: How many particles or endings are removed from one word at most.
MAX_PARTICLES = 2

#: Plural marker removed after the particles: 토큰들을 -> 토큰들 -> 토큰.
PLURAL_SUFFIX = "들"

#: Words whose last syllables look like a particle but belong to the word.
#: A stem never cuts into one of them: 결과도 -> 결과, not 결.
PROTECTED_WORDS: tuple[str, ...] = (
    # ...의
    "정의", "주의", "강의", "논의", "회의", "임의", "동의", "의의", "합의",
    "편의", "유의", "문의", "질의", "모의",
    # ...과
    "결과", "성과", "통과", "인과", "일과",
    # ...가
    "추가", "부가", "대가",
    # ...이
    "길이", "높이", "깊이", "넓이", "차이", "사이", "풀이", "놀이", "먹이", "고양이",
    # ...라 (before 라는, 라고, 란)
    "카메라", "인프라",
    # ...보 (before 보다), ...만
    "정보", "미만", "불만",
    # ...도
    "정도", "속도", "온도", "각도", "밀도", "빈도", "강도", "척도", "한도",
    "의도", "시도", "용도", "지도", "비지도", "준지도", "유사도", "정확도",
    "복잡도", "중요도", "신뢰도", "해상도", "자유도", "기여도", "난이도", "민감도",
    "정밀도",
    # ...로 (adverbs)
    "서로", "바로", "따로", "새로", "주로", "스스로", "그대로", "거꾸로",
)

#: Korean function words that are neither indexed nor searched.
KOREAN_FUNCTION_WORDS = frozenset(
    "및 또 또는 그리고 그러나 하지만 그래서 따라서 즉 그 이 저 것 수 등 더 때 중 "
    "한 할 하 있다 없다 이런 그런".split()
)

#: Stop words: English ones, Korean function words, and particles standing
#: alone (they become tokens when written after Latin text, as in ``Q와``).
STOPWORDS = frozenset(
    english_stopwords | KOREAN_FUNCTION_WORDS | {suffix for suffix, _ in PARTICLE_RULES}
)

# --- Derived tables ----------------------------------------------------------------------

_RULES_LONGEST_FIRST = tuple(sorted(PARTICLE_RULES, key=lambda rule: -len(rule[0])))
_PROTECTED_LONGEST_FIRST = tuple(sorted(PROTECTED_WORDS, key=lambda word: -len(word)))

_HANGUL_CLASS = "".join(f"\\u{start:04X}-\\u{end:04X}" for start, end in HANGUL_RANGES)
_TOKEN_RE = re.compile(f"[{_HANGUL_CLASS}]+|[^\\W{_HANGUL_CLASS}]+")
_HANGUL_WORD_RE = re.compile(f"[{_HANGUL_CLASS}]+")

_SYLLABLE_BASE = 0xAC00
_SYLLABLE_COUNT = 11172
_FINAL_COUNT = 28  # no final consonant + 27 final consonants
_FINAL_RIEUL = 8  # index of ㄹ among the final consonants

# --- Python stemming ---------------------------------------------------------------------


def split_words(text: str) -> list[str]:
    """Split text into Hangul runs and runs of other word characters.

    Parameters
    ----------
    text : str
        Any text; it is normalised to NFC first.

    Returns
    -------
    list of str
        The tokens in order, e.g. ``["QK", "T", "를"]`` for ``"QK^T를"``.
    """
    return _TOKEN_RE.findall(unicodedata.normalize("NFC", text))


def final_consonant(syllable: str) -> int | None:
    """Return the index of the final consonant of a Hangul syllable.

    Parameters
    ----------
    syllable : str
        A single character.

    Returns
    -------
    int or None
        0 for an open syllable (ends in a vowel), 1-27 for a final consonant,
        None if the character is not a precomposed Hangul syllable.
    """
    offset = ord(syllable) - _SYLLABLE_BASE
    if not 0 <= offset < _SYLLABLE_COUNT:
        return None
    return offset % _FINAL_COUNT


def suffix_fits(context: str, syllable: str) -> bool:
    """Tell whether a suffix of the given context may follow ``syllable``."""
    if context == ANY:
        return True
    final = final_consonant(syllable)
    if final is None:
        return False
    if context == AFTER_CONSONANT:
        return final != 0
    if context == AFTER_VOWEL:
        return final == 0
    return final in (0, _FINAL_RIEUL)


def strip_particle(word: str) -> str:
    """Remove the longest fitting particle or ending, keeping one syllable."""
    for suffix, context in _RULES_LONGEST_FIRST:
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            if suffix_fits(context, stem[-1]):
                return stem
    return word


def strip_particles(word: str) -> str:
    """Remove up to :data:`MAX_PARTICLES` particles or endings from the end."""
    for _ in range(MAX_PARTICLES):
        stem = strip_particle(word)
        if stem == word:
            break
        word = stem
    return word


def strip_plural(word: str) -> str:
    """Remove a trailing plural marker, keeping one syllable."""
    if len(word) > len(PLURAL_SUFFIX) and word.endswith(PLURAL_SUFFIX):
        return word[: -len(PLURAL_SUFFIX)]
    return word


def stem_hangul(word: str) -> str:
    """Stem a Hangul word: particles and endings, then the plural marker.

    Parameters
    ----------
    word : str
        A word made of Hangul only.

    Returns
    -------
    str
        The stem; a protected word at the start of ``word`` is never cut.
    """
    stem = strip_plural(strip_particles(word))
    for protected in _PROTECTED_LONGEST_FIRST:
        if len(stem) < len(protected) and word.startswith(protected):
            return protected
    return stem


def is_hangul_word(word: str) -> bool:
    """Tell whether ``word`` is non-empty and made of Hangul only."""
    return _HANGUL_WORD_RE.fullmatch(word) is not None


# --- JavaScript --------------------------------------------------------------------------

_JS_SPLITTER = Template("""\
/**
 * Korean query splitter: Hangul runs and runs of other word characters.
 */
var splitQuery = (function () {
  var tokenPattern = new RegExp(
    "[$hangul]+|(?:(?![$hangul])[\\\\p{L}\\\\p{N}_])+", "gu");
  return function (query) {
    return query.normalize("NFC").match(tokenPattern) || [];
  };
})();
""")

_JS_STEMMER = Template("""\
/**
 * Korean stemmer: strips particles from Hangul words, Porter for the rest.
 * The tables are generated from korean_search.py.
 */
var Stemmer = function () {
  var rules = $rules;
  var protectedWords = $protected_words;
  var stopwordSet = new Set($stopwords);
  var pluralSuffix = $plural;
  var hangulWord = new RegExp("^[$hangul]+$$", "u");
  var porter = new PorterStemmer();

  function finalConsonant(syllable) {
    var offset = syllable.charCodeAt(0) - $syllable_base;
    if (offset < 0 || offset >= $syllable_count) return null;
    return offset % $final_count;
  }

  function suffixFits(context, syllable) {
    if (context === $any) return true;
    var final = finalConsonant(syllable);
    if (final === null) return false;
    if (context === $after_consonant) return final !== 0;
    if (context === $after_vowel) return final === 0;
    return final === 0 || final === $final_rieul;
  }

  function stripParticle(word) {
    for (var i = 0; i < rules.length; i++) {
      var suffix = rules[i][0];
      if (word.length > suffix.length && word.endsWith(suffix)) {
        var stem = word.slice(0, -suffix.length);
        if (suffixFits(rules[i][1], stem.charAt(stem.length - 1))) return stem;
      }
    }
    return word;
  }

  function stripParticles(word) {
    for (var pass = 0; pass < $max_particles; pass++) {
      var stem = stripParticle(word);
      if (stem === word) break;
      word = stem;
    }
    return word;
  }

  function stripPlural(word) {
    if (word.length > pluralSuffix.length && word.endsWith(pluralSuffix)) {
      return word.slice(0, -pluralSuffix.length);
    }
    return word;
  }

  function stemHangul(word) {
    var stem = stripPlural(stripParticles(word));
    for (var i = 0; i < protectedWords.length; i++) {
      var candidate = protectedWords[i];
      if (stem.length < candidate.length && word.startsWith(candidate)) return candidate;
    }
    return stem;
  }

  this.stemWord = function (w) {
    var word = w.toLowerCase();
    if (stopwordSet.has(word)) return word;
    var stem = hangulWord.test(word) ? stemHangul(word) : porter.stemWord(word);
    return stopwordSet.has(stem) ? word : stem;
  };
};
""")

_SPHINX_MINIFIED_JS = Path(sphinx.package_dir, "search", "minified-js")
# The Hangul class as it must be written inside a JavaScript string literal.
_JS_HANGUL_CLASS = _HANGUL_CLASS.replace("\\", "\\\\")


def _js(value: Any) -> str:
    """Serialise a value as an ASCII-only JavaScript literal."""
    return json.dumps(value, ensure_ascii=True)


def build_js_splitter() -> str:
    """Return the JavaScript ``splitQuery`` matching :func:`split_words`."""
    return _JS_SPLITTER.substitute(hangul=_JS_HANGUL_CLASS)


def build_js_stemmer() -> str:
    """Return the JavaScript ``Stemmer`` matching :meth:`SearchKorean.stem`.

    The Porter stemmer is Sphinx's own Snowball build (``porter-stemmer.js``),
    the same algorithm as the Python ``snowballstemmer`` used for indexing.
    """
    stemmer = _JS_STEMMER.substitute(
        rules=_js([list(rule) for rule in _RULES_LONGEST_FIRST]),
        protected_words=_js(list(_PROTECTED_LONGEST_FIRST)),
        stopwords=_js(sorted(STOPWORDS)),
        plural=_js(PLURAL_SUFFIX),
        max_particles=MAX_PARTICLES,
        hangul=_JS_HANGUL_CLASS,
        syllable_base=_SYLLABLE_BASE,
        syllable_count=_SYLLABLE_COUNT,
        final_count=_FINAL_COUNT,
        final_rieul=_FINAL_RIEUL,
        any=_js(ANY),
        after_consonant=_js(AFTER_CONSONANT),
        after_vowel=_js(AFTER_VOWEL),
    )
    porter = [
        (_SPHINX_MINIFIED_JS / name).read_text(encoding="utf-8")
        for name in ("base-stemmer.js", "porter-stemmer.js")
    ]
    return "\n".join([*porter, stemmer])


def rules_digest() -> str:
    """Return a hash of the rule tables, to detect that they have changed."""
    tables = [PARTICLE_RULES, MAX_PARTICLES, PLURAL_SUFFIX, PROTECTED_WORDS,
              sorted(STOPWORDS), HANGUL_RANGES, __version__]
    return hashlib.sha256(_js(tables).encode()).hexdigest()


# --- Sphinx integration ------------------------------------------------------------------


class SearchKorean(SearchLanguage):
    """Search language for Korean (code ``ko``)."""

    lang = "ko"
    language_name = "Korean"
    stopwords = set(STOPWORDS)
    js_splitter_code = build_js_splitter()

    def init(self, options: dict[str, str]) -> None:
        """Create the Porter stemmer and the JavaScript stemmer code."""
        self.porter = snowballstemmer.stemmer("porter")
        self.js_stemmer_code = build_js_stemmer()

    def split(self, input: str) -> list[str]:  # noqa: A002 - the base class's name
        """Split text into Hangul runs and runs of other word characters."""
        return split_words(input)

    def stem(self, word: str) -> str:
        """Return the lower-case stem of ``word``.

        Hangul words lose their particles and endings, other words go through
        the Porter stemmer.  Stop words are returned unchanged, and a stem that is
        a stop word is replaced by the word itself, so that the word is indexed
        and searched for in the same form.
        """
        word = word.lower()
        if word in self.stopwords:
            return word
        if is_hangul_word(word):
            stem = stem_hangul(word)
        else:
            stem = self.porter.stemWord(word)
        return word if stem in self.stopwords else stem

    def word_filter(self, word: str) -> bool:
        """Keep every non-empty word that is not a stop word."""
        return bool(word) and word not in self.stopwords


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the Korean search language with Sphinx."""
    app.add_search_language(SearchKorean)
    return {
        "version": __version__,
        # The search index lives in the build environment; a new value here
        # makes Sphinx rebuild it whenever the rule tables change.
        "env_version": int(rules_digest()[:8], 16),
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }

"""Korean terms: one form everywhere, all of them in the glossary."""

import json
import re

import pytest

from tools.toc import ROOT


def table_rows(marker: str) -> list[list[str]]:
    """The cells of each row of the table between CONTRIBUTING.md's ``<!-- marker:... -->``."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    table = re.search(rf"<!-- {marker}:start -->\n(.*?)<!-- {marker}:end -->", text, re.S).group(1)
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in table.splitlines()[2:] if line.strip()]


def forms(cell: str) -> list[str]:
    return [f.strip() for f in cell.split(",") if f.strip()]


def terms_table() -> list[tuple[str, str, list[str]]]:
    """(Korean, English, forms never used) of each row of the terms table."""
    return [(korean, english, forms(banned)) for korean, english, banned in table_rows("terms")]


TERMS = {korean: english for korean, english, _ in terms_table()}
STYLE_FORBIDDEN = [form for _, banned, _ in table_rows("style") for form in forms(banned)]
FORBIDDEN = [form for _, _, banned in terms_table() for form in banned] + STYLE_FORBIDDEN
FIRST_ADDITIVE = "가산(바다나우) 어텐션"


def course_texts():
    """(name, text) of every page and notebook the course publishes, and the helpers."""
    pages = [p for p in sorted(ROOT.glob("*.md")) if p.name != "CONTRIBUTING.md"]  # the table
    for path in pages + sorted((ROOT / "chapters").glob("*.md")):
        yield path.name, path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        yield path.name, "\n".join("".join(c["source"]) for c in cells)
    for path in sorted((ROOT / "helpers").glob("**/*.py")):
        if "tests" not in path.relative_to(ROOT / "helpers").parts:   # the package's modules
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def glossary_block() -> str:
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    return re.search(r"```\{glossary\}\n(.*?)```", text, re.S).group(1)


def glossary_terms():
    block = glossary_block()
    return {line.strip() for line in block.splitlines() if line and not line.startswith(" ")}


def glossary_entries() -> list[str]:
    """The first line (the Korean form) of each glossary entry, in the page's order."""
    return [entry.splitlines()[0] for entry in glossary_block().strip("\n").split("\n\n")]


def glossary_order(term: str) -> tuple[bool, str]:
    """ㄱㄴㄷ order: Hangul by code point (initial, medial, final sound), then Latin A-Z."""
    return term[0].isascii(), term.casefold()


def test_the_terms_table_is_read():
    assert len(TERMS) >= 20 and TERMS["어텐션"] == "attention"
    assert {"주의", "풀이", "다중 헤드", "점수", "넘침"} <= set(FORBIDDEN)
    assert {"이 책", "반복문", "바스와니"} <= set(STYLE_FORBIDDEN)


def test_the_scan_sees_the_chapters():
    names = [name for name, _ in course_texts()]
    assert "glossary.md" in names and any(n.endswith(".ipynb") for n in names)
    assert "helpers/attention/functions.py" in names   # the helpers' subpackages too


def at_word_start(form: str) -> re.Pattern:
    """``form`` where a word begins: 풀이 is forbidden, 되풀이 is another word."""
    return re.compile(r"(?<![가-힣])" + re.escape(form))


def test_forbidden_forms_are_found_at_the_start_of_words_only():
    assert at_word_start("풀이").search("해답 풀이는") and at_word_start("풀이").search("(풀이)")
    assert not at_word_start("풀이").search("되풀이한다")


@pytest.mark.parametrize("variant", FORBIDDEN)
def test_no_non_standard_variant(variant):
    hits = [f"{name}: …{text[max(0, m.start() - 20):m.end() + 20]}…"
            for name, text in course_texts() for m in at_word_start(variant).finditer(text)]
    assert not hits, f"'{variant}' is not this course's term:\n" + "\n".join(hits)


@pytest.mark.parametrize("korean, english", TERMS.items())
def test_glossary_has_both_forms(korean, english):
    terms = glossary_terms()
    assert korean in terms, f"glossary lacks '{korean}'"
    assert english in terms, f"glossary lacks '{english}'"


def test_chapters_link_terms_to_the_glossary():
    for name, text in course_texts():
        if name.endswith(".ipynb"):
            linked = set(re.findall(r"\{term\}`([^`<]+?)(?: <([^>]+)>)?`", text))
            targets = {t[1] or t[0] for t in linked}
            unknown = targets - glossary_terms()
            assert linked, f"{name} links no term to the glossary"
            assert not unknown, f"{name} links to terms the glossary lacks: {unknown}"


def markdown_of_chapters():
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        prose = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
        yield path.name, "\n".join(prose)


def test_bahdanau_in_hangul_only_in_the_first_additive_attention():
    """Everywhere "바다나우" is part of "가산(바다나우) 어텐션"; the name is Bahdanau otherwise."""
    for name, text in course_texts():
        stray = [m.start() for m in re.finditer("바다나우", text)
                 if text[max(0, m.start() - 3):m.start() + 9] != FIRST_ADDITIVE]
        assert not stray, f"{name}: 바다나우 outside '{FIRST_ADDITIVE}' at {stray}"


def test_additive_attention_first_appears_with_its_other_name():
    """Each chapter's prose says "가산(바다나우) 어텐션" once: the first time it names it."""
    seen = 0
    for name, text in markdown_of_chapters():
        mentions = re.findall(r"가산(?:\(바다나우\))? 어텐션", text)
        if mentions:
            seen += 1
            assert mentions[0] == FIRST_ADDITIVE, f"{name} first says '{mentions[0]}'"
            assert mentions.count(FIRST_ADDITIVE) == 1, f"{name} repeats '{FIRST_ADDITIVE}'"
    assert seen >= 4


def test_glossary_is_in_korean_alphabetical_order():
    entries = glossary_entries()
    assert len(entries) >= 40 and entries[0] == "가산 어텐션"
    expected = sorted(entries, key=glossary_order)
    misplaced = [(found, wanted) for found, wanted in zip(entries, expected) if found != wanted]
    assert not misplaced, ("glossary.md's entries are not in ㄱㄴㄷ order (Latin-initial entries "
                           f"last, A-Z); first misplaced (found, expected): {misplaced[0]}. "
                           f"Expected order: {expected}")


def test_glossary_order_rule():
    assert sorted(["KV 캐시", "레이어", "FLOPs", "가중 평균", "FlashAttention", "값", "레이블",
                   "어텐션 가중치", "어텐션"], key=glossary_order) == \
        ["가중 평균", "값", "레이블", "레이어", "어텐션", "어텐션 가중치",
         "FlashAttention", "FLOPs", "KV 캐시"]


# Code in markdown: fenced blocks with a language (not directives such as ```{exercise}),
# inline code and math. What is left is prose.
CODE_IN_MARKDOWN = re.compile(
    r"^(`{3,}|~{3,})(?!\{)\w[^\n]*\n.*?^\1[ \t]*$|`[^`\n]+`|\$\$.*?\$\$|\$[^$\n]+\$", re.M | re.S)


def prose_of(markdown: str) -> str:
    return CODE_IN_MARKDOWN.sub(" ", markdown)


def prose_texts():
    """(name, prose) of every chapter's markdown and of the glossary's entries."""
    for name, text in markdown_of_chapters():
        yield name, prose_of(text)
    yield "glossary.md", prose_of(glossary_block())


def test_prose_of_drops_code_but_keeps_directives():
    text = ('```{exercise}\n‘글’\n```\n````{solution} x\n```python\nprint("a")\n```\n````\n'
            '`"b"` $"c"$')
    assert '"' not in prose_of(text) and "‘글’" in prose_of(text)


def test_straight_quotes_only_in_code():
    """Prose quotes words with ‘ ’ and quoted sentences with “ ”; " belongs to code."""
    for name, text in prose_texts():
        stray = [text[max(0, m.start() - 20):m.end() + 20] for m in re.finditer('"', text)]
        assert not stray, f"{name}: straight quotes in prose (use ‘ ’ or “ ”): {stray}"


def test_a_model_layer_is_called_layer():
    """레이어, not 층, for a model's layer (층 inside another word, as in 계층, is fine)."""
    for name, text in prose_texts():
        stray = [text[max(0, m.start() - 20):m.end() + 20]
                 for m in re.finditer(r"(?<![가-힣])층|서브층|출력층", text)]
        assert not stray, f"{name}: write 레이어 for a layer: {stray}"

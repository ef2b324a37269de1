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
    for path in sorted((ROOT / "helpers").glob("*.py")):
        yield f"helpers/{path.name}", path.read_text(encoding="utf-8")


def glossary_terms():
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    block = re.search(r"```\{glossary\}\n(.*?)```", text, re.S).group(1)
    return {line.strip() for line in block.splitlines() if line and not line.startswith(" ")}


def test_the_terms_table_is_read():
    assert len(TERMS) >= 20 and TERMS["어텐션"] == "attention"
    assert {"주의", "풀이", "다중 헤드", "점수", "넘침"} <= set(FORBIDDEN)
    assert {"이 책", "반복문", "바스와니"} <= set(STYLE_FORBIDDEN)


def test_the_scan_sees_the_chapters():
    names = [name for name, _ in course_texts()]
    assert "glossary.md" in names and any(n.endswith(".ipynb") for n in names)


@pytest.mark.parametrize("variant", FORBIDDEN)
def test_no_non_standard_variant(variant):
    hits = [f"{name}: …{text[max(0, m.start() - 20):m.end() + 20]}…"
            for name, text in course_texts() for m in re.finditer(re.escape(variant), text)]
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

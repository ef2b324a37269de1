"""Korean terms: one form everywhere, all of them in the glossary."""

import json
import re

import pytest

from tools.toc import ROOT

# The course's terms (COURSE.md, "Korean terms"): Korean form and English original.
TERMS = {
    "어텐션": "attention",
    "어텐션 가중치": "attention weight",
    "어텐션 스코어": "attention score",
    "쿼리": "query",
    "키": "key",
    "값": "value",
    "스케일드 닷-프로덕트 어텐션": "scaled dot-product attention",
    "멀티 헤드 어텐션": "multi-head attention",
    "셀프 어텐션": "self-attention",
    "크로스 어텐션": "cross-attention",
    "가산 어텐션": "additive attention",
    "바다나우 어텐션": "Bahdanau attention",
    "인과 마스크": "causal mask",
    "패딩 마스크": "padding mask",
    "인코더": "encoder",
    "디코더": "decoder",
    "은닉 상태": "hidden state",
    "컨텍스트 벡터": "context vector",
    "트랜스포머": "Transformer",
}
# Forms the course never uses. "주의" is banned outright (it covers 주의력, 주의 가중치 and
# 다중 헤드 주의), so the course says 조심 or 유의 where it means "be careful".
# Solutions are 해답, the word sphinx-exercise puts on every solution's dropdown.
FORBIDDEN = ["주의", "스케일 도트 제품", "다중 헤드", "엔코더", "변압기", "어텐션 웨이트", "풀이"]


def course_texts():
    """(name, text) of every page and notebook the course publishes, and the helpers."""
    for path in sorted(ROOT.glob("*.md")) + sorted((ROOT / "chapters").glob("*.md")):
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

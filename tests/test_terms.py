"""Korean terms: one form everywhere, all of them in the glossary."""

import json
import re

import pytest

from tools.toc import ROOT


def terms_table() -> list[tuple[str, str, list[str]]]:
    """(Korean, English, forms never used) of each row of CONTRIBUTING.md's terms table."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    table = re.search(r"<!-- terms:start -->\n(.*?)<!-- terms:end -->", text, re.S).group(1)
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in table.splitlines()[2:] if line.strip()]
    return [(korean, english, [f.strip() for f in banned.split(",") if f.strip()])
            for korean, english, banned in rows]


TERMS = {korean: english for korean, english, _ in terms_table()}
FORBIDDEN = [form for _, _, banned in terms_table() for form in banned]


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
    assert {"주의", "풀이", "다중 헤드"} <= set(FORBIDDEN)


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

"""Tests of _ext/accessibility.py: the markup fixes found by the axe-core browser test."""

from _ext.accessibility import accessible_body, korean_landmarks

SUMMARY = ('<details class="admonition hide above-input">\n'
           '<summary aria-label="Toggle hidden content">\n'
           '<p class="collapsed admonition-title">코드 보기</p>\n')
CITATION = ('<div role="list" class="citation-list">\n'
            '<div class="citation" id="id26" role="doc-biblioentry">\n'
            '<span class="label">Ainslie et al., 2023</span>')


def test_folded_code_is_named_by_its_visible_text():
    fixed = accessible_body(SUMMARY)
    assert "<summary>\n" in fixed and "aria-label" not in fixed
    assert "코드 보기" in fixed


def test_bibliography_entries_are_list_items():
    fixed = accessible_body(CITATION)
    assert 'role="doc-biblioentry"' not in fixed
    assert '<div class="citation" id="id26" role="listitem">' in fixed
    assert '<div role="list" class="citation-list">' in fixed


def test_other_markup_is_left_alone():
    body = '<summary class="x">a</summary><div role="doc-biblioentry">b</div>'
    assert accessible_body(body) == body


def test_the_themes_landmarks_are_named_in_korean():
    page = ('<nav class="bd-links bd-docs-nav" aria-label="Main">…</nav>'
            '<div><nav aria-label="Page"><ul></ul></nav></div>')
    fixed = korean_landmarks(page)
    assert 'aria-label="Main"' not in fixed and 'aria-label="Page"' not in fixed
    assert 'aria-label="사이트 목차"' in fixed and 'aria-label="이 페이지의 목차"' in fixed
    assert korean_landmarks("<nav aria-label=\"Mainly\">") == "<nav aria-label=\"Mainly\">"

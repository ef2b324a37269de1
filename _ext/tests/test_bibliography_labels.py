"""Tests of _ext/bibliography_labels.py: author-year labels for the course's references."""

from pybtex.database import Entry, Person, parse_file

from _ext.bibliography_labels import AuthorYearLabels, author_year
from tools.toc import ROOT


def entry(key, authors, year):
    return Entry("article", fields={"title": "t", "year": year}, persons={
        "author": [Person(name) for name in authors]})


def test_one_two_and_more_authors():
    assert author_year(entry("a", ["Hinton, Geoffrey"], "2012")) == "Hinton, 2012"
    assert author_year(entry("b", ["Hochreiter, Sepp", "Schmidhuber, Jürgen"], "1997")) == \
        "Hochreiter and Schmidhuber, 1997"
    assert author_year(entry("c", ["Ba, Jimmy", "Kiros, Jamie", "Hinton, G"], "2016")) == \
        "Ba et al., 2016"


def test_same_authors_and_year_get_letters():
    entries = [entry("x", ["Luong, Minh"], "2015"), entry("y", ["Luong, Minh"], "2015"),
               entry("z", ["Cho, K"], "2014")]
    assert list(AuthorYearLabels().format_labels(entries)) == \
        ["Luong, 2015a", "Luong, 2015b", "Cho, 2014"]


def test_every_reference_has_a_distinct_label():
    entries = list(parse_file(ROOT / "references.bib").entries.values())
    labels = list(AuthorYearLabels().format_labels(entries))
    assert len(set(labels)) == len(labels) == len(entries)
    assert "Vaswani et al., 2017" in labels and "PyTorch Contributors, 2026" in labels

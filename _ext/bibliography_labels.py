"""Bibliography labels in the same author–year form as the citations in the text.

sphinxcontrib-bibtex's ``plain`` style labels the bibliography [1], [2], ... . This extension
registers the pybtex style ``author_year_labels``: ``plain`` (entries sorted by author, year,
title) with labels "Bahdanau et al., 2015", "Hochreiter and Schmidhuber, 1997" or "Radford et
al., 2019", and "2014a", "2014b" when the same authors have two entries in a year. The
chapters cite with the ``label`` reference style ("[Vaswani et al., 2017]"), which prints that
label, so a reader who follows a citation finds the same words at the entry.
"""

from __future__ import annotations

from collections import Counter
from string import ascii_lowercase

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle

STYLE = "author_year_labels"


def _last_names(entry) -> list[str]:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    return [" ".join(person.last_names).replace("{", "").replace("}", "") for person in people]


def author_year(entry) -> str:
    """The citation text of ``entry`` without brackets: "Vaswani et al., 2017"."""
    names = _last_names(entry) or [entry.fields.get("title", entry.key)]
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        labels = [author_year(entry) for entry in sorted_entries]
        counts, seen = Counter(labels), Counter()
        for label in labels:  # the same authors and year twice: 2019a, 2019b
            if counts[label] > 1:
                seen[label] += 1
                label += ascii_lowercase[seen[label] - 1]
            yield label


class AuthorYearStyle(PlainStyle):
    default_label_style = AuthorYearLabels


def setup(app):
    register_plugin("pybtex.style.formatting", STYLE, AuthorYearStyle)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

"""The status page (status.md, written by tools/course.py bench) is current."""

import re

import pytest

from tools.benchmark import title
from tools.toc import ROOT, toc_files, toc_notebooks

STATUS = ROOT / "status.md"


def pinned(name):
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    return re.search(rf"^{re.escape(name)}==([\w.]+)", text, re.M).group(1)


def test_status_page_is_in_the_toc():
    assert "status" in toc_files()


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_every_chapter_has_a_measured_row(nb_path):
    row = re.search(rf"^\| {re.escape(title(ROOT / nb_path))} \| ([\d.]+) \| (\d+) \|$",
                    STATUS.read_text(encoding="utf-8"), re.M)
    assert row, f"status.md has no row for {nb_path}: run python3.11 tools/course.py bench"
    seconds, megabytes = float(row.group(1)), int(row.group(2))
    assert 0 < seconds < 60 and 0 < megabytes < 1536, "over Binder's limits"


def test_status_versions_are_the_pinned_ones():
    text = STATUS.read_text(encoding="utf-8")
    assert f"NumPy {pinned('numpy')}" in text
    assert f"TensorFlow {pinned('tensorflow-cpu')}" in text
    assert re.search(r"Python 3\.11\.\d+", text)

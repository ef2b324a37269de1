"""The status page (status.md, written by tools/course.py bench and robustness) is current."""

import re

import pytest

from tools import robustness
from tools.benchmark import (
    MACHINE_DRIFT,
    TARGET_MB,
    TARGET_TOTAL_SECONDS,
    TARGET_TRAINING_SECONDS,
    title,
)
from tools.toc import ROOT, toc_files, toc_notebooks

STATUS = ROOT / "status.md"
TRAINING = set(robustness.training_chapters())


def pinned(name):
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    return re.search(rf"^{re.escape(name)}==([\w.]+)", text, re.M).group(1)


def row(nb_path):
    found = re.search(rf"^\| {re.escape(title(ROOT / nb_path))} \| ([\d.]+) \| (\d+) \| "
                      r"([\d,]+|—) \|$", STATUS.read_text(encoding="utf-8"), re.M)
    assert found, f"status.md has no row for {nb_path}: run python3.11 tools/course.py bench"
    rate = None if found.group(3) == "—" else float(found.group(3).replace(",", ""))
    return float(found.group(1)), int(found.group(2)), rate


def test_status_page_is_in_the_toc():
    assert "status" in toc_files()


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_every_chapter_has_a_measured_row_within_the_limits(nb_path):
    seconds, megabytes, rate = row(nb_path)
    assert 0 < seconds < 60 and 0 < megabytes < TARGET_MB, "over Binder's limits"
    if nb_path in TRAINING:
        assert seconds <= TARGET_TRAINING_SECONDS * MACHINE_DRIFT, \
            f"{nb_path} trains for too long: {seconds} s, target {TARGET_TRAINING_SECONDS} s"
        assert rate and rate > 0, f"{nb_path} reports no training throughput"
    else:
        assert rate is None


def test_the_whole_course_runs_within_its_budget():
    total = sum(row(nb_path)[0] for nb_path in toc_notebooks())
    assert total <= TARGET_TOTAL_SECONDS * MACHINE_DRIFT


def test_status_versions_are_the_pinned_ones():
    text = STATUS.read_text(encoding="utf-8")
    assert f"NumPy {pinned('numpy')}" in text
    assert f"TensorFlow {pinned('tensorflow-cpu')}" in text
    assert re.search(r"Python 3\.11\.\d+", text)


def test_intro_roadmap_is_the_measured_one():
    from tools.benchmark import roadmap
    from tools.markers import block

    seconds = {p.with_suffix("").as_posix(): row(p)[0] for p in toc_notebooks()}
    assert block(ROOT / "intro.md", "roadmap") == roadmap(seconds), \
        ("intro.md's roadmap is not the one roadmap.yml and status.md make: "
         "run tools/course.py bench")


def test_roadmap_has_every_chapter_and_nothing_else():
    import yaml

    entries = yaml.safe_load((ROOT / "roadmap.yml").read_text(encoding="utf-8"))
    assert set(entries) == {p.with_suffix("").as_posix() for p in toc_notebooks()}
    assert all(e["question"].endswith("?") and e["prerequisites"] for e in entries.values())

"""The status page (status.md, written by tools/course.py bench and robustness) is current."""

import re

import pytest

from tools import robustness
from tools.benchmark import TARGET_MB, TARGET_MEAN_RATIO, TARGET_RATIO, title
from tools.toc import ROOT, toc_files, toc_notebooks

STATUS = ROOT / "status.md"
TRAINING = set(robustness.training_chapters())


def pinned(name):
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    return re.search(rf"^{re.escape(name)}==([\w.]+)", text, re.M).group(1)


def row(nb_path):
    """(seconds, multiple of F, multiple of F on the AVX2 path, peak MB, throughput or None)
    of a chapter in status.md."""
    found = re.search(rf"^\| {re.escape(title(ROOT / nb_path))} \| ([\d.]+) \| ([\d.]+) \| "
                      r"([\d.]+) \| (\d+) \| ([\d,]+|—) \|$", STATUS.read_text(encoding="utf-8"),
                      re.M)
    assert found, f"status.md has no row for {nb_path}: run python3.11 tools/course.py bench"
    rate = None if found.group(5) == "—" else float(found.group(5).replace(",", ""))
    return (float(found.group(1)), float(found.group(2)), float(found.group(3)),
            int(found.group(4)), rate)


def f_seconds():
    """F: the seconds of `import keras, tensorflow` measured in the same bench run."""
    found = re.search(r"^- F = `import keras, tensorflow`의 시간 ([\d.]+)초",
                      STATUS.read_text(encoding="utf-8"), re.M)
    assert found, "status.md does not give F: run python3.11 tools/course.py bench"
    return float(found.group(1))


def test_status_page_is_in_the_toc():
    assert "status" in toc_files()


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_every_chapter_has_a_measured_row_within_the_limits(nb_path):
    seconds, ratio, avx2_ratio, megabytes, rate = row(nb_path)
    assert 0 < megabytes < TARGET_MB, f"{nb_path} needs {megabytes} MB, limit {TARGET_MB} MB"
    # The table's own arithmetic. Seconds are rounded to 0.1, F and the ratio to 0.01, so the
    # ratio of the rounded numbers may differ from the printed one by at most what those
    # roundings can move it: 0.05 / F, ratio * 0.005 / F and 0.005.
    f = f_seconds()
    slack = 0.05 / f + ratio * 0.005 / f + 0.005
    assert abs(seconds / f - ratio) <= slack + 1e-9, (seconds, f, ratio, slack)
    if nb_path in TRAINING:
        assert rate and rate > 0, f"{nb_path} reports no training throughput"
    else:
        assert rate is None


# Chapters the last benchmark measured over the per-chapter target. Each is an expected failure
# that is still run and reported (XFAIL), not a pass; strict, so that a chapter back within the
# target fails here until it is taken off this list. Kept short and dated, with the measured
# ratio as the reason. Empty from the benchmark of 2026-11-26 07:14 (every chapter within 5 F
# on both paths) to that of 2026-11-27 16:50; chapter 10, over on the AVX2 path then, was back
# within the target on 2026-11-28 00:22. F itself measured 3.27 s that night against 3.95 s the
# afternoon before, with the chapters' seconds about the same.
OVER_TARGET: dict[str, str] = {
    "05_lstm_attention_time_series": "2026-11-28 06:56: 5.03 F, 4.93 F on the AVX2 path (18.3 s, "
                                     "F 3.63 s); 4.79 and 5.02 F at 04:31 before its GunPoint "
                                     "training was cut by a fifth",
    "11_rotary_alibi_length": "2026-11-28 06:56: 5.02 F, 5.09 F on the AVX2 path (18.2 s, "
                              "F 3.63 s); 4.36 and 4.34 F at 04:31 with the same code",
    "15_pretrained_language_model": "2026-11-28 06:56: 5.14 F (18.7 s, F 3.63 s); 4.68 F at 04:31 "
                                    "with the same code",
}


def within_target_cases() -> list:
    return [pytest.param(nb_path, id=str(nb_path), marks=[
        pytest.mark.xfail(strict=True, reason=OVER_TARGET[nb_path.stem])]
        if nb_path.stem in OVER_TARGET else []) for nb_path in toc_notebooks()]


@pytest.mark.parametrize("nb_path", within_target_cases())
def test_every_chapter_runs_within_the_target_on_both_paths(nb_path):
    _, ratio, avx2_ratio, _, _ = row(nb_path)
    assert ratio <= TARGET_RATIO, f"{nb_path} runs for {ratio} F, target {TARGET_RATIO:g} F"
    assert avx2_ratio <= TARGET_RATIO, \
        f"{nb_path} runs for {avx2_ratio} F on the AVX2 path, target {TARGET_RATIO:g} F"


def test_the_list_of_chapters_over_the_target_names_chapters():
    assert set(OVER_TARGET) <= {p.stem for p in toc_notebooks()}


def mean_ratios() -> dict[str, tuple[float, float]]:
    """{path: (the mean status.md prints, the mean of the chapters' rows)} for both paths."""
    found = re.search(r"^\| 합계 \(배수는 평균\) \| [\d.]+ \| ([\d.]+) \| ([\d.]+) \| \| \|$",
                      STATUS.read_text(encoding="utf-8"), re.M)
    assert found, "status.md has no mean row: run python3.11 tools/course.py bench"
    means = {}
    for column, path in ((1, "default"), (2, "AVX2")):
        ratios = [row(nb_path)[column] for nb_path in toc_notebooks()]
        means[path] = (float(found.group(column)), sum(ratios) / len(ratios))
    return means


def test_the_mean_row_is_the_mean_of_the_chapters():
    for path, (printed, mean) in mean_ratios().items():
        assert abs(printed - mean) < 0.015, f"status.md's mean ({path} path) is stale"


# The course over its mean target, as the last benchmark measured it: an expected failure that is
# still run and reported (XFAIL), strict, so that it fails here once the course is back within
# the target and this note has to go. None when the course is within the target.
OVER_BUDGET: str | None = ("2026-11-28 06:56: 3.58 F on average, 3.61 F on the AVX2 path, "
                           "17 chapters (220.9 s, F 3.63 s); 3.45 and 3.58 F at 04:31")


@pytest.mark.xfail(OVER_BUDGET is not None, strict=True, reason=OVER_BUDGET or "")
def test_the_whole_course_runs_within_its_budget():
    for path, (_, mean) in mean_ratios().items():
        assert mean <= TARGET_MEAN_RATIO, \
            f"the chapters run for {mean:.2f} F on average on the {path} path, target " \
            f"{TARGET_MEAN_RATIO:g} F"


def test_the_notes_under_the_table_are_the_benchmarks_own():
    """The paragraph under the table is what tools/benchmark.py writes now (its --status
    rewrites it without running the chapters), and it defines the throughput per model."""
    from tools.benchmark import notes
    from tools.markers import block

    assert block(STATUS, "bench").endswith("\n\n" + notes()), \
        "status.md's notes under the bench table are stale: run .venv/bin/python " \
        "tools/benchmark.py --status"
    assert "모델 수 × 모델마다 학습한 시퀀스 수" in notes()


def test_the_status_option_rewrites_the_notes_only(tmp_path):
    from tools.benchmark import notes, rewrite_notes
    from tools.markers import block

    page = tmp_path / "status.md"
    page.write_text("# 글\n<!-- bench:start -->\n- 잰 값\n\n| 표 |\n\n낡은 설명\n"
                    "<!-- bench:end -->\n", encoding="utf-8")
    rewrite_notes(page)
    assert block(page, "bench") == f"- 잰 값\n\n| 표 |\n\n{notes()}"


def test_every_throughput_description_names_its_number_of_models():
    for path in TRAINING:
        name = f"ch{int(path.stem[:2])}_sequence_steps_per_second"
        assert re.search(r"모델 \d개", robustness.DESCRIPTIONS.get(name, "")), \
            f"{name}: its description in tools/robustness.py says how many models the " \
            "throughput sums, e.g. 학습 처리량(모델 1개, 시퀀스·시점/초)"


def test_status_versions_are_the_pinned_ones():
    text = STATUS.read_text(encoding="utf-8")
    assert f"NumPy {pinned('numpy')}" in text
    assert f"TensorFlow {pinned('tensorflow-cpu')}" in text
    assert re.search(r"Python 3\.11\.\d+", text)


def test_intro_roadmap_is_the_measured_one():
    from tools.benchmark import roadmap
    from tools.markers import block

    times = {p.with_suffix("").as_posix(): row(p)[:2] for p in toc_notebooks()}
    assert block(ROOT / "intro.md", "roadmap") == roadmap(times), \
        ("intro.md's roadmap is not the one roadmap.yml and status.md make: "
         "run tools/course.py bench")


def test_roadmap_has_every_chapter_and_nothing_else():
    import yaml

    entries = yaml.safe_load((ROOT / "roadmap.yml").read_text(encoding="utf-8"))
    assert set(entries) == {p.with_suffix("").as_posix() for p in toc_notebooks()}
    assert all(e["question"].endswith("?") and e["prerequisites"] for e in entries.values())


def test_every_page_has_its_lighthouse_scores():
    """The phone speed table (tools/lighthouse.py) has a row of four scores for every page."""
    from tools.markers import block  # noqa: PLC0415

    text = block(STATUS, "lighthouse")
    from tools.lighthouse import label  # noqa: PLC0415

    for name in toc_files():
        found = re.search(rf"^\| {re.escape(label(name))} \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|",
                          text, re.M)
        assert found, f"status.md has no Lighthouse row for {name}: run tools/lighthouse.py"
        assert all(0 <= int(score) <= 100 for score in found.groups()), found.group(0)

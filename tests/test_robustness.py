"""The robustness table (helpers/robustness.json, tools/robustness.py) is current and holds.

Every chapter that makes claims about a trained model was run for COURSE_SEED 0-4 on both
TensorFlow CPU kernel paths after its code last changed, and every claim held in every run.
"""

import json
import re

import pytest

from tools import robustness
from tools.markers import block
from tools.toc import ROOT

TABLE = json.loads(robustness.TABLE.read_text(encoding="utf-8")) \
    if robustness.TABLE.exists() else {"chapters": {}}
CHAPTERS = robustness.training_chapters()


def entry(path):
    found = TABLE["chapters"].get(path.as_posix())
    assert found, f"{path} makes claims but is not in helpers/robustness.json: " \
                  f"run python3.11 tools/course.py robustness {path}"
    return found


def test_chapters_that_train_are_found():
    names = {p.stem for p in CHAPTERS}
    assert {"05_lstm_attention_time_series", "06_seq2seq_cross_attention"} <= names


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_table_is_not_stale(path):
    assert entry(path)["code_hash"] == robustness.code_hash(ROOT / path), \
        f"{path}'s code changed after its robustness runs: " \
        f"run python3.11 tools/course.py robustness {path}"


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_every_seed_and_kernel_path_ran_without_errors(path):
    runs = entry(path)["runs"]
    assert sorted((r["seed"], r["onednn"]) for r in runs) == \
        [(s, int(k)) for s in robustness.SEEDS for k in robustness.KERNEL_PATHS]
    assert [r for r in runs if r["errors"]] == []


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_every_claim_was_measured_in_every_run(path):
    metrics = entry(path)["metrics"]
    assert set(metrics) == set(robustness.claimed_metrics(ROOT / path))
    runs = len(robustness.SEEDS) * len(robustness.KERNEL_PATHS)
    assert {name: len(m["values"]) for name, m in metrics.items()} == \
        {name: runs for name in metrics}


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_every_claim_holds_for_every_seed_and_kernel_path(path):
    for name, m in entry(path)["metrics"].items():
        if m["at_least"] is not None:
            assert m["min"] >= m["at_least"], f"{name}: min {m['min']} < {m['at_least']}"
        if m["at_most"] is not None:
            assert m["max"] <= m["at_most"], f"{name}: max {m['max']} > {m['at_most']}"
        assert (m["min"], m["max"]) == (min(m["values"]), max(m["values"]))


def metrics_to_describe():
    """Every metric a chapter claims or the table holds, with where it comes from."""
    found = {name: str(path) for path in CHAPTERS
             for name in robustness.claimed_metrics(ROOT / path)}
    for chapter, entry in TABLE["chapters"].items():
        for name in entry["metrics"]:
            found.setdefault(name, f"helpers/robustness.json ({chapter})")
    return found


@pytest.mark.parametrize("name, source", metrics_to_describe().items())
def test_every_metric_has_a_korean_description(name, source):
    description = robustness.DESCRIPTIONS.get(name, "")
    assert re.search("[가-힣]", description), (
        f"metric {name!r} ({source}) has no Korean description: add a line "
        f'"{name}": "무엇을 재는가 (한 줄)" to DESCRIPTIONS in tools/robustness.py, then run '
        ".venv/bin/python tools/robustness.py --status")
    assert "\n" not in description and "|" not in description \
        and not description.endswith("."), \
        f"{name}: one line of text, no '|' and no final period (it is a table cell)"


def test_every_description_is_of_a_claimed_metric():
    stale = set(robustness.DESCRIPTIONS) - set(metrics_to_describe())
    assert not stale, f"tools/robustness.py describes metrics no chapter claims: {sorted(stale)}"


def test_the_status_option_rewrites_the_tables_without_running_chapters(tmp_path, monkeypatch):
    accuracy = {"at_least": 0.9, "at_most": None, "min": 0.95, "median": 0.96, "max": 0.97,
                "values": [0.95, 0.96, 0.97]}
    table = {"when": "2026-01-01 00:00 UTC", "versions": "Linux", "chapters": {
        "chapters/05_x.ipynb": {"metrics": {"ch5_accuracy_lstm": accuracy}}}}
    sweep = {"chapters": {"chapters/05_x.ipynb": {
        "metrics": {"ch5_accuracy_lstm": {**accuracy, "min": 0.85, "values": [0.85, 0.96, 0.97]}},
        "seeds": [5, 6],
        "cpu": "native", "when": "2026-01-02 00:00 UTC"}}}
    (tmp_path / "robustness.json").write_text(json.dumps(table), encoding="utf-8")
    (tmp_path / "sweep.json").write_text(json.dumps(sweep), encoding="utf-8")
    (tmp_path / "status.md").write_text("# 글\n<!-- robustness:start -->\n낡은 표\n"
                                        "<!-- robustness:end -->\n<!-- robustness-sweep:start -->"
                                        "\n낡은 표\n<!-- robustness-sweep:end -->\n",
                                        encoding="utf-8")
    monkeypatch.setattr(robustness, "TABLE", tmp_path / "robustness.json")
    monkeypatch.setattr(robustness, "SWEEP", tmp_path / "sweep.json")
    monkeypatch.setattr(robustness, "STATUS", tmp_path / "status.md")
    monkeypatch.setattr(robustness, "measure", None)  # running a chapter would fail
    robustness.main([robustness.STATUS_ONLY])
    shown = block(tmp_path / "status.md", "robustness")
    assert shown == robustness.markdown(table)
    assert "| 05 | `ch5_accuracy_lstm`<br>LSTM 분류기의 테스트 정확도 | 95.0% | 96.0% | 97.0% | " \
           "≥ 90% |" in shown
    swept = block(tmp_path / "status.md", "robustness-sweep")
    assert swept == robustness.sweep_markdown(sweep)
    assert "| `ch5_accuracy_lstm` | 85.0% | 96.0% | 97.0% | ≥ 90% | 2/3 |" in swept


def entry_of(values, fmt=".3f", at_least=None, at_most=None):
    return {"values": values, "min": min(values), "max": max(values), "fmt": fmt,
            "at_least": at_least, "at_most": at_most}


@pytest.mark.parametrize("name, what, entry, cells", [
    # a share of cases, named by its description or by the chapter's percent format
    ("a", "테스트 정확도", entry_of([0.9675, 1.0], at_least=0.9), ("96.75%", "100.0%", "≥ 90%")),
    ("b", "맞힌 비율", entry_of([0.0, 0.26], at_most=0.9), ("0.0%", "26.0%", "≤ 90%")),
    ("c", "0이 받는 몫", entry_of([0.005181, 0.0183], ".1%"), ("0.5181%", "1.83%", "—")),
    # a difference of shares: percentage points
    ("d", "정확도가 떨어진 폭", entry_of([0.0775, 0.3225], at_least=0.02),
     ("7.75%p", "32.25%p", "≥ 2%p")),
    # already in points, as the description says: not multiplied again
    ("e", "정확도 − 다른 것(%p)", entry_of([-2.5, 6.7], ".1f", -8, 8),
     ("-2.5%p", "6.7%p", "-8%p – 8%p")),
    # weights, multiples, seconds and throughputs stay numbers
    ("f", "가중치의 합", entry_of([0.7225, 0.7343], ".2f", 0.3), ("0.7225", "0.7343", "≥ 0.3")),
    ("g", "균등 분포의 몫에 대한 배수", entry_of([0.985, 1.039], at_least=0.9, at_most=1.1),
     ("0.985", "1.039", "0.9 – 1.1")),
    ("h", "학습 처리량(모델 1개, 시퀀스·시점/초)", entry_of([22271.0, 64370.9], ",.0f"),
     ("22,271", "64,371", "—")),
    # a "rate" that is not a share (above 1) stays a number
    ("i", "비율", entry_of([0.5, 1.5], at_least=0.1), ("0.5", "1.5", "≥ 0.1")),
])
def test_shares_show_as_percentages_and_the_rest_as_numbers(monkeypatch, name, what, entry,
                                                            cells):
    monkeypatch.setitem(robustness.DESCRIPTIONS, name, what)
    shown = robustness.unit(name, entry)
    assert (robustness._shown(entry["min"], shown), robustness._shown(entry["max"], shown),
            robustness.bound_text(entry, shown)) == cells


def test_every_accuracy_of_the_course_shows_as_a_percentage():
    """The chapters print accuracies as 97.0%; so does the status page, whatever their fmt."""
    for entry in TABLE["chapters"].values():
        for name, m in entry["metrics"].items():
            what = robustness.DESCRIPTIONS.get(name, "")
            if "정확도" in what and not any(w in what for w in ("%p", "차이", "폭")):
                assert robustness.unit(name, m) == robustness.PERCENT, name


def test_status_page_shows_the_table():
    assert block(ROOT / "status.md", "robustness") == robustness.markdown(TABLE)


def test_claimed_metrics_reads_check_and_report_calls(tmp_path):
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('claims.check("a", acc, at_least=0.9)\nx = 1'),
        nbformat.v4.new_code_cell('%matplotlib inline'),
        nbformat.v4.new_code_cell('report("b", seconds)\nx.check_other(name)')])
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    assert robustness.claimed_metrics(path) == {"a": "check", "b": "report"}


def test_claims_named_by_expressions_are_refused(tmp_path):
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('claims.check(f"ch9_{key}", 1, at_least=0)')])
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match="string literal"):
        robustness.claimed_metrics(path)


def test_code_hash_ignores_prose_and_outputs_but_not_code(tmp_path):
    import nbformat
    cells = [nbformat.v4.new_markdown_cell("글"), nbformat.v4.new_code_cell("x = 1")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    before = robustness.code_hash(path)
    cells[0].source = "다른 글"
    cells[1].outputs = [nbformat.v4.new_output("stream", text="1")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert robustness.code_hash(path) == before
    cells[1].source = "x = 2"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert robustness.code_hash(path) != before


def glued(path):
    """``{key: text}`` of every value the committed notebook glued for its page, as
    ``{glue:text}`` shows it (myst-nb's own formatting of the saved plain text)."""
    import nbformat
    from myst_nb.core.variables import format_plain_text
    found = {}
    for cell in nbformat.read(ROOT / path, as_version=4).cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("scrapbook")
            if meta:
                prefix = meta.get("mime_prefix", "")
                found[meta["name"]] = format_plain_text(out["data"][prefix + "text/plain"], "")
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_the_page_quotes_the_current_ranges(path):
    from helpers import claims

    pages = {name[:-len("_range")]: text for name, text in glued(path).items()
             if name.endswith("_range")}
    assert set(pages) == set(robustness.claimed_metrics(ROOT / path)), \
        f"{path}: re-execute it (tools/course.py execute) after the robustness runs"
    stale = {name: text for name, text in pages.items() if text != claims.seed_range(name)}
    assert not stale, f"{path} quotes ranges that are not the table's: {stale}; " \
                      "re-execute the chapter"


def test_gunpoint_one_nn_lies_inside_the_trained_models_range():
    # Chapter 5 says the 1-NN baseline lies inside the range of the trained model's accuracy.
    from helpers import claims
    from helpers.timeseries import load_gunpoint

    (x_train, y_train), (x_test, y_test) = load_gunpoint("train"), load_gunpoint("test")
    distances = ((x_test[:, None, :, 0] - x_train[None, :, :, 0]) ** 2).sum(axis=2)
    one_nn = (y_train[distances.argmin(axis=1)] == y_test).mean()
    measured = claims.measured("ch5_gunpoint_accuracy")
    assert measured["min"] < one_nn < measured["max"]


def test_summary_keeps_small_values_and_six_significant_digits():
    records = [{"name": "m", "value": v, "at_least": None, "at_most": 1e-4, "fmt": ".1e"}
               for v in (2.0981e-05, 0.0, 1.4123456e-05)]
    records.append({"name": "t", "value": 208494.4213, "at_least": None, "at_most": None})
    summary = robustness.summarise(records)
    assert summary["m"]["values"] == [2.0981e-05, 0.0, 1.41235e-05]
    assert (summary["m"]["min"], summary["m"]["max"]) == (0.0, 2.0981e-05)
    assert summary["m"]["median"] == 1.41235e-05 and summary["t"]["min"] == 208494.0


def test_code_hash_ignores_the_colab_set_up_cell(tmp_path):
    import nbformat

    from tools.colab_cell import cell_source

    colab = nbformat.v4.new_code_cell(cell_source())
    cells = [colab, nbformat.v4.new_code_cell("x = 1")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    before = robustness.code_hash(path)
    colab.source = colab.source.replace("HELPERS_SOURCE = ", "HELPERS_SOURCE = 'elsewhere' or ")
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert robustness.code_hash(path) == before
    assert robustness.code_cells(path) == ["x = 1"]


def test_status_page_shows_the_sweeps():
    if not robustness.SWEEP.exists():
        pytest.fail("helpers/robustness_sweep.json is missing: run "
                    "python3.11 tools/course.py robustness --seeds 5-9")
    table = json.loads(robustness.SWEEP.read_text(encoding="utf-8"))
    assert block(ROOT / "status.md", "robustness-sweep") == robustness.sweep_markdown(table)
    assert set(table["chapters"]) <= {p.as_posix() for p in CHAPTERS}


def test_held_counts_the_runs_within_the_bound():
    entry = {"at_least": 0.5, "at_most": None, "values": [0.4, 0.5, 0.9]}
    assert robustness.held(entry) == 2
    assert robustness.held({"at_least": None, "at_most": 1, "values": [2, 0]}) == 1

"""Tests of helpers.claims: bounds are enforced, values recorded for the robustness runs."""

import json

import pytest

from helpers import claims


@pytest.fixture
def table(tmp_path, monkeypatch):
    """A robustness table with one metric, in place of helpers/robustness.json."""
    path = tmp_path / "robustness.json"
    path.write_text(json.dumps({"chapters": {"chapters/99_x.ipynb": {"metrics": {
        "x_accuracy": {"min": 0.9512, "median": 0.96, "max": 0.9788,
                       "at_least": 0.9, "at_most": None},
        "x_same": {"min": 0.5, "median": 0.5, "max": 0.5, "at_least": None, "at_most": 1,
                   "fmt": ".2f"}}}}}))
    monkeypatch.setattr(claims, "TABLE", path)
    return path


def test_seed_range_formats_both_ends(table):
    assert claims.seed_range("x_accuracy") == "0.951–0.979"
    assert claims.seed_range("x_accuracy", ".1%") == "95.1%–97.9%"


def test_seed_range_gives_one_number_when_the_ends_agree(table):
    assert claims.seed_range("x_same") == "0.50"


def test_seed_range_uses_the_recorded_format_unless_given_one(table):
    assert claims.seed_range("x_same", ".0%") == "50%"
    assert claims.seed_range("x_accuracy") == "0.951–0.979"  # no format recorded: .3f


def test_seed_range_of_an_unmeasured_metric_says_what_to_run(table):
    with pytest.raises(LookupError, match="tools/course.py robustness"):
        claims.seed_range("never_measured")


def test_check_passes_inside_the_bound(table, tmp_path, monkeypatch):
    record = tmp_path / "metrics.jsonl"
    monkeypatch.setenv("COURSE_METRICS", str(record))
    claims.check("x_accuracy", 0.95, at_least=0.9)
    claims.check("x_accuracy", 0.9, at_least=0.9, at_most=0.9)
    assert [json.loads(line)["value"] for line in record.read_text().splitlines()] == [0.95, 0.9]


@pytest.mark.parametrize("bound", [{"at_least": 0.96}, {"at_most": 0.94},
                                   {"at_least": 0.1, "at_most": 0.5}])
def test_check_fails_outside_the_bound(table, bound):
    with pytest.raises(claims.ClaimError, match="x_accuracy = 0.95"):
        claims.check("x_accuracy", 0.95, **bound)


def test_claim_error_is_an_assertion_error():
    assert issubclass(claims.ClaimError, AssertionError)


def test_check_records_the_value_before_failing(table, tmp_path, monkeypatch):
    record = tmp_path / "metrics.jsonl"
    monkeypatch.setenv("COURSE_METRICS", str(record))
    claims.check("x_accuracy", 0.97, at_least=0.9)
    with pytest.raises(claims.ClaimError):
        claims.check("x_accuracy", 0.5, at_least=0.9)
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines == [{"name": "x_accuracy", "value": 0.97, "at_least": 0.9, "at_most": None,
                      "fmt": ".3f"},
                     {"name": "x_accuracy", "value": 0.5, "at_least": 0.9, "at_most": None,
                      "fmt": ".3f"}]


def test_report_records_without_a_bound(table, tmp_path, monkeypatch):
    record = tmp_path / "metrics.jsonl"
    monkeypatch.setenv("COURSE_METRICS", str(record))
    claims.report("x_same", 0.5)
    assert json.loads(record.read_text()) == {"name": "x_same", "value": 0.5,
                                              "at_least": None, "at_most": None,
                                              "fmt": ".3f"}


def test_nothing_is_recorded_without_the_variable(table, monkeypatch, tmp_path):
    monkeypatch.delenv("COURSE_METRICS", raising=False)
    monkeypatch.chdir(tmp_path)
    claims.check("x_accuracy", 0.97, at_least=0.9)
    assert list(tmp_path.iterdir()) == [table]


def test_check_needs_a_bound(table):
    with pytest.raises(ValueError, match="give at_least, at_most or both"):
        claims.check("x_accuracy", 0.97)


@pytest.mark.parametrize("value, error", [("0.9", TypeError), (None, TypeError),
                                          (True, TypeError), (float("nan"), ValueError)])
def test_check_rejects_values_that_are_not_real_numbers(table, value, error):
    with pytest.raises(error, match="x_accuracy"):
        claims.check("x_accuracy", value, at_least=0.9)


def test_check_accepts_numpy_scalars(table, tmp_path, monkeypatch):
    import numpy as np
    record = tmp_path / "metrics.jsonl"
    monkeypatch.setenv("COURSE_METRICS", str(record))
    claims.check("x_accuracy", np.float32(0.96), at_least=0.9)
    assert json.loads(record.read_text())["value"] == pytest.approx(0.96)


def test_glue_displays_exactly_what_myst_nb_glue_displays(monkeypatch):
    import IPython.display
    from myst_nb.ext import glue as myst_nb_glue

    ours, theirs = [], []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: ours.append((a, k)))
    monkeypatch.setattr(myst_nb_glue, "ipy_display", lambda *a, **k: theirs.append((a, k)))
    for value in (0.5, 3, claims._Text("0.90–0.95")):
        claims._display_for_glue("name", value)
        myst_nb_glue.glue("name", value, display=False)
    assert len(ours) == 3 and ours == theirs


def test_glue_shows_numpy_scalars_as_plain_numbers(monkeypatch):
    # np.float64's repr is "np.float64(0.3)", which a {glue:text}`name:.2f` role cannot format
    import IPython.display
    import numpy as np

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, **k: shown.append(data))
    claims.glue("gap", np.float64(0.3))
    claims.glue("count", np.int64(39))
    plain = [d["application/papermill.record/text/plain"] for d in shown]
    assert plain == ["0.3", "39"]


def write_runs(path, seeds, values, **entry):
    path.write_text(json.dumps({"chapters": {"chapters/99_x.ipynb": {
        "runs": [{"seed": s, "onednn": k} for s in seeds for k in (0, 1)],
        "metrics": {"x_rate": {"min": min(values), "median": 0.5, "max": max(values),
                               "at_least": None, "at_most": None, "values": values}},
        **entry}}}))


@pytest.fixture
def measured_runs(tmp_path, monkeypatch):
    """A table of seeds 0-1 and a sweep of seeds 2-3 of one metric."""
    write_runs(tmp_path / "table.json", [0, 1], [0.9, 0.9, 0.1, 0.2])
    write_runs(tmp_path / "sweep.json", [2, 3], [0.8, 0.8, 0.7, 0.6], cpu="native")
    monkeypatch.setattr(claims, "TABLE", tmp_path / "table.json")
    monkeypatch.setattr(claims, "SWEEP", tmp_path / "sweep.json")
    return tmp_path


def test_runs_pairs_every_value_with_its_seed_and_path(measured_runs):
    found = claims.runs("x_rate")
    assert [(r["seed"], r["onednn"], r["value"]) for r in found] == [
        (0, 0, 0.9), (0, 1, 0.9), (1, 0, 0.1), (1, 1, 0.2),
        (2, 0, 0.8), (2, 1, 0.8), (3, 0, 0.7), (3, 1, 0.6)]


def test_runs_counts_a_seed_once_and_leaves_out_the_avx2_path(measured_runs):
    write_runs(measured_runs / "sweep.json", [1, 2], [0.3, 0.3, 0.8, 0.8], cpu="native")
    assert [r["seed"] for r in claims.runs("x_rate")] == [0, 0, 1, 1, 2, 2]
    write_runs(measured_runs / "sweep.json", [2, 3], [0.8, 0.8, 0.7, 0.6], cpu="avx2")
    assert len(claims.runs("x_rate")) == 4
    (measured_runs / "sweep.json").unlink()
    assert len(claims.runs("x_rate")) == 4


def test_runs_refuses_values_that_do_not_pair_with_runs(measured_runs):
    write_runs(measured_runs / "sweep.json", [2, 3], [0.8, 0.8, 0.7], cpu="native")
    with pytest.raises(ValueError, match="4 runs but 3 values"):
        claims.runs("x_rate")


def test_runs_of_an_unmeasured_metric_says_what_to_run(measured_runs):
    with pytest.raises(LookupError, match="tools/course.py robustness"):
        claims.runs("never_measured")
    with pytest.raises(TypeError, match="non-empty string"):
        claims.runs("")


@pytest.mark.parametrize("text", ["1.05, 1.17, 1.57", "1.00", "0.070", "(0, 1, 2)", "36–59%p",
                                  "균등 분포와 비슷하게 본다", "it's"])
def test_glued_text_reaches_the_page_as_written(monkeypatch, text):
    # the site formats the plain text with myst-nb's format_plain_text (literal_eval first)
    import IPython.display
    from myst_nb.core.variables import format_plain_text

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, **k: shown.append(data))
    claims.glue("words", text)
    plain = shown[0]["application/papermill.record/text/plain"]
    assert format_plain_text(plain, "") == text


@pytest.mark.parametrize("text", ["Keras:   [0.25 0.25]\nhelpers: [0. 0.]", "True\n마스크: [1 0]"])
def test_text_for_the_glue_directive_is_its_own_plain_text(monkeypatch, text):
    # the {glue} directive shows the plain text as it is, without literal_eval
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, **k: shown.append(data))
    claims.glue("block", text)
    assert shown[0]["application/papermill.record/text/plain"] == text

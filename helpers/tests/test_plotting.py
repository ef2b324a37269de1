"""Tests of helpers.plotting: figures, Korean glyphs, label checks."""

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.font_manager import FontProperties, findfont

from helpers.plotting import attention_heatmap

TOKENS = ["나는", "오늘", "학교에", "갔다"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def draw_without_warnings(fig):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.canvas.draw()
    return [str(w.message) for w in caught]


def test_korean_font_is_the_bundled_one():
    font_file = findfont(FontProperties(family=matplotlib.rcParams["font.family"]))
    assert "Nanum" in font_file, font_file


def test_korean_labels_render_without_missing_glyphs():
    weights = np.full((4, 4), 0.25)
    fig = attention_heatmap(weights, TOKENS, titles=["셀프 어텐션"], annotate=True)
    messages = draw_without_warnings(fig)
    assert not [m for m in messages if "missing from font" in m or "Glyph" in m], messages


def test_several_matrices_side_by_side_share_one_colorbar():
    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(3, 4))
    fig = attention_heatmap(weights, TOKENS, titles=["가", "나", "다"])
    heatmaps = [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]
    assert len(heatmaps) == 3
    assert len(fig.axes) == 4  # three heatmaps and one colour bar
    assert [ax.get_title() for ax in heatmaps] == ["가", "나", "다"]
    assert [t.get_text() for t in heatmaps[0].get_xticklabels()] == TOKENS


def test_list_of_matrices_and_cross_attention_labels():
    w = np.full((2, 3), 1 / 3)
    fig = attention_heatmap([w, w], ["a", "b", "c"], ["쿼리1", "쿼리2"])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["쿼리1", "쿼리2"]
    assert ax.images[0].get_array().shape == (2, 3)


def test_annotations_show_every_value():
    w = np.array([[0.7, 0.3], [0.5, 0.5]])
    fig = attention_heatmap(w, ["The", "cat"], annotate=True)
    texts = sorted(t.get_text() for t in fig.axes[0].texts)
    assert texts == ["0.30", "0.50", "0.50", "0.70"]


@pytest.mark.parametrize("weights, labels, match", [
    (np.ones((2, 3)), ["a", "b"], "key_labels has 2 labels .* 3 keys"),
    (np.ones(3), ["a", "b", "c"], r"got shape \(3,\)"),
    (np.full((2, 2), np.nan), ["a", "b"], "NaN"),
    ([np.ones((2, 2)), np.ones((2, 3))], ["a", "b"], "same shape"),
])
def test_bad_input_raises(weights, labels, match):
    with pytest.raises(ValueError, match=match):
        attention_heatmap(weights, labels)


def test_titles_must_match_matrices():
    with pytest.raises(ValueError, match="titles has 1 entries for 2 matrices"):
        attention_heatmap(np.ones((2, 2, 2)), ["a", "b"], titles=["하나"])

"""Tests of helpers.plotting: figures, Korean glyphs, label checks, figure metadata."""

import base64
import io
import warnings

import matplotlib
import matplotlib.image

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.font_manager import FontProperties, findfont

from helpers.plotting import (
    attention_heatmap,
    describe_figure_outputs,
    smallest_text_px,
)

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


def test_single_character_keys_are_not_rotated_but_words_are():
    digits = attention_heatmap(np.full((2, 8), 1 / 8), list("12345678"), ["일", "이"])
    words = attention_heatmap(np.full((2, 8), 1 / 8), [f"w{i}" for i in range(8)], ["a", "b"])
    assert {t.get_rotation() for t in digits.axes[0].get_xticklabels()} == {0}
    assert {t.get_rotation() for t in words.axes[0].get_xticklabels()} == {45}


def test_smallest_text_px_is_the_smallest_visible_font_in_png_pixels():
    fig, ax = plt.subplots(dpi=150)
    ax.set_title("제목", fontsize=12)
    ax.tick_params(labelsize=10)
    ax.text(0.5, 0.5, "작은 글씨", fontsize=7.2)
    ax.text(0.5, 0.2, "보이지 않는 글씨", fontsize=3).set_visible(False)
    assert smallest_text_px(fig) == pytest.approx(7.2 * 150 / 72)


def test_smallest_text_px_rejects_what_it_cannot_measure():
    with pytest.raises(TypeError, match="Figure"):
        smallest_text_px("figure.png")
    with pytest.raises(ValueError, match="no visible text"):
        smallest_text_px(plt.figure())


class FakeShell:
    """Just enough of IPython's shell: a display formatter with a PNG printer for figures."""

    def __init__(self):
        from IPython.core.formatters import DisplayFormatter
        from matplotlib_inline.backend_inline import select_figure_formats

        self.display_formatter = DisplayFormatter()
        select_figure_formats(self, {"png"})


def test_figure_outputs_carry_their_display_width_and_smallest_text():
    shell = FakeShell()
    describe_figure_outputs(shell)
    describe_figure_outputs(shell)  # a second call must not wrap twice
    fig, ax = plt.subplots(figsize=(4, 3), dpi=150)
    ax.set_xlabel("시점", fontsize=9)
    data, metadata = shell.display_formatter.format(fig)
    png = io.BytesIO(base64.b64decode(data["image/png"]))
    png_width = matplotlib.image.imread(png, format="png").shape[1]
    assert metadata["image/png"] == {"width": round(png_width * 96 / 150),
                                     "smallest_text_px": round(9 * 150 / 72, 2)}
    assert 0.8 * 4 * 96 < metadata["image/png"]["width"] < 1.1 * 4 * 96


def test_a_figure_without_text_is_shown_with_its_width_only():
    shell = FakeShell()
    describe_figure_outputs(shell)
    fig, ax = plt.subplots(figsize=(2, 1), dpi=150)
    ax.imshow([[0, 1], [1, 0]])
    ax.set(xticks=[], yticks=[])
    data, metadata = shell.display_formatter.format(fig)
    assert "image/png" in data and set(metadata["image/png"]) == {"width"}

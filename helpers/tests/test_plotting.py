"""Tests of helpers.plotting: figures, Korean glyphs, label checks, figure metadata."""

import base64
import io
import json
import re
import sys
import warnings

import matplotlib
import matplotlib.image

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.font_manager import FontProperties, findfont
from matplotlib.text import Text

from helpers.plotting import (
    PLOTLY_MIME,
    attach_interactive,
    attention_heatmap,
    describe_figure_outputs,
    interactive_html,
    interactive_spec,
    slider_figure,
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


# --- Interactive figures ----------------------------------------------------------------------

def heatmap_spec(**kwargs):
    weights = np.array([[0.7, 0.2, 0.1, 0.0], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.5, 0.5]])
    fig = attention_heatmap(weights, TOKENS, ["가", "나", "가"], **kwargs)
    return fig, interactive_spec(fig)


def test_heatmap_hover_names_query_key_and_weight():
    _, spec = heatmap_spec(titles=["헤드 1"])
    (trace,) = spec["data"]
    assert trace["type"] == "heatmap"
    assert trace["z"][0] == [0.7, 0.2, 0.1, 0.0]
    # one hover text per cell, with the query's and the key's token (repeated tokens stay apart)
    assert trace["text"][2][1] == "쿼리 ‘가’<br>키 ‘오늘’"
    assert trace["text"][0][1] == trace["text"][2][1]
    assert trace["x"] == [0, 1, 2, 3] and trace["y"] == [0, 1, 2]
    assert "어텐션 가중치 %{z:.3f}" in trace["hovertemplate"]
    assert trace["hovertemplate"].startswith("헤드 1<br>%{text}")
    assert spec["layout"]["xaxis"]["ticktext"] == TOKENS
    assert spec["layout"]["yaxis"]["ticktext"] == ["가", "나", "가"]
    assert spec["layout"]["yaxis"]["autorange"] == "reversed"  # first query on top


def test_heatmap_tokens_that_look_like_html_are_shown_literally():
    """plotly.js reads <s> as the strike-through tag and drops <pad>: the spec escapes them,
    while the static picture keeps the tokens as they are."""
    weights = np.full((2, 3), 1 / 3)
    fig = attention_heatmap(weights, ["<s>", "a&b", "</s>"], ["<pad>", "x"],
                            titles=["<s> 헤드"])
    spec = interactive_spec(fig)
    (trace,) = spec["data"]
    assert spec["layout"]["xaxis"]["ticktext"] == ["&lt;s&gt;", "a&amp;b", "&lt;/s&gt;"]
    assert spec["layout"]["yaxis"]["ticktext"] == ["&lt;pad&gt;", "x"]
    assert trace["text"][0][0] == "쿼리 ‘&lt;pad&gt;’<br>키 ‘&lt;s&gt;’"
    assert trace["hovertemplate"].startswith("&lt;s&gt; 헤드<br>")
    assert spec["layout"]["annotations"][0]["text"] == "&lt;s&gt; 헤드"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["<s>", "a&b", "</s>"]


def test_heatmap_spec_has_one_trace_per_matrix_and_one_colour_scale():
    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(3, 4))
    fig = attention_heatmap(weights, TOKENS, titles=["가", "나", "다"], annotate=True)
    spec = interactive_spec(fig)
    assert [t["xaxis"] for t in spec["data"]] == ["x", "x2", "x3"]
    assert {t["coloraxis"] for t in spec["data"]} == {"coloraxis"}
    assert all(t["texttemplate"] == "%{z:.2f}" for t in spec["data"])
    colorbar = spec["layout"]["coloraxis"]["colorbar"]
    assert colorbar["title"]["text"] == "어텐션 가중치"
    assert [a["text"] for a in spec["layout"]["annotations"]] == ["가", "나", "다"]


def test_interactive_spec_is_deterministic_json_with_a_name_from_its_content():
    _, first = heatmap_spec()
    _, second = heatmap_spec()
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    meta = first["layout"]["meta"]
    assert re.fullmatch(r"course-fig-[0-9a-f]{12}", meta["id"])
    assert meta["width"] <= 672
    _, other = heatmap_spec(titles=["다른 제목"])
    assert other["layout"]["meta"]["id"] != meta["id"]
    json.dumps(first, allow_nan=False)  # plain JSON: no NaN, no numpy types
    assert "plotly" not in sys.modules  # helpers never imports plotly


def test_plain_figures_have_no_interactive_twin():
    fig, _ = plt.subplots()
    assert interactive_spec(fig) is None
    with pytest.raises(TypeError, match="spec must be a dict"):
        attach_interactive(fig, {"data": "x"})
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        interactive_spec("figure.png")


def test_interactive_figure_outputs_hold_spec_html_and_static_picture():
    shell = FakeShell()
    describe_figure_outputs(shell)
    fig, spec = heatmap_spec()
    data, metadata = shell.display_formatter.format(fig)
    assert {PLOTLY_MIME, "text/html", "image/png"} <= set(data)
    assert data[PLOTLY_MIME] == spec
    assert {"width", "smallest_text_px"} <= set(metadata["image/png"])
    page = data["text/html"]
    fid = spec["layout"]["meta"]["id"]
    assert f'id="{fid}"' in page and f'id="{fid}-spec"' in page
    assert f'src="data:image/png;base64,{data["image/png"]}"' in page  # the static fallback
    assert 'alt="어텐션 가중치 히트맵 1개: 쿼리 3개 × 키 4개"' in page
    # plotly.js from a CDN only inside Colab, and only when the page has none
    assert "window.google && window.google.colab" in page
    assert "cdn.plot.ly/plotly-" in page
    again, _ = shell.display_formatter.format(heatmap_spec()[0])
    assert again["text/html"] == page and again["image/png"] == data["image/png"]


def test_interactive_html_escapes_what_could_end_its_script():
    fig = attention_heatmap(np.eye(2), ["</script>", "b"])
    page = interactive_html(interactive_spec(fig), "AAAA")
    assert page.count("</script>") == 2  # the JSON's own </script> is written <\/script>


def slider_args():
    values = np.array([[0.1, 0.9], [0.5, 0.5], [0.8, 0.2]])
    panels = [dict(x=[0, 1], xticklabels=["키 1", "키 2"], xlabel="키", ylabel="가중치")]
    series = [dict(panel=0, name="가중치", kind="bar", y=values, slider=0),
              dict(panel=0, name="고른 분포", kind="line", y=[0.5, 0.5])]
    sliders = [dict(label="온도", values=["1", "2", "3"], active=1, static=[0, 2],
                    notes=["가", "나", "다"])]
    return panels, series, sliders


def test_slider_figure_steps_swap_precomputed_values():
    fig = slider_figure(*slider_args(), description="설명")
    spec = interactive_spec(fig)
    (slider,) = spec["layout"]["sliders"]
    assert slider["currentvalue"]["prefix"] == "온도: "
    assert slider["active"] == 1 and spec["data"][0]["y"] == [0.5, 0.5]
    assert [s["label"] for s in slider["steps"]] == ["1", "2", "3"]
    restyle, relayout, traces = slider["steps"][2]["args"]
    assert restyle == {"y": [[0.8, 0.2]]} and traces == [0]
    assert relayout == {"annotations[0].text": "다"}
    assert spec["layout"]["annotations"][0]["text"] == "나"
    assert "키 %{text}" in spec["data"][0]["hovertemplate"]
    # the static picture names the static positions by series and step; the notes, which
    # follow the slider, are not printed in it
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["고른 분포", "가중치 (온도 = 1)", "가중치 (온도 = 3)"]
    assert not {"가", "나", "다"} & {t.get_text() for t in fig.findobj(Text)}


def legend_and_axes(fig, panel=0):
    """The extents of a panel's legend and of its axes, in display pixels, as drawn."""
    fig.canvas.draw()
    ax = fig.axes[panel]
    return ax.get_legend().get_window_extent(), ax.get_window_extent()


def test_slider_figure_legend_stands_beside_the_panel_unless_placed():
    panels, series, sliders = slider_args()
    legend, axes = legend_and_axes(slider_figure(panels, series, sliders, description="설명"))
    assert legend.x0 > axes.x1  # beside the data, covering none of it
    panels[0]["legend"] = "upper left"
    legend, axes = legend_and_axes(slider_figure(panels, series, sliders, description="설명"))
    assert axes.x0 < legend.x0 < legend.x1 < axes.x1


def test_slider_figure_names_only_the_steps_of_a_titled_panels_only_series():
    panels, series, sliders = slider_args()
    panels[0]["title"] = "가중치"
    fig = slider_figure(panels, series[:1], sliders, description="설명")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["온도 = 1", "온도 = 3"]


@pytest.mark.parametrize("change, match", [
    (lambda p, s, sl: s[0].update(y=np.ones((2, 2))), r"shape \(3, 2\)"),
    (lambda p, s, sl: s[1].update(y=[0.5]), r"shape \(2,\)"),
    (lambda p, s, sl: s[0].update(kind="pie"), "kind must be one of"),
    (lambda p, s, sl: s[0].update(panel=3), "panel 3 does not exist"),
    (lambda p, s, sl: s[0].update(slider=2), "slider 2 does not exist"),
    (lambda p, s, sl: sl[0].update(values=["1"]), "at least 2 values"),
    (lambda p, s, sl: sl[0].update(static=[5]), r"index 5 is not in \[0, 3\)"),
    (lambda p, s, sl: sl[0].update(notes=["가"]), "3 values but 1 notes"),
    (lambda p, s, sl: s[1].update(y=[np.nan, 0.5]), "NaN or infinity"),
])
def test_slider_figure_bad_input_raises(change, match):
    panels, series, sliders = slider_args()
    change(panels, series, sliders)
    with pytest.raises(ValueError, match=match):
        slider_figure(panels, series, sliders, description="설명")

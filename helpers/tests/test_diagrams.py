"""Tests of helpers.diagrams: labels, layout, SVG with text kept as text, input checks."""

import base64
import io
import re
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import pytest
from fontTools.ttLib import TTFont
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch
from matplotlib.text import Text

from helpers import diagrams

SVG = "{http://www.w3.org/2000/svg}"

DIAGRAMS = {
    "multi_head": (diagrams.multi_head, {"입력 X (n, 8)", "헤드 1", "헤드 2", "헤드마다 어텐션",
                                         "이어 붙이기 (n, 2·4)", "출력 (n, 8)"}),
    "encoder_decoder": (diagrams.encoder_decoder, {"인코더", "디코더", "크로스 어텐션", "키·값",
                                                   "쿼리", "임베딩과 양방향 RNN", "십"}),
    "transformer_layers": (diagrams.transformer_layers,
                           {"인코더 레이어", "디코더 레이어", "멀티 헤드 셀프 어텐션",
                            "셀프 어텐션 (인과 마스크)", "크로스 어텐션", "피드포워드 네트워크",
                            "더한 뒤 레이어 정규화", "사후 정규화: 출력 = LN(x + 서브레이어(x))"}),
    "kv_cache": (diagrams.kv_cache, {"K, V", "계산", "레이어 1", "레이어 2", "위치 0"}),
    "grouped_query": (diagrams.grouped_query, {"쿼리 헤드", "KV 헤드", "Q0", "Q7", "KV1"}),
    "decoder_only": (diagrams.decoder_only, {"셀프 어텐션 (인과 마스크)", "피드포워드 네트워크",
                                             "마지막 레이어 정규화", "로짓 (n, 어휘)",
                                             "× L개 쌓음", "레이어 정규화"}),
    "ring_buffer": (diagrams.ring_buffer, {"칸 0", "칸 3", "위치 6 도착 후", "위치 6"}),
    "window_cone": (diagrams.window_cone, {"입력", "레이어 3", "가장 먼 입력"}),
    "rope_rotation": (diagrams.rope_rotation, {"m=3", "q1", "k3", "q4", "k6", "사이 각 2θ"}),
    "latent_attention": (diagrams.latent_attention,
                         {"잠재 벡터", "쿼리 잠재 벡터", "RoPE 키 (헤드 공유)",
                          "헤드별 늘리는 투영", "KV 캐시: 토큰마다 이 두 벡터만", "인과 마스크"}),
    "linear_attention_forms": (diagrams.linear_attention_forms,
                               {"행렬 형태", "순환 형태", "청크 형태", "대각 블록: 행렬 곱",
                                "아래 블록: 상태로 전달", "인과 마스크 M"}),
    "hybrid_stack": (diagrams.hybrid_stack, {"어텐션", "KV 캐시", "상태", "Gated", "DeltaNet"}),
    "associative_recall": (diagrams.associative_recall,
                           {"쌍 4개를 늘어놓는다", "같은 키를 섞어 다시 묻는다", "토큰 이동",
                            "혼합 레이어", "맞힐 다음 토큰"}),
    "delta_rule_write": (diagrams.delta_rule_write, {"① 읽기", "② 오차", "③ 쓰기", "상태",
                                                     "새 상태"}),
    "ut_chunk": (diagrams.ut_chunk, {"A: 대각 아래만", "T: (I + A)의 역행렬", "전진 대입",
                                     "실제 쓰기", "받은 상태가 바꾸는 몫"}),
    "lstm_classifiers": (diagrams.lstm_classifiers,
                         {"LSTM", "LSTM + 가산 어텐션", "LSTM + 멀티 헤드 어텐션", "가산 어텐션",
                          "멀티 헤드 셀프 어텐션", "시간 축 평균", "분류 헤드",
                          "마지막 은닉 상태만", "키·값", "쿼리", "컨텍스트 벡터"}),
    "sparse_selection": (diagrams.sparse_selection,
                         {"라이트닝 인덱서", "어텐션 (top-k, k = 3)", "슬라이딩 윈도",
                          "고른 토큰의 키·값만 읽는다"}),
    "nsa_branches": (diagrams.nsa_branches, {"압축", "선택", "윈도", "× g_cmp", "× g_slc",
                                             "× g_win", "블록마다 평균 하나"}),
    "bottleneck": (diagrams.bottleneck, {"어텐션 없이", "어텐션", "요약 벡터 하나", "컨텍스트 벡터",
                                         "인코더", "디코더", "나는", "school"}),
    "sink_and_gate": (diagrams.sink_and_gate, {"싱크 로짓 b_h", "소프트맥스", "× V",
                                               "⊙ σ(G)", "+ 잔차"}),
    "flash_tiling": (diagrams.flash_tiling, {"쿼리 블록 2", "키·값 청크 3 (지금 읽는 것)",
                                             "최댓값 m", "지수의 합 ℓ", "출력 누적 o",
                                             "스코어 행렬 (8 × 8): 통째로 만들지 않는다"}),
    "mask_broadcast": (diagrams.mask_broadcast, {"인과 마스크 (n, n)", "패딩 마스크 (B, 1, n)",
                                                 "합친 마스크 (B, n, n)", "문장 1: 길이 3",
                                                 "키 3, 4를 가림", "pad[:, None]", "가중치"}),
    "head_split": (diagrams.head_split, {"헤드 0 성분", "헤드 1 성분", "reshape 뒤 전치 (올바름)",
                                         "전치 없이 reshape (H, n, k)", "토큰 5"}),
    "keras_layers": (diagrams.keras_layers, {"layer([query, value, key])",
                                             "layer(query, value, key)", "출력 투영",
                                             "투영 없음 (필요하면 Dense를 밖에)", "파라미터 288개",
                                             "헤드마다 소프트맥스, 값의 가중 평균"}),
}


def texts(fig):
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("name", DIAGRAMS)
def test_returns_a_figure_with_its_korean_labels(name):
    draw, expected = DIAGRAMS[name]
    fig = draw()
    assert isinstance(fig, Figure)
    assert expected <= set(diagrams.labels(fig)), expected - set(diagrams.labels(fig))


@pytest.mark.parametrize("name", DIAGRAMS)
def test_fits_the_column_and_is_readable(name):
    """At most 7.2 inches wide (the site's column is 7), no text below 7 points."""
    fig = DIAGRAMS[name][0]()
    width, _ = fig.get_size_inches()
    assert width <= 7.2
    assert min(t.get_fontsize() for t in texts(fig)) >= 7


@pytest.mark.parametrize("name", DIAGRAMS)
def test_labels_do_not_overlap_and_stay_inside(name):
    """Measured with the font the SVG carries, so the browser draws the same boxes."""
    fig = DIAGRAMS[name][0]()
    renderer = FigureCanvasAgg(fig).get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts(fig)]
    frame = fig.bbox
    for text, box in boxes:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 \
            and box.y1 <= frame.y1, f"{name}: {text!r} reaches outside the figure"
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            assert not box_a.overlaps(box_b), f"{name}: {a!r} overlaps {b!r}"


def test_pre_and_post_normalisation_are_drawn_differently():
    pre, post = (set(diagrams.labels(diagrams.transformer_layers(n))) for n in ("pre", "post"))
    assert "사전 정규화: 출력 = x + 서브레이어(LN(x))" in pre and "마지막 레이어 정규화" in pre
    assert "더한 뒤 레이어 정규화" in post and "더한 뒤 레이어 정규화" not in pre


def test_the_heads_follow_the_arguments():
    labels = diagrams.labels(diagrams.multi_head(12, 3))
    assert [s for s in labels if re.fullmatch(r"헤드 \d", s)] == ["헤드 1", "헤드 2", "헤드 3"]
    assert "헤드 3개로 나누기: 헤드마다 key_dim = 12 / 3 = 4" in labels


def test_chunked_form_colours_diagonal_blocks_and_leaves_the_future_empty():
    fig = diagrams.linear_attention_forms(7, 3)
    colours = [p.get_facecolor() for p in fig.axes[0].patches
               if p.get_linewidth() == 0.4]  # the cells of the two grids
    chunked = colours[49:]
    orange = matplotlib.colors.to_rgba(diagrams.QUERY)
    blue = matplotlib.colors.to_rgba(diagrams.KEY_VALUE)
    cell = {(i, j): chunked[i * 7 + j] for i in range(7) for j in range(7)}
    assert cell[(2, 0)] == orange and cell[(3, 2)] == blue and cell[(6, 6)] == orange
    assert cell[(0, 1)] == matplotlib.colors.to_rgba("white")
    matrix = colours[:49]  # before the decay gate is taught: 1 (coloured) or 0 (white)
    assert all(matrix[i * 7 + j] == (blue if j <= i else matplotlib.colors.to_rgba("white"))
               for i in range(7) for j in range(7))


def test_recurrent_form_reads_each_state_with_its_query():
    texts = diagrams.labels(diagrams.linear_attention_forms(7, 3))
    assert texts.count(r"$\phi(q)$") == 3 and texts.count(r"$\phi(k),\, v$") == 3
    assert r"$o_t = S_t\,\phi(q_t)$" in texts
    assert not any("alpha" in t for t in texts)  # no decay before chapter 13 teaches it


def test_delta_rule_write_decays_first_only_when_gated():
    plain, gated = (diagrams.labels(diagrams.delta_rule_write(g)) for g in (False, True))
    assert "상태" in plain and "감쇠한 상태" not in plain
    assert "감쇠한 상태" in gated and r"$\alpha_t S_{t-1}$" in gated


def test_ut_chunk_draws_a_strictly_lower_a_and_a_unit_lower_t():
    fig = diagrams.ut_chunk(5)
    colours = [p.get_facecolor() for p in fig.axes[0].patches if p.get_linewidth() == 0.4]
    a, t = colours[:25], colours[25:50]
    white = matplotlib.colors.to_rgba("white")
    assert [a[i * 5 + i] for i in range(5)] == [white] * 5 and a[1 * 5 + 0] != white
    assert t[2 * 5 + 2] == matplotlib.colors.to_rgba(diagrams.PLAIN) and t[0 * 5 + 3] == white
    assert t[4 * 5 + 0] == matplotlib.colors.to_rgba(diagrams.QUERY)


def test_hybrid_stack_follows_the_ratio():
    found = diagrams.labels(diagrams.hybrid_stack(2, 3))
    assert found.count("DeltaNet") == 6 and found.count("KV 캐시") == 2


def test_associative_recall_asks_every_key_once_and_answers_its_value():
    found = diagrams.labels(diagrams.associative_recall(5))
    pairs = found[:10]
    assert pairs == [f"${s}_{i}$" for i in range(1, 6) for s in "kv"]
    queries, answers = found[10:15], found[17:22]
    assert sorted(queries) == sorted(pairs[0::2]) and queries != pairs[0::2]
    assert answers == [q.replace("k", "v") for q in queries]


def test_ring_buffer_writes_position_p_to_slot_p_mod_w():
    fig = diagrams.ring_buffer(3, 5)
    last_row = [t for t in diagrams.labels(fig) if t.startswith("위치 ")][-3:]
    assert last_row == ["위치 3", "위치 4", "위치 2"]  # positions 3, 4 overwrote 0, 1


def test_window_cone_reaches_l_times_w_minus_1_back():
    from matplotlib.patches import FancyBboxPatch  # noqa: PLC0415 - only this test

    fig = diagrams.window_cone(3, 2)                 # n = 2 * 2 + 3 = 7 positions per row
    filled = [p for p in fig.findobj(FancyBboxPatch) if p.get_facecolor()[:3] != (1, 1, 1)]
    assert len(filled) == 5 + 3 + 1                  # input 4 back, layer 1 two back, top


def filled_boxes(fig, colour):
    from matplotlib.patches import FancyBboxPatch  # noqa: PLC0415 - only these tests

    rgba = matplotlib.colors.to_rgba(colour)
    return [p for p in fig.findobj(FancyBboxPatch) if p.get_facecolor() == rgba]


def test_lstm_classifiers_only_the_additive_model_has_a_query_and_the_lstm_uses_h_t_alone():
    fig = diagrams.lstm_classifiers(5)
    assert len(filled_boxes(fig, diagrams.QUERY)) == 1  # h_T of the additive model
    # h_1, h_2, h_3, h_T: the LSTM's h_T, all four of the MHA model, three of the additive one
    assert len(filled_boxes(fig, diagrams.KEY_VALUE)) == 1 + 4 + 3
    found = diagrams.labels(fig)
    assert found.count("분류 헤드") == 3 and found.count("$h_T$") == 3
    assert diagrams.labels(diagrams.lstm_classifiers(7)).count("$x_5$") == 3


def test_bottleneck_draws_every_token_and_one_heavy_line():
    fig = diagrams.bottleneck(("a", "b", "c", "d"), ("x", "y"), step=1, attend_to=0)
    found = diagrams.labels(fig)
    assert all(found.count(token) == 2 for token in "abcdxy")  # once in each panel
    widths = sorted(p.get_linewidth() for p in fig.axes[0].patches
                    if type(p).__name__ == "FancyArrowPatch")
    assert widths[-1] == 2.2 and widths[-2] < 1  # one heavy line, to attend_to


def test_flash_tiling_shades_the_current_tile_and_the_chunks_read_before_it():
    fig = diagrams.flash_tiling(8, 2, query_block=1, chunk=2)
    tile = [p for p in filled_boxes(fig, diagrams.QUERY) if p.get_linewidth() == 0.4]
    done = [p for p in filled_boxes(fig, diagrams.PLAIN) if p.get_linewidth() == 0.4]
    assert len(tile) == 2 * 2 and len(done) == 2 * 2 * 2  # rows 2-3; chunks 0, 1 before it
    assert {p.get_x() for p in tile} == {1.25 + 4 * 0.3, 1.25 + 5 * 0.3}
    assert {round(p.get_y(), 6) for p in tile} == {round(3.05 - 3 * 0.3, 6),
                                                   round(3.05 - 4 * 0.3, 6)}
    assert "키·값 청크 1 (지금 읽는 것)" in diagrams.labels(diagrams.flash_tiling(6, 3, 0, 0))


def test_mask_broadcast_combines_the_causal_and_padding_masks_per_sentence():
    fig = diagrams.mask_broadcast((4, 2))
    seen = filled_boxes(fig, diagrams.KEY_VALUE)
    # causal 1+2+3+4 = 10; padding first rows 4 + 2; combined 10 and 1+2+2+2 = 7; legend 1
    assert len(seen) == 10 + 4 + 2 + 10 + 7 + 1
    assert "키 2, 3을 가림" in diagrams.labels(fig)
    assert "키 3, 4를 가림" in diagrams.labels(diagrams.mask_broadcast((5, 3)))
    # the axes of length 1: one in (B, 1, n), two in (B, 1, 1, n), one in (B, 1, n, n)
    assert len(filled_boxes(fig, diagrams.NORM)) == 4


def test_head_split_gives_each_head_all_tokens_only_with_the_transpose():
    fig = diagrams.head_split(4, 2, 2)
    found = diagrams.labels(fig)
    # input rows, the correct split's rows (head 0 only), the wrong split's rows (both sides)
    assert found.count("토큰 0") == 1 + 1 + 2 and found.count("토큰 3") == 1 + 1 + 2
    orange = filled_boxes(fig, diagrams.HEADS[0])
    assert len(orange) == 4 * 2 + 4 * 2 + 4 * 2  # every head-0 component, three times


def test_kv_cache_marks_only_the_new_position_as_computed():
    labels = diagrams.labels(diagrams.kv_cache(5, 3))
    assert labels.count("계산") == 5 * 3 + 3 and labels.count("K, V") == 4 * 3


@pytest.mark.parametrize("call, error, message", [
    (lambda: diagrams.multi_head(10, 4), ValueError, "d_model must be divisible by num_heads"),
    (lambda: diagrams.multi_head(8.0, 2), TypeError, "d_model must be an integer"),
    (lambda: diagrams.multi_head(32, 2), ValueError, r"d_model must be an integer in \[2, 16\]"),
    (lambda: diagrams.multi_head(8, 8), ValueError, "num_heads must be an integer in"),
    (lambda: diagrams.encoder_decoder("2026"), TypeError, "source must be a sequence of strings"),
    (lambda: diagrams.encoder_decoder(target=[]), ValueError, "target must hold 1 to 6"),
    (lambda: diagrams.encoder_decoder(step=6), ValueError, "step must be an integer in"),
    (lambda: diagrams.encoder_decoder(attend_to=-1), ValueError, "attend_to must be"),
    (lambda: diagrams.transformer_layers("middle"), ValueError, "norm must be one of 'post'"),
    (lambda: diagrams.kv_cache(1), ValueError, r"n must be an integer in \[2, 10\]"),
    (lambda: diagrams.linear_attention_forms(6, 6), ValueError,
     r"chunk_size must be an integer in \[2, 5\]"),
    (lambda: diagrams.hybrid_stack(ratio=0), ValueError, r"ratio must be an integer in"),
    (lambda: diagrams.associative_recall(6), ValueError, r"num_pairs must be an integer in"),
    (lambda: diagrams.delta_rule_write(1), TypeError, "gated must be True or False"),
    (lambda: diagrams.ut_chunk(7), ValueError, r"chunk_size must be an integer in \[3, 6\]"),
    (lambda: diagrams.grouped_query(8, [3], ["그룹"]), ValueError, "kv_heads must divide"),
    (lambda: diagrams.grouped_query(8, [8, 1], ["멀티 헤드"]), ValueError, "one entry per"),
    (lambda: diagrams.latent_attention(3), TypeError, "cache_label"),
    (lambda: diagrams.to_svg("그림"), TypeError, "fig must be a matplotlib Figure"),
    (lambda: diagrams.ring_buffer(1), ValueError, r"window must be an integer in \[2, 8\]"),
    (lambda: diagrams.window_cone(4, 5), ValueError, "num_layers must be an integer in"),
    (lambda: diagrams.rope_rotation(2.0), ValueError, "theta must be"),
    (lambda: diagrams.lstm_classifiers(2), ValueError, r"steps must be an integer in \[3, 7\]"),
    (lambda: diagrams.lstm_classifiers(5.0), TypeError, "steps must be an integer"),
    (lambda: diagrams.bottleneck(("나는",)), ValueError, "source must hold 2 to 5"),
    (lambda: diagrams.bottleneck(target="go"), TypeError, "target must be a sequence"),
    (lambda: diagrams.bottleneck(step=4), ValueError, r"step must be an integer in \[0, 3\]"),
    (lambda: diagrams.flash_tiling(8, 3), ValueError, "block must divide n"),
    (lambda: diagrams.flash_tiling(8, 5), ValueError, r"block must be an integer in \[1, 4\]"),
    (lambda: diagrams.flash_tiling(8, 2, chunk=4), ValueError, "chunk must be an integer in"),
    (lambda: diagrams.mask_broadcast(5), TypeError, "lengths must be a sequence of integers"),
    (lambda: diagrams.mask_broadcast((5, 3, 2, 1)), ValueError, "lengths must hold 1 to 3"),
    (lambda: diagrams.mask_broadcast((7, 3)), ValueError, "the longest length must be"),
    (lambda: diagrams.head_split(8, 4, 4), ValueError, "do not fit the width"),
    (lambda: diagrams.head_split(6, 1), ValueError, r"num_heads must be an integer in \[2, 4\]"),
])
def test_bad_input_raises_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


def svg_texts(svg):
    return ["".join(e.itertext()) for e in ET.fromstring(svg).iter(SVG + "text")]


@pytest.mark.parametrize("name", DIAGRAMS)
def test_svg_keeps_every_label_as_text(name):
    draw, expected = DIAGRAMS[name]
    svg = diagrams.to_svg(draw())
    assert svg.startswith("<svg") and "<path d=\"M 0 0" not in svg.split("<text")[0][-200:]
    assert expected <= set(svg_texts(svg)), expected - set(svg_texts(svg))
    assert 'width="504pt"' in svg  # 7 inches, shown 672 CSS pixels wide


def test_svg_is_the_same_on_every_run():
    assert diagrams.to_svg(diagrams.encoder_decoder()) == \
        diagrams.to_svg(diagrams.encoder_decoder())


def test_svg_carries_the_glyphs_of_its_labels():
    """Every character of every label is in an embedded font of the family the text names."""
    svg = diagrams.to_svg(diagrams.encoder_decoder())
    fonts = {}
    for family, data in re.findall(r"font-family: '([^']+)'; font-style: \w+; font-weight: \d+;"
                                   r" src: url\(data:font/ttf;base64,([A-Za-z0-9+/=]+)\)", svg):
        cmap = TTFont(io.BytesIO(base64.b64decode(data))).getBestCmap()
        fonts.setdefault(family, set()).update(map(chr, cmap))
    assert set(fonts) == {"NanumGothic", "DejaVu Sans"}  # labels, and h_j, s_t as symbols
    for element in ET.fromstring(svg).iter():
        if element.tag in (SVG + "text", SVG + "tspan") and (element.text or "").strip():
            family = re.search(r"font-family: '([^']+)'", element.get("style")).group(1)
            missing = set(element.text) - fonts[family] - {" "}
            assert not missing, f"{element.text!r} needs {missing} from {family}"
    assert "'Noto Sans CJK KR'" in svg  # a fallback for viewers that ignore embedded fonts


def test_show_displays_svg_with_a_png_twin_width_and_text_size(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display",
                        lambda data, **options: shown.append((data, options)))
    diagrams.show(diagrams.kv_cache())
    (data, options), = shown
    assert data["image/svg+xml"].startswith("<svg") and options["raw"]
    png = base64.b64decode(data["image/png"])
    assert png.startswith(b"\x89PNG") and int.from_bytes(png[16:20], "big") == 7 * 150
    assert options["metadata"] == {
        "image/svg+xml": {"width": 672, "smallest_text_px": 10.0},  # 7.5 pt in CSS pixels
        "image/png": {"width": 672, "smallest_text_px": 15.62}}  # 7.5 pt at 150 dpi
    assert data["text/plain"].startswith("<도식 kv_cache")


# The drawing vocabulary the diagrams share.

def canvas():
    return diagrams._canvas(4.0, 2.0, "test")


def test_spread_centres_the_boxes_and_keeps_the_gap():
    xs = diagrams._spread(3, 2.0, 0.4, 0.1)
    assert xs == pytest.approx([1.3, 1.8, 2.3])
    assert (xs[0] + xs[-1] + 0.4) / 2 == pytest.approx(2.0)  # the row's middle is the centre
    assert diagrams._spread(1, 5.0, 0.5, 0.3) == pytest.approx([4.75])


def test_slots_inset_each_box_within_its_pitch():
    assert diagrams._slots(1.0, 0.5, 3, 0.04) == pytest.approx([1.04, 1.54, 2.04])


def test_row_draws_a_box_per_label_an_empty_box_for_blank_and_only_dots_for_none():
    from matplotlib.patches import FancyBboxPatch  # noqa: PLC0415 - only this test

    fig, ax = canvas()
    diagrams._row(ax, [0.0, 1.0, 2.0], 0.5, ["a", "", None], ["white"] * 3, size=0.8,
                  height=0.3)
    boxes = fig.findobj(FancyBboxPatch)
    assert [round(b.get_x(), 6) for b in boxes] == [0.0, 1.0]  # no box where the label is None
    assert diagrams.labels(fig) == ["a", "⋯"]
    dots = [t for t in texts(fig) if t.get_text() == "⋯"][0]
    assert dots.get_position() == pytest.approx((2.4, 0.65))  # centred where the box would be


def test_weight_lines_are_heavy_and_dark_only_for_the_largest_weight():
    from matplotlib.patches import FancyArrowPatch  # noqa: PLC0415 - only this test

    fig, ax = canvas()
    diagrams._weight(ax, (0, 0), (1, 1), True, heavy_width=2.4)
    diagrams._weight(ax, (0, 0), (2, 1), False, heavy_width=2.4)
    heavy, light = fig.findobj(FancyArrowPatch)
    assert heavy.get_linewidth() == 2.4 and light.get_linewidth() == 0.6
    assert heavy.get_edgecolor() == matplotlib.colors.to_rgba(diagrams.INK)
    assert light.get_edgecolor() == matplotlib.colors.to_rgba(diagrams.FAINT)


@pytest.mark.parametrize("side, x, ha", [("right", 1.08, "left"), ("left", 0.92, "right")])
def test_labelled_arrow_puts_its_label_beside_the_middle(side, x, ha):
    fig, ax = canvas()
    diagrams._labelled_arrow(ax, (1.0, 0.2), (1.0, 1.8), "W", side=side)
    (label,) = texts(fig)
    assert label.get_position() == pytest.approx((x, 1.0))
    assert label.get_horizontalalignment() == ha


def test_note_is_grey_and_smaller_than_a_label():
    fig, ax = canvas()
    diagrams._label(ax, 1, 1, "레이블")
    diagrams._note(ax, 1, 0.5, "설명")
    label, note = texts(fig)
    assert note.get_color() == diagrams.NOTE and label.get_color() != diagrams.NOTE
    assert note.get_fontsize() == 7.5 < label.get_fontsize()


def test_sink_and_gate_feeds_the_sink_into_the_softmax_and_the_gate_after_the_values():
    fig = diagrams.sink_and_gate()
    renderer = FigureCanvasAgg(fig).get_renderer()
    where = {t.get_text(): t.get_window_extent(renderer) for t in texts(fig)}
    softmax, sink = where["소프트맥스"], where["싱크 로짓 b_h"]
    values, gate = where["× V"], where["⊙ σ(G)"]
    assert sink.y0 > softmax.y1 and sink.x0 < softmax.x1 and softmax.x0 < sink.x1
    assert softmax.x1 < values.x0 < gate.x0


def test_keras_layers_prints_the_counts_it_is_given_and_projects_only_in_multi_head():
    fig = diagrams.keras_layers((0, 1, 64, 1234))
    found = diagrams.labels(fig)
    assert {"파라미터 0개", "use_scale=True면 1개 (s)", "파라미터 64개",
            "파라미터 1234개"} <= set(found)
    assert [s for s in found if s.startswith("$W^")] == ["$W^Q$", "$W^V$", "$W^K$", "$W^O$"]
    assert found.count("투영 없음 (필요하면 Dense를 밖에)") == 2
    assert found.count("query") == found.count("value") == found.count("key") == 3
    with pytest.raises(ValueError, match="4 counts"):
        diagrams.keras_layers((0, 1, 8))
    with pytest.raises(ValueError, match=r"parameters\[3\]"):
        diagrams.keras_layers((0, 1, 8, -1))
    with pytest.raises(TypeError, match="parameters"):
        diagrams.keras_layers(288)


def test_sparse_selection_sends_exactly_the_top_k_tokens_to_the_attention():
    fig = diagrams.sparse_selection((0.1, 3.0, 0.2, 2.0, 0.3, 1.0), top_k=2, window=2)
    arrows = [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 2
    with pytest.raises(ValueError, match="top_k"):
        diagrams.sparse_selection((1.0, 2.0, 3.0, 4.0), top_k=4)


def test_nsa_branches_needs_whole_blocks_and_existing_chosen_blocks():
    with pytest.raises(ValueError, match="multiple of block"):
        diagrams.nsa_branches(num_tokens=10, block=4)
    with pytest.raises(ValueError, match="chosen"):
        diagrams.nsa_branches(chosen=(9,))

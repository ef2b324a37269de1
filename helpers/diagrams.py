"""Architecture diagrams of the course, drawn with matplotlib and shown as SVG with real text.

One function per diagram returns a matplotlib figure; :func:`show` displays it in a notebook
as an ``image/svg+xml`` output. The SVG keeps every label as ``<text>`` (``svg.fonttype =
"none"``), so the Korean labels are crisp at any size, can be searched and copied, and a
screen reader can read them; the PDF of the course keeps them as text too. The SVG carries a
subset of the fonts it uses (the Nanum Gothic bundled with koreanize-matplotlib, DejaVu Sans
for symbols) as ``@font-face`` data, so the browser draws the labels with the font matplotlib
measured them in, offline, on any machine: on the site, in the PDF, in JupyterLab and Colab.

Each diagram is drawn in inches: one data unit of its axes is one inch of the figure, and a
figure at most 7 inches wide fills the 672-pixel column of the site. Every diagram is made
of the same few private pieces (``_box``, ``_rect``, ``_row``, ``_arrow``, ``_weight``,
``_label``, ``_note`` and the others below them), so the same thing is drawn the same way
in every figure.
"""

from __future__ import annotations

import base64
import contextlib
import io
import logging
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties, findfont
from matplotlib.patches import Arc, Circle, FancyArrowPatch, FancyBboxPatch
from matplotlib.text import Text

from . import plotting  # registers the bundled Korean font
from ._checks import boolean, instance, integer, key_dim, one_of, real, strings

__all__ = ["multi_head", "encoder_decoder", "transformer_layers", "kv_cache",
           "grouped_query", "decoder_only", "llama_stack", "ring_buffer", "window_cone",
           "rope_rotation", "latent_attention", "linear_attention_forms", "hybrid_stack",
           "associative_recall", "lstm_classifiers", "bottleneck", "flash_tiling",
           "delta_rule_write", "ut_chunk", "mask_broadcast", "head_split",
           "to_svg", "show", "labels"]

PNG_DPI = 150  # the course's figures (helpers.notebook.setup)
WIDTH = 7.0  # inches: the site's column is 672 CSS pixels = 7 inches of 96 pixels
FONT = "NanumGothic"
# After the embedded fonts, what a viewer that ignores them should try for Hangul.
FALLBACK = "'Noto Sans CJK KR', 'Apple SD Gothic Neo', 'Malgun Gothic', sans-serif"
STYLE = {"svg.fonttype": "none", "svg.hashsalt": "attention-course", "font.family": [FONT],
         "font.size": 9, "mathtext.fontset": "dejavusans", "axes.unicode_minus": False}

INK = "#333333"
QUERY = "#f4a259"  # queries, and what is computed anew (chapters 9 and 10 use the same)
KEY_VALUE = "#8ecae6"  # keys and values, and what is read from the KV cache
ATTENTION = "#cdb4db"
FFN = "#b5e48c"
NORM = "#ffe08a"
PLAIN = "#e9ecef"
HEADS = ("#f4a259", "#8ecae6", "#b5e48c", "#cdb4db")
MIXED = "#adb5bd"
NOTE = "#555555"  # notes that explain a drawing
FAINT = "#888888"  # the thin lines: small attention weights, side paths
ROUNDED = "round,pad=0,rounding_size=0.05"


@contextlib.contextmanager
def _style():
    with matplotlib.rc_context(STYLE):
        yield


def _canvas(width: float, height: float, name: str):
    """A figure ``width`` x ``height`` inches whose one axes counts in inches, without frame."""
    fig = Figure(figsize=(width, height))
    fig.set_label(name)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set(xlim=(0, width), ylim=(0, height))
    ax.set_axis_off()
    return fig, ax


# The drawing vocabulary: every diagram below is made of these pieces, in inches.

def _rect(ax, x: float, y: float, w: float, h: float, *, face: str = "none",
          edge: str = INK, width: float = 0.6, style: str = "square,pad=0",
          dashes: str = "-"):
    """A rectangle with lower-left corner (x, y): a cell, or unfilled, a frame around some."""
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=style, facecolor=face, edgecolor=edge,
                                linewidth=width, linestyle=dashes))


def _box(ax, x: float, y: float, w: float, h: float, label: str = "", *, color: str = PLAIN,
         fontsize: float = 9, dashed: bool = False, **text):
    """A rounded box with lower-left corner (x, y) and its label centred inside; dashed, an
    unfilled frame."""
    _rect(ax, x, y, w, h, face="none" if dashed else color, width=0.8, style=ROUNDED,
          dashes="--" if dashed else "-")
    if label:
        _label(ax, x + w / 2, y + h / 2, label, size=fontsize, linespacing=1.3, **text)


def _titled_box(ax, x: float, y: float, w: float, h: float, title: str, symbol: str, *,
                color: str, at: tuple[float, float], sizes: tuple[float, float]):
    """A box holding two texts, a name over its symbol, ``at`` inches above y each: two
    texts, not one with a line break, so that mathtext stays apart from Hangul."""
    _box(ax, x, y, w, h, color=color)
    for text, dy, size in zip((title, symbol), at, sizes, strict=True):
        _label(ax, x + w / 2, y + dy, text, size=size)


def _arrow(ax, start, end, *, width: float = 0.9, color: str = INK, rad: float = 0.0,
           style: str = "-|>"):
    """An arrow from ``start`` to ``end``, bent by ``rad``; ``style="-"`` draws a plain line."""
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=8,
                                 linewidth=width, color=color, shrinkA=0, shrinkB=0,
                                 connectionstyle=f"arc3,rad={rad}"))


def _weight(ax, start, end, heavy: bool, *, heavy_width: float = 2.2, **arrow):
    """A line for an attention weight: heavy and dark for the largest one, thin and grey
    for the others."""
    _arrow(ax, start, end, width=heavy_width if heavy else 0.6,
           color=INK if heavy else FAINT, **arrow)


def _labelled_arrow(ax, start, end, text: str, *, side: str = "right", gap: float = 0.08,
                    size: float = 8, **arrow):
    """An arrow from ``start`` to ``end`` with a label ``gap`` inches to one ``side`` of its
    middle."""
    _arrow(ax, start, end, **arrow)
    x, y = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
    right = side == "right"
    _label(ax, x + gap if right else x - gap, y, text, ha="left" if right else "right",
           size=size)


def _line(ax, xs, ys, *, color: str = INK, width: float = 0.9, **style):
    """A polyline through the points (xs[i], ys[i]), without an arrowhead."""
    ax.plot(xs, ys, color=color, linewidth=width, **style)


def _label(ax, x: float, y: float, text: str, *, size: float = 8, ha: str = "center",
           va: str = "center", **style):
    """A label at (x, y); ``ha`` and ``va`` say which side of it x and y are."""
    ax.text(x, y, text, ha=ha, va=va, fontsize=size, **style)


def _note(ax, x: float, y: float, text: str, *, ha: str = "center", size: float = 7.5,
          **style):
    """A grey note that explains a drawing, beside or below it."""
    _label(ax, x, y, text, size=size, ha=ha, color=NOTE, **style)


def _spread(n: int, centre: float, w: float, gap: float) -> list[float]:
    """The left edges of ``n`` boxes ``w`` wide, ``gap`` apart, centred on ``centre``."""
    start = centre - (n * w + (n - 1) * gap) / 2
    return [start + i * (w + gap) for i in range(n)]


def _row(ax, xs, y, labels_, colors, *, size: float, height: float, fontsize: float = 8.5):
    """Boxes ``size`` wide at the x positions ``xs``, one label and colour each; a label ""
    draws an empty box, a label None draws ⋯ and no box (the steps left out)."""
    for x, label, color in zip(xs, labels_, colors, strict=True):
        if label is None:
            _label(ax, x + size / 2, y + height / 2, "⋯", size=fontsize)
        else:
            _box(ax, x, y, size, height, label, color=color, fontsize=fontsize)


def _slots(x0: float, pitch: float, n: int, inset: float) -> list[float]:
    """The left edges of ``n`` boxes one ``pitch`` apart from x0, each ``inset`` in from its
    share, so that neighbours keep a gap of ``2 inset``."""
    return [x0 + i * pitch + inset for i in range(n)]


def _ray(ax, centre, radius: float, angle: float, text: str, *, beyond: tuple[float, float],
         **arrow):
    """An arrow from ``centre`` at ``angle`` radians, ``radius`` long, and its label just
    past the tip (``beyond`` inches further in x and y)."""
    cx, cy = centre
    _arrow(ax, centre, (cx + radius * math.cos(angle), cy + radius * math.sin(angle)), **arrow)
    _label(ax, cx + (radius + beyond[0]) * math.cos(angle),
           cy + (radius + beyond[1]) * math.sin(angle), text, size=7.5)


def _step_up(ax, x: float, y: float, w: float, h: float, label: str, *, color: str,
             fontsize: float, centre: float, gap: float) -> float:
    """A box with lower-left corner (x, y) and an arrow ``gap`` long up from its top at
    ``centre``, the next step of a stack drawn bottom-up; returns the arrow's tip."""
    _box(ax, x, y, w, h, label, color=color, fontsize=fontsize)
    _arrow(ax, (centre, y + h), (centre, y + h + gap))
    return y + h + gap


def _residual(ax, x: float, bypass: float, start: float, join) -> None:
    """A residual connection: from the main path at (x, start) out to ``bypass``, up beside
    the sublayer, and in to the point ``join`` where it is added."""
    _line(ax, [x, bypass, bypass], [start, start, join[1]])
    _arrow(ax, (bypass, join[1]), join)


def _plus(ax, x: float, y: float, r: float = 0.12):
    """The circled plus where a residual connection joins."""
    ax.add_patch(Circle((x, y), r, facecolor="white", edgecolor=INK, linewidth=0.8))
    _label(ax, x, y, "+", size=9)


def _layer_column(ax, x: float, y0: float, sublayers, *, post: bool, title: str | None = None,
                  extra: str | None = None, box_w: float = 2.3, box_h: float = 0.36,
                  small_h: float = 0.3, gap: float = 0.22, norm: str = "레이어 정규화"):
    """One Transformer layer drawn bottom-up from y0: each sublayer with its residual
    connection and normalisation ``norm`` (after the addition if ``post``, before the
    sublayer otherwise), then ``extra`` (pre-LN only). Returns (top y, {label: left middle
    of box})."""
    centre = x + box_w / 2
    if title:
        _label(ax, centre, y0 - 0.3, title, size=10, fontweight="bold")
    _arrow(ax, (centre, y0 - 0.12), (centre, y0 + 0.1))
    y, where, up = y0 + 0.1, {}, dict(centre=centre, gap=gap)
    for label, color in sublayers:
        start = y
        if not post:
            y = _step_up(ax, x + 0.35, y, box_w - 0.7, small_h, norm, color=NORM,
                         fontsize=8, **up)
        where[label] = (x, y + box_h / 2)
        y = _step_up(ax, x, y, box_w, box_h, label, color=color, fontsize=8.5, **up)
        if post:
            _box(ax, x + 0.2, y, box_w - 0.4, small_h, "더한 뒤 레이어 정규화",
                 color=NORM, fontsize=8)
            join = (x + 0.2 + box_w - 0.4, y + small_h / 2)
        else:
            _plus(ax, centre, y + 0.12)
            join = (centre + 0.12, y + 0.12)
        _residual(ax, centre, x + box_w + 0.25, start - 0.05, join)
        y += small_h if post else 0.24
        _arrow(ax, (centre, y), (centre, y + gap))
        y += gap
    if not post and extra:
        _box(ax, x + 0.35, y, box_w - 0.7, small_h, extra, color=NORM, fontsize=8)
        y += small_h
    return y, where


def _cells(ax, x: float, y: float, colors: Sequence[str], size: float, height: float):
    """A row of square-ish cells (one per feature), coloured one by one."""
    for i, color in enumerate(colors):
        _rect(ax, x + i * size, y, size, height, face=color)


def multi_head(d_model: int = 8, num_heads: int = 2) -> Figure:
    """The heads of multi-head attention, split and joined, drawn for ``d_model`` features.

    Top to bottom: the input ``X``; its query, key and value projections (one cell per
    feature, coloured by the head that gets it); the split into ``num_heads`` heads of
    ``key_dim = d_model // num_heads`` features; each head's scaled dot-product attention;
    the heads' outputs; their concatenation; and the output projection back to ``d_model``.

    Parameters
    ----------
    d_model : int, default 8
        Features of the input and output, 2 to 16 (one drawn cell each).
    num_heads : int, default 2
        Number of heads, 1 to 4; must divide ``d_model``.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 5 inches, one cell per feature in each of its seven rows.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``d_model`` is not in 2..16, ``num_heads`` not in 1..4, or ``num_heads`` does not
        divide ``d_model``.

    Notes
    -----
    Vaswani et al. (2017), section 3.2.2 and figure 2 (right); chapter 3.

    Examples
    --------
    >>> fig = multi_head(8, 2)
    >>> [s for s in labels(fig) if s in ("헤드 1", "헤드 2") or s.startswith("이어")]
    ['헤드 1', '헤드 2', '이어 붙이기 (n, 2·4)']
    """
    d_model = integer(d_model, "d_model", low=2, high=16)
    num_heads = integer(num_heads, "num_heads", low=1, high=len(HEADS))
    k = key_dim(d_model, num_heads)
    height = 5.0
    with _style():
        fig, ax = _canvas(WIDTH, height, "multi_head")
        left, x0 = 0.1, 2.7
        cell = min(0.42, (WIDTH - x0 - 0.2) / d_model)
        bar, box_h = 0.26, 0.42
        head_colors = [HEADS[i // k] for i in range(d_model)]
        rows = {"x": 4.55, "qkv": 3.75, "heads": 2.75, "outs": 1.95, "concat": 1.15,
                "out": 0.2}

        _cells(ax, x0, rows["x"], [PLAIN] * d_model, cell, bar)
        _side(ax, left, rows["x"] + bar / 2, f"입력 X (n, {d_model})")
        mid = x0 + d_model * cell / 2
        _labelled_arrow(ax, (mid, rows["x"]), (mid, rows["qkv"] + bar),
                        r"$W^Q,\ W^K,\ W^V$")
        _cells(ax, x0, rows["qkv"], head_colors, cell, bar)
        _side(ax, left, rows["qkv"] + bar / 2, f"쿼리·키·값 투영 (n, {d_model})",
              "셋 다 같은 모양으로 나눈다")
        _note(ax, left, (rows["qkv"] + rows["heads"] + box_h) / 2,
              f"헤드 {num_heads}개로 나누기: 헤드마다 key_dim = {d_model} / {num_heads} = {k}",
              ha="left")
        _split_heads(ax, x0, cell, k, num_heads, rows, (bar, box_h))
        _side(ax, left, rows["heads"] + box_h / 2, "헤드마다 어텐션",
              "스케일드 닷-프로덕트 어텐션")
        _side(ax, left, rows["outs"] + bar / 2, f"헤드의 출력 (n, {k}) × {num_heads}")
        _cells(ax, x0, rows["concat"], head_colors, cell, bar)
        _side(ax, left, rows["concat"] + bar / 2, f"이어 붙이기 (n, {num_heads}·{k})")
        _labelled_arrow(ax, (mid, rows["concat"]), (mid, rows["out"] + bar),
                        rf"$W^O$  ({num_heads}·{k}, {d_model})")
        _cells(ax, x0, rows["out"], [MIXED] * d_model, cell, bar)
        _side(ax, left, rows["out"] + bar / 2, f"출력 (n, {d_model})",
              "출력 투영이 모든 헤드의 성분을 섞는다")
    return fig


def _side(ax, x: float, y: float, text: str, note: str | None = None) -> None:
    """A row's name (9 pt) at the left, middle at height y, with a grey note under it."""
    _label(ax, x, y + (0.09 if note else 0), text, ha="left", size=9)
    if note:
        _note(ax, x, y - 0.13, note, ha="left")


def _split_heads(ax, x0: float, cell: float, k: int, num_heads: int, rows, heights) -> None:
    """multi_head's middle: each head takes its ``k`` features of the projections, attends,
    and gives ``k`` output features, which go on to the concatenation."""
    bar, box_h = heights
    for i in range(num_heads):
        xs, w = x0 + i * k * cell, k * cell
        _arrow(ax, (xs + w / 2, rows["qkv"]), (xs + w / 2, rows["heads"] + box_h))
        _box(ax, xs + 0.03, rows["heads"], w - 0.06, box_h, f"헤드 {i + 1}", color=HEADS[i],
             fontsize=8.5)
        _arrow(ax, (xs + w / 2, rows["heads"]), (xs + w / 2, rows["outs"] + bar))
        _cells(ax, xs, rows["outs"], [HEADS[i]] * k, cell, bar)
        _arrow(ax, (xs + w / 2, rows["outs"]), (xs + w / 2, rows["concat"] + bar))


def encoder_decoder(source: Sequence[str] = ("2", "0", "2", "6"),
                    target: Sequence[str] = ("<s>", "이", "천", "이", "십", "육"),
                    *, step: int = 3, attend_to: int = 2, prediction: str = "십",
                    rnn: str = "RNN") -> Figure:
    """An encoder-decoder with cross-attention: the decoder's query looks at the encoder.

    The encoder (an embedding and a bidirectional RNN) turns the source tokens into outputs
    ``h_j``, the keys and values. The decoder (an embedding and an RNN) reads the tokens
    generated so far; its state ``s_t`` at ``step`` is the query. Lines from ``s_t`` to every
    ``h_j`` are the attention weights (the one to ``attend_to`` is drawn heavy); their
    weighted average is the context vector ``c_t``, which with ``s_t`` gives the next token.

    Parameters
    ----------
    source : sequence of str, 1 to 6 tokens
        The encoder's input tokens.
    target : sequence of str, 1 to 6 tokens
        The decoder's input tokens (teacher forcing: the start token, then the answer).
    step : int, default 3
        Which decoder position's query is drawn (0-based, ``< len(target)``).
    attend_to : int, default 2
        The source position that query weighs most (0-based, ``< len(source)``).
    prediction : str, default "십"
        The token the decoder outputs at ``step``.
    rnn : str, default "RNN"
        The recurrent layer's name in the labels, for example "GRU" (chapter 6's model).

    Returns
    -------
    matplotlib.figure.Figure
        7 × 4.3 inches, the encoder on the left and the decoder on the right.

    Raises
    ------
    TypeError
        If ``source`` or ``target`` is not a sequence of strings (a single str is refused),
        ``step`` or ``attend_to`` is not an integer, or ``prediction`` or ``rnn`` is not a
        string.
    ValueError
        If a sequence is empty, longer than 6 or holds an empty string, ``step`` or
        ``attend_to`` is out of range, or ``prediction`` or ``rnn`` is empty.

    Notes
    -----
    Bahdanau et al. (2015), figure 1; Luong et al. (2015), figure 2; chapter 6 (and 1).

    Examples
    --------
    >>> fig = encoder_decoder()
    >>> {"인코더", "디코더", "크로스 어텐션"} <= set(labels(fig))
    True
    """
    source = strings(source, "source", high=6)
    target = strings(target, "target", high=6)
    step = integer(step, "step", low=0, high=len(target) - 1)
    attend_to = integer(attend_to, "attend_to", low=0, high=len(source) - 1)
    prediction = strings([prediction], "prediction")[0]
    rnn = strings([rnn], "rnn")[0]
    height = 4.3
    with _style():
        fig, ax = _canvas(WIDTH, height, "encoder_decoder")
        tok_w, gap, tok_h, y_state = 0.4, 0.1, 0.32, 1.75
        enc_x = _spread(len(source), 1.75, tok_w, gap)
        dec_x = _spread(len(target), 5.1, tok_w, gap)
        for name, xs, tokens, layers, state, color, centre in (
                ("인코더", enc_x, source, f"임베딩과 양방향 {rnn}", "h", KEY_VALUE, 1.75),
                ("디코더", dec_x, target, f"임베딩과 {rnn}", "s", QUERY, 5.1)):
            _label(ax, centre, 0.12, name, size=10, fontweight="bold")
            _embedded_rnn(ax, xs, tokens, layers, state, color, w=tok_w, h=tok_h,
                          rows=(0.45, 1.1, y_state))
        _label(ax, enc_x[0] - 0.1, y_state + tok_h / 2, "키·값", ha="right", size=8.5)
        _label(ax, dec_x[-1] + tok_w + 0.1, y_state + tok_h / 2, "쿼리", ha="left", size=8.5)
        query = (dec_x[step] + tok_w / 2, y_state + tok_h)
        for j, x in enumerate(enc_x):
            _weight(ax, query, (x + tok_w / 2, y_state + tok_h), j == attend_to,
                    heavy_width=2.4, rad=0.2, style="-")
        _label(ax, 3.45, 2.88, "크로스 어텐션", size=10, fontweight="bold")
        _note(ax, 3.45, 2.66, "쿼리가 모든 키와 비교해 가중치를 낸다 (굵을수록 크다)")
        _context_to_output(ax, (enc_x[attend_to] + tok_w / 2, y_state + tok_h + 0.05), query,
                           prediction)
    return fig


def _embedded_rnn(ax, xs, tokens, layers: str, state: str, color: str, *, w: float, h: float,
                  rows: tuple[float, float, float]) -> None:
    """encoder_decoder's side: a token box at each x in ``xs``, one box for the embedding and
    the RNN over them all, and the states ``state_i`` above; ``rows`` are the three heights."""
    y_tok, y_rnn, y_state = rows
    _box(ax, xs[0], y_rnn, xs[-1] + w - xs[0], 0.34, layers, color=PLAIN, fontsize=8.5)
    for i, (x, token) in enumerate(zip(xs, tokens, strict=True)):
        _box(ax, x, y_tok, w, h, token, color="white", fontsize=9)
        _arrow(ax, (x + w / 2, y_tok + h), (x + w / 2, y_rnn))
        _arrow(ax, (x + w / 2, y_rnn + 0.34), (x + w / 2, y_state))
        _box(ax, x, y_state, w, h, rf"${state}_{{{i + 1}}}$", color=color, fontsize=9)


def _context_to_output(ax, key, query, prediction: str) -> None:
    """encoder_decoder's top: the context vector (drawn from the heaviest ``key``) and the
    decoder state (from ``query``) meet in the output layer, which gives the next token."""
    y_ctx, out_x = 3.2, 5.1
    _box(ax, 0.75, y_ctx, 2.0, 0.42, "컨텍스트 벡터\n값들의 가중 평균", color=ATTENTION,
         fontsize=8)
    _box(ax, out_x - 1.0, y_ctx, 2.0, 0.42, "출력 레이어\n컨텍스트 + 디코더 상태", color=PLAIN,
         fontsize=8)
    _arrow(ax, (2.75, y_ctx + 0.21), (out_x - 1.0, y_ctx + 0.21))
    _arrow(ax, key, (1.75, y_ctx), width=0.6, color=FAINT)
    _arrow(ax, query, (query[0], y_ctx), width=0.6, color=FAINT)
    _box(ax, out_x - 0.2, 3.85, 0.4, 0.32, prediction, color="white", fontsize=9)
    _arrow(ax, (out_x, y_ctx + 0.42), (out_x, 3.85))
    _label(ax, out_x + 0.3, 4.01, "다음 토큰", ha="left")


def transformer_layers(norm: str = "post") -> Figure:
    """An encoder layer and a decoder layer, with residual connections and layer normalisation.

    Bottom to top. The encoder layer: self-attention, then the feed-forward network. The
    decoder layer: causally masked self-attention, cross-attention whose keys and values are
    the encoder's output, then the feed-forward network. Each sublayer has a residual
    connection (the line that goes around it) and a layer normalisation: after the addition
    for ``norm="post"`` (the original Transformer, ``LN(x + Sublayer(x))``), before the
    sublayer for ``norm="pre"`` (``x + Sublayer(LN(x))``).

    Parameters
    ----------
    norm : {"post", "pre"}, default "post"
        Where the layer normalisation sits.

    Returns
    -------
    matplotlib.figure.Figure
        7 inches wide, 4.4 inches tall for ``"post"`` and 6.08 for ``"pre"`` (whose layer
        normalisations take a row each).

    Raises
    ------
    ValueError
        If ``norm`` is not "post" or "pre".

    Notes
    -----
    Vaswani et al. (2017), figure 1 (post-LN); Xiong et al. (2020), figure 1 (both); chapter 8.

    Examples
    --------
    >>> sorted(s for s in labels(transformer_layers("pre")) if "정규화" in s)[:1]
    ['레이어 정규화']
    """
    norm = one_of(norm, "norm", ("post", "pre"))
    post = norm == "post"
    box_w, box_h, small_h, gap = 2.3, 0.36, 0.3, 0.22
    per_sublayer = box_h + 2 * gap + small_h if post else small_h + 3 * gap + box_h + 0.24
    height = 0.65 + 3 * per_sublayer + (0 if post else small_h) + 0.45
    with _style():
        fig, ax = _canvas(WIDTH, height, f"transformer_layers_{norm}")

        sizes = dict(post=post, box_w=box_w, box_h=box_h, small_h=small_h, gap=gap,
                     extra="마지막 레이어 정규화")
        enc_top, _ = _layer_column(ax, 0.45, 0.55, [("멀티 헤드 셀프 어텐션", ATTENTION),
                                                    ("피드포워드 네트워크", FFN)],
                                   title="인코더 레이어", **sizes)
        dec_top, where = _layer_column(ax, 3.95, 0.55, [("셀프 어텐션 (인과 마스크)", ATTENTION),
                                                        ("크로스 어텐션", KEY_VALUE),
                                                        ("피드포워드 네트워크", FFN)],
                                       title="디코더 레이어", **sizes)
        centre = 0.45 + box_w / 2
        _label(ax, centre, enc_top + 0.17, "인코더 출력", size=8.5)
        cross_x, cross_y = where["크로스 어텐션"]
        turn = 3.55
        _line(ax, [centre, centre, turn, turn],
              [enc_top + 0.3, enc_top + 0.45, enc_top + 0.45, cross_y])
        _arrow(ax, (turn, cross_y), (cross_x, cross_y))
        _label(ax, (turn + cross_x) / 2, cross_y + 0.13, "키·값")
        rule = ("사후 정규화: 출력 = LN(x + 서브레이어(x))" if post
                else "사전 정규화: 출력 = x + 서브레이어(LN(x))")
        _label(ax, 0.45, height - 0.3, rule, ha="left", size=8.5)
        _note(ax, 0.45, height - 0.55, "옆으로 돌아가는 선이 잔차 연결", ha="left")
        _label(ax, 3.95 + box_w / 2, dec_top + 0.17, "디코더 출력", size=8.5)
    return fig


def kv_cache(n: int = 7, num_layers: int = 2) -> Figure:
    """One generation step with and without a KV cache, position by position and layer by layer.

    Top: without a cache, every position of every layer is computed again to produce the
    token after position ``n - 1``. Bottom: with a KV cache, the keys and values of positions
    ``0 .. n - 2`` are read from the cache and only position ``n - 1`` is computed.

    Parameters
    ----------
    n : int, default 7
        The sequence length at this step, 2 to 10.
    num_layers : int, default 2
        Layers drawn, 1 to 3.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels, without and with the cache: 7 inches wide, ``num_layers + 1.65``
        inches tall.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``n`` is not in 2..10 or ``num_layers`` not in 1..3.

    Notes
    -----
    Pope et al. (2022), section 2; chapter 9.

    Examples
    --------
    >>> "K, V" in labels(kv_cache(4, 1))
    True
    """
    n = integer(n, "n", low=2, high=10)
    num_layers = integer(num_layers, "num_layers", low=1, high=3)
    panel = 0.5 * num_layers + 0.8
    height = 2 * panel + 0.05
    with _style():
        fig, ax = _canvas(WIDTH, height, "kv_cache")
        x0, cell_w = 1.0, min(0.78, (WIDTH - 1.1) / n)
        titles = (f"캐시 없음: 위치 {n - 1}을 만들 때 위치 0–{n - 1}을 모두 다시 계산한다",
                  f"KV 캐시: 위치 0–{n - 2}의 키·값은 캐시에서 읽고, 위치 {n - 1}만 계산한다")
        for p, (cached, title) in enumerate(zip((False, True), titles, strict=True)):
            top = height - 0.15 - p * panel
            _label(ax, 0.1, top - 0.1, title, ha="left", size=8.5)
            new = [pos == n - 1 or not cached for pos in range(n)]
            for layer in range(num_layers):
                y = top - 0.68 - layer * 0.5
                _label(ax, x0 - 0.1, y + 0.19, f"레이어 {num_layers - layer}", ha="right")
                _row(ax, _slots(x0, cell_w, n, 0.04), y, ["계산" if c else "K, V" for c in new],
                     [QUERY if c else KEY_VALUE for c in new], size=cell_w - 0.08,
                     height=0.38, fontsize=8)
            for pos in range(n):
                _note(ax, x0 + (pos + 0.5) * cell_w, top - 0.68 - num_layers * 0.5 + 0.37,
                      f"위치 {pos}" if pos == 0 else str(pos))
    return fig


def grouped_query(num_query_heads: int = 8, kv_heads: Sequence[int] = (8, 2, 1),
                  names: Sequence[str] = ("멀티 헤드", "그룹 쿼리", "멀티 쿼리")) -> Figure:
    """Query heads sharing key-value heads: one row per number of key-value heads.

    In each row, the ``num_query_heads`` query heads (top) are joined to the key-value head
    they use (bottom): query head ``h`` uses key-value head ``h // (num_query_heads // G)``
    for ``G`` key-value heads.

    Parameters
    ----------
    num_query_heads : int, default 8
        Query heads, 1 to 12.
    kv_heads : sequence of int, default (8, 2, 1)
        Key-value heads of each row; each must divide ``num_query_heads``.
    names : sequence of str, default ("멀티 헤드", "그룹 쿼리", "멀티 쿼리")
        Each row's name, one per entry of ``kv_heads``.

    Returns
    -------
    matplotlib.figure.Figure
        One row per entry of ``kv_heads``: 7 inches wide, 1.35 inches a row plus 0.1.

    Raises
    ------
    TypeError
        If a number is not an integer or ``names`` is not a sequence of strings.
    ValueError
        If a number is out of range, a row's key-value heads do not divide
        ``num_query_heads``, or ``names`` and ``kv_heads`` differ in length.

    Notes
    -----
    Shazeer (2019); Ainslie et al. (2023), figure 2; chapter 10.

    Examples
    --------
    >>> "KV2" in labels(grouped_query(4, [4, 2], ["멀티 헤드", "그룹 쿼리"]))
    True
    """
    num_query_heads = integer(num_query_heads, "num_query_heads", low=1, high=12)
    groups = [integer(g, "kv_heads", low=1, high=num_query_heads) for g in kv_heads]
    names = strings(names, "names", low=1, high=4)
    if len(names) != len(groups):
        raise ValueError(f"names must have one entry per kv_heads; got {len(names)} names "
                         f"for {len(groups)} rows")
    for g in groups:
        if num_query_heads % g:
            raise ValueError(f"kv_heads must divide num_query_heads (each key-value head "
                             f"serves a group of the same size); got {g} for "
                             f"num_query_heads={num_query_heads}")
    row_h = 1.35
    height = row_h * len(groups) + 0.1
    with _style():
        fig, ax = _canvas(WIDTH, height, "grouped_query")
        pitch = min(0.66, (WIDTH - 1.25 - 0.1) / num_query_heads)
        for r, (g, name) in enumerate(zip(groups, names, strict=True)):
            top = height - 0.1 - r * row_h
            _label(ax, 0.1, top - 0.14, f"{name} 어텐션: 쿼리 헤드 {num_query_heads}개, "
                   f"KV 헤드 {g}개", ha="left", size=8.5)
            _shared_heads(ax, 1.25, pitch, num_query_heads, g, (top - 0.62, top - 1.22))
    return fig


def _shared_heads(ax, x0: float, pitch: float, num_query_heads: int, g: int,
                  heights: tuple[float, float]) -> None:
    """grouped_query's row: the query heads (above) each joined to the key-value head its
    group shares (below); ``heights`` are the two rows' lower edges."""
    y_q, y_kv = heights
    w, size = pitch - 0.12, num_query_heads // g
    _label(ax, x0 - 0.12, y_q + 0.15, "쿼리 헤드", ha="right")
    _label(ax, x0 - 0.12, y_kv + 0.15, "KV 헤드", ha="right")
    q_centres = [x0 + (h + 0.5) * pitch for h in range(num_query_heads)]
    kv_centres = [x0 + (j + 0.5) * size * pitch for j in range(g)]
    for h, cx in enumerate(q_centres):
        _line(ax, [cx, kv_centres[h // size]], [y_q, y_kv + 0.3], color="#999999", width=0.8,
              zorder=0)
    _row(ax, [c - w / 2 for c in q_centres], y_q, [f"Q{h}" for h in range(num_query_heads)],
         [QUERY] * num_query_heads, size=w, height=0.3, fontsize=8)
    _row(ax, [c - w / 2 for c in kv_centres], y_kv, [f"KV{j}" for j in range(g)],
         [KEY_VALUE] * g, size=w, height=0.3, fontsize=7.5)


def decoder_only() -> Figure:
    """The pre-LN decoder-only Transformer, bottom to top, from token ids to the next token.

    Token ids → embedding (× sqrt(d_model)) plus positional encoding → ``L`` layers of causally
    masked self-attention and a feed-forward network, each with layer normalisation before it
    and a residual connection around it → a final layer normalisation → a ``Dense`` layer to
    one logit per vocabulary token → softmax.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 6.3 inches, the repeated layer framed once.

    Notes
    -----
    Radford et al. (2019), section 2.3 (GPT-2: pre-LN with a final layer normalisation);
    Xiong et al. (2020), figure 1; chapter 9.

    Examples
    --------
    >>> "로짓 (n, 어휘)" in labels(decoder_only())
    True
    """
    box_w, box_h = 2.3, 0.36
    height = 6.3
    x = 1.0
    centre = x + box_w / 2
    with _style():
        fig, ax = _canvas(WIDTH, height, "decoder_only")
        _label(ax, centre, 0.2, "토큰 id (n,)", size=8.5)
        _arrow(ax, (centre, 0.32), (centre, 0.5))
        _box(ax, x, 0.5, box_w, box_h, "임베딩 + 위치 인코딩", color=PLAIN, fontsize=8.5)
        top, _ = _layer_column(ax, x, 1.08, [("셀프 어텐션 (인과 마스크)", ATTENTION),
                                             ("피드포워드 네트워크", FFN)], post=False)
        frame_top = top - 0.22
        _box(ax, x - 0.25, 1.0, box_w + 0.8, frame_top - 1.0, dashed=True)
        _label(ax, x + box_w + 0.75, (1.0 + frame_top) / 2, "× L개 쌓음", ha="left",
               size=8.5)
        y = top
        for label, color in (("마지막 레이어 정규화", NORM),
                             ("Dense (어휘의 토큰마다 하나)", PLAIN)):
            y = _step_up(ax, x + 0.2, y, box_w - 0.4, 0.3, label, color=color, fontsize=8,
                         centre=centre, gap=0.2)
        _label(ax, centre, y + 0.1, "로짓 (n, 어휘)", size=8.5)
        _arrow(ax, (centre, y + 0.22), (centre, y + 0.42))
        _label(ax, centre, y + 0.55, "소프트맥스: 다음 토큰의 확률", size=8.5)
        notes = ("사전 정규화: 출력 = x + 서브레이어(LN(x))", "옆으로 돌아가는 선이 잔차 연결",
                 "인코더도 크로스 어텐션도 없다", "행 t의 로짓이 위치 t 다음 토큰을 고른다")
        for i, note in enumerate(notes):
            _label(ax, 4.55, height - 0.45 - 0.3 * i, note, ha="left", size=8)
    return fig


def llama_stack(*, num_layers: int = 30, num_query_heads: int = 9, num_kv_heads: int = 3,
                d_model: int = 576, d_ff: int = 1536, vocab: int = 49152) -> Figure:
    """A Llama-style model (SmolLM2), bottom to top, each part named with the chapter that
    built it.

    Token ids → embedding (no scale, no positional encoding) → ``num_layers`` pre-norm
    layers of RMSNorm, grouped-query attention with RoPE, RMSNorm and SwiGLU, each with a
    residual connection → a final RMSNorm → the embedding's transpose (tied weights) →
    logits.

    Parameters
    ----------
    num_layers, num_query_heads, num_kv_heads, d_model, d_ff, vocab : int
        The sizes written on the parts (chapter 15 passes those of the model file).

    Returns
    -------
    matplotlib.figure.Figure
        7 × 6.3 inches, the repeated layer framed once.

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer, or ``num_kv_heads`` does not divide
        ``num_query_heads``.

    Notes
    -----
    Touvron et al. (2023), section 2.2; Ainslie et al. (2023) for the grouped-query
    attention; Allal et al. (2025) for SmolLM2. Chapter 15.

    Examples
    --------
    >>> "SwiGLU (d_ff = 1,536)" in labels(llama_stack())
    True
    """
    sizes = {name: integer(value, name, low=1) for name, value in (
        ("num_layers", num_layers), ("num_query_heads", num_query_heads),
        ("num_kv_heads", num_kv_heads), ("d_model", d_model), ("d_ff", d_ff),
        ("vocab", vocab))}
    if sizes["num_query_heads"] % sizes["num_kv_heads"]:
        raise ValueError(f"num_kv_heads={num_kv_heads} must divide "
                         f"num_query_heads={num_query_heads}")
    box_w, box_h, x = 2.6, 0.36, 0.7
    centre, height = x + box_w / 2, 6.3
    with _style():
        fig, ax = _canvas(WIDTH, height, "llama_stack")
        _label(ax, centre, 0.2, "토큰 id (n,)", size=8.5)
        _arrow(ax, (centre, 0.32), (centre, 0.5))
        _box(ax, x, 0.5, box_w, box_h, f"임베딩 ({vocab:,} × {d_model})", color=PLAIN,
             fontsize=8.5)
        attention = f"그룹 쿼리 어텐션 (헤드 {num_query_heads}, KV 헤드 {num_kv_heads})"
        top, _ = _layer_column(ax, x, 1.08, [(attention, ATTENTION),
                                             (f"SwiGLU (d_ff = {d_ff:,})", FFN)],
                               post=False, box_w=box_w, norm="RMSNorm")
        frame_top = top - 0.22
        _box(ax, x - 0.25, 1.0, box_w + 0.8, frame_top - 1.0, dashed=True)
        _label(ax, x + box_w + 0.7, (1.0 + frame_top) / 2, f"× {num_layers}", ha="left",
               size=8.5)
        y = top
        for label, color in (("마지막 RMSNorm", NORM), ("임베딩의 전치 (공유)", PLAIN)):
            y = _step_up(ax, x + 0.2, y, box_w - 0.4, 0.3, label, color=color, fontsize=8,
                         centre=centre, gap=0.2)
        _label(ax, centre, y + 0.1, f"로짓 (n, {vocab:,})", size=8.5)
        notes = (("임베딩, 로짓, 자기회귀 생성", "9장"),
                 ("사전 정규화와 잔차 연결", "8·9장"),
                 ("그룹 쿼리 어텐션, KV 캐시", "9·10장"),
                 ("RoPE, RMSNorm, SwiGLU", "11장"),
                 ("위치 인코딩을 더하지 않는다", "어텐션 안의 RoPE가 쿼리와 키를 회전"),
                 ("출력 행렬 = 임베딩의 전치", "파라미터를 공유"))
        for i, (part, where) in enumerate(notes):
            _label(ax, 4.45, height - 0.5 - 0.42 * i, part, ha="left", size=8)
            _note(ax, 4.45, height - 0.7 - 0.42 * i, where, ha="left")
    return fig


def ring_buffer(window: int = 4, arrivals: int = 7) -> Figure:
    """A KV cache of ``window`` slots used as a ring buffer, one row per arriving position.

    Position ``p`` is written to slot ``p mod window``; once the slots are full, each new
    position overwrites the oldest one. Each row shows the slots after position ``p``
    arrived: the slot just written (orange) and the positions the others hold (blue).

    Parameters
    ----------
    window : int, default 4
        Slots, 2 to 8.
    arrivals : int, default 7
        Positions that arrive (rows), 2 to 10.

    Returns
    -------
    matplotlib.figure.Figure
        One row per arriving position, 0.34 inches each: 7 inches wide, ``0.75 + 0.34
        arrivals`` inches tall.

    Raises
    ------
    TypeError
        If ``window`` or ``arrivals`` is not an integer.
    ValueError
        If ``window`` is not in 2..8 or ``arrivals`` not in 2..10.

    Notes
    -----
    Jiang et al. (2023), section 2, figure 2 ("rolling buffer cache"); chapter 10.

    Examples
    --------
    >>> labels(ring_buffer(2, 3))[-2:]
    ['위치 2', '위치 1']
    """
    window = integer(window, "window", low=2, high=8)
    arrivals = integer(arrivals, "arrivals", low=2, high=10)
    row_h, x0 = 0.34, 1.9
    cell_w = min(1.1, (WIDTH - x0 - 0.1) / window)
    height = 0.75 + arrivals * row_h
    with _style():
        fig, ax = _canvas(WIDTH, height, "ring_buffer")
        for slot in range(window):
            _label(ax, x0 + (slot + 0.5) * cell_w, height - 0.22, f"칸 {slot}", size=8)
        _label(ax, 0.1, height - 0.22, f"위치 p는 칸 p mod {window}에", ha="left", size=8)
        for p in range(arrivals):
            y = height - 0.5 - (p + 1) * row_h
            _label(ax, x0 - 0.12, y + row_h / 2, f"위치 {p} 도착 후", ha="right", size=8)
            held = [max(range(slot, p + 1, window), default=None) for slot in range(window)]
            _row(ax, _slots(x0, cell_w, window, 0.04), y + 0.03,
                 ["" if q is None else f"위치 {q}" for q in held],
                 ["white" if q is None else QUERY if q == p else KEY_VALUE for q in held],
                 size=cell_w - 0.08, height=row_h - 0.06, fontsize=8)
    return fig


def window_cone(window: int = 4, num_layers: int = 3) -> Figure:
    """What the last position's output depends on, layer by layer, with a sliding window.

    Each layer lets a position see the ``window`` positions up to itself, so the last
    position of layer ``L`` depends on ``L (window - 1) + 1`` input positions: a cone that
    widens by ``window - 1`` per layer going down.

    Parameters
    ----------
    window : int, default 4
        Keys each position sees, itself included, 2 to 5.
    num_layers : int, default 3
        Layers, 1 to 4.

    Returns
    -------
    matplotlib.figure.Figure
        A row of positions per layer and one for the input, 0.42 inches each: 7 inches
        wide, ``0.95 + 0.42 (num_layers + 1)`` inches tall.

    Raises
    ------
    TypeError
        If ``window`` or ``num_layers`` is not an integer.
    ValueError
        If ``window`` is not in 2..5 or ``num_layers`` not in 1..4.

    Notes
    -----
    Jiang et al. (2023), figure 1; Beltagy et al. (2020), section 3.1; chapter 10.

    Examples
    --------
    >>> labels(window_cone())[-1]
    '창 w = 4, 레이어 L = 3: 마지막 위치가 닿는 거리 L(w - 1) = 3 × 3 = 9칸'

    """
    window = integer(window, "window", low=2, high=5)
    num_layers = integer(num_layers, "num_layers", low=1, high=4)
    reach = num_layers * (window - 1)
    n = reach + 3
    x0, row_h = 1.1, 0.42
    cell_w = min(0.5, (WIDTH - x0 - 0.1) / n)
    height = 0.95 + (num_layers + 1) * row_h
    with _style():
        fig, ax = _canvas(WIDTH, height, "window_cone")
        for row in range(num_layers + 1):              # row 0: the input tokens
            y = 0.45 + row * row_h
            _label(ax, x0 - 0.1, y + row_h / 2, "입력" if row == 0 else f"레이어 {row}",
                   ha="right", size=8)
            depth = num_layers - row                   # layers between this row and the top
            reached = QUERY if row == num_layers else KEY_VALUE
            _row(ax, _slots(x0, cell_w, n, 0.03), y + 0.04, [""] * n,
                 [reached if n - 1 - pos <= depth * (window - 1) else "white"
                  for pos in range(n)], size=cell_w - 0.06, height=row_h - 0.08)
        for pos in range(n):
            _note(ax, x0 + (pos + 0.5) * cell_w, 0.3, str(pos))
        first = n - 1 - reach
        _label(ax, x0 + (first + 0.5) * cell_w, 0.12, "가장 먼 입력", size=7.5)
        _label(ax, 0.1, height - 0.2,
               f"창 w = {window}, 레이어 L = {num_layers}: 마지막 위치가 닿는 거리 "
               f"L(w - 1) = {num_layers} × {window - 1} = {reach}칸", ha="left", size=8.5)
    return fig


def rope_rotation(theta: float = 0.5) -> Figure:
    """RoPE on one 2-D pair: rotation by position × angular frequency, and why only the
    difference of positions is left.

    Left: the same pair at positions 0 to 3, rotated by ``m theta``. Middle and right: a
    query at ``m`` and a key at ``n`` for (1, 3) and (4, 6); both pairs of arrows are
    ``(n - m) theta = 2 theta`` apart, so their dot product (the score) is the same.

    Parameters
    ----------
    theta : float, default 0.5
        The pair's angular frequency in radians per position, in (0.1, 0.8].

    Returns
    -------
    matplotlib.figure.Figure
        Three circles side by side in 7 × 2.75 inches.

    Raises
    ------
    TypeError
        If ``theta`` is not a number.
    ValueError
        If ``theta`` is out of range.

    Notes
    -----
    Su et al. (2021), section 3.2, equation (13) and figure 1; chapter 11.

    Examples
    --------
    >>> "사이 각 2θ" in labels(rope_rotation())
    True
    """
    theta = real(theta, "theta", low=0.1, high=0.8, low_open=True)
    radius, height = 0.85, 2.75
    with _style():
        fig, ax = _canvas(WIDTH, height, "rope_rotation")
        panels = ((1.2, "한 쌍을 위치 m마다 mθ만큼 돌린다", None),
                  (3.55, "쿼리 위치 1, 키 위치 3", (1, 3)),
                  (5.85, "쿼리 위치 4, 키 위치 6", (4, 6)))
        for cx, title, pair in panels:
            cy = 1.2
            ax.add_patch(Circle((cx, cy), radius, facecolor="none", edgecolor="#bbbbbb",
                                linewidth=0.8))
            _label(ax, cx, height - 0.2, title, size=8)
            if pair is None:
                for m in range(4):
                    _ray(ax, (cx, cy), radius, m * theta, f"m={m}", beyond=(0.22, 0.16),
                         color=QUERY if m == 0 else INK)
                _label(ax, cx, cy - radius - 0.18, f"θ = {theta} rad", size=7.5)
                continue
            m, n = pair
            for pos, color, name in ((m, QUERY, "q"), (n, KEY_VALUE, "k")):
                _ray(ax, (cx, cy), radius, pos * theta, f"{name}{pos}", beyond=(0.2, 0.14),
                     color=color, width=1.4)
            mid = (m + n) / 2 * theta
            ax.add_patch(Arc((cx, cy), 0.7, 0.7, theta1=math.degrees(m * theta),
                             theta2=math.degrees(n * theta), color=INK, linewidth=0.8))
            _label(ax, cx + 0.52 * math.cos(mid), cy + 0.52 * math.sin(mid) - 0.02, "2θ",
                   size=7.5)
            _label(ax, cx, cy - radius - 0.18, "사이 각 2θ", size=7.5)
    return fig


def latent_attention(cache_label: str = "KV 캐시: 토큰마다 이 두 벡터만") -> Figure:
    """Multi-head latent attention's data flow: compress, cache the latent, up-project per head.

    From the input ``h_t`` (left): the query latent ``c^Q`` and the latent ``c^KV`` (down-
    projections), the RoPE key ``k^R`` shared by all heads; the dashed frame is what the KV
    cache keeps. Then the per-head queries, keys and values (up-projections), attention
    with the scale ``1/sqrt(d_h + d_h^R)``, and ``W^O``. Queries are orange, keys, values
    and the cache blue, as in the other diagrams.

    Parameters
    ----------
    cache_label : str, default "KV 캐시: 토큰마다 이 두 벡터만"
        The caption inside the cache's frame.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 3.8 inches, from the input on the left to the output on the right.

    Raises
    ------
    TypeError
        If ``cache_label`` is not a string.

    Notes
    -----
    DeepSeek-AI (2024), "DeepSeek-V2", figure 3 and equations (9)-(19); chapter 12.

    Examples
    --------
    >>> "잠재 벡터" in labels(latent_attention())
    True
    """
    cache_label = strings([cache_label], "cache_label", low=1, high=1)[0]
    height = 3.8
    with _style():
        fig, ax = _canvas(WIDTH, height, "latent_attention")
        _label(ax, 2.2, 3.62, "잠재 벡터로 압축", size=8.5)
        _label(ax, 3.95, 3.62, "헤드별 늘리는 투영", size=8.5)
        _titled_box(ax, 0.1, 1.55, 0.75, 0.6, "입력", "$h_t$", color=PLAIN, at=(0.4, 0.17),
                    sizes=(8.5, 9))
        _rect(ax, 1.4, 0.05, 1.6, 1.95, width=0.8, style="round,pad=0", dashes="--")
        _label(ax, 2.2, 0.16, cache_label, size=7.5)
        latents = {"q": (2.65, QUERY, "쿼리 잠재 벡터", "$c^{Q}$  ($d_c'$)"),
                   "kv": (1.35, KEY_VALUE, "잠재 벡터", "$c^{KV}$  ($d_c$)"),
                   "r": (0.35, KEY_VALUE, "RoPE 키 (헤드 공유)", "$k^{R}$  ($d_h^R$)")}
        for y, color, title, symbol in latents.values():
            _titled_box(ax, 1.5, y, 1.4, 0.56, title, symbol, color=color, at=(0.39, 0.16),
                        sizes=(8, 8.5))
            _arrow(ax, (0.85, 1.85), (1.5, y + 0.28))
        for x, y, weight in ((1.17, 2.62, "$W^{DQ}$"), (1.17, 1.85, "$W^{DKV}$"),
                             (0.98, 1.2, "$W^{KR}$")):
            _label(ax, x, y, weight, size=7.5)
        _heads_from_latents(ax, {name: y + 0.28 for name, (y, *_) in latents.items()})
        _attention_to_output(ax)
    return fig


def _heads_from_latents(ax, sources: dict[str, float]) -> None:
    """latent_attention's middle: each head's query, RoPE query, key and value made from
    the latent whose right edge's middle is at height ``sources[name]``, then into attention."""
    heads = [("$q^{C}$  ($d_h$)", 3.05, QUERY, "q", "$W^{UQ}$"),
             ("RoPE  $q^{R}$  ($d_h^R$)", 2.45, QUERY, "q", "$W^{QR}$"),
             ("$k^{C}$  ($d_h$)", 1.7, KEY_VALUE, "kv", "$W^{UK}$"),
             ("$v^{C}$  ($d_h$)", 1.1, KEY_VALUE, "kv", "$W^{UV}$")]
    for symbol, y, color, source, weight in heads:
        _box(ax, 3.5, y, 1.15, 0.4, symbol, color=color, fontsize=8.5)
        start_y = sources[source]
        _arrow(ax, (2.9, start_y), (3.5, y + 0.2))
        above = y + 0.2 > start_y
        _label(ax, 3.2, (start_y + y + 0.2) / 2 + (0.1 if above else -0.1), weight,
               size=7.5, va="bottom" if above else "top")
        _arrow(ax, (4.65, y + 0.2), (5.0, min(max(y + 0.2, 0.9), 3.0)))


def _attention_to_output(ax) -> None:
    """latent_attention's right side: the RoPE key joins, attention per head, then W^O."""
    _arrow(ax, (2.9, 0.63), (5.0, 0.75))
    _box(ax, 5.0, 0.45, 1.0, 2.7, color=ATTENTION)
    _label(ax, 5.5, 2.1, "헤드마다\n어텐션", size=8.5, linespacing=1.3)
    _label(ax, 5.5, 1.5, r"$1/\sqrt{d_h + d_h^R}$")
    _label(ax, 5.5, 1.1, "인과 마스크", size=7.5)
    _arrow(ax, (6.0, 1.8), (6.35, 1.8))
    _label(ax, 6.175, 1.9, "$W^{O}$", size=7.5, va="bottom")
    _titled_box(ax, 6.35, 1.5, 0.6, 0.6, "출력", "$u_t$", color=PLAIN, at=(0.42, 0.18),
                sizes=(8.5, 9))


def _grid(ax, x: float, top: float, n: int, size: float, shade) -> None:
    """An n x n grid of square cells (row i = query i, column j = key j) from (x, top) down;
    ``shade(i, j)`` gives a cell's colour, or None for an empty (white) cell."""
    for i in range(n):
        for j in range(n):
            _rect(ax, x + j * size, top - (i + 1) * size, size, size,
                  face=shade(i, j) or "white", edge="#999999", width=0.4)


def linear_attention_forms(n: int = 8, chunk_size: int = 3) -> Figure:
    """The three equal forms of causal linear attention on one page, without decay.

    Left: the matrix form, ``(phi(Q) phi(K)^T * M) V`` with the n x n lower-triangular causal
    mask M (1 on and below the diagonal, 0 above). Middle: the recurrent form, a chain of
    states, each updated by its token's ``phi(k)`` and ``v`` and read by its ``phi(q)`` into
    the output ``o``. Right: the chunked form, the same matrix cut into chunks of
    ``chunk_size`` tokens; the blocks on the diagonal are computed as matrix products, the
    blocks below it come through the state passed from chunk to chunk.

    Parameters
    ----------
    n : int, default 8
        Tokens drawn, 3 to 12.
    chunk_size : int, default 3
        Tokens per chunk, 2 to ``n - 1``; the last chunk may be shorter.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels in 7 × 3 inches, the matrix, recurrent and chunked forms.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``n`` is not in 3..12 or ``chunk_size`` not in 2..n-1.

    Notes
    -----
    Katharopoulos et al. (2020), section 3.4; Yang et al. (2024), figure 1; chapter 13, which
    shows it before the decay gate, so the mask holds only 1 and 0.

    Examples
    --------
    >>> "청크 형태" in labels(linear_attention_forms(6, 2))
    True
    """
    n = integer(n, "n", low=3, high=12)
    chunk_size = integer(chunk_size, "chunk_size", low=2, high=n - 1)
    height, size = 3.0, 1.7 / n
    with _style():
        fig, ax = _canvas(WIDTH, height, "linear_attention_forms")
        top = height - 0.62
        below = top - n * size
        for x, title in ((0.15, "행렬 형태"), (2.55, "순환 형태"), (4.95, "청크 형태")):
            _label(ax, x + 0.95, height - 0.16, title, size=9)
        _label(ax, 1.1, height - 0.42, r"$O = (\phi(Q)\,\phi(K)^\top \odot M)\,V$")
        _grid(ax, 0.25, top, n, size, lambda i, j: KEY_VALUE if j <= i else None)
        _label(ax, 1.1, below - 0.18, "인과 마스크 M", size=7.5)
        _label(ax, 1.1, below - 0.42, "칠한 칸 1, 빈 칸 0", size=7.5)
        _state_chain(ax, 2.55, top)
        _label(ax, 3.5, below - 0.18, "상태 하나, 크기 고정", size=7.5)
        _grid(ax, 5.05, top, n, size, lambda i, j: _chunk_colour(i, j, chunk_size))
        _chunk_borders(ax, 5.05, top, n, size, chunk_size)
        _label(ax, 5.9, below - 0.18, "대각 블록: 행렬 곱", size=7.5)
        _label(ax, 5.9, below - 0.42, "아래 블록: 상태로 전달", size=7.5)
    return fig


def _chunk_colour(i: int, j: int, chunk_size: int):
    if j > i:
        return None
    return QUERY if i // chunk_size == j // chunk_size else KEY_VALUE


def _chunk_borders(ax, x, top, n, size, chunk_size):
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        _rect(ax, x + start * size, top - stop * size, (stop - start) * size,
              (stop - start) * size, width=1.2)


def _state_chain(ax, x, top):
    """Three states S_{t-1}, S_t, S_{t+1}: its token's phi(k) and v enter each state from
    below, and its phi(q) reads the state into the output o above it."""
    centre = x + 0.95
    _label(ax, centre, top + 0.2, r"$S_t = S_{t-1} + v_t\,\phi(k_t)^\top$")
    _label(ax, centre, top - 0.05, r"$o_t = S_t\,\phi(q_t)$")
    y = top - 1.25
    for c, name in enumerate((r"$S_{t-1}$", r"$S_t$", r"$S_{t+1}$")):
        cx = centre + (c - 1) * 0.9
        _box(ax, cx - 0.22, y, 0.44, 0.4, name, color=KEY_VALUE, fontsize=8)
        _arrow(ax, (cx, y - 0.3), (cx, y))
        _label(ax, cx, y - 0.42, r"$\phi(k),\, v$", size=7.5)
        _arrow(ax, (cx, y + 0.4), (cx, y + 0.62))
        _box(ax, cx - 0.2, y + 0.62, 0.4, 0.28, r"$o$", color=QUERY, fontsize=8)
        _arrow(ax, (cx - 0.47, y + 0.76), (cx - 0.2, y + 0.76))
        _label(ax, cx - 0.34, y + 0.89, r"$\phi(q)$", size=7.5)
        if c:
            _arrow(ax, (cx - 0.68, y + 0.2), (cx - 0.22, y + 0.2))


def hybrid_stack(num_blocks: int = 2, ratio: int = 3) -> Figure:
    """A hybrid layer stack: ``ratio`` linear-attention layers, then one softmax-attention
    layer, repeated ``num_blocks`` times; what each keeps while generating.

    Parameters
    ----------
    num_blocks : int, default 2
        Repeats drawn, 1 to 3.
    ratio : int, default 3
        Gated DeltaNet layers per softmax-attention layer, 1 to 4.

    Returns
    -------
    matplotlib.figure.Figure
        A single row of ``num_blocks (ratio + 1)`` layers in 7 × 1.55 inches.

    Raises
    ------
    TypeError
        If ``num_blocks`` or ``ratio`` is not an integer.
    ValueError
        If ``num_blocks`` is not in 1..3 or ``ratio`` not in 1..4.

    Notes
    -----
    The layout of Qwen3-Next (Qwen team, 2025) and Kimi Linear (Kimi team, 2025); chapter 13.

    Examples
    --------
    >>> labels(hybrid_stack(1, 2)).count("DeltaNet")
    2
    """
    num_blocks = integer(num_blocks, "num_blocks", low=1, high=3)
    ratio = integer(ratio, "ratio", low=1, high=4)
    count = num_blocks * (ratio + 1)
    pitch = (WIDTH - 0.3) / count
    height = 1.55
    with _style():
        fig, ax = _canvas(WIDTH, height, "hybrid_stack")
        for layer in range(count):
            softmax = layer % (ratio + 1) == ratio
            x = 0.15 + layer * pitch
            _box(ax, x + 0.04, 0.72, pitch - 0.08, 0.52, "어텐션" if softmax else "",
                 color=QUERY if softmax else KEY_VALUE, fontsize=8)
            if not softmax:  # two texts, so that each line stays one <text> in the SVG
                for dy, word in ((0.1, "Gated"), (-0.1, "DeltaNet")):
                    _label(ax, x + pitch / 2, 0.98 + dy, word)
            _label(ax, x + pitch / 2, 0.5, "KV 캐시" if softmax else "상태", size=7.5)
            if layer:
                _arrow(ax, (x - 0.04, 0.975), (x + 0.04, 0.975))
        _label(ax, 0.15, 1.38,
               f"레이어 {ratio}개는 고정 크기의 상태, 1개는 길이에 비례하는 KV 캐시", ha="left",
               size=8.5)
        _note(ax, 0.15, 0.2, "레이어 아래: 토큰을 생성할 때 들고 있는 것", ha="left")
    return fig


def associative_recall(num_pairs: int = 4) -> Figure:
    """The multi-query associative recall task and the one-layer model that learns it.

    Top: one sequence, ``num_pairs`` key-value pairs and then the same keys again in another
    order; under each query, the value the model must predict, and an arc from the first query
    back to the pair it must find. Bottom: the model, ids → embedding → token shift →
    token-mixing layer → logits.

    Parameters
    ----------
    num_pairs : int, default 4
        Pairs drawn, 2 to 5.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 2.9 inches.

    Raises
    ------
    TypeError
        If ``num_pairs`` is not an integer.
    ValueError
        If ``num_pairs`` is not in 2..5.

    Notes
    -----
    Arora et al. (2023), "Zoology", section 3 (MQAR); chapter 14.

    Examples
    --------
    >>> "토큰 이동" in labels(associative_recall(3))
    True
    """
    pairs = integer(num_pairs, "num_pairs", low=2, high=5)
    order = [*range(1, pairs, 2), *range(0, pairs, 2)]  # the queries, in another order
    count, pitch, size, y = 3 * pairs, (WIDTH - 0.4) / (3 * pairs), 0.4, 1.75
    with _style():
        fig, ax = _canvas(WIDTH, 2.9, "associative_recall")
        xs = _slots(0.2, pitch, count, (pitch - size) / 2)
        tokens = [t for i in range(pairs) for t in (f"$k_{i + 1}$", f"$v_{i + 1}$")]
        tokens += [f"$k_{i + 1}$" for i in order]
        colors = [KEY_VALUE, FFN] * pairs + [QUERY] * pairs
        _row(ax, xs, y, tokens, colors, size=size, height=0.36, fontsize=9)
        middle = 0.2 + 2 * pairs * pitch
        _line(ax, [middle, middle], [y - 0.45, y + 0.85], color=FAINT, width=0.8,
              linestyle="--")
        _label(ax, (0.2 + middle) / 2, y + 0.98, f"쌍 {pairs}개를 늘어놓는다", size=8.5)
        _label(ax, (middle + WIDTH - 0.2) / 2, y + 0.98, "같은 키를 섞어 다시 묻는다",
               size=8.5)
        for x, i in zip(xs[2 * pairs:], order, strict=True):
            _label(ax, x + size / 2, y - 0.25, f"$v_{i + 1}$", size=8.5, color=NOTE)
        _note(ax, middle - 0.1, y - 0.25, "맞힐 다음 토큰", ha="right")
        first = order[0]
        _arrow(ax, (xs[2 * pairs] + size / 2, y + 0.36),
               (xs[2 * first + 1] + size / 2, y + 0.36), rad=0.25, color=NOTE, width=0.8)
        steps = (("토큰", PLAIN), ("임베딩", PLAIN), ("토큰 이동", NORM),
                 ("혼합 레이어", ATTENTION), ("로짓", PLAIN))
        bx = _spread(len(steps), WIDTH / 2, 1.05, 0.3)
        for i, (x, (label, color)) in enumerate(zip(bx, steps, strict=True)):
            _box(ax, x, 0.55, 1.05, 0.38, label, color=color, fontsize=8.5)
            if i:
                _arrow(ax, (x - 0.3, 0.74), (x, 0.74))
        _label(ax, bx[2] + 0.525, 0.35, r"$[x_t,\ x_{t-1}]$", size=8)
        _note(ax, bx[2] + 0.525, 0.13, "값 자리에서 앞의 키도 본다")
        _note(ax, bx[3] + 0.525, 0.35, "네 가지 중 하나")
        _note(ax, bx[4] + 0.525, 0.35, "어휘의 토큰마다 하나")
    return fig


def delta_rule_write(gated: bool = False) -> Figure:
    """The delta rule's write for one token: read what the state holds for the key, take the
    error from the new value, write the error back under the key.

    From the left: the state ``S_{t-1}`` (``alpha_t S_{t-1}`` if ``gated``), (1) the read
    ``r_t = S k_t``, (2) the error ``e_t = v_t - r_t``, (3) the write ``S + beta_t e_t
    k_t^T``, and the new state ``S_t``; the key, value and step enter from below. The states
    are drawn in the colour of keys and values, the read, error and write in the colour of
    what is computed anew.

    Parameters
    ----------
    gated : bool, default False
        Draw Gated DeltaNet's write, which decays the state before it reads.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 2.2 inches, the three steps from left to right.

    Raises
    ------
    TypeError
        If ``gated`` is not True or False.

    Notes
    -----
    Schlag et al. (2021), equation (23); Yang, Kautz and Hatamizadeh (2025), equation (10);
    chapter 13.

    Examples
    --------
    >>> "② 오차" in labels(delta_rule_write())
    True
    """
    gated = boolean(gated, "gated")
    height, y, h = 2.2, 0.95, 0.72
    with _style():
        fig, ax = _canvas(WIDTH, height, "delta_rule_write")
        _titled_box(ax, 0.1, y, 0.85, h, "감쇠한 상태" if gated else "상태",
                    r"$\alpha_t S_{t-1}$" if gated else "$S_{t-1}$", color=KEY_VALUE,
                    at=(0.5, 0.2), sizes=(8, 9))
        steps = ((1.3, "① 읽기", r"$r_t = S\,k_t$"), (3.1, "② 오차", r"$e_t = v_t - r_t$"),
                 (4.9, "③ 쓰기", r"$S + \beta_t\, e_t\, k_t^\top$"))
        for x, title, symbol in steps:
            _titled_box(ax, x, y, 1.45, h, title, symbol, color=QUERY, at=(0.5, 0.2),
                        sizes=(8.5, 9))
        _titled_box(ax, 6.5, y, 0.45, h, "새 상태", "$S_t$", color=KEY_VALUE,
                    at=(0.5, 0.2), sizes=(7.5, 9))
        for start, end in ((0.95, 1.3), (2.75, 3.1), (4.55, 4.9), (6.35, 6.5)):
            _arrow(ax, (start, y + h / 2), (end, y + h / 2))
        above = y + h + 0.25  # the state goes on, unchanged by the read, to the write
        _line(ax, [0.525, 0.525, 5.625], [y + h, above, above], color=FAINT)
        _arrow(ax, (5.625, above), (5.625, y + h), color=FAINT)
        _note(ax, 3.05, above + 0.14, "읽기는 상태를 바꾸지 않는다: 쓰기는 같은 상태에 더한다")
        for x, text in ((2.025, "$k_t$"), (3.825, "$v_t$"), (5.625, r"$\beta_t,\ k_t$")):
            _arrow(ax, (x, y - 0.33), (x, y))
            _label(ax, x, y - 0.45, text, size=8.5)
        _note(ax, 3.5, 0.15, "세기가 1이면 쓴 뒤의 상태는 키 k로 새 값 v를 정확히 돌려준다: "
                             "옛 값이 새 값으로 바뀐다")
    return fig


def ut_chunk(chunk_size: int = 4) -> Figure:
    """One chunk of the delta rule in the UT form: the system, its inverse by forward
    substitution, and the writes it gives.

    Left: the strictly lower-triangular ``A`` (``A_ij = beta_i e^{G_i - G_j} k_i^T k_j``
    for ``j < i``); middle: ``T = (I + A)^{-1}``, found row by row from the rows above
    (forward substitution), lower triangular with ones on the diagonal; right: the writes
    ``U = T diag(beta) V - W S_0^T``, whose second term ``W = T diag(beta Gamma) K`` is the
    part the incoming state changes; ``U`` goes on as the values of linear attention's chunk.

    Parameters
    ----------
    chunk_size : int, default 4
        Tokens in the chunk, 3 to 6.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 2.9 inches.

    Raises
    ------
    TypeError
        If ``chunk_size`` is not an integer.
    ValueError
        If ``chunk_size`` is not in 3..6.

    Notes
    -----
    Yang et al. (2024), "Parallelizing Linear Transformers with the Delta Rule", section 3.2;
    Kimi Team (2025), "Kimi Linear", equations (6)-(7); chapter 13.

    Examples
    --------
    >>> "전진 대입" in labels(ut_chunk(3))
    True
    """
    c = integer(chunk_size, "chunk_size", low=3, high=6)
    height, size, top = 2.9, 1.2 / c, 2.3
    middle = top - c * size / 2
    with _style():
        fig, ax = _canvas(WIDTH, height, "ut_chunk")
        for x, title in ((0.8, "A: 대각 아래만"), (2.85, "T: (I + A)의 역행렬")):
            _label(ax, x, 2.7, title, size=8.5)
        _grid(ax, 0.2, top, c, size, lambda i, j: KEY_VALUE if j < i else None)
        _label(ax, 0.8, top - c * size - 0.2, r"$A_{ij} = \beta_i\, e^{G_i - G_j}\, k_i^\top k_j$",
               size=8)
        _arrow(ax, (1.5, middle), (2.15, middle))
        _label(ax, 1.825, middle + 0.13, "전진 대입", size=7.5)
        _grid(ax, 2.25, top, c, size, lambda i, j: QUERY if j < i else (PLAIN if i == j else None))
        _label(ax, 2.85, top - c * size - 0.2, r"$T_i = e_i - \sum_{j<i} A_{ij}\, T_j$", size=8)
        boxes = ((1.9, r"$U = T\;\mathrm{diag}(\beta)\,V - W S_0^\top$", "실제 쓰기"),
                 (0.95, r"$W = T\;\mathrm{diag}(\beta\,\Gamma)\,K$", "받은 상태가 바꾸는 몫"))
        for y, formula, note in boxes:
            _box(ax, 3.95, y, 1.85, 0.42, color=QUERY)
            _label(ax, 4.875, y + 0.21, formula, size=8)
            _note(ax, 5.88, y + 0.21, note, ha="left")
            _arrow(ax, (3.5, middle), (3.95, y + 0.21))
        _arrow(ax, (4.875, 1.37), (4.875, 1.9))
        _note(ax, 3.5, 0.3, "U가 정해지면 나머지(출력, 다음 청크로 넘길 상태)는 선형 어텐션의 "
                            "청크에서 v를 U로 바꾼 것이다")
    return fig


def lstm_classifiers(steps: int = 5) -> Figure:
    """Chapter 5's three classifiers side by side: what each does with the LSTM's states.

    Bottom to top in each column: the input series, the LSTM, its hidden states ``h_1 … h_T``
    (``steps`` drawn, the middle one as ⋯), then how the states become one vector, then the
    same classification head. Left: the LSTM keeps only the last state. Middle: additive
    attention, whose query is the last state (orange) and whose keys and values are all the
    states (blue), gives a context vector. Right: multi-head self-attention over all the
    states, then the average over time.

    Parameters
    ----------
    steps : int, default 5
        Time steps drawn, 3 to 7 (the middle one is drawn as ⋯).

    Returns
    -------
    matplotlib.figure.Figure
        Three columns, one per classifier, in 7 × 4.3 inches.

    Raises
    ------
    TypeError
        If ``steps`` is not an integer.
    ValueError
        If ``steps`` is not in 3..7.

    Notes
    -----
    Bahdanau et al. (2015), section 3.1 (the additive score); Vaswani et al. (2017),
    section 3.2.2 (multi-head attention); chapter 5.

    Examples
    --------
    >>> found = labels(lstm_classifiers())
    >>> {"LSTM + 가산 어텐션", "시간 축 평균", "마지막 은닉 상태만"} <= set(found)
    True
    """
    steps = integer(steps, "steps", low=3, high=7)
    height, col_w = 4.3, 2.2
    cell = min(0.34, 1.9 / steps)
    names = [str(i + 1) for i in range(steps - 2)] + [None, "T"]  # h_1 … ⋯ h_T
    columns = (("LSTM", ["white"] * (steps - 1) + [KEY_VALUE], _last_state),
               ("LSTM + 가산 어텐션", [KEY_VALUE] * (steps - 1) + [QUERY], _additive),
               ("LSTM + 멀티 헤드 어텐션", [KEY_VALUE] * steps, _pooled))
    with _style():
        fig, ax = _canvas(WIDTH, height, "lstm_classifiers")
        for column, (title, states, middle) in enumerate(columns):
            centre = 0.15 + column * (col_w + 0.15) + col_w / 2
            xs = _spread(steps, centre, cell, 0)
            _label(ax, centre, height - 0.2, title, size=9, fontweight="bold")
            _lstm_states(ax, xs, cell, names, states)
            middle(ax, xs, cell, [i for i, n in enumerate(names) if n is not None])
            y = LSTM_ROWS["head"]
            _box(ax, xs[0], y, steps * cell, 0.3, "분류 헤드", color=FFN, fontsize=8.5)
            _arrow(ax, (centre, y + 0.3), (centre, y + 0.47))
            _label(ax, centre, y + 0.58, "레이블 1의 확률", size=7.5)
    return fig


LSTM_ROWS = {"in": 0.45, "lstm": 0.95, "h": 1.5, "head": 3.3}  # lstm_classifiers, bottom up
LSTM_CELL_H = 0.26


def _lstm_states(ax, xs, cell: float, names, colours) -> None:
    """lstm_classifiers' shared bottom: the input series, the LSTM and its hidden states."""
    y, height = LSTM_ROWS, LSTM_CELL_H
    centre = (xs[0] + xs[-1] + cell) / 2
    _row(ax, xs, y["in"], [n and f"$x_{n}$" for n in names], ["white"] * len(xs), size=cell,
         height=height, fontsize=8)
    _note(ax, centre, y["in"] - 0.2, "입력 시계열")
    _box(ax, xs[0], y["lstm"], len(xs) * cell, 0.3, "LSTM", color=PLAIN, fontsize=8.5)
    _row(ax, xs, y["h"], [n and f"$h_{n}$" for n in names], colours, size=cell,
         height=height, fontsize=8)
    for i, name in enumerate(names):
        if name is not None:
            mid = xs[i] + cell / 2
            _arrow(ax, (mid, y["in"] + height), (mid, y["lstm"]))
            _arrow(ax, (mid, y["lstm"] + 0.3), (mid, y["h"]))


def _last_state(ax, xs, cell: float, drawn) -> None:
    """The plain LSTM's classifier reads its last hidden state alone."""
    mid = xs[drawn[-1]] + cell / 2
    _labelled_arrow(ax, (mid, LSTM_ROWS["h"] + LSTM_CELL_H), (mid, LSTM_ROWS["head"]),
                    "마지막 은닉 상태만", side="left", gap=0.1)


def _additive(ax, xs, cell: float, drawn) -> None:
    """Additive attention: the last state asks, every state answers, a context vector goes on.

    Every state, the last one too, goes in as a key and value (grey); the last one goes in a
    second time, as the query (orange, as its box)."""
    top_h, y_att, centre = LSTM_ROWS["h"] + LSTM_CELL_H, 2.15, (xs[0] + xs[-1] + cell) / 2
    _box(ax, xs[0], y_att, len(xs) * cell, 0.34, "가산 어텐션", color=ATTENTION, fontsize=8.5)
    for i in drawn:
        mid = xs[i] + cell / 2
        side = 0.07 if i == drawn[-1] else 0.0
        _arrow(ax, (mid - side, top_h), (mid - side, y_att), color=FAINT, width=0.6)
    mid = xs[drawn[-1]] + cell / 2 + 0.07
    _arrow(ax, (mid, top_h), (mid, y_att), color=QUERY, width=1.6)
    _label(ax, xs[0] - 0.05, (top_h + y_att) / 2, "키·값", ha="right", size=7.5)
    _label(ax, xs[-1] + cell + 0.05, (top_h + y_att) / 2, "쿼리", ha="left", size=7.5)
    _labelled_arrow(ax, (centre, y_att + 0.34), (centre, LSTM_ROWS["head"]), "컨텍스트 벡터",
                    size=7.5)


def _pooled(ax, xs, cell: float, drawn) -> None:
    """Multi-head self-attention over all the states, then their average over time."""
    top_h, centre = LSTM_ROWS["h"] + LSTM_CELL_H, (xs[0] + xs[-1] + cell) / 2
    y_att, y_out, y_pool = 1.98, 2.5, 2.9
    _box(ax, xs[0], y_att, len(xs) * cell, 0.3, "멀티 헤드 셀프 어텐션", color=ATTENTION,
         fontsize=8)
    _row(ax, xs, y_out, ["" if i in drawn else None for i in range(len(xs))],
         [MIXED] * len(xs), size=cell, height=0.18)
    for i in drawn:
        mid = xs[i] + cell / 2
        _arrow(ax, (mid, top_h), (mid, y_att), color=FAINT, width=0.6)
        _arrow(ax, (mid, y_att + 0.3), (mid, y_out), color=FAINT, width=0.6)
    _box(ax, xs[0], y_pool, len(xs) * cell, 0.24, "시간 축 평균", color=PLAIN, fontsize=8)
    _arrow(ax, (centre, y_out + 0.18), (centre, y_pool))
    _arrow(ax, (centre, y_pool + 0.24), (centre, LSTM_ROWS["head"]))


def bottleneck(source: Sequence[str] = ("나는", "학교에", "간다"),
               target: Sequence[str] = ("I", "go", "to", "school"), *, step: int = 1,
               attend_to: int = 2) -> Figure:
    """An RNN encoder-decoder without and with attention: one fixed vector, or every state.

    Left: the encoder reads the source tokens into hidden states ``h_j``, and only the last
    one goes on, as the summary of the whole sentence, to the decoder, whose states ``s_t``
    produce the target tokens. Right: the same encoder; for the target token at ``step`` the
    decoder looks at every ``h_j`` again (the line to ``attend_to`` drawn heavy) and their
    weighted average, the context vector, goes into its state.

    Parameters
    ----------
    source : sequence of str, 2 to 5 tokens
        The encoder's input tokens.
    target : sequence of str, 2 to 5 tokens
        The tokens the decoder produces.
    step : int, default 1
        The target position whose context vector is drawn (0-based, ``< len(target)``).
    attend_to : int, default 2
        The source position that context vector weighs most (0-based, ``< len(source)``).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels, without and with attention, in 7 × 3.9 inches.

    Raises
    ------
    TypeError
        If ``source`` or ``target`` is not a sequence of strings (a single str is refused),
        or ``step`` or ``attend_to`` is not an integer.
    ValueError
        If a sequence holds fewer than 2 or more than 5 tokens or an empty string, or ``step``
        or ``attend_to`` is out of range.

    Notes
    -----
    Sutskever et al. (2014), figure 1; Cho et al. (2014); Bahdanau et al. (2015), figure 1;
    chapter 1.

    Examples
    --------
    >>> {"요약 벡터 하나", "컨텍스트 벡터", "간다"} <= set(labels(bottleneck()))
    True
    """
    source = strings(source, "source", low=2, high=5)
    target = strings(target, "target", low=2, high=5)
    step = integer(step, "step", low=0, high=len(target) - 1)
    attend_to = integer(attend_to, "attend_to", low=0, high=len(source) - 1)
    height, tok_w, tok_h, gap = 3.9, 0.5, 0.3, 0.12
    y_src, y_h, y_mid, y_s, y_out = 0.3, 0.95, 1.75, 2.55, 3.1
    size = dict(w=tok_w, h=tok_h, gap=gap)
    with _style():
        fig, ax = _canvas(WIDTH, height, "bottleneck")
        for centre, title in ((1.75, "어텐션 없이"), (5.25, "어텐션")):
            _label(ax, centre, height - 0.17, title, size=9.5, fontweight="bold")
            enc = _spread(len(source), centre, tok_w, gap)
            dec = _spread(len(target), centre, tok_w, gap)
            _rnn_chain(ax, enc, y_src, y_h, source, "h", KEY_VALUE, upward=True, **size)
            _rnn_chain(ax, dec, y_out, y_s, target, "s", QUERY, upward=False, **size)
            _label(ax, enc[0] - 0.08, y_h + tok_h / 2, "인코더", ha="right", size=8)
            _label(ax, dec[0] - 0.08, y_s + tok_h / 2, "디코더", ha="right", size=8)
        _note(ax, 1.75, height - 0.43, "문장 전체가 벡터 하나를 지난다")
        _note(ax, 5.25, height - 0.43, "단어마다 은닉 상태 전부를 다시 본다")
        enc, dec = _spread(len(source), 1.75, tok_w, gap), _spread(len(target), 1.75, tok_w, gap)
        _box(ax, 1.25, y_mid, 1.0, 0.32, "요약 벡터 하나", color=MIXED, fontsize=8)
        _arrow(ax, (enc[-1] + tok_w / 2, y_h + tok_h), (2.05, y_mid))
        _arrow(ax, (1.45, y_mid + 0.32), (dec[0] + tok_w / 2, y_s))
        enc, dec = _spread(len(source), 5.25, tok_w, gap), _spread(len(target), 5.25, tok_w, gap)
        box_x = 3.75
        _box(ax, box_x, y_mid, 1.05, 0.32, "컨텍스트 벡터", color=ATTENTION, fontsize=8)
        for j, x in enumerate(enc):
            _weight(ax, (x + tok_w / 2, y_h + tok_h), (box_x + 0.52, y_mid), j == attend_to,
                    style="-")
        _arrow(ax, (box_x + 0.52, y_mid + 0.32), (dec[step] + tok_w / 2, y_s), rad=-0.2)
        _note(ax, box_x - 0.08, y_mid + 0.16, "가중 평균\n(굵을수록 큰 가중치)", ha="right",
              linespacing=1.4)
    return fig


def _rnn_chain(ax, xs, y_tokens: float, y_states: float, tokens, state: str, color: str, *,
               w: float, h: float, gap: float, upward: bool) -> None:
    """An RNN unrolled over ``tokens``: a token box and its state ``state_i`` at each x in
    ``xs``, an arrow between them (up from the token if ``upward``, else down to it), and an
    arrow from each state to the next."""
    for i, (x, token) in enumerate(zip(xs, tokens, strict=True)):
        _box(ax, x, y_tokens, w, h, token, color="white", fontsize=8)
        _box(ax, x, y_states, w, h, rf"${state}_{{{i + 1}}}$", color=color, fontsize=8.5)
        ends = (y_tokens + h, y_states) if upward else (y_states + h, y_tokens)
        _arrow(ax, (x + w / 2, ends[0]), (x + w / 2, ends[1]))
        if i:
            _arrow(ax, (x - gap, y_states + h / 2), (x, y_states + h / 2))


def flash_tiling(n: int = 8, block: int = 2, query_block: int = 1, chunk: int = 2) -> Figure:
    """FlashAttention's tiling: key and value chunks slide over one query block's rows of the
    n x n score matrix, while a running maximum, sum and output are kept per query.

    The n x n grid is the score matrix (row = query, column = key), which is never stored
    whole. The query block ``query_block`` (``block`` rows, orange) is read once; the key and
    value chunks of ``block`` columns are read one after another. The chunk ``chunk`` is the
    one being read now (its block of scores drawn orange), the chunks before it are done
    (grey), the ones after it are still to come (white). On the right, the three running
    values online softmax keeps for each query of the block.

    Parameters
    ----------
    n : int, default 8
        Queries and keys drawn, 4 to 12.
    block : int, default 2
        Rows of a query block and columns of a key chunk, 1 to ``n // 2``; must divide ``n``.
    query_block : int, default 1
        The query block drawn (0-based, ``< n // block``).
    chunk : int, default 2
        The key and value chunk being read (0-based, ``< n // block``).

    Returns
    -------
    matplotlib.figure.Figure
        7 × 3.9 inches, the score matrix on the left and the running values on the right.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``n`` is not in 4..12, ``block`` not in 1..n // 2 or does not divide ``n``, or
        ``query_block`` or ``chunk`` is out of range.

    Notes
    -----
    Milakov and Gimelshein (2018), algorithm 3 (online softmax); Rabe and Staats (2021);
    Dao et al. (2022), algorithm 1 and figure 1; chapter 7.

    Examples
    --------
    >>> fig = flash_tiling(8, 2, query_block=1, chunk=2)
    >>> "키·값 청크 3 (지금 읽는 것)" in labels(fig)
    True
    """
    n = integer(n, "n", low=4, high=12)
    block = integer(block, "block", low=1, high=n // 2)
    if n % block:
        raise ValueError(f"block must divide n; got n={n}, block={block}")
    blocks = n // block
    query_block = integer(query_block, "query_block", low=0, high=blocks - 1)
    chunk = integer(chunk, "chunk", low=0, high=blocks - 1)
    height, size = 3.9, 2.4 / n
    x0, top = 1.25, 3.05
    rows = range(query_block * block, (query_block + 1) * block)

    def shade(i, j):
        if i not in rows:
            return None
        return QUERY if j // block == chunk else (PLAIN if j // block < chunk else None)

    with _style():
        fig, ax = _canvas(WIDTH, height, "flash_tiling")
        _grid(ax, x0, top, n, size, shade)
        y_q = top - (query_block + 1) * block * size
        for x, w in ((x0, n * size), (x0 + chunk * block * size, block * size)):
            _rect(ax, x, y_q, w, block * size, width=1.2)
        _key_value_chunks(ax, x0, top, block * size, blocks, chunk)
        _box(ax, x0 - 0.3, y_q + 0.02, 0.22, block * size - 0.04, color=QUERY)
        _label(ax, x0 - 0.36, y_q + block * size / 2, f"쿼리 블록 {query_block + 1}",
               ha="right")
        _label(ax, x0 + n * size / 2, top - n * size - 0.2,
               f"스코어 행렬 ({n} × {n}): 통째로 만들지 않는다")
        _note(ax, x0 + n * size / 2, top - n * size - 0.42,
              "청크는 왼쪽부터 차례로 지나간다 (회색: 읽음, 흰색: 남음)")
        _running_values(ax, 4.3, top)
        _arrow(ax, (x0 + n * size, y_q + block * size / 2),
               (4.3, top - 0.2 - 0.62 + 0.17), rad=-0.15, color=FAINT, width=0.7)
    return fig



def _running_values(ax, x: float, top: float) -> None:
    """flash_tiling's right side: the three values online softmax keeps for each query, and
    what becomes of them."""
    _label(ax, x, top + 0.52, "쿼리마다 들고 다니는 것", ha="left", size=8.5, fontweight="bold")
    entries = (("최댓값 m", "지금까지 본 스코어의 최댓값"),
               ("지수의 합 ℓ", "새 최댓값에 맞춰 다시 곱한 합"),
               ("출력 누적 o", "값에 지수를 곱해 더한 합"))
    for k, (name, note) in enumerate(entries):
        y = top - 0.2 - k * 0.62
        _box(ax, x, y, 0.95, 0.34, name, color=NORM, fontsize=8)
        _label(ax, x + 1.05, y + 0.17, note, ha="left", size=7.5)
    _label(ax, x, top - 2.2, "청크마다 세 값을 갱신하고,", ha="left")
    _label(ax, x, top - 2.42, "마지막에 o를 ℓ로 한 번 나눈다", ha="left")


def _key_value_chunks(ax, x0: float, top: float, width: float, blocks: int,
                      chunk: int) -> None:
    """flash_tiling's key and value chunks above the score matrix, each ``width`` wide:
    those read already (pale), the one read now (blue), those still to come (white)."""
    _row(ax, _slots(x0, width, blocks, 0.02), top + 0.08, [""] * blocks,
         [KEY_VALUE if j == chunk else ("#d8eef6" if j < chunk else "white")
          for j in range(blocks)], size=width - 0.04, height=0.22)
    _label(ax, x0 + chunk * width + width / 2, top + 0.52, f"키·값 청크 {chunk + 1} (지금 읽는 것)")
    _label(ax, x0 - 0.05, top + 0.19, "키·값", ha="right")


def sink_and_gate() -> Figure:
    """Where gpt-oss's sink logit and Qwen3-Next's output gate sit in an attention layer.

    One row, left to right: layer norm → the query, key and value projections (the query
    projection widened to give a gate per head) → the scaled scores → the softmax → the
    weighted sum of values → the gate → the output projection. Above the softmax, the sink
    logit ``b_h`` (one per head, a column with no value that is dropped after the softmax);
    below, the gate's path from the widened query projection to ``σ(X W_G)``.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 2.6 inches.

    Notes
    -----
    OpenAI (2025), the gpt-oss model card (the sink); Qiu et al. (2025), position G1, and
    Qwen3-Next's widened ``q_proj`` (the gate); chapter 16.

    Examples
    --------
    >>> "싱크 로짓 b_h" in labels(sink_and_gate())
    True
    """
    steps = (("레이어\n정규화", NORM), ("Q·K·V\n투영", QUERY),
             ("스코어\nQ·K / √d", ATTENTION), ("소프트맥스", ATTENTION), ("× V", ATTENTION),
             ("⊙ σ(G)", QUERY),
             ("출력\n투영", PLAIN))
    box_w, box_h, gap, y = 0.72, 0.5, 0.18, 1.05
    xs = _spread(len(steps), WIDTH / 2 - 0.15, box_w, gap)
    with _style():
        fig, ax = _canvas(WIDTH, 2.6, "sink_and_gate")
        _label(ax, xs[0] - 0.12, y + box_h / 2, "X", ha="right", size=9)
        for i, (x, (label, color)) in enumerate(zip(xs, steps, strict=True)):
            _box(ax, x, y, box_w, box_h, label, color=color, fontsize=8)
            if i:
                _arrow(ax, (xs[i - 1] + box_w, y + box_h / 2), (x, y + box_h / 2))
        _label(ax, xs[-1] + box_w + 0.08, y + box_h / 2, "+ 잔차", ha="left", size=8)
        sink = xs[3] + box_w / 2
        _box(ax, xs[3] - 0.25, 2.0, box_w + 0.5, 0.34, "싱크 로짓 b_h", color=KEY_VALUE,
             fontsize=8)
        _arrow(ax, (sink, 2.0), (sink, y + box_h))
        _note(ax, xs[4] + 0.35, 2.17, "gpt-oss: 분모에만 더하는 열 하나, 값 없음", ha="left")
        _note(ax, xs[4] - 0.1, 1.78, "소프트맥스 뒤에 그 열을 버린다", ha="left")
        gate_y = 0.45
        _line(ax, [xs[1] + box_w / 2] * 2, [y, gate_y])
        _arrow(ax, (xs[1] + box_w / 2, gate_y), (xs[5] + box_w / 2 - 0.01, gate_y),
               style="-")
        _arrow(ax, (xs[5] + box_w / 2, gate_y), (xs[5] + box_w / 2, y))
        _note(ax, (xs[1] + xs[5] + box_w) / 2, gate_y + 0.13,
              "Qwen: 넓힌 쿼리 투영의 나머지 반 = 게이트 로짓 X W_G")
        _note(ax, (xs[1] + xs[5] + box_w) / 2, gate_y - 0.15,
              "헤드마다, 특징마다 0과 1 사이의 σ를 곱한다")
    return fig


def mask_broadcast(lengths: Sequence[int] = (5, 3)) -> Figure:
    """How a causal mask and a padding mask combine by broadcasting, for a batch of sentences.

    Top: the (n, n) causal mask ``&`` the (B, 1, n) padding mask gives one (B, n, n) mask,
    drawn per sentence; the padding mask's one row is drawn again, dashed, in every query
    row (broadcasting stretches the axis of length 1, nothing is copied). Cells that may be
    seen (``True``) are blue, masked ones (``False``) white. Bottom: the same rule as shapes
    aligned from the right, without and with a head axis: an axis of length 1 (yellow)
    stretches to the other's length and a missing axis (dashed) counts as 1, so
    ``pad[:, None]`` (B, 1, 1, n) ``&`` causal (n, n) is (B, 1, n, n), which fits weights of
    shape (B, H, n, n).

    Parameters
    ----------
    lengths : sequence of int, default (5, 3)
        The real lengths of the batch's sentences, 1 to 3 of them; n is the longest, 2 to 6.

    Returns
    -------
    matplotlib.figure.Figure
        7 inches wide, ``2.95 + B (0.2 n + 0.3)`` inches tall for ``B = len(lengths)``
        sentences: 5.55 for the default.

    Raises
    ------
    TypeError
        If ``lengths`` is not a sequence of integers.
    ValueError
        If there are not 1 to 3 lengths, a length is below 1, or the longest is not in 2..6.

    Notes
    -----
    The mask convention of chapter 2 (``True`` = may be seen); NumPy's broadcasting rule;
    the causal mask of Vaswani et al. (2017), section 3.2.3.

    Examples
    --------
    >>> [s for s in labels(mask_broadcast((5, 3))) if s.startswith("문장")]
    ['문장 0: 길이 5', '문장 1: 길이 3']
    """
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Sequence):
        raise TypeError(f"lengths must be a sequence of integers; got {lengths!r} "
                        f"({type(lengths).__name__})")
    lengths = [integer(v, "lengths[i]", low=1) for v in lengths]
    if not 1 <= len(lengths) <= 3:
        raise ValueError(f"lengths must hold 1 to 3 sentence lengths; got {len(lengths)}")
    n = integer(max(lengths), "the longest length", low=2, high=6)
    cell, gap = 0.2, 0.3
    block = n * cell
    bottom = 1.95  # the shape tables
    height = bottom + 0.45 + 0.55 + len(lengths) * (block + gap)
    seen = {True: KEY_VALUE, False: "white"}
    with _style():
        fig, ax = _canvas(WIDTH, height, "mask_broadcast")
        xs = {"causal": 0.35, "pad": 2.35, "out": 4.35}
        title_y = height - 0.22
        for key, text in (("causal", "인과 마스크 (n, n)"), ("pad", "패딩 마스크 (B, 1, n)"),
                          ("out", "합친 마스크 (B, n, n)")):
            _label(ax, xs[key] + block / 2, title_y, text, size=8.5)
        tops = [height - 0.55 - b * (block + gap) for b in range(len(lengths))]
        mid = (tops[0] + tops[-1] - block) / 2
        causal_top = mid + block / 2
        for i in range(n):
            for j in range(n):
                _rect(ax, xs["causal"] + j * cell, causal_top - (i + 1) * cell, cell, cell,
                      face=seen[j <= i])
        _note(ax, xs["causal"] + block / 2, causal_top - block - 0.18, "모든 문장이 같은 것을 쓴다")
        for b, (length, top) in enumerate(zip(lengths, tops, strict=True)):
            for i in range(n):
                for j in range(n):
                    y = top - (i + 1) * cell
                    face = seen[j < length] if i == 0 else "#d4ebf5" if j < length else "white"
                    _rect(ax, xs["pad"] + j * cell, y, cell, cell, face=face,
                          dashes="-" if i == 0 else ":", edge=INK if i == 0 else FAINT)
                    _rect(ax, xs["out"] + j * cell, y, cell, cell,
                          face=seen[j <= i and j < length])
            _label(ax, xs["out"] + block + 0.15, top - block / 2 + 0.09,
                   f"문장 {b}: 길이 {length}", ha="left", size=8)
            masked = ", ".join(str(j) for j in range(length, n))
            particle = "를" if masked[-1:] in "2459" else "을"
            _note(ax, xs["out"] + block + 0.15, top - block / 2 - 0.11,
                  f"키 {masked}{particle} 가림" if masked else "가린 키 없음", ha="left")
        for x, sign in ((xs["causal"] + block + 0.5 * (xs["pad"] - xs["causal"] - block),
                         "&"),
                        (xs["pad"] + block + 0.5 * (xs["out"] - xs["pad"] - block), "=")):
            _label(ax, x, mid + block / 2 - block / 2, sign, size=12)
        _note(ax, xs["pad"] + block / 2, tops[-1] - block - 0.18, "점선 행: 첫 행이 늘어난 것")
        sw = 0.15
        for k, (face, text) in enumerate(((KEY_VALUE, "볼 수 있음 (True)"),
                                          ("white", "가림 (False)"))):
            x = 0.35 + k * 1.6
            _rect(ax, x, bottom + 0.12, sw, sw, face=face)
            _label(ax, x + sw + 0.08, bottom + 0.12 + sw / 2, text, ha="left", size=8)
        _shape_rows(ax, 0.35, bottom - 0.15, "헤드 축이 없을 때",
                    [("인과 마스크", ["", "n", "n"]), ("패딩 마스크", ["B", "1", "n"]),
                     ("합친 마스크", ["B", "n", "n"])], label_w=1.05)
        _shape_rows(ax, 3.2, bottom - 0.15, "헤드 축이 있을 때",
                    [("pad[:, None]", ["B", "1", "1", "n"]), ("인과 마스크", ["", "", "n", "n"]),
                     ("합친 마스크", ["B", "1", "n", "n"]), ("가중치", ["B", "H", "n", "n"])],
                    label_w=1.25)
        _note(ax, WIDTH / 2, 0.14, "축은 오른쪽 끝부터 맞춘다. 길이 1인 축(노랑)은 상대의 길이로 "
              "늘어나고, 없는 축(점선)은 1로 본다.")
    return fig


def _shape_rows(ax, x: float, top: float, title: str, rows, *, label_w: float) -> None:
    """mask_broadcast's shape table: a title, then one row of axis cells per array, aligned
    on the right; an axis "1" is yellow and a missing axis "" a dashed empty cell."""
    size, row_h = 0.36, 0.3
    _label(ax, x, top, title, ha="left", size=8.5, fontweight="bold")
    for r, (name, axes) in enumerate(rows):
        y = top - 0.25 - (r + 1) * row_h
        _label(ax, x, y + row_h / 2, name, ha="left", size=8)
        for a, text in enumerate(axes):
            ax_x = x + label_w + a * size
            if text:
                _rect(ax, ax_x, y + 0.03, size - 0.04, row_h - 0.06,
                      face=NORM if text == "1" else PLAIN)
                _label(ax, ax_x + (size - 0.04) / 2, y + row_h / 2, text, size=8)
            else:
                _rect(ax, ax_x, y + 0.03, size - 0.04, row_h - 0.06, edge=FAINT, dashes="--")


def head_split(n: int = 6, num_heads: int = 2, key_dim: int = 4) -> Figure:
    """Splitting (n, H·k) into heads: reshape then transpose, against reshape alone.

    Top: the projection (n, H·k), one row per token, its columns coloured by the head they
    belong to. Left: ``reshape(n, H, k).transpose(1, 0, 2)`` gives each head a (n, k) block
    whose rows are tokens 0..n-1, all in that head's colour. Right: ``reshape(H, n, k)``
    without the transpose refills the elements in memory order, so a "head" holds rows of
    a few tokens only, alternating between the heads' components.

    Parameters
    ----------
    n : int, default 6
        Tokens (rows), 2 to 8.
    num_heads : int, default 2
        Heads, 2 to 4.
    key_dim : int, default 4
        Components per head, 1 to 4.

    Returns
    -------
    matplotlib.figure.Figure
        7 inches wide, ``2.1 + 0.36 n`` inches tall: 4.26 for the default.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``n`` is not in 2..8, ``num_heads`` not in 2..4, ``key_dim`` not in 1..4, or the
        heads' blocks do not fit the width.

    Notes
    -----
    Vaswani et al. (2017), section 3.2.2; the split and the "전치 없이" mistake of chapter 3.

    Examples
    --------
    >>> [s for s in labels(head_split(4, 2, 2)) if s.startswith("헤드")][:2]
    ['헤드 0 성분', '헤드 1 성분']
    """
    n = integer(n, "n", low=2, high=8)
    num_heads = integer(num_heads, "num_heads", low=2, high=len(HEADS))
    key_dim = integer(key_dim, "key_dim", low=1, high=4)
    cell = 0.18
    label_w, block_gap = 0.55, 0.15
    half = num_heads * key_dim * cell + (num_heads - 1) * block_gap + label_w
    if 2 * half + 0.6 > WIDTH:
        raise ValueError(f"num_heads * key_dim = {num_heads * key_dim} columns do not fit "
                         f"the width; use at most 8")
    block = n * cell
    height = 2.1 + 2 * block
    with _style():
        fig, ax = _canvas(WIDTH, height, "head_split")
        width = num_heads * key_dim * cell
        x_in = (WIDTH - width) / 2
        top = height - 0.45
        for h in range(num_heads):
            _label(ax, x_in + (h + 0.5) * key_dim * cell, top + 0.12, f"헤드 {h} 성분",
                   size=7.5)
        for t in range(n):
            y = top - (t + 1) * cell
            _label(ax, x_in - 0.08, y + cell / 2, f"토큰 {t}", ha="right", size=7.5)
            _cells(ax, x_in, y, [HEADS[c // key_dim] for c in range(num_heads * key_dim)],
                   cell, cell)
        _label(ax, x_in + width + 0.1, top - block / 2, f"투영 결과 (n, H·k) = ({n}, "
               f"{num_heads}·{key_dim})", ha="left", size=8)
        flat = [(t, h) for t in range(n) for h in range(num_heads)]  # rows of k, in memory
        right = [[(t, h) for t in range(n)] for h in range(num_heads)]
        wrong = [flat[h * n:(h + 1) * n] for h in range(num_heads)]
        out_top = top - block - 1.0
        for x0, blocks, title, note in (
                (0.3, right, "reshape 뒤 전치 (올바름)",
                 "(n, H, k) → transpose(1, 0, 2) → (H, n, k)"),
                (WIDTH / 2 + 0.2, wrong, "전치 없이 reshape (H, n, k)",
                 "원소를 메모리 순서대로 다시 채울 뿐이다")):
            start = (x_in + width / 2, top - block - 0.08)
            _arrow(ax, start, (x0 + half / 2, out_top + 0.45))
            _label(ax, x0, out_top + 0.3, title, ha="left", size=8.5, fontweight="bold")
            _note(ax, x0, out_top + 0.12, note, ha="left")
            for h, rows in enumerate(blocks):
                bx = x0 + label_w + h * (key_dim * cell + block_gap)
                _label(ax, bx + key_dim * cell / 2, out_top - 0.1, f"[{h}]", size=7.5)
                for r, (t, head) in enumerate(rows):
                    y = out_top - 0.22 - (r + 1) * cell
                    _cells(ax, bx, y, [HEADS[head]] * key_dim, cell, cell)
                    if h == 0 or blocks is wrong:
                        lx = bx - 0.06 if h == 0 else bx + key_dim * cell + 0.06
                        if h == 0 or h == num_heads - 1:
                            _label(ax, lx, y + cell / 2, f"토큰 {t}", size=7,
                                   ha="right" if h == 0 else "left")
        _note(ax, WIDTH / 2, 0.15, "색: 어느 헤드의 성분인가. 합치기는 거꾸로(전치 뒤 reshape) "
              "한다. 전치 없이 합쳐도 모양은 맞고 오류가 나지 않는다.")
    return fig


def keras_layers(parameters: Sequence[int] = (0, 1, 8, 288)) -> Figure:
    """Chapter 4's three Keras attention layers side by side: how each is called, where its
    projections live and how many parameters it has.

    Bottom to top in each column: the call (``layer([query, value, key])`` for ``Attention``
    and ``AdditiveAttention``, one list; ``layer(query, value, key)`` for
    ``MultiHeadAttention``, three arguments), the inputs in that order, then inside the layer
    (dashed frame): the lines that take the query and the key to the score and the value to
    the weighted average, so that the value, second in the call, crosses the key; the score
    (:math:`s\\,q \\cdot k`, :math:`w^\\top \\tanh(q + k)` or per head
    :math:`QK^\\top/\\sqrt{k}`); the softmax and the weighted average of the values; and for
    ``MultiHeadAttention`` the query, key and value projections below the crossing and the
    output projection :math:`W^O` above. Each column's top says how many parameters it has.

    Parameters
    ----------
    parameters : sequence of 4 int, default (0, 1, 8, 288)
        Parameter counts, as the chapter's layers report them (``count_params()``):
        ``Attention``, ``Attention(use_scale=True)``, ``AdditiveAttention`` and
        ``MultiHeadAttention``. The defaults are chapter 4's (d = 8; 2 heads of key_dim 4).

    Returns
    -------
    matplotlib.figure.Figure
        Three columns, one per layer, in 7 × 4.6 inches.

    Raises
    ------
    TypeError
        If ``parameters`` is not a sequence or holds a non-integer.
    ValueError
        If ``parameters`` does not hold four counts, or a count is negative.

    Notes
    -----
    Luong et al. (2015), section 3.1 (the dot score); Bahdanau et al. (2015), section 3.1
    (the additive score); Vaswani et al. (2017), section 3.2.2 (multi-head attention); the
    layers of Keras 3 (``keras/src/layers/attention/``); chapter 4.

    Examples
    --------
    >>> found = labels(keras_layers())
    >>> {"layer([query, value, key])", "layer(query, value, key)", "파라미터 288개"} <= set(found)
    True
    """
    instance(parameters, "parameters", Sequence, "a sequence of 4 integers")
    if isinstance(parameters, str) or len(parameters) != 4:
        raise ValueError(f"parameters must hold 4 counts (Attention, Attention(use_scale=True), "
                         f"AdditiveAttention, MultiHeadAttention); got {parameters!r}")
    plain, scaled, additive, multi = (integer(p, f"parameters[{i}]", low=0)
                                      for i, p in enumerate(parameters))
    height, w, gap = 4.6, 0.58, 0.1
    columns = (
        ("Attention", True, ("스코어", r"$s\,(q \cdot k)$"),
         [f"파라미터 {plain}개", f"use_scale=True면 {scaled}개 (s)"]),
        ("AdditiveAttention", True, ("스코어", r"$w^\top \tanh(q + k)$"),
         [f"파라미터 {additive}개", "길이 d인 벡터 w (scale)"]),
        ("MultiHeadAttention", False, ("헤드마다 스코어", r"$QK^\top / \sqrt{k}$"),
         [f"파라미터 {multi}개", "투영 4개의 커널과 편향"]))
    with _style():
        fig, ax = _canvas(WIDTH, height, "keras_layers")
        y_in, y_proj, y_score = 0.36, 0.86, 1.8  # the rows, bottom up, the same in every column
        y_sum, y_out = y_score + 0.72, y_score + 1.17
        for column, (title, as_list, score, notes) in enumerate(columns):
            centre = WIDTH * (2 * column + 1) / 6
            xs = _spread(3, centre, w, gap)
            mids, span = [x + w / 2 for x in xs], 3 * w + 2 * gap
            _label(ax, centre, height - 0.18, title, size=9, fontweight="bold")
            for i, note in enumerate(notes):
                _note(ax, centre, height - 0.45 - 0.2 * i, note)
            call = "layer([query, value, key])" if as_list else "layer(query, value, key)"
            _label(ax, centre, 0.16, call, size=7.5, family="DejaVu Sans Mono")
            _row(ax, xs, y_in, ["query", "value", "key"], [QUERY, KEY_VALUE, KEY_VALUE],
                 size=w, height=0.28, fontsize=8)
            if as_list:  # one list: one frame around the three
                _box(ax, xs[0] - 0.05, y_in - 0.05, span + 0.1, 0.38, dashed=True)
                _box(ax, xs[0], y_proj, span, 0.28, "투영 없음 (필요하면 Dense를 밖에)",
                     dashed=True, fontsize=7.5, color=NOTE)
            for x, mid, sym, color in zip(xs, mids, ("$W^Q$", "$W^V$", "$W^K$"),
                                          (QUERY, KEY_VALUE, KEY_VALUE), strict=True):
                _arrow(ax, (mid, y_in + 0.28 + (0.05 if as_list else 0)), (mid, y_proj))
                if not as_list:  # the projections belong to the layer, one per input
                    _box(ax, x, y_proj, w, 0.28, sym, color=color, fontsize=8.5)
            start = y_proj + 0.28
            cross = start + 0.45
            _arrow(ax, (mids[0], start), (mids[0], y_score))       # query: straight up
            _line(ax, [mids[2], mids[2], mids[1]], [start, start + 0.1, cross])   # key
            _arrow(ax, (mids[1], cross), (mids[1], y_score))
            _line(ax, [mids[1], mids[1], mids[2]], [start, start + 0.1, cross])   # value
            _arrow(ax, (mids[2], cross), (mids[2], y_sum))
            _titled_box(ax, xs[0], y_score, xs[1] + w - xs[0], 0.42, *score,
                        color=ATTENTION, at=(0.29, 0.12), sizes=(7.5, 8.5))
            _arrow(ax, (mids[0] + w / 2, y_score + 0.42), (mids[0] + w / 2, y_sum))
            _box(ax, xs[0], y_sum, span, 0.3,
                 "소프트맥스, 값의 가중 평균" if as_list else "헤드마다 소프트맥스, 값의 가중 평균",
                 color=ATTENTION, fontsize=7.5)
            if as_list:
                _arrow(ax, (centre, y_sum + 0.3), (centre, y_out + 0.42 + 0.1))
            else:
                _arrow(ax, (centre, y_sum + 0.3), (centre, y_out))
                _titled_box(ax, xs[0] + 0.3, y_out, span - 0.6, 0.42, "출력 투영", "$W^O$",
                            color=PLAIN, at=(0.29, 0.12), sizes=(7.5, 8.5))
            top = y_out + 0.42 + 0.1
            _rect(ax, xs[0] - 0.1, y_proj - 0.1, span + 0.2, top - y_proj + 0.1,
                  style=ROUNDED, dashes="--", edge=FAINT)
            if not as_list:
                _arrow(ax, (centre, y_out + 0.42), (centre, top))
            _arrow(ax, (centre, top), (centre, top + 0.28))
            _label(ax, centre + 0.08, top + 0.18, "출력", ha="left", size=7.5)
    return fig


def sparse_selection(scores: Sequence[float] = (0.4, 2.6, 0.9, 0.2, 1.9, 0.6, 0.3, 2.2, 1.1),
                     top_k: int = 3, window: int = 3) -> Figure:
    """DeepSeek Sparse Attention for one query, beside a sliding window.

    Top: the query's tokens, each with its lightning-indexer score as a bar; the ``top_k``
    highest are dark and only their keys and values go on to the attention. Bottom: the
    sliding window of chapter 10 reads the last ``window`` tokens, scores or not.

    Parameters
    ----------
    scores : sequence of float
        The indexer scores ``I[t, s]`` of the tokens ``s = 1 .. t`` (the last is the query's
        own), 4 to 12 of them, at least 0.
    top_k, window : int
        At least 1 and below the number of tokens.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 2.8 inches.

    Raises
    ------
    TypeError, ValueError
        If ``scores`` is not 4 to 12 non-negative numbers or ``top_k``/``window`` is out of
        range.

    Notes
    -----
    DeepSeek-AI (2025), DeepSeek-V3.2-Exp, equations (1)-(2); chapter 17.

    Examples
    --------
    >>> "라이트닝 인덱서" in labels(sparse_selection())
    True
    """
    values = [real(s, "scores", low=0.0) for s in scores]
    if not 4 <= len(values) <= 12:
        raise ValueError(f"scores must hold 4 to 12 numbers; got {len(values)}")
    n = len(values)
    k = integer(top_k, "top_k", low=1, high=n - 1)
    w = integer(window, "window", low=1, high=n - 1)
    chosen = sorted(range(n), key=lambda i: -values[i])[:k]
    size, left, top = 0.38, 1.5, 1.75
    pitch = (WIDTH - left - 1.9) / n
    xs = [left + i * pitch for i in range(n)]
    with _style():
        fig, ax = _canvas(WIDTH, 2.8, "sparse_selection")
        _label(ax, 0.1, top + 0.18, "DSA", ha="left", size=9)
        _label(ax, 0.1, 0.43, "슬라이딩 윈도", ha="left", size=9)
        peak = max(values) or 1.0
        for i, x in enumerate(xs):
            picked = i in chosen
            _box(ax, x, top, size, 0.36, f"{i + 1}",
                 color=KEY_VALUE if picked else PLAIN, fontsize=8)
            height = 0.5 * values[i] / peak
            _rect(ax, x + 0.09, top + 0.44, size - 0.18, height,
                  face=INK if picked else FAINT, edge="none")
            inside = i >= n - w
            _box(ax, x, 0.25, size, 0.36, f"{i + 1}",
                 color=KEY_VALUE if inside else PLAIN, fontsize=8)
        _note(ax, xs[0] - 0.1, top + 0.72, "라이트닝 인덱서", ha="right", size=8.5)
        _note(ax, xs[0] - 0.1, top + 0.52, "모든 토큰에 스코어 I", ha="right")
        _note(ax, xs[-1] + size + 0.1, top + 0.18, "← 쿼리 토큰", ha="left")
        target = (WIDTH - 1.0, 1.05)
        _box(ax, target[0] - 0.75, 0.87, 1.5, 0.36, f"어텐션 (top-k, k = {k})",
             color=ATTENTION, fontsize=8)
        for i in chosen:
            _arrow(ax, (xs[i] + size / 2, top), (target[0] - 0.75, target[1]),
                   color=INK, width=0.8)
        _note(ax, target[0], 0.72, "고른 토큰의 키·값만 읽는다")
        _note(ax, xs[-1] + size + 0.1, 0.43, f"← 바로 앞의 {w}개, 스코어 없이", ha="left")
    return fig


def nsa_branches(num_tokens: int = 16, block: int = 4, chosen: Sequence[int] = (1,),
                 window: int = 4) -> Figure:
    """Native Sparse Attention for one query: the three branches and their gates.

    Three rows of the query's ``num_tokens`` tokens: the compressed branch (blocks of
    ``block`` tokens, each averaged into one key and value), the selected branch (the first
    block, the last block and the ``chosen`` ones, read token by token) and the sliding
    window (the last ``window`` tokens). Each row's attention output is multiplied by its
    gate and the three are added.

    Parameters
    ----------
    num_tokens : int, default 16
        8 to 24, a multiple of ``block``.
    block : int, default 4
        Tokens per block (compression and selection drawn alike), 2 to 8.
    chosen : sequence of int, default (1,)
        Blocks the scores pick besides the first and the last.
    window : int, default 4
        1 to ``num_tokens``.

    Returns
    -------
    matplotlib.figure.Figure
        7 × 3 inches.

    Raises
    ------
    TypeError, ValueError
        If a size is out of range or a chosen block does not exist.

    Notes
    -----
    Yuan et al. (2025), Native Sparse Attention, section 3, equation (5) and Figure 2;
    chapter 17.

    Examples
    --------
    >>> {"압축", "선택", "윈도"} <= set(labels(nsa_branches()))
    True
    """
    b = integer(block, "block", low=2, high=8)
    n = integer(num_tokens, "num_tokens", low=8, high=24)
    if n % b:
        raise ValueError(f"num_tokens must be a multiple of block ({b}); got {n}")
    blocks = n // b
    picked = {0, blocks - 1} | {integer(c, "chosen", low=0, high=blocks - 1) for c in chosen}
    w = integer(window, "window", low=1, high=n)
    cell, left = 0.2, 0.9
    rows = (("압축", 2.35, "블록마다 평균 하나"), ("선택", 1.45, "스코어가 높은 블록의 토큰"),
            ("윈도", 0.55, f"바로 앞의 {w}개"))
    gates = ("× g_cmp", "× g_slc", "× g_win")
    right = left + n * cell
    with _style():
        fig, ax = _canvas(WIDTH, 3.0, "nsa_branches")
        for r, ((name, y, note), gate) in enumerate(zip(rows, gates, strict=True)):
            _label(ax, left - 0.12, y + cell / 2, name, ha="right", size=9)
            for i in range(n):
                if r == 0:
                    shade = QUERY if i == n - 1 else PLAIN
                elif r == 1:
                    shade = KEY_VALUE if i // b in picked else PLAIN
                else:
                    shade = KEY_VALUE if i >= n - w else PLAIN
                _rect(ax, left + i * cell, y, cell, cell, face=shade, width=0.5)
            if r == 0:
                for j in range(blocks):
                    x0 = left + j * b * cell
                    _line(ax, [x0 + 0.03, x0 + b * cell - 0.03], [y + cell + 0.08] * 2,
                          color=NOTE, width=1.2)
                    _rect(ax, x0 + (b * cell - cell) / 2, y + cell + 0.18, cell, cell,
                          face=KEY_VALUE, width=0.5)
            _note(ax, (left + right) / 2, y - 0.14, note)
            _box(ax, right + 0.35, y - 0.05, 0.75, 0.32, "어텐션", color=ATTENTION,
                 fontsize=8)
            _arrow(ax, (right + 0.05, y + cell / 2), (right + 0.35, y + cell / 2))
            _box(ax, right + 1.35, y - 0.05, 0.8, 0.32, gate, color=QUERY, fontsize=8)
            _arrow(ax, (right + 1.1, y + cell / 2), (right + 1.35, y + cell / 2))
            _arrow(ax, (right + 2.15, y + cell / 2), (WIDTH - 0.75, 1.55 + cell / 2))
        _plus(ax, WIDTH - 0.6, 1.55 + cell / 2)
        _arrow(ax, (WIDTH - 0.48, 1.55 + cell / 2), (WIDTH - 0.2, 1.55 + cell / 2))
        _label(ax, WIDTH - 0.12, 1.55 + cell / 2, "o", size=9, ha="left")
    return fig


def labels(fig: Figure) -> list[str]:
    """The visible, non-empty texts of ``fig``, in drawing order.

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    list of str
        One entry per text object (a label with a line break is one entry).

    Raises
    ------
    TypeError
        If ``fig`` is not a matplotlib figure.
    """
    instance(fig, "fig", Figure, "a matplotlib Figure")
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


SVG_NS = "{http://www.w3.org/2000/svg}"


def _faces(svg: str) -> dict[tuple[str, str, str], set[str]]:
    """{(family, style, weight): characters drawn in it} for the texts of a matplotlib SVG."""
    faces: dict[tuple[str, str, str], set[str]] = {}
    for element in ET.fromstring(svg).iter():
        drawn = (element.text or "").strip()
        if element.tag not in (SVG_NS + "text", SVG_NS + "tspan") or not drawn:
            continue
        style = dict(part.split(":", 1) for part in
                     (p.strip() for p in element.get("style", "").split(";")) if ":" in part)
        style = {key.strip(): value.strip() for key, value in style.items()}
        family = style.get("font-family", f"'{FONT}'").split(",")[0].strip().strip("'\"")
        key = (family, style.get("font-style", "normal"), style.get("font-weight", "400"))
        faces.setdefault(key, set()).update(element.text)
    return faces


def _font_face(family: str, style: str, weight: str, characters: set[str]) -> str:
    """An @font-face rule carrying the glyphs of ``characters`` from matplotlib's font file."""
    from fontTools import subset  # noqa: PLC0415 - only when a diagram is shown
    from fontTools.ttLib import TTFont  # noqa: PLC0415

    path = findfont(FontProperties(family=family, style=style, weight=int(weight)),
                    fallback_to_default=False)
    options = subset.Options()
    options.hinting = False
    options.notdef_outline = True
    options.name_IDs = [1, 2]
    font = TTFont(path, recalcTimestamp=False)
    # The subset keeps no glyph substitution or positioning tables for these fonts anyway;
    # removing them before subsetting spares reading them, which is most of the time.
    for tag in ("GSUB", "GPOS", "GDEF"):
        if tag in font:
            del font[tag]
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(characters | {" "})))
    logger = logging.getLogger("fontTools")
    level = logger.level
    logger.setLevel(logging.ERROR)  # tables it cannot subset are dropped, as they should be
    try:
        subsetter.subset(font)
    finally:
        logger.setLevel(level)
    data = io.BytesIO()
    font.save(data)
    encoded = base64.b64encode(data.getvalue()).decode("ascii")
    return (f"@font-face {{font-family: '{family}'; font-style: {style}; "
            f"font-weight: {weight}; src: url(data:font/ttf;base64,{encoded});}}")


def to_svg(fig: Figure) -> str:
    """``fig`` as an SVG document whose texts stay text, with the fonts they need inside.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A diagram of this module (or any figure drawn with Nanum Gothic and DejaVu Sans).

    Returns
    -------
    str
        The ``<svg>`` element, ``fig``'s size in points (one inch = 72 points = 96 CSS
        pixels). Every label is a ``<text>`` element; its ``font-family`` names the embedded
        subset first, then fonts that most systems have for Hangul. The same figure gives
        the same bytes on every run (no date, fixed element ids).

    Raises
    ------
    TypeError
        If ``fig`` is not a matplotlib figure.
    """
    instance(fig, "fig", Figure, "a matplotlib Figure")
    buffer = io.StringIO()
    with _style():
        FigureCanvasSVG(fig).print_svg(buffer, metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    faces = "".join(_font_face(*key, chars) for key, chars in sorted(_faces(svg).items()))
    svg = re.sub(r"font-family: ('[^']+')", rf"font-family: \1, {FALLBACK}", svg)
    return svg.replace('<style type="text/css">', f'<style type="text/css">{faces}', 1)


def show(fig: Figure) -> None:
    """Display ``fig`` in the notebook as an SVG output (texts kept as text), with a PNG twin.

    The site and the PDF use the SVG (myst-nb prefers ``image/svg+xml``), and so do JupyterLab
    and Colab once the notebook is trusted or the cell has run. JupyterLab does not render
    SVG from an untrusted notebook (one just cloned), so the output also carries a PNG drawn
    at the course's 150 dots per inch, which it shows instead. Each has the metadata
    ``helpers.plotting.describe_figure_outputs`` gives PNG figures: the display width (one
    inch = 96 CSS pixels) and the smallest text's size in pixels of that image (for the SVG,
    CSS pixels at its natural size).

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``fig`` is not a matplotlib figure.
    """
    from IPython.display import display  # noqa: PLC0415 - only in notebooks

    svg = to_svg(fig)
    png = io.BytesIO()
    with _style():
        FigureCanvasAgg(fig)
        fig.savefig(png, format="png", dpi=PNG_DPI, metadata={"Software": None})
    width, height = fig.get_size_inches()
    smallest = min(t.get_fontsize() for t in fig.findobj(Text)
                   if t.get_visible() and t.get_text().strip())
    shown = round(width * plotting.CSS_PX_PER_INCH)
    metadata = {
        "image/svg+xml": {"width": shown, plotting.TEXT_SIZE_KEY:
                          round(smallest * plotting.CSS_PX_PER_INCH / 72, 2)},
        "image/png": {"width": shown, plotting.TEXT_SIZE_KEY: round(smallest * PNG_DPI / 72, 2)},
    }
    text = f"<도식 {fig.get_label()}: {width:g}×{height:g}인치>"
    display({"image/svg+xml": svg, "image/png": base64.b64encode(png.getvalue()).decode(),
             "text/plain": text}, metadata=metadata, raw=True)

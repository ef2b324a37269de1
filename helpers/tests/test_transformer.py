"""Unit tests of helpers.transformer (NumPy only, no Keras)."""

import math
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.attention import MultiHeadAttention, padding_mask
from helpers.transformer import (
    DecoderLayer,
    EncoderLayer,
    FeedForward,
    LayerNormalization,
    alibi_bias,
    alibi_slopes,
    positional_encoding,
    positional_shift_matrix,
    rms_norm,
    rope_frequencies,
    rotary_position_embedding,
    swiglu,
)

ROOT = Path(__file__).resolve().parents[2]
NORM_FIRST = pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])


def mha_params(d_model):
    return 4 * (d_model ** 2 + d_model)


def ffn_params(d_model, d_ff):
    return 2 * d_model * d_ff + d_ff + d_model


def encoder_params(d_model, d_ff):
    """The closed formula: one attention, one FFN, two layer norms."""
    return mha_params(d_model) + ffn_params(d_model, d_ff) + 2 * (2 * d_model)


def decoder_params(d_model, d_ff):
    """Two attentions (self, cross), one FFN, three layer norms."""
    return 2 * mha_params(d_model) + ffn_params(d_model, d_ff) + 3 * (2 * d_model)


def with_random_biases(layer, rng):
    """A copy of an encoder or decoder layer whose biases, gamma and beta are random too."""
    def mha(m):
        return MultiHeadAttention(m.query_kernel, m.key_kernel, m.value_kernel, m.output_kernel,
                                  *(rng.normal(size=b.shape) for b in (m.query_bias, m.key_bias,
                                                                       m.value_bias,
                                                                       m.output_bias)))
    parts = []
    for name, _ in type(layer)._PARTS:
        part = getattr(layer, name)
        if isinstance(part, MultiHeadAttention):
            parts.append(mha(part))
        elif isinstance(part, FeedForward):
            parts.append(FeedForward(part.w1, rng.normal(size=part.d_ff), part.w2,
                                     rng.normal(size=part.d_model)))
        else:
            parts.append(LayerNormalization(1 + 0.3 * rng.normal(size=part.d_model),
                                            rng.normal(size=part.d_model)))
    return type(layer)(*parts, norm_first=layer.norm_first)


# --- positional encoding -----------------------------------------------------------------------

@pytest.mark.parametrize("pos, i", [(0, 0), (1, 0), (1, 1), (7, 1), (13, 2), (49, 2), (49, 0)])
def test_positional_encoding_equals_the_formula(pos, i):
    d_model = 6
    pe = positional_encoding(50, d_model)
    angle = pos / 10000 ** (2 * i / d_model)
    assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-14)
    assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-14)


def test_positional_encoding_known_values():
    pe = positional_encoding(3, 4)
    # position 1: sin 1, cos 1, sin(1/100), cos(1/100); position 2: the angles doubled
    np.testing.assert_allclose(pe[1], [0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004],
                               atol=1e-10)
    np.testing.assert_allclose(pe[2], [0.9092974268, -0.4161468365, 0.0199986667, 0.9998000067],
                               atol=1e-10)


def test_positional_encoding_shape_dtype_range_and_first_row():
    pe = positional_encoding(200, 16)
    assert pe.shape == (200, 16) and pe.dtype == np.float64
    assert np.all(np.abs(pe) <= 1.0)
    np.testing.assert_array_equal(pe[0], [0.0, 1.0] * 8)
    # each (sin, cos) pair lies on the unit circle
    np.testing.assert_allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1.0, atol=1e-12)
    assert positional_encoding(1, 2).shape == (1, 2)


@pytest.mark.parametrize("k", [-7, -1, 0, 1, 2, 5, 31])
def test_shift_matrix_moves_the_encoding_by_k_positions(k):
    d_model = 12
    pe = positional_encoding(100, d_model)
    shift = positional_shift_matrix(k, d_model)
    for pos in range(max(0, -k), 60, 3):
        np.testing.assert_allclose(pe[pos] @ shift, pe[pos + k], atol=1e-12)
    np.testing.assert_allclose(pe[10:40] @ shift, pe[10 + k:40 + k], atol=1e-12)


def test_shift_matrix_is_block_diagonal_rotation():
    d_model = 8
    shift = positional_shift_matrix(3, d_model)
    np.testing.assert_allclose(shift @ shift.T, np.eye(d_model), atol=1e-12)
    blocks = np.zeros_like(shift, dtype=bool)
    for i in range(0, d_model, 2):
        blocks[i:i + 2, i:i + 2] = True
    assert np.all(shift[~blocks] == 0)
    omega = 1 / 10000 ** (2 / d_model)  # second pair, columns 2 and 3
    np.testing.assert_allclose(shift[2:4, 2:4], [[math.cos(3 * omega), -math.sin(3 * omega)],
                                                 [math.sin(3 * omega), math.cos(3 * omega)]])
    np.testing.assert_allclose(positional_shift_matrix(0, d_model), np.eye(d_model), atol=0)
    np.testing.assert_allclose(positional_shift_matrix(2, d_model)
                               @ positional_shift_matrix(5, d_model),
                               positional_shift_matrix(7, d_model), atol=1e-12)


@pytest.mark.parametrize("length, d_model, error, match", [
    (3.0, 4, TypeError, "length must be an integer; got 3.0"),
    ("3", 4, TypeError, "length must be an integer"),
    (True, 4, TypeError, "length must be an integer"),
    (0, 4, ValueError, r"length must be an integer in \[1, inf\); got 0"),
    (3, 4.0, TypeError, "d_model must be an integer"),
    (3, 0, ValueError, "d_model must be an integer in"),
    (3, 5, ValueError, "d_model must be even .*; got 5"),
])
def test_positional_encoding_rejects_bad_arguments(length, d_model, error, match):
    with pytest.raises(error, match=match):
        positional_encoding(length, d_model)


@pytest.mark.parametrize("k, d_model, error, match", [
    (1.5, 4, TypeError, "k must be an integer"),
    (1, 7, ValueError, "d_model must be even"),
    (1, None, TypeError, "d_model must be an integer"),
])
def test_shift_matrix_rejects_bad_arguments(k, d_model, error, match):
    with pytest.raises(error, match=match):
        positional_shift_matrix(k, d_model)


# --- layer normalisation and feed-forward network ----------------------------------------------

def test_layer_norm_equals_the_formula_token_by_token():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 5)) * 4 + 1
    gamma, beta = rng.normal(size=5), rng.normal(size=5)
    norm = LayerNormalization(gamma, beta)
    assert norm.epsilon == 1e-3  # Keras's default
    out = norm(x)
    for token in np.ndindex(2, 3):
        row = list(x[token])
        mean, var = statistics.fmean(row), statistics.pvariance(row)
        expected = [g * (v - mean) / math.sqrt(var + 1e-3) + b
                    for v, g, b in zip(row, gamma, beta)]
        np.testing.assert_allclose(out[token], expected, atol=1e-12)


def test_layer_norm_initial_weights_normalise_each_token():
    x = np.random.default_rng(2).normal(size=(4, 6, 10)).astype(np.float32) * 3 + 2
    norm = LayerNormalization.initial(10, epsilon=1e-6)
    out = norm(x)
    assert out.dtype == np.float64  # initial weights are float64
    np.testing.assert_allclose(out.mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(out.std(-1), 1, atol=1e-5)
    assert norm.count_params() == 20


def test_layer_norm_keeps_float32():
    norm = LayerNormalization(np.ones(3, np.float32), np.zeros(3, np.float32))
    assert norm(np.ones((2, 3), np.float32)).dtype == np.float32


@pytest.mark.parametrize("make, error, match", [
    (lambda: LayerNormalization(np.ones((2, 3)), np.zeros(3)), ValueError,
     r"gamma must have shape \(d_model,\); got shape \(2, 3\)"),
    (lambda: LayerNormalization(np.ones(3), np.zeros(4)), ValueError,
     r"beta must have shape \(3,\); got shape \(4,\)"),
    (lambda: LayerNormalization(np.ones(3), np.zeros(3), epsilon=0), ValueError, "epsilon"),
    (lambda: LayerNormalization(np.ones(3), np.zeros(3), epsilon="1e-3"), TypeError,
     "epsilon must be a real number"),
    (lambda: LayerNormalization(["a"] * 3, np.zeros(3)), TypeError, "gamma must be an array"),
    (lambda: LayerNormalization.initial(3)(np.ones((2, 4))), ValueError,
     r"x must have shape \(\.\.\., d_model=3\); got shape \(2, 4\)"),
    (lambda: LayerNormalization.initial(3)(np.ones(3, bool)), TypeError, "x must be an array"),
    (lambda: LayerNormalization.initial(3)([1.0, np.nan, 2.0]), ValueError, "x contains NaN"),
])
def test_layer_norm_rejects_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_feed_forward_equals_equation_2_token_by_token():
    rng = np.random.default_rng(3)
    w1, b1, w2, b2 = (rng.normal(size=s) for s in ((4, 7), (7,), (7, 4), (4,)))
    ffn = FeedForward(w1, b1, w2, b2)
    x = rng.normal(size=(2, 3, 4))
    out = ffn(x)
    for token in np.ndindex(2, 3):
        hidden = [max(0.0, float(x[token] @ w1[:, j] + b1[j])) for j in range(7)]
        np.testing.assert_allclose(out[token], np.array(hidden) @ w2 + b2, atol=1e-12)
    assert (ffn.d_model, ffn.d_ff, ffn.count_params()) == (4, 7, ffn_params(4, 7))


def test_feed_forward_random_is_glorot_uniform_with_zero_biases():
    ffn = FeedForward.random(6, 10, rng=np.random.default_rng(4))
    assert ffn.w1.shape == (6, 10) and ffn.w2.shape == (10, 6)
    assert np.all(np.abs(ffn.w1) <= math.sqrt(6 / 16)) and np.all(ffn.b1 == 0)
    assert np.all(ffn.b2 == 0)


@pytest.mark.parametrize("shapes, error, match", [
    (((4,), (7,), (7, 4), (4,)), ValueError, r"w1 must have shape \(d_model, d_ff\)"),
    (((4, 7), (4,), (7, 4), (4,)), ValueError, r"b1 must have shape \(7,\); got shape \(4,\)"),
    (((4, 7), (7,), (4, 7), (4,)), ValueError, r"w2 must have shape \(7, 4\); got shape \(4, 7\)"),
    (((4, 7), (7,), (7, 4), (7,)), ValueError, r"b2 must have shape \(4,\)"),
])
def test_feed_forward_rejects_mismatched_weights(shapes, error, match):
    with pytest.raises(error, match=match):
        FeedForward(*(np.zeros(s) for s in shapes))


def test_feed_forward_rejects_bad_arguments():
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        FeedForward.random(4, 8, rng=0)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., d_model=4\)"):
        FeedForward.random(4, 8, rng=np.random.default_rng(0))(np.ones((2, 5)))


# --- encoder and decoder layers ----------------------------------------------------------------

@NORM_FIRST
def test_encoder_layer_composes_its_sublayers(norm_first):
    rng = np.random.default_rng(10)
    layer = with_random_biases(EncoderLayer.random(8, 2, 12, rng=rng, norm_first=norm_first),
                               rng)
    x, mask = rng.normal(size=(3, 5, 8)), padding_mask([5, 3, 1], 5)
    ln1, ln2, ffn = layer.self_attention_norm, layer.feed_forward_norm, layer.feed_forward

    def attention(h):
        return layer.self_attention(h, h, attention_mask=mask)

    if norm_first:
        h = x + attention(ln1(x))
        expected = h + ffn(ln2(h))
    else:
        h = ln1(x + attention(x))
        expected = ln2(h + ffn(h))
    np.testing.assert_allclose(layer(x, mask=mask), expected, atol=1e-12)


@NORM_FIRST
def test_decoder_layer_composes_its_sublayers(norm_first):
    rng = np.random.default_rng(11)
    layer = with_random_biases(DecoderLayer.random(8, 4, 12, rng=rng, norm_first=norm_first),
                               rng)
    x, context = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 6, 8))
    context_mask = padding_mask([6, 2], 6)
    ln1, ln2, ln3 = layer.self_attention_norm, layer.cross_attention_norm, layer.feed_forward_norm

    def self_attention(h):
        return layer.self_attention(h, h, use_causal_mask=True)

    def cross_attention(h):
        return layer.cross_attention(h, context, attention_mask=context_mask)

    if norm_first:
        h = x + self_attention(ln1(x))
        h = h + cross_attention(ln2(h))
        expected = h + layer.feed_forward(ln3(h))
    else:
        h = ln1(x + self_attention(x))
        h = ln2(h + cross_attention(h))
        expected = ln3(h + layer.feed_forward(h))
    out, weights = layer(x, context, context_mask=context_mask, return_attention_scores=True)
    np.testing.assert_allclose(out, expected, atol=1e-12)
    assert weights.shape == (2, 4, 4, 6)
    np.testing.assert_allclose(weights.sum(-1), 1, atol=1e-12)
    assert np.all(weights[1, :, :, 2:] == 0)
    np.testing.assert_array_equal(layer(x, context, context_mask=context_mask), out)


def test_post_ln_and_pre_ln_differ():
    rng = np.random.default_rng(12)
    post = EncoderLayer.random(8, 2, 12, rng=rng)
    pre = EncoderLayer(post.self_attention, post.feed_forward, post.self_attention_norm,
                       post.feed_forward_norm, norm_first=True)
    x = rng.normal(size=(2, 5, 8))
    assert np.max(np.abs(post(x) - pre(x))) > 0.1
    # post-LN ends with a layer norm (each token has mean 0); pre-LN does not
    np.testing.assert_allclose(post(x).mean(-1), 0, atol=1e-12)
    assert np.max(np.abs(pre(x).mean(-1))) > 0.01


@NORM_FIRST
def test_encoder_padded_positions_do_not_change_real_outputs(norm_first):
    rng = np.random.default_rng(13)
    layer = EncoderLayer.random(8, 2, 16, rng=rng, norm_first=norm_first)
    lengths = [6, 4, 1]
    x = rng.normal(size=(3, 6, 8))
    changed = x.copy()
    for b, n in enumerate(lengths):
        changed[b, n:] = rng.normal(scale=10, size=changed[b, n:].shape)
    mask = padding_mask(lengths, 6)
    out, out_changed = layer(x, mask=mask), layer(changed, mask=mask)
    for b, n in enumerate(lengths):
        np.testing.assert_allclose(out_changed[b, :n], out[b, :n], atol=1e-12)
    assert np.max(np.abs(layer(changed) - layer(x))[1, :4]) > 1e-3  # without the mask it does


@NORM_FIRST
def test_decoder_is_causal(norm_first):
    rng = np.random.default_rng(14)
    layer = DecoderLayer.random(8, 2, 16, rng=rng, norm_first=norm_first)
    x, context = rng.normal(size=(2, 7, 8)), rng.normal(size=(2, 5, 8))
    out = layer(x, context)
    for t in (1, 4, 6):
        changed = x.copy()
        changed[:, t:] = rng.normal(scale=5, size=changed[:, t:].shape)
        out_changed = layer(changed, context)
        np.testing.assert_allclose(out_changed[:, :t], out[:, :t], atol=1e-12)
        assert np.max(np.abs(out_changed[:, t:] - out[:, t:])) > 1e-3


@NORM_FIRST
def test_decoder_padded_source_positions_do_not_change_outputs(norm_first):
    rng = np.random.default_rng(15)
    layer = DecoderLayer.random(8, 2, 16, rng=rng, norm_first=norm_first)
    lengths = [5, 2]
    x, context = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 5, 8))
    changed = context.copy()
    changed[1, 2:] = rng.normal(scale=10, size=(3, 8))
    mask = padding_mask(lengths, 5)
    out, weights = layer(x, context, context_mask=mask, return_attention_scores=True)
    np.testing.assert_allclose(layer(x, changed, context_mask=mask), out, atol=1e-12)
    assert np.all(weights[1, ..., 2:] == 0)


def test_decoder_target_mask_is_combined_with_the_causal_mask():
    rng = np.random.default_rng(16)
    layer = DecoderLayer.random(8, 2, 16, rng=rng)
    x, context = rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 3, 8))
    everything = np.ones((2, 1, 5), dtype=bool)
    np.testing.assert_allclose(layer(x, context, mask=everything), layer(x, context), atol=0)
    # Hiding target position 0 changes position 1's output (it attends to 0 and 1).
    hide_first = everything.copy()
    hide_first[:, :, 0] = False
    assert np.max(np.abs(layer(x, context, mask=hide_first)[:, 1]
                         - layer(x, context)[:, 1])) > 1e-3


@pytest.mark.parametrize("d_model, num_heads, d_ff", [(8, 2, 16), (12, 3, 20), (6, 6, 1)])
def test_parameter_counts_follow_the_formula(d_model, num_heads, d_ff):
    rng = np.random.default_rng(17)
    encoder = EncoderLayer.random(d_model, num_heads, d_ff, rng=rng)
    decoder = DecoderLayer.random(d_model, num_heads, d_ff, rng=rng, norm_first=True)
    assert encoder.count_params() == encoder_params(d_model, d_ff)
    assert decoder.count_params() == decoder_params(d_model, d_ff)
    assert encoder.self_attention.key_dim == d_model // num_heads
    assert (encoder.d_model, encoder.num_heads) == (d_model, num_heads)


# --- bad input ----------------------------------------------------------------------------------

def test_constructors_reject_bad_arguments():
    rng = np.random.default_rng(20)
    enc = EncoderLayer.random(8, 2, 16, rng=rng)
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads.*d_model=8, "
                                         "num_heads=3"):
        EncoderLayer.random(8, 3, 16, rng=rng)
    with pytest.raises(TypeError, match="num_heads must be an integer"):
        DecoderLayer.random(8, 2.0, 16, rng=rng)
    with pytest.raises(ValueError, match="d_ff must be an integer in"):
        EncoderLayer.random(8, 2, 0, rng=rng)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        EncoderLayer.random(8, 2, 16, rng=np.random.RandomState(0))
    with pytest.raises(TypeError, match="norm_first must be True or False; got 'yes'"):
        EncoderLayer.random(8, 2, 16, rng=rng, norm_first="yes")
    with pytest.raises(TypeError, match="feed_forward must be a helpers FeedForward; got "
                                        "LayerNormalization"):
        EncoderLayer(enc.self_attention, enc.self_attention_norm, enc.self_attention_norm,
                     enc.feed_forward_norm)
    with pytest.raises(ValueError, match="one width d_model.*feed_forward_norm \\[6\\]"):
        EncoderLayer(enc.self_attention, enc.feed_forward, enc.self_attention_norm,
                     LayerNormalization.initial(6))
    with pytest.raises(TypeError, match="layer must be a helpers.keras_transformer."
                                        "TransformerEncoderLayer; got DecoderLayer"):
        EncoderLayer.from_keras(DecoderLayer.random(8, 2, 16, rng=rng))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(x=np.ones((5, 8))), ValueError,
     r"x must have shape \(batch, n, d_model\) \(at least 3 axes\); got shape \(5, 8\)"),
    (dict(x=np.ones((2, 5, 6))), ValueError,
     r"x must have shape \(batch, n, d_model=8\); got shape \(2, 5, 6\)"),
    (dict(x=np.ones((2, 5, 8), dtype=complex)), TypeError, "x must be an array of real"),
    (dict(mask=np.ones((2, 1, 5))), TypeError, r"mask must be boolean \(True = may attend\)"),
    (dict(mask=np.ones((5, 5), bool)), ValueError, r"mask must have 3 axes.*got shape \(5, 5\)"),
    (dict(mask=np.ones((3, 1, 5), bool)), ValueError,
     (r"mask of shape \(3, 1, 5\) does not broadcast to the attention scores' shape .* "
      r"\(2, 5, 5\)")),
])
def test_encoder_call_rejects_bad_input(kwargs, error, match):
    layer = EncoderLayer.random(8, 2, 16, rng=np.random.default_rng(21))
    kwargs = {"x": np.ones((2, 5, 8)), **kwargs}
    with pytest.raises(error, match=match):
        layer(kwargs.pop("x"), **kwargs)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(context=np.ones((2, 6, 4))), ValueError,
     r"context must have shape \(batch, n, d_model=8\); got shape \(2, 6, 4\)"),
    (dict(context=np.ones((3, 6, 8))), ValueError,
     r"batch axes do not broadcast: x \(2,\), context \(3,\)"),
    (dict(context_mask=np.ones((2, 1, 5), bool)), ValueError,
     r"context_mask of shape \(2, 1, 5\) does not broadcast to .* \(2, 4, 6\)"),
    (dict(context_mask=[[[1, 0]]]), TypeError, "context_mask must be boolean"),
    (dict(mask=np.ones((2, 1, 6), bool)), ValueError,
     r"mask of shape \(2, 1, 6\) does not broadcast to .* \(2, 4, 4\)"),
    (dict(return_attention_scores=1), TypeError,
     "return_attention_scores must be True or False; got 1"),
])
def test_decoder_call_rejects_bad_input(kwargs, error, match):
    layer = DecoderLayer.random(8, 2, 16, rng=np.random.default_rng(22))
    kwargs = {"x": np.ones((2, 4, 8)), "context": np.ones((2, 6, 8)), **kwargs}
    with pytest.raises(error, match=match):
        layer(kwargs.pop("x"), kwargs.pop("context"), **kwargs)


def test_module_does_not_import_tensorflow_or_keras():
    code = ("import sys, helpers.transformer; "
            "print(sorted({'tensorflow', 'keras'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"


# --- rotary position embedding and ALiBi -----------------------------------------------------

def paper_rope(x, positions, base=10000.0):
    """RoFormer equation (34): x * cos(m theta) + rotate(x) * sin(m theta), written out."""
    d = x.shape[-1]
    theta = np.repeat(base ** (-np.arange(0, d, 2) / d), 2)         # theta_1, theta_1, ...
    rotated = np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)
    angles = np.asarray(positions)[:, None] * theta
    return x * np.cos(angles) + rotated * np.sin(angles)


def test_rope_known_values_and_the_paper_formula():
    x = np.array([[0.0, 2.0, 3.0, 4.0]])
    out = rotary_position_embedding(x, [1], base=100.0)           # angles 1 and 0.1
    c, s, c2, s2 = np.cos(1), np.sin(1), np.cos(0.1), np.sin(0.1)
    assert np.allclose(out, [[-2 * s, 2 * c, 3 * c2 - 4 * s2, 3 * s2 + 4 * c2]])
    x = np.random.default_rng(0).normal(size=(2, 3, 7, 8))
    positions = [0, 4, 9, 2, 30, 5, 1]
    assert np.allclose(rotary_position_embedding(x, positions), paper_rope(x, positions))


@pytest.mark.parametrize("pairing", ["adjacent", "halves"])
@pytest.mark.parametrize("shift", [1, 5, 37, 1000])
def test_rope_scores_depend_only_on_the_offset(pairing, shift):
    q, k = np.random.default_rng(shift).normal(size=(2, 1, 16))
    m, n = 3, 11
    def score(i, j):
        rq = rotary_position_embedding(q, [i], pairing=pairing)
        rk = rotary_position_embedding(k, [j], pairing=pairing)
        return float(rq[0] @ rk[0])
    assert score(m + shift, n + shift) == pytest.approx(score(m, n), abs=1e-9)
    assert score(m, n) != pytest.approx(float(q[0] @ k[0]), abs=1e-3)   # it does change


@pytest.mark.parametrize("pairing", ["adjacent", "halves"])
def test_rope_keeps_norms_and_dtype_and_leaves_position_zero(pairing):
    x = np.random.default_rng(1).normal(size=(3, 9, 6)).astype(np.float32)
    out = rotary_position_embedding(x, pairing=pairing)
    assert out.dtype == np.float32 and out.shape == x.shape
    assert np.allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), atol=1e-5)
    assert np.array_equal(out[:, 0], x[:, 0])
    assert np.array_equal(out, rotary_position_embedding(x, np.arange(9), pairing=pairing))


def test_the_two_pairings_are_one_permutation_of_the_features_apart():
    x = np.random.default_rng(2).normal(size=(2, 5, 8))
    positions = [3, 0, 7, 1, 12]
    to_halves = np.concatenate([np.arange(0, 8, 2), np.arange(1, 8, 2)])   # 0 2 4 6 1 3 5 7
    back = np.argsort(to_halves)
    adjacent = rotary_position_embedding(x, positions, pairing="adjacent")
    halves = rotary_position_embedding(x[..., to_halves], positions, pairing="halves")
    assert np.allclose(halves[..., back], adjacent)
    assert not np.allclose(rotary_position_embedding(x, positions, pairing="halves"), adjacent)


def test_rope_rejects_bad_input():
    x = np.ones((4, 6))
    cases = [((np.ones((4, 5)),), {}, ValueError, r"head_dim must be even.*\(4, 5\)"),
             ((np.ones(6),), {}, ValueError, r"x must have shape \(\.\.\., n, head_dim\)"),
             ((x, [0, 1, 2]), {}, ValueError, r"positions must have shape \(n,\) = \(4,\).*\(3,\)"),
             ((x, [0, 1, -2, 3]), {}, ValueError, "positions must lie in"),
             ((x, [0.0, 1, 2, 3]), {}, TypeError, "positions must be an array of integers"),
             ((np.full((4, 6), np.nan),), {}, ValueError, "x contains NaN"),
             ((x,), {"base": 1.0}, ValueError, "base must be a finite number in \\(1, inf\\)"),
             ((x,), {"pairing": "pairs"}, ValueError, "pairing must be one of 'adjacent', "),
             ((np.ones((4, 6), bool),), {}, TypeError, "x must be an array of real numbers")]
    for args, kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            rotary_position_embedding(*args, **kwargs)


def test_alibi_slopes_of_a_power_of_two_are_the_papers_sequence():
    assert np.array_equal(alibi_slopes(8), 1 / 2.0 ** np.arange(1, 9))
    assert np.array_equal(alibi_slopes(16)[1::2], alibi_slopes(8))
    assert alibi_slopes(1).tolist() == [2.0 ** -8]


def get_slopes(n):
    """The ALiBi authors' get_slopes (github.com/ofirpress/attention_with_linear_biases)."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest) + get_slopes(2 * closest)[0::2][:n - closest]


def test_alibi_slopes_of_other_head_counts_follow_the_papers_rule():
    assert np.allclose(np.log2(alibi_slopes(6)), [-2, -4, -6, -8, -1, -3])
    assert np.allclose(np.log2(alibi_slopes(12)),
                       [-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5])
    for heads in range(1, 40):
        assert np.allclose(alibi_slopes(heads), get_slopes(heads), rtol=1e-12), heads


def test_alibi_bias_shape_diagonal_and_values():
    bias = alibi_bias(4, 6)
    slopes = alibi_slopes(4)
    assert bias.shape == (4, 6, 6) and bias.dtype == np.float64 and np.isfinite(bias).all()
    assert np.all(np.diagonal(bias, axis1=1, axis2=2) == 0)
    i, j = np.indices((6, 6))
    assert np.allclose(bias, -slopes[:, None, None] * (i - j))
    assert np.all(bias[:, i > j] < 0) and np.all(bias[:, i < j] > 0)   # above: same formula
    assert bias[1, 5, 2] == -3 * slopes[1]


def test_alibi_with_a_causal_mask_prefers_near_keys():
    scores = np.zeros((2, 5, 5))
    weights = np.exp(np.where(np.tril(np.ones((5, 5), bool)), scores + alibi_bias(2, 5),
                              -np.inf))
    last = weights[:, -1] / weights[:, -1].sum(axis=-1, keepdims=True)
    assert np.all(np.diff(last, axis=-1) > 0)       # equal scores: the nearer, the heavier


def test_alibi_rejects_bad_sizes():
    for call, error, message in [(lambda: alibi_slopes(0), ValueError, "num_heads must be"),
                                 (lambda: alibi_slopes(2.0), TypeError, "num_heads must be"),
                                 (lambda: alibi_bias(2, 0), ValueError, "n must be an integer"),
                                 (lambda: alibi_bias(0, 3), ValueError, "num_heads"),
                                 (lambda: alibi_bias(2, "3"), TypeError, "n must be")]:
        with pytest.raises(error, match=message):
            call()


# --- rms_norm -------------------------------------------------------------------------------------

def test_rms_norm_equals_the_formula_vector_by_vector():
    rng = np.random.default_rng(3)
    x, scale = rng.normal(size=(2, 3, 5)), rng.normal(size=5)
    out = rms_norm(x, scale, epsilon=1e-6)
    for vector, got in zip(x.reshape(-1, 5), out.reshape(-1, 5)):
        rms = math.sqrt(sum(v * v for v in vector) / 5 + 1e-6)
        assert np.allclose(got, vector / rms * scale, rtol=1e-12)


def test_rms_norm_with_unit_scale_gives_root_mean_square_one_and_ignores_the_size():
    x = np.random.default_rng(4).normal(size=(4, 8))
    out = rms_norm(x, np.ones(8), epsilon=1e-12)
    assert np.allclose(np.sqrt(np.mean(out ** 2, axis=-1)), 1.0)
    assert np.allclose(rms_norm(10 * x, np.ones(8), epsilon=1e-12), out)   # scale invariant
    assert not np.allclose(out.mean(axis=-1), 0)                          # no centring


def test_rms_norm_keeps_float32():
    x = np.ones((2, 4), np.float32)
    assert rms_norm(x, np.ones(4, np.float32)).dtype == np.float32


@pytest.mark.parametrize("x, scale, epsilon, error, match", [
    (np.ones((2, 4)), np.ones(3), 1e-6, ValueError, r"scale must have shape \(4,\)"),
    (np.ones((2, 4)), np.ones((1, 4)), 1e-6, ValueError, "scale must have shape"),
    (np.ones((2, 4)), np.ones(4), 0.0, ValueError, "epsilon"),
    (np.array([[np.nan, 1.0]]), np.ones(2), 1e-6, ValueError, "x contains NaN"),
    (np.array([["a", "b"]]), np.ones(2), 1e-6, TypeError, "x must be an array of real"),
])
def test_rms_norm_rejects_bad_input(x, scale, epsilon, error, match):
    with pytest.raises(error, match=match):
        rms_norm(x, scale, epsilon=epsilon)
def test_rms_norm_divides_by_the_root_mean_square():
    x = np.random.default_rng(0).normal(size=(2, 3, 6)) * 5 + 2
    scale = np.linspace(0.5, 2, 6)
    out = rms_norm(x, scale, epsilon=1e-12)
    assert np.allclose(out / scale, x / np.sqrt((x ** 2).mean(-1, keepdims=True)))
    assert np.allclose(np.sqrt((rms_norm(x) ** 2).mean(-1)), 1, atol=1e-6)
    # unlike layer normalisation, the mean is not removed
    assert not np.allclose(rms_norm(x).mean(-1), 0, atol=0.1)
    assert rms_norm(x.astype(np.float32)).dtype == np.float32


def test_rms_norm_rejects_a_wrong_scale_epsilon_or_dtype():
    with pytest.raises(ValueError, match="scale must have shape"):
        rms_norm(np.ones((2, 4)), np.ones(3))
    with pytest.raises(ValueError, match="epsilon"):
        rms_norm(np.ones((2, 4)), epsilon=0)
    with pytest.raises(TypeError, match="x must be an array of real numbers"):
        rms_norm(np.array(["a"]))


def test_swiglu_is_gated_silu():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 4))
    w_gate, w_up = rng.normal(size=(2, 4, 6))
    w_down = rng.normal(size=(6, 4))
    gate = x @ w_gate
    expected = (gate * (1 / (1 + np.exp(-gate))) * (x @ w_up)) @ w_down
    out = swiglu(x, w_gate, w_up, w_down)
    assert out.shape == x.shape and np.allclose(out, expected)
    # a zero gate closes the network whatever the value path says
    assert np.allclose(swiglu(x, np.zeros((4, 6)), w_up, w_down), 0)


def test_swiglu_rejects_bad_shapes():
    with pytest.raises(ValueError, match="w_gate must have shape"):
        swiglu(np.ones((1, 4)), np.ones((3, 6)), np.ones((3, 6)), np.ones((6, 4)))
    with pytest.raises(ValueError, match="w_down must have shape"):
        swiglu(np.ones((1, 4)), np.ones((4, 6)), np.ones((4, 6)), np.ones((4, 6)))


def test_rope_frequencies_by_method():
    theta = rope_frequencies(8)
    assert np.allclose(theta, 10000.0 ** (-np.arange(0, 8, 2) / 8))
    assert np.allclose(rope_frequencies(8, factor=4, method="interpolation"), theta / 4)
    ntk = rope_frequencies(8, factor=4, method="ntk")
    assert ntk[0] == theta[0] and np.isclose(ntk[-1], theta[-1] / 4)
    assert np.all(ntk <= theta) and np.all(ntk >= theta / 4)
    yarn = rope_frequencies(8, factor=4, method="yarn", original_length=16)
    turns = 16 * theta / (2 * np.pi)                 # 2.5, 0.25, 0.025, 0.0025 turns
    assert np.allclose(yarn[turns < 1], theta[turns < 1] / 4)   # slow pairs interpolated
    assert theta[0] / 4 < yarn[0] < theta[0]                      # blended
    long = rope_frequencies(8, factor=4, method="yarn", original_length=10_000)
    assert np.allclose(long[:2], theta[:2])          # fast pairs (many turns) keep theirs


def test_rope_frequencies_override_the_base():
    x = np.random.default_rng(0).normal(size=(5, 8))
    same = rotary_position_embedding(x, frequencies=rope_frequencies(8))
    assert np.allclose(same, rotary_position_embedding(x))
    halved = rotary_position_embedding(x, positions=[0, 2, 4, 6, 8],
                                       frequencies=rope_frequencies(8) / 2)
    assert np.allclose(halved, rotary_position_embedding(x))   # positions / 2 = theta / 2


def test_rope_frequencies_reject_bad_input():
    with pytest.raises(ValueError, match="needs original_length"):
        rope_frequencies(8, factor=2, method="yarn")
    with pytest.raises(ValueError, match="factor"):
        rope_frequencies(8, factor=0.5, method="ntk")
    with pytest.raises(ValueError, match="method"):
        rope_frequencies(8, method="linear")
    with pytest.raises(ValueError, match="frequencies must have shape"):
        rotary_position_embedding(np.ones((3, 8)), frequencies=[1.0, 0.1])

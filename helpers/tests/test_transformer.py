"""Unit tests of helpers.transformer (NumPy only, no Keras)."""

import math
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
    SwiGLU,
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


# --- layer normalisation and feed-forward network ----------------------------------------------

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


# --- SwiGLU ---------------------------------------------------------------------------------------


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


def test_swiglu_layer_equals_the_function_and_counts_three_matrices():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4))
    w_gate, w_up = rng.normal(size=(2, 4, 6))
    w_down = rng.normal(size=(6, 4))
    layer = SwiGLU(w_gate, w_up, w_down)
    assert np.array_equal(layer(x), swiglu(x, w_gate, w_up, w_down))
    assert (layer.d_model, layer.d_ff, layer.count_params()) == (4, 6, 72)
    with pytest.raises(ValueError, match="w_up must have shape"):
        SwiGLU(w_gate, w_up.T, w_down)
    with pytest.raises(ValueError, match=r"d_model=4"):
        layer(np.ones((2, 5)))


def test_swiglu_rejects_bad_shapes():
    with pytest.raises(ValueError, match="w_gate must have shape"):
        swiglu(np.ones((1, 4)), np.ones((3, 6)), np.ones((3, 6)), np.ones((6, 4)))
    with pytest.raises(ValueError, match="w_down must have shape"):
        swiglu(np.ones((1, 4)), np.ones((4, 6)), np.ones((4, 6)), np.ones((4, 6)))

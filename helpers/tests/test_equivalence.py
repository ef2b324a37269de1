"""The NumPy reference implementations give the numbers of Keras's attention layers.

Every comparison uses float32 inputs (what Keras computes in) and
``np.testing.assert_allclose(atol=1e-5)``. Keras layers get random weights (not their
initial values) so that biases are non-zero and every weight is exercised.
"""

import math

import numpy as np
import pytest

from helpers._tensorflow import keras
from helpers.attention import (
    MultiHeadAttention,
    additive_attention,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)

ATOL = 1e-5


@pytest.fixture(scope="module", autouse=True)
def _seed_keras():
    keras.utils.set_random_seed(0)


def f32(rng, *shape):
    return rng.normal(size=shape).astype(np.float32)


def close(actual, desired, atol=ATOL):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(desired), rtol=0, atol=atol)


def randomise(layer, rng, scale=0.4):
    """Move every weight of ``layer`` away from its initial value (biases included)."""
    layer.set_weights([rng.normal(scale=scale, size=w.shape).astype(np.float32)
                       for w in layer.get_weights()])


def full_padding_mask(lengths, n_q, n_k):
    """A (B, n_q, n_k) attention mask from key lengths, as Keras's MHA wants it."""
    return np.broadcast_to(padding_mask(np.asarray(lengths), n_k),
                           (len(lengths), n_q, n_k)).copy()


# --- keras.layers.Attention vs scaled_dot_product_attention ---------------------------------

def dot_attention_layer(q, v, k):
    """keras.layers.Attention(use_scale=True), built, with its scale set to 1/sqrt(d_k)."""
    layer = keras.layers.Attention(use_scale=True)
    layer([q, v, k])
    assert [tuple(w.shape) for w in layer.get_weights()] == [()]
    np.testing.assert_array_equal(layer.get_weights()[0], 1.0)  # Keras initialises it to 1
    layer.set_weights([np.array(1 / math.sqrt(q.shape[-1]), dtype=np.float32)])
    return layer


def test_keras_attention_with_scale_1_over_sqrt_dk_is_scaled_dot_product_attention():
    rng = np.random.default_rng(10)
    q, k, v = f32(rng, 2, 4, 8), f32(rng, 2, 6, 8), f32(rng, 2, 6, 3)
    layer = dot_attention_layer(q, v, k)
    k_out, k_w = layer([q, v, k], return_attention_scores=True)
    out, w = scaled_dot_product_attention(q, k, v)
    close(out, k_out)
    close(w, k_w)
    close(layer([q, v, k]), out)


def test_keras_attention_default_scale_1_is_not_scaled():
    """With its initial scale 1.0, Keras's Attention computes softmax(Q K^T), unscaled."""
    rng = np.random.default_rng(11)
    q, k, v = f32(rng, 2, 4, 8), f32(rng, 2, 6, 8), f32(rng, 2, 6, 3)
    layer = keras.layers.Attention(use_scale=True)
    k_out, k_w = layer([q, v, k], return_attention_scores=True)
    out, w = scaled_dot_product_attention(q, k, v)
    assert np.max(np.abs(np.asarray(k_out) - out)) > 1e-2
    assert np.max(np.abs(np.asarray(k_w) - w)) > 1e-2
    # softmax(Q K^T) is scaled dot-product attention of sqrt(d_k) * Q.
    out_unscaled, w_unscaled = scaled_dot_product_attention(q * np.float32(math.sqrt(8)), k, v)
    close(out_unscaled, k_out)
    close(w_unscaled, k_w)


def test_keras_attention_value_mask_is_a_padding_mask():
    rng = np.random.default_rng(12)
    lengths = np.array([6, 2, 4])
    q, k, v = f32(rng, 3, 5, 4), f32(rng, 3, 6, 4), f32(rng, 3, 6, 2)
    value_mask = padding_mask(lengths, 6)[:, 0, :]  # (B, S)
    layer = dot_attention_layer(q, v, k)
    k_out, k_w = layer([q, v, k], mask=[None, value_mask], return_attention_scores=True)
    out, w = scaled_dot_product_attention(q, k, v, mask=padding_mask(lengths, 6))
    close(out, k_out)
    close(w, k_w)
    assert np.all(w[1, :, 2:] == 0)


def test_keras_attention_causal_is_causal_mask():
    rng = np.random.default_rng(13)
    q, k, v = f32(rng, 2, 7, 4), f32(rng, 2, 7, 4), f32(rng, 2, 7, 5)
    layer = dot_attention_layer(q, v, k)
    k_out, k_w = layer([q, v, k], use_causal_mask=True, return_attention_scores=True)
    out, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(7))
    close(out, k_out)
    close(w, k_w)
    close(layer([q, v, k], use_causal_mask=True), out)


# --- keras.layers.AdditiveAttention vs additive_attention -----------------------------------

@pytest.mark.parametrize("masked", [False, True], ids=["no_mask", "value_mask"])
def test_keras_additive_attention_is_additive_attention_with_identity_projections(masked):
    rng = np.random.default_rng(20 + masked)
    d = 5
    q, k, v = f32(rng, 3, 4, d), f32(rng, 3, 6, d), f32(rng, 3, 6, 2)
    layer = keras.layers.AdditiveAttention()
    layer([q, v, k])
    assert [tuple(w.shape) for w in layer.get_weights()] == [(d,)]
    scale = rng.normal(scale=2.0, size=d).astype(np.float32)
    layer.set_weights([scale])
    lengths = np.array([6, 1, 3])
    keras_mask = [None, padding_mask(lengths, 6)[:, 0, :]] if masked else None
    k_out, k_w = layer([q, v, k], mask=keras_mask, return_attention_scores=True)
    out, w = additive_attention(q, k, v, np.eye(d), np.eye(d), scale,
                                mask=padding_mask(lengths, 6) if masked else None)
    close(out, k_out)
    close(w, k_w)
    close(layer([q, v, k], mask=keras_mask), out)
    # The scale matters: with scale = 1 (Keras's initial value) the numbers are different.
    out_ones, _ = additive_attention(q, k, v, np.eye(d), np.eye(d), np.ones(d))
    assert np.max(np.abs(out_ones - out)) > 1e-2


# --- keras.layers.MultiHeadAttention vs MultiHeadAttention.from_keras -----------------------

def keras_mha(rng, query, value, key=None, *, num_heads=2, key_dim=4, value_dim=None,
              use_bias=True):
    """A built keras MultiHeadAttention with random weights."""
    layer = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim,
                                            value_dim=value_dim, use_bias=use_bias)
    layer(query, value, key=key)
    randomise(layer, rng)
    return layer


def assert_mha_matches_keras(layer, query, value, key=None, attention_mask=None,
                             use_causal_mask=False):
    """Both call modes of Keras (weights returned or not) against the NumPy copy."""
    mha = MultiHeadAttention.from_keras(layer)
    kwargs = dict(key=key, attention_mask=attention_mask, use_causal_mask=use_causal_mask)
    k_out, k_w = layer(query, value, return_attention_scores=True, **kwargs)
    out, w = mha(query, value, return_attention_scores=True, **kwargs)
    batch, n_q, n_k = query.shape[0], query.shape[1], value.shape[1]
    assert w.shape == tuple(k_w.shape) == (batch, layer.num_heads, n_q, n_k)
    assert out.shape == tuple(k_out.shape) == query.shape
    close(out, k_out)
    close(w, k_w)
    # return_attention_scores=False takes Keras's fused dot_product_attention path.
    out_only = mha(query, value, **kwargs)
    assert isinstance(out_only, np.ndarray)
    close(out_only, out, atol=0)
    close(out_only, layer(query, value, **kwargs))
    return out, w


def test_mha_self_attention():
    rng = np.random.default_rng(30)
    x = f32(rng, 2, 5, 6)
    layer = keras_mha(rng, x, x, num_heads=3, key_dim=4)
    assert np.all(np.abs(layer.get_weights()[1]) > 0)  # the query bias is no longer zero
    assert_mha_matches_keras(layer, x, x)


@pytest.mark.parametrize("separate_key", [True, False], ids=["key_given", "key_none"])
def test_mha_cross_attention(separate_key):
    rng = np.random.default_rng(31)
    query, value = f32(rng, 2, 3, 6), f32(rng, 2, 7, 5)
    key = f32(rng, 2, 7, 4) if separate_key else None
    layer = keras_mha(rng, query, value, key, num_heads=2, key_dim=3)
    mha = MultiHeadAttention.from_keras(layer)
    assert mha.query_kernel.shape == (6, 2, 3) and mha.value_kernel.shape == (5, 2, 3)
    assert mha.key_kernel.shape == ((4 if separate_key else 5), 2, 3)
    assert mha.output_kernel.shape == (2, 3, 6)
    assert_mha_matches_keras(layer, query, value, key)


def test_mha_padding_mask():
    rng = np.random.default_rng(32)
    query, value = f32(rng, 3, 4, 6), f32(rng, 3, 7, 6)
    mask = full_padding_mask([7, 1, 4], 4, 7)  # no fully masked query row
    layer = keras_mha(rng, query, value, num_heads=2, key_dim=4)
    _, w = assert_mha_matches_keras(layer, query, value, attention_mask=mask)
    assert np.all(w[1, :, :, 1:] == 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("n_q, n_k", [(6, 6), (4, 7), (7, 3)])
def test_mha_causal_mask(n_q, n_k):
    rng = np.random.default_rng(33)
    query, value = f32(rng, 2, n_q, 6), f32(rng, 2, n_k, 6)
    layer = keras_mha(rng, query, value, num_heads=2, key_dim=4)
    _, w = assert_mha_matches_keras(layer, query, value, use_causal_mask=True)
    assert np.all(w[..., ~np.tri(n_q, n_k, dtype=bool)] == 0)


def test_mha_padding_and_causal_mask_combined():
    rng = np.random.default_rng(34)
    x = f32(rng, 3, 6, 5)
    mask = full_padding_mask([6, 3, 1], 6, 6)
    layer = keras_mha(rng, x, x, num_heads=2, key_dim=3)
    _, w = assert_mha_matches_keras(layer, x, x, attention_mask=mask, use_causal_mask=True)
    assert np.all(w[1, :, :, 3:] == 0) and np.all(w[..., ~causal_mask(6)] == 0)


def test_mha_value_dim_differs_from_key_dim():
    rng = np.random.default_rng(35)
    query, value = f32(rng, 2, 4, 6), f32(rng, 2, 5, 6)
    layer = keras_mha(rng, query, value, num_heads=3, key_dim=2, value_dim=7)
    assert MultiHeadAttention.from_keras(layer).output_kernel.shape == (3, 7, 6)
    assert_mha_matches_keras(layer, query, value, attention_mask=full_padding_mask([5, 2], 4, 5))


def test_mha_without_bias():
    rng = np.random.default_rng(36)
    query, value = f32(rng, 2, 4, 6), f32(rng, 2, 5, 3)
    layer = keras_mha(rng, query, value, num_heads=2, key_dim=4, use_bias=False)
    mha = MultiHeadAttention.from_keras(layer)
    assert all(b is None for b in (mha.query_bias, mha.key_bias, mha.value_bias,
                                   mha.output_bias))
    assert len(mha.get_weights()) == 4
    assert_mha_matches_keras(layer, query, value, use_causal_mask=True)


SHAPES = [  # batch, n_q, n_k, num_heads, key_dim
    (1, 1, 1, 1, 2),
    (1, 9, 9, 4, 8),
    (2, 3, 5, 2, 3),
    (3, 7, 2, 4, 2),
    (2, 1, 9, 3, 5),
    (3, 8, 4, 1, 8),
    (1, 5, 3, 2, 6),
]


@pytest.mark.filterwarnings("ignore:You are using a softmax over axis:UserWarning")  # S = 1
@pytest.mark.parametrize("batch, n_q, n_k, num_heads, key_dim", SHAPES,
                         ids=["B{}_T{}_S{}_H{}_k{}".format(*s) for s in SHAPES])
def test_mha_shapes(batch, n_q, n_k, num_heads, key_dim):
    rng = np.random.default_rng([batch, n_q, n_k, num_heads, key_dim])
    query, value = f32(rng, batch, n_q, 5), f32(rng, batch, n_k, 4)
    layer = keras_mha(rng, query, value, num_heads=num_heads, key_dim=key_dim)
    assert_mha_matches_keras(layer, query, value)
    lengths = rng.integers(1, n_k + 1, size=batch)  # at least one real key: no empty rows
    assert_mha_matches_keras(layer, query, value,
                             attention_mask=full_padding_mask(lengths, n_q, n_k))


# --- looped == vectorized ----------------------------------------------------------------------

@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "both", "full", "2d",
                                       "empty_rows"])
@pytest.mark.parametrize("num_heads, key_dim, value_dim", [(1, 3, 3), (3, 4, 2), (4, 2, 5)])
def test_looped_equals_vectorized(mask_kind, num_heads, key_dim, value_dim):
    rng = np.random.default_rng(40)
    batch, n_q, n_k, d_model = 3, 5, 6, 7
    base = MultiHeadAttention.random(d_model, num_heads, key_dim, value_dim, rng=rng)
    biases = [rng.normal(size=b.shape) for b in (base.query_bias, base.key_bias,
                                                 base.value_bias, base.output_bias)]
    kernels = (base.query_kernel, base.key_kernel, base.value_kernel, base.output_kernel)
    vectorized = MultiHeadAttention(*kernels, *biases, vectorized=True)
    looped = MultiHeadAttention(*kernels, *biases, vectorized=False)
    query, value = rng.normal(size=(batch, n_q, d_model)), rng.normal(size=(batch, n_k, d_model))
    mask, causal = {
        "none": (None, False),
        "padding": (padding_mask([6, 2, 4], n_k), False),
        "causal": (None, True),
        "both": (padding_mask([6, 2, 4], n_k), True),
        "full": (rng.random((batch, n_q, n_k)) < 0.6, False),
        "2d": (rng.random((n_q, n_k)) < 0.6, True),
        "empty_rows": (padding_mask([6, 0, 3], n_k), False),
    }[mask_kind]
    out_v, w_v = vectorized(query, value, attention_mask=mask, use_causal_mask=causal,
                            return_attention_scores=True)
    out_l, w_l = looped(query, value, attention_mask=mask, use_causal_mask=causal,
                        return_attention_scores=True)
    assert out_v.dtype == out_l.dtype == np.float64
    assert w_v.shape == w_l.shape == (batch, num_heads, n_q, n_k)
    np.testing.assert_allclose(out_l, out_v, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w_l, w_v, rtol=0, atol=1e-12)


# --- parameters and weights ---------------------------------------------------------------------

@pytest.mark.parametrize("d_model, num_heads, key_dim, value_dim, use_bias", [
    (6, 2, 4, None, True), (8, 4, 2, 3, True), (5, 1, 7, None, False), (4, 3, 2, 6, False),
])
def test_count_params_and_weight_layout_match_keras(d_model, num_heads, key_dim, value_dim,
                                                    use_bias):
    rng = np.random.default_rng(50)
    x = f32(rng, 1, 3, d_model)
    layer = keras_mha(rng, x, x, num_heads=num_heads, key_dim=key_dim, value_dim=value_dim,
                      use_bias=use_bias)
    numpy_random = MultiHeadAttention.random(d_model, num_heads, key_dim, value_dim, rng=rng,
                                             use_bias=use_bias)
    copied = MultiHeadAttention.from_keras(layer)
    assert numpy_random.count_params() == copied.count_params() == layer.count_params()
    assert ([w.shape for w in numpy_random.get_weights()]
            == [tuple(w.shape) for w in layer.get_weights()])
    for mine, theirs in zip(copied.get_weights(), layer.get_weights(), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_count_params_cross_attention_matches_keras():
    rng = np.random.default_rng(51)
    query, value, key = f32(rng, 2, 3, 6), f32(rng, 2, 4, 5), f32(rng, 2, 4, 3)
    layer = keras_mha(rng, query, value, key, num_heads=3, key_dim=2, value_dim=4)
    assert MultiHeadAttention.from_keras(layer).count_params() == layer.count_params()


@pytest.mark.parametrize("use_bias", [True, False])
@pytest.mark.parametrize("value_dim", [None, 3])
def test_get_weights_round_trip_into_keras(use_bias, value_dim):
    rng = np.random.default_rng(52)
    d_model, num_heads, key_dim = 6, 2, 4
    mha = MultiHeadAttention.random(d_model, num_heads, key_dim, value_dim, rng=rng,
                                    use_bias=use_bias)
    query, value = f32(rng, 2, 5, d_model), f32(rng, 2, 4, d_model)
    mask = full_padding_mask([4, 2], 5, 4)

    def fresh_layer(weights):
        layer = keras.layers.MultiHeadAttention(num_heads, key_dim, value_dim=value_dim,
                                                use_bias=use_bias)
        layer(query, value)  # build
        layer.set_weights(weights)
        for mine, theirs in zip(weights, layer.get_weights(), strict=True):
            np.testing.assert_allclose(theirs, mine, rtol=1e-6)
        return layer

    layer = fresh_layer(mha.get_weights())
    close(mha(query, value, attention_mask=mask), layer(query, value, attention_mask=mask))
    close(mha(query, value, use_causal_mask=True), layer(query, value, use_causal_mask=True))
    if use_bias:  # .random() gives zero biases; check non-zero ones too
        with_biases = MultiHeadAttention(
            mha.query_kernel, mha.key_kernel, mha.value_kernel, mha.output_kernel,
            *(rng.normal(size=b.shape) for b in (mha.query_bias, mha.key_bias,
                                                  mha.value_bias, mha.output_bias)))
        layer = fresh_layer(with_biases.get_weights())
        close(with_biases(query, value, attention_mask=mask),
              layer(query, value, attention_mask=mask))


# --- fully masked query rows ------------------------------------------------------------------

def test_fully_masked_query_rows():
    """A query row whose keys are all masked: helpers and Keras's two code paths.

    helpers gives that row weights 0, so its head outputs are 0 and the layer's output is the
    output bias alone. Keras with ``return_attention_scores=True`` computes the weights with
    its masked ``Softmax`` layer, which zeroes masked positions after the softmax: the same
    numbers as helpers. Keras with ``return_attention_scores=False`` (Keras 3.15) runs the
    fused ``ops.dot_product_attention``, which replaces masked scores by a large negative
    number and does not zero them afterwards, so an all-masked row gets *uniform* weights
    over all keys: its output is the average of the projected values (padding included),
    passed through W^O plus the output bias. This test pins that current Keras behaviour
    (the course documents the difference); rows with at least one visible key agree.
    """
    rng = np.random.default_rng(60)
    batch, n_q, n_k, d_model = 2, 4, 5, 6
    query, value = f32(rng, batch, n_q, d_model), f32(rng, batch, n_k, d_model)
    mask = full_padding_mask([3, 0], n_q, n_k)  # sequence 1 has no real key at all
    mask[0, 2, :] = False  # and one query row of sequence 0 sees nothing either
    empty = ~mask.any(-1)  # (B, T)
    assert empty.sum() == 5
    layer = keras_mha(rng, query, value, num_heads=2, key_dim=3)
    mha = MultiHeadAttention.from_keras(layer)

    out, w = mha(query, value, attention_mask=mask, return_attention_scores=True)
    assert np.all(np.isfinite(out)) and np.all(w[empty.nonzero()[0], :, empty.nonzero()[1]] == 0)
    np.testing.assert_array_equal(out[empty], np.broadcast_to(mha.output_bias, (5, d_model)))

    # Keras, weights returned: the same numbers, zero weights on the empty rows.
    k_out, k_w = layer(query, value, attention_mask=mask, return_attention_scores=True)
    close(out, k_out)
    close(w, k_w)
    assert np.all(np.asarray(k_w).transpose(0, 2, 1, 3)[empty] == 0)

    # Keras, fused path: the rows with visible keys agree ...
    k_fused = np.asarray(layer(query, value, attention_mask=mask))
    close(out[~empty], k_fused[~empty])
    # ... but an empty row is the uniform average of the projected values, not the bias.
    v = np.einsum("bsd,dhk->bhsk", value, mha.value_kernel) + mha.value_bias[:, None, :]
    uniform = np.einsum("bhk,hkm->bm", v.mean(axis=2), mha.output_kernel) + mha.output_bias
    expected = np.broadcast_to(uniform[:, None, :], out.shape)[empty]
    close(k_fused[empty], expected)
    assert np.min(np.abs(k_fused[empty] - out[empty]).max(-1)) > 1e-2

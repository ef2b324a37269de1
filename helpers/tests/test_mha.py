"""Unit tests of additive_attention and the NumPy MultiHeadAttention (NumPy only, no Keras)."""

import math

import numpy as np
import pytest

from helpers.attention import (
    MultiHeadAttention,
    additive_attention,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)


def random_mha(rng, d_query=6, num_heads=3, key_dim=4, value_dim=2, d_model=5, d_key=None,
               d_value=None, vectorized=True):
    """A MultiHeadAttention with random kernels and random, non-zero biases."""
    d_key = d_query if d_key is None else d_key
    d_value = d_key if d_value is None else d_value
    return MultiHeadAttention(
        rng.normal(size=(d_query, num_heads, key_dim)),
        rng.normal(size=(d_key, num_heads, key_dim)),
        rng.normal(size=(d_value, num_heads, value_dim)),
        rng.normal(size=(num_heads, value_dim, d_model)),
        rng.normal(size=(num_heads, key_dim)), rng.normal(size=(num_heads, key_dim)),
        rng.normal(size=(num_heads, value_dim)), rng.normal(size=(d_model,)),
        vectorized=vectorized)


def heads_by_hand(mha, query, value, key=None, mask=None):
    """Each head's (output, weights) from scaled_dot_product_attention on projected inputs."""
    key = value if key is None else key
    heads = []
    for h in range(mha.num_heads):
        q = query @ mha.query_kernel[:, h, :] + mha.query_bias[h]
        k = key @ mha.key_kernel[:, h, :] + mha.key_bias[h]
        v = value @ mha.value_kernel[:, h, :] + mha.value_bias[h]
        heads.append(scaled_dot_product_attention(q, k, v, mask))
    return heads


VECTORIZED = pytest.mark.parametrize("vectorized", [True, False], ids=["vectorized", "looped"])


# --- MultiHeadAttention: shapes and values ------------------------------------------------------

@VECTORIZED
def test_mha_shapes(vectorized):
    rng = np.random.default_rng(0)
    mha = random_mha(rng, d_query=6, num_heads=3, value_dim=2, d_model=5, d_key=4,
                     vectorized=vectorized)
    query, value = rng.normal(size=(2, 7, 6)), rng.normal(size=(2, 9, 4))
    out, w = mha(query, value, return_attention_scores=True)
    assert out.shape == (2, 7, 5) and w.shape == (2, 3, 7, 9)
    assert isinstance(mha(query, value), np.ndarray) and mha(query, value).shape == (2, 7, 5)
    # No batch axis, and two batch axes.
    out, w = mha(query[0], value[0], return_attention_scores=True)
    assert out.shape == (7, 5) and w.shape == (3, 7, 9)
    out, w = mha(query.reshape(1, 2, 7, 6), value.reshape(1, 2, 9, 4),
                 return_attention_scores=True)
    assert out.shape == (1, 2, 7, 5) and w.shape == (1, 2, 3, 7, 9)


@VECTORIZED
def test_mha_weights_rows_sum_to_one(vectorized):
    rng = np.random.default_rng(1)
    mha = random_mha(rng, vectorized=vectorized)
    x = rng.normal(size=(3, 5, 6))
    _, w = mha(x, x, return_attention_scores=True)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    assert np.all(w >= 0)
    _, w = mha(x, x, attention_mask=padding_mask([5, 1, 3], 5), use_causal_mask=True,
               return_attention_scores=True)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    assert np.all(w[1, :, :, 1:] == 0) and np.all(w[..., ~causal_mask(5)] == 0)


@VECTORIZED
@pytest.mark.parametrize("masked", [False, True], ids=["no_mask", "mask"])
def test_each_head_is_scaled_dot_product_attention_of_the_projections(vectorized, masked):
    rng = np.random.default_rng(2)
    mha = random_mha(rng, d_query=6, d_key=3, d_value=4, vectorized=vectorized)
    query, key, value = (rng.normal(size=(2, 4, 6)), rng.normal(size=(2, 5, 3)),
                         rng.normal(size=(2, 5, 4)))
    mask = (rng.random((2, 4, 5)) < 0.7) | np.eye(4, 5, dtype=bool) if masked else None
    out, w = mha(query, value, key=key, attention_mask=mask, return_attention_scores=True)
    heads = heads_by_hand(mha, query, value, key, mask)
    for h, (_, w_h) in enumerate(heads):
        np.testing.assert_allclose(w[:, h], w_h, rtol=1e-12, atol=1e-15)
    # MultiHead = sum_h head_h W^O_h + b = Concat(head_1..head_h) W^O + b.
    summed = sum(out_h @ mha.output_kernel[h] for h, (out_h, _) in enumerate(heads))
    np.testing.assert_allclose(out, summed + mha.output_bias, rtol=1e-12, atol=1e-12)
    concat = np.concatenate([out_h for out_h, _ in heads], axis=-1)
    w_o = mha.output_kernel.reshape(mha.num_heads * mha.value_dim, -1)
    np.testing.assert_allclose(out, concat @ w_o + mha.output_bias, rtol=1e-12, atol=1e-12)


def test_key_defaults_to_value():
    rng = np.random.default_rng(3)
    mha = random_mha(rng)
    query, value = rng.normal(size=(2, 3, 6)), rng.normal(size=(2, 4, 6))
    np.testing.assert_array_equal(mha(query, value), mha(query, value, key=value))


@VECTORIZED
def test_use_causal_mask_is_keras_lower_triangle_and_combines_with_and(vectorized):
    rng = np.random.default_rng(4)
    mha = random_mha(rng, vectorized=vectorized)
    query, value = rng.normal(size=(2, 4, 6)), rng.normal(size=(2, 6, 6))
    tri = np.tri(4, 6, dtype=bool)  # query i sees keys j <= i, also when n_q != n_k
    np.testing.assert_allclose(mha(query, value, use_causal_mask=True),
                               mha(query, value, attention_mask=tri))
    pad = padding_mask([6, 2], 6)
    np.testing.assert_allclose(mha(query, value, attention_mask=pad, use_causal_mask=True),
                               mha(query, value, attention_mask=pad & tri))


@VECTORIZED
def test_fully_masked_query_row_gives_the_output_bias_not_nan(vectorized):
    rng = np.random.default_rng(5)
    mha = random_mha(rng, vectorized=vectorized)
    x = rng.normal(size=(2, 3, 6))
    out, w = mha(x, x, attention_mask=padding_mask([3, 0], 3), return_attention_scores=True)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_allclose(out[1], np.broadcast_to(mha.output_bias, (3, 5)))


@VECTORIZED
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 1, 4), (3, 4), (1, 4), (4,)],
                         ids=lambda s: "mask" + str(s).replace(" ", ""))
def test_every_mask_shape_that_broadcasts_is_accepted(vectorized, shape):
    """The docstring: attention_mask is 'broadcastable to (..., n_q, n_k)'; _check_mask
    accepts all of these shapes, so all of them must give the result of the full mask."""
    rng = np.random.default_rng(6)
    mha = random_mha(rng, vectorized=vectorized)
    query, value = rng.normal(size=(2, 3, 6)), rng.normal(size=(2, 4, 6))
    keys_seen = np.array([True, False, True, True])
    expected = mha(query, value, attention_mask=np.broadcast_to(keys_seen, (2, 3, 4)))
    mask = np.broadcast_to(keys_seen, shape).copy()
    np.testing.assert_allclose(mha(query, value, attention_mask=mask), expected)


# --- construction, weights, heads ----------------------------------------------------------------

@pytest.mark.parametrize("use_bias", [True, False])
def test_random_shapes_biases_and_glorot_limits(use_bias):
    mha = MultiHeadAttention.random(8, 4, 3, 5, rng=np.random.default_rng(7), use_bias=use_bias,
                                    vectorized=False)
    assert (mha.num_heads, mha.key_dim, mha.value_dim, mha.vectorized) == (4, 3, 5, False)
    assert [w.shape for w in mha.get_weights()] == (
        [(8, 4, 3), (4, 3), (8, 4, 3), (4, 3), (8, 4, 5), (4, 5), (4, 5, 8), (8,)] if use_bias
        else [(8, 4, 3), (8, 4, 3), (8, 4, 5), (4, 5, 8)])
    for kernel, fan_in, fan_out in ((mha.query_kernel, 8, 12), (mha.key_kernel, 8, 12),
                                    (mha.value_kernel, 8, 20), (mha.output_kernel, 20, 8)):
        assert np.max(np.abs(kernel)) <= math.sqrt(6 / (fan_in + fan_out))
        assert np.std(kernel) > 0.2 * math.sqrt(6 / (fan_in + fan_out))
    if use_bias:
        assert all(np.all(b == 0) for b in (mha.query_bias, mha.key_bias, mha.value_bias,
                                            mha.output_bias))
    else:
        assert mha.query_bias is mha.key_bias is mha.value_bias is mha.output_bias is None
    again = MultiHeadAttention.random(8, 4, 3, 5, rng=np.random.default_rng(7), use_bias=use_bias)
    for a, b in zip(mha.get_weights(), again.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert MultiHeadAttention.random(8, 4, 3, rng=np.random.default_rng(7)).value_dim == 3


def test_get_weights_order_and_count_params():
    mha = random_mha(np.random.default_rng(8), d_query=6, num_heads=3, key_dim=4, value_dim=2,
                     d_model=5, d_key=7, d_value=9)
    weights = mha.get_weights()
    expected = [mha.query_kernel, mha.query_bias, mha.key_kernel, mha.key_bias,
                mha.value_kernel, mha.value_bias, mha.output_kernel, mha.output_bias]
    assert all(a is b for a, b in zip(weights, expected, strict=True))
    assert mha.count_params() == 6 * 12 + 12 + 7 * 12 + 12 + 9 * 6 + 6 + 6 * 5 + 5
    no_bias = MultiHeadAttention(mha.query_kernel, mha.key_kernel, mha.value_kernel,
                                 mha.output_kernel)
    assert len(no_bias.get_weights()) == 4
    assert no_bias.count_params() == 6 * 12 + 7 * 12 + 9 * 6 + 6 * 5


@VECTORIZED
def test_without_head_removes_exactly_that_head(vectorized):
    rng = np.random.default_rng(9)
    mha = random_mha(rng, vectorized=vectorized)
    x = rng.normal(size=(2, 4, 6))
    mask = padding_mask([4, 2], 4)
    _, w_full = mha(x, x, attention_mask=mask, return_attention_scores=True)
    heads = heads_by_hand(mha, x, x, mask=mask)
    kernel_before = mha.output_kernel.copy()
    for h in range(mha.num_heads):
        pruned = mha.without_head(h)
        assert pruned.vectorized == vectorized
        np.testing.assert_array_equal(pruned.output_kernel[h], 0.0)
        out, w = pruned(x, x, attention_mask=mask, return_attention_scores=True)
        others = sum(out_g @ mha.output_kernel[g] for g, (out_g, _) in enumerate(heads) if g != h)
        np.testing.assert_allclose(out, others + mha.output_bias, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(w, w_full)  # the weights are untouched
    np.testing.assert_array_equal(mha.output_kernel, kernel_before)  # the original is kept
    empty = mha.without_head(0).without_head(1).without_head(2)
    np.testing.assert_allclose(empty(x, x), np.broadcast_to(mha.output_bias, (2, 4, 5)))


@pytest.mark.parametrize("head", [3, 4, -1])
def test_without_head_rejects_out_of_range(head):
    mha = random_mha(np.random.default_rng(10), num_heads=3)
    with pytest.raises(ValueError, match=rf"head must be an integer in \[0, 2\]; got {head}"):
        mha.without_head(head)


# --- from_keras without Keras: objects that look like a built layer ------------------------------

class FakeVariable:
    def __init__(self, path, value):
        self.path, self.name, self.value = path, path.rsplit("/", 1)[-1], value

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value, dtype=dtype)


class FakeLayer:
    def __init__(self, mha, names=("query", "key", "value", "attention_output")):
        self.weights = [FakeVariable(f"mha/{name}/{kind}", w)
                        for name, pair in zip(names, zip(mha.get_weights()[::2],
                                                         mha.get_weights()[1::2]))
                        for kind, w in zip(("kernel", "bias"), pair)]


def test_from_keras_reads_weights_by_path():
    mha = random_mha(np.random.default_rng(11))
    copy = MultiHeadAttention.from_keras(FakeLayer(mha), vectorized=False)
    assert copy.vectorized is False
    for a, b in zip(copy.get_weights(), mha.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_from_keras_rejects_an_object_without_weights():
    names = r"\['query_kernel', 'key_kernel', 'value_kernel', 'output_kernel'\]"
    with pytest.raises(ValueError, match=rf"the layer has no weights {names}.*got \[\]"):
        MultiHeadAttention.from_keras(object())


def test_from_keras_rejects_a_layer_with_wrongly_named_weights():
    layer = FakeLayer(random_mha(np.random.default_rng(12)),
                      names=("query", "key", "value", "output_dense"))
    match = r"no weights \['output_kernel'\].*mha/output_dense/kernel"
    with pytest.raises(ValueError, match=match):
        MultiHeadAttention.from_keras(layer)


# --- MultiHeadAttention: bad input ---------------------------------------------------------------

def good_weights():
    """Valid weights: d_query 6, d_key 5, d_value 4, 2 heads, key_dim 3, value_dim 4, d_model 6."""
    return dict(query_kernel=np.ones((6, 2, 3)), key_kernel=np.ones((5, 2, 3)),
                value_kernel=np.ones((4, 2, 4)), output_kernel=np.ones((2, 4, 6)),
                query_bias=np.ones((2, 3)), key_bias=np.ones((2, 3)),
                value_bias=np.ones((2, 4)), output_bias=np.ones(6))


FIT = r"which does not fit num_heads=2, key_dim=3, value_dim=4"


@pytest.mark.parametrize("name, value, match", [
    ("query_kernel", np.ones((6, 6)), r"query_kernel must be 3-D; got shape \(6, 6\)"),
    ("key_kernel", np.ones((5, 2, 3, 1)), r"key_kernel must be 3-D; got shape \(5, 2, 3, 1\)"),
    ("value_kernel", np.ones(4), r"value_kernel must be 3-D; got shape \(4,\)"),
    ("output_kernel", np.ones((8, 6)), r"output_kernel must be 3-D; got shape \(8, 6\)"),
    ("key_kernel", np.ones((5, 3, 3)), rf"key_kernel has shape \(5, 3, 3\), {FIT}"),
    ("key_kernel", np.ones((5, 2, 4)), rf"key_kernel has shape \(5, 2, 4\), {FIT}"),
    ("value_kernel", np.ones((4, 3, 4)), rf"value_kernel has shape \(4, 3, 4\), {FIT}"),
    ("output_kernel", np.ones((3, 4, 6)), rf"output_kernel has shape \(3, 4, 6\), {FIT}"),
    ("output_kernel", np.ones((2, 3, 6)), rf"output_kernel has shape \(2, 3, 6\), {FIT}"),
    ("query_bias", np.ones((3, 2)), r"query_bias must have shape \(2, 3\); got \(3, 2\)"),
    ("key_bias", np.ones(6), r"key_bias must have shape \(2, 3\); got \(6,\)"),
    ("value_bias", np.ones((2, 3)), r"value_bias must have shape \(2, 4\); got \(2, 3\)"),
    ("output_bias", np.ones((1, 6)), r"output_bias must have shape \(6,\); got \(1, 6\)"),
])
def test_mha_init_rejects_bad_weights(name, value, match):
    weights = good_weights()
    MultiHeadAttention(**weights)  # the unchanged weights are fine
    weights[name] = value
    with pytest.raises(ValueError, match=match):
        MultiHeadAttention(**weights)


@pytest.mark.parametrize("name, value, match", [
    ("query_kernel", np.full((6, 2, 3), "a"), r"query_kernel must be an array of real numbers"),
    ("value_bias", np.ones((2, 4), dtype=bool), r"value_bias must be an array of real.*bool"),
    ("output_kernel", np.ones((2, 4, 6), dtype=complex), r"output_kernel .*complex128"),
])
def test_mha_init_rejects_weights_of_the_wrong_type(name, value, match):
    weights = good_weights()
    weights[name] = value
    with pytest.raises(TypeError, match=match):
        MultiHeadAttention(**weights)


Q, K, V = np.ones((2, 3, 6)), np.ones((2, 5, 5)), np.ones((2, 5, 4))


def with_nan(a):
    a = a.copy()
    a[1, 0, 0] = np.nan
    return a


@pytest.mark.parametrize("query, key, value, match", [
    (np.ones(6), K, V, r"query must have shape \(\.\.\., length, features\) \(at least 2 "
                       r"axes\); got shape \(6,\)"),
    (Q, np.ones(5), V, r"key must have shape \(\.\.\., length, features\).*got shape \(5,\)"),
    (Q, K, np.ones(4), r"value must have shape \(\.\.\., length, features\).*got shape \(4,\)"),
    (np.ones((2, 3, 5)), K, V, r"query has 5 features but query_kernel \(6, 2, 3\) expects 6"),
    (Q, np.ones((2, 5, 6)), V, r"key has 6 features but key_kernel \(5, 2, 3\) expects 5"),
    (Q, K, np.ones((2, 5, 5)), r"value has 5 features but value_kernel \(4, 2, 4\) expects 4"),
    (Q, K, np.ones((2, 4, 4)), r"key and value must have the same length n_k \(axis -2\); "
                               r"got key 5, value 4"),
    (np.ones((3, 3, 6)), K, V, r"the leading \(batch\) axes do not broadcast: query \(3,\), "
                               r"key \(2,\), value \(2,\)"),
    (with_nan(Q), K, V, r"query contains NaN or infinity \(shape \(2, 3, 6\)\)"),
    (Q, with_nan(K), V, r"key contains NaN or infinity \(shape \(2, 5, 5\)\)"),
    (Q, K, np.full((2, 5, 4), np.inf), r"value contains NaN or infinity \(shape \(2, 5, 4\)\)"),
])
@VECTORIZED
def test_mha_call_rejects_bad_inputs(query, key, value, match, vectorized):
    mha = MultiHeadAttention(**good_weights(), vectorized=vectorized)
    assert mha(Q, V, key=K).shape == (2, 3, 6)
    with pytest.raises(ValueError, match=match):
        mha(query, value, key=key)


@pytest.mark.parametrize("mask, match", [
    (np.ones((2, 5), dtype=bool),
     r"mask of shape \(2, 5\) does not broadcast to the scores' shape \(\.\.\., n_q, n_k\) = "
     r"\(2, 3, 5\)"),
    (np.ones((4, 3, 5), dtype=bool), r"mask of shape \(4, 3, 5\) does not broadcast.*\(2, 3, 5\)"),
    (np.ones((1, 2, 3, 5), dtype=bool), r"mask of shape \(1, 2, 3, 5\) does not broadcast"),
])
@VECTORIZED
def test_mha_call_rejects_bad_masks(mask, match, vectorized):
    mha = MultiHeadAttention(**good_weights(), vectorized=vectorized)
    for causal in (False, True):
        with pytest.raises(ValueError, match=match):
            mha(Q, V, key=K, attention_mask=mask, use_causal_mask=causal)


@pytest.mark.parametrize("mask, match", [
    (np.ones((2, 3, 5)), r"mask must be boolean \(True = may attend, False = blocked\); got "
                         r"dtype float64"),
    (np.ones((3, 5), dtype=int), r"mask must be boolean .*got dtype int64"),
])
@VECTORIZED
def test_mha_call_rejects_masks_that_are_not_boolean(mask, match, vectorized):
    mha = MultiHeadAttention(**good_weights(), vectorized=vectorized)
    with pytest.raises(TypeError, match=match):
        mha(Q, V, key=K, attention_mask=mask)


@VECTORIZED
def test_mha_call_rejects_input_of_the_wrong_type(vectorized):
    mha = MultiHeadAttention(**good_weights(), vectorized=vectorized)
    with pytest.raises(TypeError, match="query must be an array of real numbers; got dtype bool"):
        mha(Q.astype(bool), V, key=K)


# --- additive attention ----------------------------------------------------------------------

def test_additive_attention_known_values_identity_projections():
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    out, w = additive_attention(q, k, v, np.eye(2), np.eye(2), np.array([1.0, 1.0]))
    # tanh(q + k_1) = tanh([2, 0]); tanh(q + k_2) = tanh([1, 1]).
    s1, s2 = math.tanh(2.0), 2 * math.tanh(1.0)
    w1 = math.exp(s1) / (math.exp(s1) + math.exp(s2))
    np.testing.assert_allclose(w, [[w1, 1 - w1]], rtol=1e-12)
    np.testing.assert_allclose(out, [[w1 * 1 + (1 - w1) * 3, w1 * 2 + (1 - w1) * 4]], rtol=1e-12)
    np.testing.assert_allclose(w.round(4), [[0.3637, 0.6363]])


def test_additive_attention_known_values_rectangular_projections():
    """d_q = 1, d_key = 3, units = 2: checks that query @ w_query and key @ w_key are used."""
    q = np.array([[1.0]])
    k = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    v = np.array([[10.0], [20.0]])
    w_query = np.array([[0.5, -0.5]])                         # (1, 2)
    w_key = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 2.0]])    # (3, 2)
    w_score = np.array([1.0, -2.0])
    out, w = additive_attention(q, k, v, w_query, w_key, w_score)
    # q W_q = [0.5, -0.5]; k_1 W_k = [1, 0]; k_2 W_k = [0, 2].
    s1 = math.tanh(1.5) - 2 * math.tanh(-0.5)
    s2 = math.tanh(0.5) - 2 * math.tanh(1.5)
    w1 = 1 / (1 + math.exp(s2 - s1))
    np.testing.assert_allclose(w, [[w1, 1 - w1]], rtol=1e-12)
    np.testing.assert_allclose(out, [[10 * w1 + 20 * (1 - w1)]], rtol=1e-12)


def test_additive_attention_shapes_rows_and_batch_broadcast():
    rng = np.random.default_rng(20)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(5, 6)), rng.normal(size=(5, 7))
    w_q, w_k, w_s = rng.normal(size=(4, 8)), rng.normal(size=(6, 8)), rng.normal(size=8)
    out, w = additive_attention(q, k, v, w_q, w_k, w_s)
    assert out.shape == (2, 3, 7) and w.shape == (2, 3, 5)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    assert np.all(w >= 0)
    out_1, w_1 = additive_attention(q[1], k, v, w_q, w_k, w_s)
    np.testing.assert_allclose(out[1], out_1)
    np.testing.assert_allclose(w[1], w_1)


def test_additive_attention_mask_blocks_keys_and_empty_row_is_zero():
    rng = np.random.default_rng(21)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    eye, w_s = np.eye(4), rng.normal(size=4)
    out, w = additive_attention(q, k, v, eye, eye, w_s, mask=padding_mask([2, 0], 5))
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    assert np.all(w[0, :, 2:] == 0)
    np.testing.assert_allclose(w[0].sum(-1), 1.0)
    np.testing.assert_array_equal(w[1], 0.0)   # every key masked: zeros, not NaN
    np.testing.assert_array_equal(out[1], 0.0)
    # The masked keys do not matter at all.
    expected, _ = additive_attention(q[0], k[0, :2], v[0, :2], eye, eye, w_s)
    np.testing.assert_allclose(out[0], expected)


A_Q, A_K, A_V = np.ones((1, 2)), np.ones((3, 2)), np.ones((3, 4))
A_WQ, A_WK, A_WS = np.ones((2, 5)), np.ones((2, 5)), np.ones(5)


@pytest.mark.parametrize("args, match", [
    ((np.ones(2), A_K, A_V, A_WQ, A_WK, A_WS), r"query must have at least 2 axes; got shape"),
    ((A_Q, np.ones(2), A_V, A_WQ, A_WK, A_WS), r"key must have at least 2 axes; got shape"),
    ((A_Q, A_K, np.ones(4), A_WQ, A_WK, A_WS), r"value must have at least 2 axes; got shape \(4,"),
    ((np.full((1, 2), np.nan), A_K, A_V, A_WQ, A_WK, A_WS),
     r"query contains NaN or infinity \(shape \(1, 2\)\)"),
    ((A_Q, np.full((3, 2), -np.inf), A_V, A_WQ, A_WK, A_WS),
     r"key contains NaN or infinity \(shape \(3, 2\)\)"),
    ((A_Q, A_K, np.full((3, 4), np.nan), A_WQ, A_WK, A_WS),
     r"value contains NaN or infinity \(shape \(3, 4\)\)"),
    ((A_Q, A_K, A_V, np.ones(2), A_WK, A_WS),
     r"w_query must have shape \(d_q, units\) \(2 axes\); got shape \(2,\)"),
    ((A_Q, A_K, A_V, A_WQ, np.ones((2, 5, 1)), A_WS),
     r"w_key must have shape \(d_key, units\) \(2 axes\); got shape \(2, 5, 1\)"),
    ((A_Q, A_K, A_V, A_WQ, A_WK, np.ones((5, 1))),
     r"w_score must have shape \(units,\) \(1 axis\); got shape \(5, 1\)"),
    ((A_Q, A_K, A_V, np.ones((3, 5)), A_WK, A_WS),
     r"query and w_query must have the same feature size d_q; got query 2, w_query 3"),
    ((A_Q, A_K, A_V, A_WQ, np.ones((4, 5)), A_WS),
     r"key and w_key must have the same feature size d_key; got key 2, w_key 4"),
    ((A_Q, A_K, A_V, A_WQ, np.ones((2, 6)), A_WS),
     r"w_query and w_key and w_score must have the same number of units; got w_query 5, "
     r"w_key 6, w_score 5"),
    ((A_Q, A_K, A_V, A_WQ, A_WK, np.ones(4)), r"same number of units; got .* w_score 4"),
    ((A_Q, A_K, np.ones((2, 4)), A_WQ, A_WK, A_WS),
     r"key and value must have the same length n_k \(axis -2\); got key 3, value 2"),
    ((np.ones((2, 1, 2)), np.ones((3, 3, 2)), np.ones((3, 3, 4)), A_WQ, A_WK, A_WS),
     r"the leading \(batch\) axes do not broadcast: query \(2,\), key \(3,\), value \(3,\)"),
])
def test_additive_attention_rejects_bad_input(args, match):
    additive_attention(A_Q, A_K, A_V, A_WQ, A_WK, A_WS)  # the good arguments work
    with pytest.raises(ValueError, match=match):
        additive_attention(*args)


@pytest.mark.parametrize("args, match", [
    ((A_Q.astype(bool), A_K, A_V, A_WQ, A_WK, A_WS), r"query must be an array of real.*bool"),
    ((A_Q, A_K, A_V, A_WQ, A_WK, A_WS.astype(complex)), r"w_score must be .*complex128"),
])
def test_additive_attention_rejects_input_of_the_wrong_type(args, match):
    with pytest.raises(TypeError, match=match):
        additive_attention(*args)


def test_additive_attention_keeps_float32():
    args = (a.astype(np.float32) for a in (A_Q, A_K, A_V, A_WQ, A_WK, A_WS))
    output, weights = additive_attention(*args)
    assert output.dtype == weights.dtype == np.float32


@pytest.mark.parametrize("mask", [np.ones((1, 3)), np.ones((1, 3), dtype=np.int8)])
def test_additive_attention_rejects_masks_that_are_not_boolean(mask):
    with pytest.raises(TypeError, match=f"mask must be boolean .*got dtype {mask.dtype}"):
        additive_attention(A_Q, A_K, A_V, A_WQ, A_WK, A_WS, mask=mask)


@pytest.mark.parametrize("mask, match", [
    (np.ones((1, 2), dtype=bool),
     r"mask of shape \(1, 2\) does not broadcast to the scores' shape .* = \(1, 3\)"),
    (np.ones((2, 1, 3), dtype=bool), r"mask of shape \(2, 1, 3\) does not broadcast.*\(1, 3\)"),
])
def test_additive_attention_rejects_bad_masks(mask, match):
    with pytest.raises(ValueError, match=match):
        additive_attention(A_Q, A_K, A_V, A_WQ, A_WK, A_WS, mask=mask)


def test_additive_attention_rejects_non_finite_projections():
    q = np.ones((2, 3))
    with pytest.raises(ValueError, match="w_score contains NaN"):
        additive_attention(q, q, q, np.eye(3), np.eye(3), np.array([1.0, np.nan, 0.0]))


@pytest.mark.parametrize("head", [1.5, True, "0"])
def test_without_head_rejects_non_integer_heads(head):
    mha = MultiHeadAttention.random(6, 2, 3, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="head must be an integer; got"):
        mha.without_head(head)

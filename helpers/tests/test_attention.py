"""Unit tests of helpers.attention: known values, masks, broadcasting, bad input."""

import math
import subprocess
import sys

import numpy as np
import pytest

from helpers.attention import (
    causal_mask,
    grouped_query_attention,
    merge_heads,
    padding_mask,
    scaled_dot_product_attention,
    sliding_window_mask,
    softmax,
    split_heads,
)

Q_CAT = np.array([[1.0, 0.0], [0.0, 1.0]])
K_CAT = np.array([[1.0, 1.0], [0.0, 1.0]])
V_CAT = np.array([[1.0, 2.0], [9.0, 8.0]])


def naive_attention(q, k, v):
    """Attention written from the formula with Python loops, as an independent reference."""
    out = np.zeros((len(q), v.shape[1]))
    for i, qi in enumerate(q):
        scores = [sum(a * b for a, b in zip(qi, kj)) / math.sqrt(len(qi)) for kj in k]
        exps = [math.exp(s) for s in scores]
        out[i] = sum(e / sum(exps) * vj for e, vj in zip(exps, v))
    return out


# --- softmax -------------------------------------------------------------------------------

def test_softmax_known_values():
    w = 1 / (1 + math.exp(-1.0))
    np.testing.assert_allclose(softmax([1.0, 0.0]), [w, 1 - w])
    np.testing.assert_allclose(softmax([[0.0, 0.0, 0.0]]), [[1 / 3] * 3])


def test_softmax_is_stable_for_large_inputs():
    out = softmax(np.array([1000.0, 1001.0, 1002.0]))
    np.testing.assert_allclose(out, softmax(np.array([0.0, 1.0, 2.0])))
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_sums_to_one_along_axis(axis):
    x = np.random.default_rng(0).normal(size=(4, 5)) * 10
    np.testing.assert_allclose(softmax(x, axis=axis).sum(axis=axis), 1.0)


def test_softmax_neg_inf_gets_zero_and_all_neg_inf_row_gives_zeros():
    out = softmax(np.array([[0.0, -np.inf], [-np.inf, -np.inf]]))
    np.testing.assert_array_equal(out, [[1.0, 0.0], [0.0, 0.0]])


def test_softmax_keeps_float32():
    assert softmax(np.ones(3, dtype=np.float32)).dtype == np.float32


@pytest.mark.parametrize("bad, error, match", [
    (np.array([np.nan, 1.0]), ValueError, "NaN"),
    (np.array([np.inf, 1.0]), ValueError, r"\+inf"),
    (np.float64(1.0), ValueError, r"x must have at least 1 axis; got shape \(\)"),
    (np.array(["a", "b"]), TypeError, "x must be an array of real numbers; got dtype <U1"),
])
def test_softmax_rejects_bad_input(bad, error, match):
    with pytest.raises(error, match=match):
        softmax(bad)


def test_softmax_rejects_axis_out_of_range():
    with pytest.raises(ValueError, match=r"axis must be an integer in \[-1, 0\]; got 2"):
        softmax(np.zeros(3), axis=2)
    with pytest.raises(TypeError, match=r"axis must be an integer; got 1.0 \(float\)"):
        softmax(np.zeros((2, 3)), axis=1.0)


# --- scaled dot-product attention -----------------------------------------------------------

def test_two_token_worked_example():
    output, weights = scaled_dot_product_attention(Q_CAT, K_CAT, V_CAT)
    w = 1 / (1 + math.exp(-1 / math.sqrt(2)))  # softmax([1/sqrt 2, 0])[0]
    np.testing.assert_allclose(weights, [[w, 1 - w], [0.5, 0.5]])
    np.testing.assert_allclose(output, [[9 - 8 * w, 8 - 6 * w], [5.0, 5.0]])
    np.testing.assert_allclose(weights.round(3), [[0.670, 0.330], [0.5, 0.5]])
    np.testing.assert_allclose(output.round(3), [[3.642, 3.981], [5.0, 5.0]])


def test_matches_independent_loop_reference():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 5))
    output, weights = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(output, naive_attention(q, k, v), rtol=1e-12)
    assert weights.shape == (4, 6) and output.shape == (4, 5)


def test_rows_sum_to_one_and_are_non_negative():
    rng = np.random.default_rng(2)
    _, weights = scaled_dot_product_attention(*(rng.normal(size=(2, 7, 4)) for _ in range(3)))
    np.testing.assert_allclose(weights.sum(-1), 1.0)
    assert np.all(weights >= 0)


def test_batch_and_heads_broadcast():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(2, 3, 5, 4))        # (batch, heads, n_q, d_k)
    k = rng.normal(size=(2, 1, 6, 4))        # one key set shared by all heads
    v = rng.normal(size=(6, 8))              # one value set shared by everything
    output, weights = scaled_dot_product_attention(q, k, v)
    assert output.shape == (2, 3, 5, 8) and weights.shape == (2, 3, 5, 6)
    expected, _ = scaled_dot_product_attention(q[1, 2], k[1, 0], v)
    np.testing.assert_allclose(output[1, 2], expected)


def test_float32_in_float32_out():
    x = np.ones((3, 2), dtype=np.float32)
    output, weights = scaled_dot_product_attention(x, x, x)
    assert output.dtype == np.float32 and weights.dtype == np.float32


def test_integer_input_gives_float64():
    output, _ = scaled_dot_product_attention([[1, 0]], [[1, 0]], [[2, 3]])
    assert output.dtype == np.float64
    np.testing.assert_array_equal(output, [[2.0, 3.0]])


# --- masks ----------------------------------------------------------------------------------

def test_causal_mask_values():
    np.testing.assert_array_equal(causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    assert causal_mask(3).dtype == bool


def test_causal_mask_blocks_the_future():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(5, 3))
    output, weights = scaled_dot_product_attention(x, x, x, mask=causal_mask(5))
    assert np.all(np.triu(weights, k=1) == 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0)
    np.testing.assert_allclose(output[0], x[0])  # the first token sees only itself
    # Changing a later token must not change earlier outputs.
    x2 = x.copy()
    x2[4] += 10.0
    output2, _ = scaled_dot_product_attention(x2, x2, x2, mask=causal_mask(5))
    np.testing.assert_allclose(output2[:4], output[:4])


def test_padding_mask_values_and_shape():
    mask = padding_mask([3, 1], 4)
    assert mask.shape == (2, 1, 4) and mask.dtype == bool
    np.testing.assert_array_equal(mask[:, 0], [[1, 1, 1, 0], [1, 0, 0, 0]])


def test_padding_mask_ignores_padded_keys():
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    output, weights = scaled_dot_product_attention(q, k, v, mask=padding_mask([5, 2], 5))
    assert np.all(weights[1, :, 2:] == 0)
    expected, _ = scaled_dot_product_attention(q[1], k[1, :2], v[1, :2])
    np.testing.assert_allclose(output[1], expected)
    # Whatever sits in the padding does not matter.
    v2 = v.copy()
    v2[1, 2:] = 1e6
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v2, padding_mask([5, 2], 5))[0],
                               output)


def test_masks_combine_with_and():
    mask = causal_mask(4)[None] & padding_mask([4, 2], 4)
    x = np.random.default_rng(6).normal(size=(2, 4, 3))
    _, weights = scaled_dot_product_attention(x, x, x, mask=mask)
    assert np.all(weights[1, :, 2:] == 0) and np.all(np.triu(weights[0], 1) == 0)


def test_fully_masked_row_gives_zeros_not_nan():
    x = np.random.default_rng(7).normal(size=(1, 3, 2))
    output, weights = scaled_dot_product_attention(x, x, x, mask=padding_mask([0], 3))
    assert np.all(np.isfinite(output)) and np.all(np.isfinite(weights))
    np.testing.assert_array_equal(weights, 0.0)
    np.testing.assert_array_equal(output, 0.0)


def test_mask_accepts_large_scores_without_overflow():
    q = np.array([[1000.0, 0.0]])
    k = np.array([[1000.0, 0.0], [-1000.0, 0.0]])
    _, weights = scaled_dot_product_attention(q, k, k, mask=np.array([[False, True]]))
    np.testing.assert_array_equal(weights, [[0.0, 1.0]])


# --- bad input ------------------------------------------------------------------------------

GOOD = np.ones((3, 4))


@pytest.mark.parametrize("q, k, v, match", [
    (np.ones(4), GOOD, GOOD,
     r"query must have shape \(\.\.\., n_q, d_k\) \(at least 2 axes\); got shape \(4,\)"),
    (GOOD, np.ones(4), GOOD, r"key must have shape \(\.\.\., n_k, d_k\)"),
    (GOOD, GOOD, np.ones(3), r"value must have shape \(\.\.\., n_k, d_v\)"),
    (np.ones((3, 5)), GOOD, GOOD, r"query and key must have the same feature size d_k "
                                  r"\(last axis\); got query 5, key 4"),
    (GOOD, GOOD, np.ones((2, 4)), r"key and value must have the same length n_k.*key 3, value 2"),
    (np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4)),
     r"do not broadcast: query \(2,\), key \(3,\), value \(3,\)"),
    (np.full((3, 4), np.nan), GOOD, GOOD, r"query contains NaN"),
    (GOOD, GOOD, np.full((3, 4), np.inf), r"value contains NaN or infinity"),
])
def test_bad_shapes_and_values_raise(q, k, v, match):
    with pytest.raises(ValueError, match=match):
        scaled_dot_product_attention(q, k, v)


def test_complex_input_is_a_type_error():
    with pytest.raises(TypeError, match="query must be an array of real numbers; got dtype "
                                        "complex128"):
        scaled_dot_product_attention(GOOD.astype(complex), GOOD, GOOD)


def test_non_boolean_mask_raises():
    with pytest.raises(TypeError, match=r"mask must be boolean.*float64"):
        scaled_dot_product_attention(GOOD, GOOD, GOOD, mask=np.ones((3, 3)))


def test_non_broadcastable_mask_raises():
    with pytest.raises(ValueError, match=r"mask of shape \(2, 2\).*\(3, 3\)"):
        scaled_dot_product_attention(GOOD, GOOD, GOOD, mask=np.ones((2, 2), dtype=bool))


def test_mask_that_would_grow_the_output_raises():
    with pytest.raises(ValueError, match=r"mask of shape \(5, 3, 3\)"):
        scaled_dot_product_attention(GOOD, GOOD, GOOD, mask=np.ones((5, 3, 3), dtype=bool))


@pytest.mark.parametrize("n, error", [(0, ValueError), (-1, ValueError), (2.0, TypeError),
                                      (True, TypeError), ("3", TypeError)])
def test_causal_mask_rejects_bad_n(n, error):
    with pytest.raises(error, match="n must be an integer"):
        causal_mask(n)


@pytest.mark.parametrize("lengths, n_k, error, match", [
    ([1, 5], 4, ValueError,
     r"every entry of lengths must lie in \[0, 4\]; got entries from 1 to 5"),
    ([-1], 4, ValueError, r"lengths must lie in \[0, 4\]"),
    ([[1, 2]], 4, ValueError, r"lengths must have 1 axis; got shape \(1, 2\)"),
    ([1.5], 4, TypeError, "lengths must be an array of integers; got dtype float64"),
    ([1], 0, ValueError, r"n_k must be an integer in \[1, inf\); got 0"),
])
def test_padding_mask_rejects_bad_input(lengths, n_k, error, match):
    with pytest.raises(error, match=match):
        padding_mask(lengths, n_k)


def test_attention_module_does_not_import_tensorflow():
    code = "import sys, helpers.attention; print('tensorflow' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


def test_causal_mask_with_more_keys_than_queries():
    np.testing.assert_array_equal(causal_mask(2, 3), [[1, 0, 0], [1, 1, 0]])


def test_causal_mask_rejects_bad_n_k():
    with pytest.raises(ValueError, match=r"n_k must be an integer in \[1, inf\); got 0"):
        causal_mask(3, 0)


# --- sliding windows and grouped-query attention ----------------------------------------

def test_sliding_window_mask_is_a_band_on_and_below_the_diagonal():
    mask = sliding_window_mask(6, 3)
    for i in range(6):
        assert np.flatnonzero(mask[i]).tolist() == list(range(max(0, i - 2), i + 1))


def test_sliding_window_mask_as_wide_as_the_sequence_is_causal():
    assert np.array_equal(sliding_window_mask(5, 5), causal_mask(5))
    assert np.array_equal(sliding_window_mask(5, 50), causal_mask(5))
    assert np.array_equal(sliding_window_mask(4, 1), np.eye(4, dtype=bool))


@pytest.mark.parametrize("n, window, error", [(0, 2, ValueError), (3, 0, ValueError),
                                              (3, 1.5, TypeError)])
def test_sliding_window_mask_rejects_bad_sizes(n, window, error):
    with pytest.raises(error, match="n|window"):
        sliding_window_mask(n, window)


@pytest.mark.parametrize("num_kv_heads", [1, 2, 3, 6])
def test_grouped_query_head_h_reads_kv_head_h_over_group(num_kv_heads):
    rng = np.random.default_rng(num_kv_heads)
    q = rng.normal(size=(2, 6, 4, 5))
    k = rng.normal(size=(2, num_kv_heads, 7, 5))
    v = rng.normal(size=(2, num_kv_heads, 7, 3))
    out, weights = grouped_query_attention(q, k, v)
    group = 6 // num_kv_heads
    for h in range(6):
        expected = [naive_attention(q[b, h], k[b, h // group], v[b, h // group])
                    for b in range(2)]
        assert np.allclose(out[:, h], expected)
    assert out.shape == (2, 6, 4, 3) and weights.shape == (2, 6, 4, 7)


def test_grouped_query_with_as_many_kv_heads_is_multi_head_attention():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 4, 5, 8))
    mask = causal_mask(5)
    out, weights = grouped_query_attention(q, k, v, mask)
    ref_out, ref_weights = scaled_dot_product_attention(q, k, v, mask)
    assert np.allclose(out, ref_out) and np.allclose(weights, ref_weights)


def test_grouped_query_mask_blocks_keys_without_nan():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(4, 5, 2)), rng.normal(size=(1, 5, 2)), rng.normal(size=(1, 5, 2))
    out, weights = grouped_query_attention(q, k, v, sliding_window_mask(5, 2))
    assert np.all(weights[:, ~sliding_window_mask(5, 2)] == 0)
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("q_shape, k_shape, v_shape, match", [
    ((4, 3, 8), (3, 3, 8), (3, 3, 8), "must divide num_query_heads=4"),
    ((4, 3, 8), (2, 3, 6), (2, 3, 8), "head_dim"),
    ((4, 3, 8), (2, 3, 8), (1, 3, 8), "num_kv_heads"),
    ((4, 3, 8), (2, 3, 8), (2, 5, 8), "n_k"),
    ((3, 8), (3, 8), (3, 8), "at least 3 axes|rank"),
])
def test_grouped_query_rejects_shapes_that_do_not_fit(q_shape, k_shape, v_shape, match):
    with pytest.raises(ValueError, match=match):
        grouped_query_attention(np.ones(q_shape), np.ones(k_shape), np.ones(v_shape))


def test_grouped_query_rejects_a_mask_that_does_not_broadcast():
    with pytest.raises(ValueError, match="mask"):
        grouped_query_attention(np.ones((4, 3, 2)), np.ones((2, 3, 2)), np.ones((2, 3, 2)),
                                np.ones((2, 2), bool))


# --- the shared steps of the attention layers: bias, scale, head split and merge ---------------

def test_bias_is_added_to_the_scaled_scores_before_the_mask():
    rng = np.random.default_rng(3)
    q, (k, v) = rng.normal(size=(4, 2)), rng.normal(size=(2, 5, 2))
    bias = rng.normal(size=(4, 5))
    out, w = scaled_dot_product_attention(q, k, v, causal_mask(4, 5), bias=bias)
    scores = np.where(causal_mask(4, 5), q @ k.T / np.sqrt(2) + bias, -np.inf)
    expected = np.exp(scores - scores.max(axis=-1, keepdims=True))
    expected /= expected.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(w, expected, rtol=0, atol=1e-14)
    np.testing.assert_allclose(out, expected @ v, rtol=0, atol=1e-14)
    # a bias that is the same for every key of a query changes nothing (softmax shift)
    same = scaled_dot_product_attention(q, k, v, bias=np.arange(4.0)[:, None])[1]
    np.testing.assert_allclose(same, scaled_dot_product_attention(q, k, v)[1], atol=1e-14)


def test_scale_replaces_one_over_sqrt_d_k():
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(3, 2, 6, 4))
    default = scaled_dot_product_attention(q, k, v)[1]
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, scale=0.5)[1], default,
                               rtol=0, atol=1e-14)                   # 1 / sqrt(4)
    sharp = scaled_dot_product_attention(q, k, v, scale=1.0)[1]
    expected = softmax(q @ np.swapaxes(k, -1, -2))
    np.testing.assert_allclose(sharp, expected, rtol=0, atol=1e-14)
    assert not np.allclose(sharp, default)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"scale": 0.0}, ValueError, r"scale must be a finite number in \(0, inf\); got 0"),
    ({"scale": "2"}, TypeError, "scale must be a real number"),
    ({"bias": np.zeros((3, 3))}, ValueError, r"bias of shape \(3, 3\) does not broadcast"),
    ({"bias": np.full((2, 6), np.nan)}, ValueError, "bias contains NaN"),
])
def test_bias_and_scale_reject_bad_input(kwargs, error, match):
    q, k, v = np.ones((3, 2, 6, 4))
    with pytest.raises(error, match=match):
        scaled_dot_product_attention(q[:, :2], k, v, **kwargs)


def test_grouped_query_passes_bias_and_scale_to_every_head():
    rng = np.random.default_rng(5)
    q = rng.normal(size=(4, 3, 2))
    k, v = rng.normal(size=(2, 2, 5, 2))
    bias = rng.normal(size=(4, 3, 5))
    out, w = grouped_query_attention(q, k, v, bias=bias, scale=0.3)
    for h in range(4):
        out_h, w_h = scaled_dot_product_attention(q[h], k[h // 2], v[h // 2], bias=bias[h],
                                                  scale=0.3)
        np.testing.assert_allclose(w[h], w_h, rtol=0, atol=1e-15)
        np.testing.assert_allclose(out[h], out_h, rtol=0, atol=1e-15)


def test_split_heads_takes_consecutive_columns_and_merge_heads_undoes_it():
    x = np.arange(2 * 3 * 6, dtype=float).reshape(2, 3, 6)     # (batch, n, heads*size)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 3, 2)                          # (batch, heads, n, size)
    for h in range(3):
        np.testing.assert_array_equal(heads[:, h], x[..., 2 * h:2 * h + 2])
    np.testing.assert_array_equal(merge_heads(heads), x)
    assert split_heads(x.astype(np.float32), 2).dtype == np.float32


@pytest.mark.parametrize("call, error, match", [
    (lambda: split_heads(np.ones((3, 6)), 4), ValueError, "num_heads=4 must divide x's last"),
    (lambda: split_heads(np.ones((3, 6)), 0), ValueError, "num_heads must be an integer in"),
    (lambda: split_heads(np.ones(6), 2), ValueError, r"\(at least 2 axes\); got shape \(6,\)"),
    (lambda: merge_heads(np.ones((2, 3))), ValueError, r"at least 3 axes\); got shape \(2, 3\)"),
    (lambda: merge_heads(np.ones((2, 3, 1), bool)), TypeError, "x must be an array of real"),
])
def test_split_and_merge_heads_reject_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()

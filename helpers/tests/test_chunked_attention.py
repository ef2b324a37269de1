"""Unit tests of helpers.attention.chunked_attention: same output as the full computation,
masks, uneven chunks, memory that does not grow with n_q * n_k, and bad input."""

import tracemalloc

import numpy as np
import pytest

from helpers.attention import (
    causal_mask,
    chunked_attention,
    padding_mask,
    scaled_dot_product_attention,
)

CHUNK_SIZES = [1, 3, 7, 11, 12, 100]  # 11 = n_k, 12 and 100 > n_k


def random_qkv(shape_q, shape_k, d_v, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=shape_q).astype(dtype)
    k = rng.normal(size=shape_k).astype(dtype)
    v = rng.normal(size=(*shape_k[:-1], d_v)).astype(dtype)
    return q, k, v


def reference(q, k, v, mask=None):
    return scaled_dot_product_attention(q, k, v, mask=mask)[0]


def assert_same(out, ref):
    assert out.shape == ref.shape and out.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


# --- equality with scaled_dot_product_attention --------------------------------------------

@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
@pytest.mark.parametrize("shape_q, shape_k, d_v", [
    ((5, 4), (11, 4), 3),               # no batch, cross attention
    ((2, 7, 8), (2, 11, 8), 5),         # batch
    ((2, 3, 7, 8), (2, 3, 11, 8), 4),   # batch and heads
    ((2, 1, 7, 8), (1, 3, 11, 8), 4),   # leading axes that broadcast
])
def test_equals_full_attention(shape_q, shape_k, d_v, chunk_size):
    q, k, v = random_qkv(shape_q, shape_k, d_v)
    assert_same(chunked_attention(q, k, v, chunk_size), reference(q, k, v))


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_padding_mask(chunk_size):
    q, k, v = random_qkv((3, 7, 8), (3, 11, 8), 4)
    mask = padding_mask([11, 5, 1], 11)  # (3, 1, 11): sliced per chunk, never broadcast
    assert_same(chunked_attention(q, k, v, chunk_size, mask=mask), reference(q, k, v, mask))


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_causal_mask_self_and_cross(chunk_size):
    q, k, v = random_qkv((2, 11, 8), (2, 11, 8), 4)
    mask = causal_mask(11)
    assert_same(chunked_attention(q, k, v, chunk_size, mask=mask), reference(q, k, v, mask))
    q7 = q[:, :7]
    mask = causal_mask(7, 11)
    assert_same(chunked_attention(q7, k, v, chunk_size, mask=mask), reference(q7, k, v, mask))


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_padding_and_causal_combined(chunk_size):
    q, k, v = random_qkv((2, 2, 11, 8), (2, 2, 11, 8), 4)
    mask = padding_mask([9, 4], 11)[:, None] & causal_mask(11)  # (2, 1, 11, 11)
    assert_same(chunked_attention(q, k, v, chunk_size, mask=mask), reference(q, k, v, mask))


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_fully_masked_rows_give_zeros_like_full_attention(chunk_size):
    q, k, v = random_qkv((2, 7, 8), (2, 11, 8), 4)
    mask = padding_mask([0, 6], 11)
    out = chunked_attention(q, k, v, chunk_size, mask=mask)
    assert np.all(out[0] == 0.0) and np.all(np.isfinite(out))
    assert_same(out, reference(q, k, v, mask))
    # rows whose keys are masked only in the first chunks still recover
    late = np.zeros((7, 11), dtype=bool)
    late[:, -1] = True
    late[3] = False
    out = chunked_attention(q, k, v, chunk_size, mask=late)
    assert np.all(out[:, 3] == 0.0)
    np.testing.assert_allclose(out[:, 0], np.broadcast_to(v[:, -1], out[:, 0].shape))
    assert_same(out, reference(q, k, v, late))


def test_one_dimensional_and_scalar_masks():
    q, k, v = random_qkv((7, 8), (11, 8), 4)
    keys = np.arange(11) % 3 != 0
    assert_same(chunked_attention(q, k, v, 4, mask=keys), reference(q, k, v, keys))
    assert_same(chunked_attention(q, k, v, 4, mask=np.array(True)), reference(q, k, v))
    mask_col = np.ones((7, 1), dtype=bool)
    assert_same(chunked_attention(q, k, v, 4, mask=mask_col), reference(q, k, v))


def test_large_scores_do_not_overflow():
    q, k, v = random_qkv((6, 4), (10, 4), 3)
    q, k = q * 300.0, k * 300.0
    out = chunked_attention(q, k, v, 3)
    assert np.all(np.isfinite(out))
    assert_same(out, reference(q, k, v))


def test_float32_stays_float32_and_ints_become_float64():
    q, k, v = random_qkv((2, 7, 8), (2, 11, 8), 4, dtype=np.float32)
    out = chunked_attention(q, k, v, 4)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, reference(q, k, v), rtol=1e-5, atol=1e-6)
    ints = np.arange(12).reshape(3, 4) % 5
    assert chunked_attention(ints, ints, ints, 2).dtype == np.float64


def test_two_token_example_by_hand():
    q = [[1.0, 0.0], [0.0, 1.0]]
    k = [[1.0, 1.0], [0.0, 1.0]]
    v = [[1.0, 2.0], [9.0, 8.0]]
    w = 1 / (1 + np.exp(-1 / np.sqrt(2)))  # query 0: scores 1/sqrt(2) and 0
    expected = [[w * 1 + (1 - w) * 9, w * 2 + (1 - w) * 8], [5.0, 5.0]]
    np.testing.assert_allclose(chunked_attention(q, k, v, 1), expected, rtol=0, atol=1e-12)


def test_chunk_size_may_be_a_numpy_integer():
    q, k, v = random_qkv((5, 4), (9, 4), 3)
    assert_same(chunked_attention(q, k, v, np.int64(4)), reference(q, k, v))


# --- memory -----------------------------------------------------------------------------------

def traced_peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_never_builds_the_n_by_n_matrix():
    n, d, chunk = 2048, 16, 64
    x = np.random.default_rng(0).normal(size=(n, d))
    full_matrix = n * n * 8
    naive = traced_peak(lambda: scaled_dot_product_attention(x, x, x))
    chunked = traced_peak(lambda: chunked_attention(x, x, x, chunk))
    assert naive >= full_matrix  # tracemalloc sees NumPy's arrays
    assert chunked < full_matrix / 4, (chunked, full_matrix)
    assert chunked < 8 * n * chunk * 8 + 8 * n * d * 8  # a few (n, chunk) blocks


def test_broadcast_mask_is_not_expanded():
    n, d = 2048, 16
    x = np.random.default_rng(1).normal(size=(2, n, d))
    mask = padding_mask([n, n // 2], n)  # (2, 1, n)
    peak = traced_peak(lambda: chunked_attention(x, x, x, 64, mask=mask))
    assert peak < n * n * 8 / 2  # a full (2, n, n) boolean mask alone would be 2 * n * n bytes
    np.testing.assert_allclose(chunked_attention(x[:, :5], x, x, 64, mask=mask),
                               reference(x[:, :5], x, x, mask), rtol=0, atol=1e-12)


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("chunk_size, error, match", [
    (0, ValueError, r"chunk_size must be an integer in \[1, inf\); got 0"),
    (-3, ValueError, r"chunk_size must be an integer in \[1, inf\); got -3"),
    (2.0, TypeError, r"chunk_size must be an integer; got 2\.0 \(float\)"),
    (True, TypeError, r"chunk_size must be an integer; got True \(bool\)"),
    ("4", TypeError, r"got '4' \(str\)"),
    (None, TypeError, r"got None \(NoneType\)"),
])
def test_bad_chunk_size(chunk_size, error, match):
    q, k, v = random_qkv((3, 4), (5, 4), 2)
    with pytest.raises(error, match=match):
        chunked_attention(q, k, v, chunk_size)


@pytest.mark.parametrize("q_shape, k_shape, v_shape, match", [
    ((4,), (5, 4), (5, 2), r"query must have shape \(\.\.\., n_q, d_k\)"),
    ((3, 4), (5, 3), (5, 2), r"same feature size d_k"),
    ((3, 4), (5, 4), (6, 2), r"same length n_k"),
    ((2, 3, 4), (3, 5, 4), (3, 5, 2), r"do not broadcast"),
    ((3, 4), (0, 4), (0, 2), r"at least one position \(n_k >= 1\)"),
])
def test_bad_shapes(q_shape, k_shape, v_shape, match):
    with pytest.raises(ValueError, match=match):
        chunked_attention(np.ones(q_shape), np.ones(k_shape), np.ones(v_shape), 2)


def test_bad_masks():
    q, k, v = random_qkv((3, 4), (5, 4), 2)
    with pytest.raises(TypeError, match="mask must be boolean"):
        chunked_attention(q, k, v, 2, mask=np.ones((3, 5)))
    with pytest.raises(ValueError, match=r"does not broadcast to the scores' shape"):
        chunked_attention(q, k, v, 2, mask=np.ones((3, 4), dtype=bool))
    with pytest.raises(ValueError, match=r"does not broadcast to the scores' shape"):
        chunked_attention(q, k, v, 2, mask=np.ones((2, 3, 5), dtype=bool))


def test_bad_values():
    q, k, v = random_qkv((3, 4), (5, 4), 2)
    k[1, 1] = np.nan
    with pytest.raises(ValueError, match="key contains NaN or infinity"):
        chunked_attention(q, k, v, 2)
    with pytest.raises(TypeError, match="query must be an array of real numbers; got dtype bool"):
        chunked_attention(np.ones((3, 4), dtype=bool), k, v, 2)
    with pytest.raises(TypeError, match="value must be an array of real numbers; got dtype "
                                        "complex128"):
        chunked_attention(q, q, q.astype(complex), 2)

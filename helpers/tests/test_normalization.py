"""Unit tests of helpers.normalization: layer normalisation and RMSNorm."""

import math
import statistics

import numpy as np
import pytest

from helpers.normalization import LayerNormalization, RMSNorm, rms_norm


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


def test_rms_norm_layer_equals_the_function_and_counts_its_scale():
    rng = np.random.default_rng(0)
    x, scale = rng.normal(size=(2, 3, 5)).astype(np.float32), rng.normal(size=5)
    layer = RMSNorm(scale, epsilon=1e-5)
    out = layer(x)
    assert out.dtype == np.float32 and layer.count_params() == 5 and layer.d_model == 5
    np.testing.assert_allclose(out, rms_norm(x.astype(np.float64), scale, epsilon=1e-5),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, error, match", [
    (lambda: RMSNorm(np.ones((2, 2))), ValueError, r"scale must have shape \(d_model,\)"),
    (lambda: RMSNorm(np.ones(2), epsilon=0), ValueError, "epsilon"),
    (lambda: RMSNorm(np.ones(2))(np.ones(3)), ValueError, r"d_model=2"),
    (lambda: RMSNorm(["a", "b"]), TypeError, "scale must be an array of real numbers"),
])
def test_rms_norm_layer_rejects_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()

"""Unit tests of helpers.positions: the sinusoidal encoding, RoPE and ALiBi."""

import math
import subprocess
import sys

import numpy as np
import pytest

from helpers.positions import (
    PUBLISHED_ROPE,
    RopeConfig,
    alibi_bias,
    alibi_slopes,
    positional_encoding,
    positional_shift_matrix,
    rope_frequencies,
    rotary_position_embedding,
    yarn_attention_factor,
)


def test_module_does_not_import_tensorflow_or_keras():
    code = ("import sys, helpers.positions; "
            "print(sorted({'tensorflow', 'keras'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


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


def test_rope_frequencies_by_method():
    theta = rope_frequencies(8)
    assert np.allclose(theta, 10000.0 ** (-np.arange(0, 8, 2) / 8))
    assert np.allclose(rope_frequencies(8, factor=4, method="interpolation"), theta / 4)
    ntk = rope_frequencies(8, factor=4, method="ntk")
    assert ntk[0] == theta[0] and np.isclose(ntk[-1], theta[-1] / 4)
    assert np.all(ntk <= theta) and np.all(ntk >= theta / 4)
    parts = rope_frequencies(8, factor=4, method="by_parts", original_length=16)
    turns = 16 * theta / (2 * np.pi)                 # 2.5, 0.25, 0.025, 0.0025 turns
    assert np.allclose(parts[turns < 1], theta[turns < 1] / 4)   # slow pairs interpolated
    assert theta[0] / 4 < parts[0] < theta[0]                      # blended
    g = (turns[0] - 1) / (32 - 1)                                  # the ramp, in turns
    assert np.isclose(parts[0], g * theta[0] + (1 - g) * theta[0] / 4)
    long = rope_frequencies(8, factor=4, method="by_parts", original_length=10_000)
    assert np.allclose(long[:2], theta[:2])          # fast pairs (many turns) keep theirs


def wavelength_rule(theta, factor, low_freq_factor, high_freq_factor, original_length):
    """Llama 3.1's rule in its own terms: wavelengths against original_length / factors."""
    wavelength = 2 * np.pi / theta
    short = original_length / high_freq_factor   # shorter wavelengths: kept
    long = original_length / low_freq_factor     # longer wavelengths: divided by factor
    smooth = (original_length / wavelength - low_freq_factor) / (
        high_freq_factor - low_freq_factor)
    blended = (1 - smooth) * theta / factor + smooth * theta
    return np.where(wavelength < short, theta, np.where(wavelength > long, theta / factor,
                                                        blended))


def test_by_parts_with_llama_bounds_is_llama_3_1s_rule():
    llama = PUBLISHED_ROPE["Llama 3.1 8B"]
    theta = rope_frequencies(128, base=500_000.0)
    expected = wavelength_rule(theta, 8.0, 1.0, 4.0, 8192)
    np.testing.assert_allclose(llama.frequencies(), expected, rtol=1e-12)
    np.testing.assert_allclose(
        rope_frequencies(128, factor=8, method="by_parts", original_length=8192,
                         base=500_000.0, alpha=1, beta=4), expected, rtol=1e-12)
    kept, divided = llama.frequencies() == theta, np.isclose(llama.frequencies(), theta / 8)
    assert (kept.sum(), divided.sum(), 64 - kept.sum() - divided.sum()) == (29, 29, 6)


def ramp_over_pair_index(config: RopeConfig) -> np.ndarray:
    """YaRN as released code computes it: the blend is linear in the pair's index, between
    the index where a pair turns beta_fast times (rounded down) and beta_slow times (up)."""
    d, base, length = config.rope_dim, config.rope_theta, config.original_length
    alpha, beta = config.turn_bounds

    def index_of(turns):                    # the (real) pair index that turns `turns` times
        return d * math.log(length / (2 * math.pi * turns)) / (2 * math.log(base))

    low, high = max(math.floor(index_of(beta)), 0), min(math.ceil(index_of(alpha)), d - 1)
    keep = 1 - np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)
    theta = rope_frequencies(d, base=base)
    return keep * theta + (1 - keep) * theta / config.factor


@pytest.mark.parametrize("name", ["Qwen2.5 7B", "DeepSeek-V3"])
def test_yarn_models_differ_from_released_code_only_in_blended_pairs(name):
    config = PUBLISHED_ROPE[name]
    ours, released = config.frequencies(), ramp_over_pair_index(config)
    theta = rope_frequencies(config.rope_dim, base=config.rope_theta)
    turns = config.original_length * theta / (2 * np.pi)
    alpha, beta = config.turn_bounds
    outside = (turns > beta) | (turns < alpha)
    np.testing.assert_allclose(ours[outside], released[outside], rtol=1e-12)
    assert np.all(ours[turns > beta] == theta[turns > beta])
    assert not np.allclose(ours[~outside], released[~outside])   # the ramps differ between


def test_yarn_attention_factor():
    assert yarn_attention_factor(1) == 1.0
    assert yarn_attention_factor(4) == pytest.approx(0.1 * math.log(4) + 1)
    assert yarn_attention_factor(40, mscale=0.5) == pytest.approx(0.05 * math.log(40) + 1)
    factors = [yarn_attention_factor(s) for s in (1, 2, 8, 32, 128)]
    assert factors == sorted(factors) and factors[-1] < 1.5       # grows slowly with s
    for call, error, message in [(lambda: yarn_attention_factor(0.5), ValueError, "factor"),
                                 (lambda: yarn_attention_factor("4"), TypeError, "factor"),
                                 (lambda: yarn_attention_factor(4, mscale=0), ValueError,
                                  "mscale")]:
        with pytest.raises(error, match=message):
            call()


def test_scaling_queries_and_keys_by_the_factor_multiplies_scores_by_its_square():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 5, 8))
    a = yarn_attention_factor(16)
    turned_q = rotary_position_embedding(a * q)
    turned_k = rotary_position_embedding(a * k)
    plain = rotary_position_embedding(q) @ rotary_position_embedding(k).T
    np.testing.assert_allclose(turned_q @ turned_k.T, a ** 2 * plain, rtol=1e-12)


def test_published_rope_configurations():
    assert set(PUBLISHED_ROPE) == {"Llama 3 8B", "Llama 3.1 8B", "Qwen2.5 7B", "DeepSeek-V3"}
    for name, config in PUBLISHED_ROPE.items():
        assert config.name == name and config.source
        assert config.frequencies().shape == (config.rope_dim // 2,)
    llama3, qwen, deepseek = (PUBLISHED_ROPE[n] for n in ("Llama 3 8B", "Qwen2.5 7B",
                                                           "DeepSeek-V3"))
    assert llama3.kind == "none" and llama3.turn_bounds is None and llama3.factor == 1.0
    np.testing.assert_allclose(llama3.frequencies(), rope_frequencies(128, base=500_000.0))
    assert (qwen.kind, qwen.factor, qwen.original_length, qwen.turn_bounds) == (
        "yarn", 4.0, 32768, (1.0, 32.0))            # transformers' defaults: 1 and 32
    assert qwen.original_length * qwen.factor == qwen.context_length
    assert qwen.score_scale == pytest.approx((0.1 * math.log(4) + 1) ** 2)
    assert deepseek.score_scale == pytest.approx((0.1 * math.log(40) + 1) ** 2)
    assert deepseek.original_length * deepseek.factor == 163_840 > deepseek.context_length
    assert PUBLISHED_ROPE["Llama 3.1 8B"].score_scale == 1.0       # no temperature


def test_rope_frequencies_override_the_base():
    x = np.random.default_rng(0).normal(size=(5, 8))
    same = rotary_position_embedding(x, frequencies=rope_frequencies(8))
    assert np.allclose(same, rotary_position_embedding(x))
    halved = rotary_position_embedding(x, positions=[0, 2, 4, 6, 8],
                                       frequencies=rope_frequencies(8) / 2)
    assert np.allclose(halved, rotary_position_embedding(x))   # positions / 2 = theta / 2


def test_rope_frequencies_reject_bad_input():
    with pytest.raises(ValueError, match="needs original_length"):
        rope_frequencies(8, factor=2, method="by_parts")
    with pytest.raises(ValueError, match="yarn_attention_factor"):
        rope_frequencies(8, factor=2, method="yarn", original_length=16)
    with pytest.raises(ValueError, match="alpha must be below beta"):
        rope_frequencies(8, factor=2, method="by_parts", original_length=16, alpha=4, beta=4)
    with pytest.raises(ValueError, match="factor"):
        rope_frequencies(8, factor=0.5, method="ntk")
    with pytest.raises(ValueError, match="method"):
        rope_frequencies(8, method="linear")
    with pytest.raises(ValueError, match="frequencies must have shape"):
        rotary_position_embedding(np.ones((3, 8)), frequencies=[1.0, 0.1])


def get_slopes(n):
    """The ALiBi authors' get_slopes (github.com/ofirpress/attention_with_linear_biases)."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest) + get_slopes(2 * closest)[0::2][:n - closest]

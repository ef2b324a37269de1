"""helpers.keras_linear_attention gives the numbers of helpers.linear_attention.

The chunked rules in float64 to 1e-10 (several chunk sizes, lengths not divisible by them,
with decay and initial state); the token mixer in float32 to 1e-5 with copied weights, every
weight set to random values (so a weight that is not copied or not used shows).
"""

import numpy as np
import pytest

from helpers import linear_attention as la
from helpers._tensorflow import keras, tf
from helpers.keras_linear_attention import TokenMixer, delta_rule_chunked, linear_attention_chunked

TOL = 1e-10


def tensors(n=11, d_k=5, d_v=4, seed=0):
    rng = np.random.default_rng(seed)
    q = la.l2_normalize(rng.normal(size=(2, 3, n, d_k)))
    k = la.l2_normalize(rng.normal(size=(2, 3, n, d_k)))
    v = rng.normal(size=(2, 3, n, d_v))
    beta, g = rng.uniform(0, 2, size=(2, 3, n)), -rng.uniform(0, 1.5, size=(2, 3, n))
    s0 = rng.normal(size=(2, 3, d_v, d_k))
    return q, k, v, beta, g, s0


def as_numpy(pair):
    return tuple(keras.ops.convert_to_numpy(x) for x in pair)


@pytest.mark.parametrize("chunk_size", [1, 3, 4, 11, 16])
@pytest.mark.parametrize("gated", [False, True])
def test_delta_rule_matches_numpy(chunk_size, gated):
    q, k, v, beta, g, s0 = tensors()
    expected = la.delta_rule_recurrent(q, k, v, beta, log_decay=g if gated else None,
                                       initial_state=s0)
    got = as_numpy(delta_rule_chunked(q, k, v, beta, log_decay=g if gated else None,
                                      initial_state=s0, chunk_size=chunk_size))
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=0, atol=TOL)


@pytest.mark.parametrize("chunk_size", [1, 3, 4, 11, 16])
def test_linear_attention_matches_numpy(chunk_size):
    q, k, v, _, g, s0 = tensors(seed=1)
    expected = la.linear_attention_parallel(q, k, v, log_decay=g, initial_state=s0)
    got = as_numpy(linear_attention_chunked(q, k, v, log_decay=g, initial_state=s0,
                                            chunk_size=chunk_size))
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=TOL)


def test_without_initial_state_and_decay_starts_from_zero():
    q, k, v, beta, _, _ = tensors(n=6)
    expected = la.delta_rule_chunked(q, k, v, beta, chunk_size=4)
    got = as_numpy(delta_rule_chunked(q, k, v, beta, chunk_size=4))
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=TOL)


def randomised(layer, seed):
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.normal(scale=0.5, size=w.shape).astype("float32")
                       for w in layer.get_weights()])
    return layer


@pytest.mark.parametrize("rule", ["linear", "delta", "gated_delta"])
def test_token_mixer_matches_numpy_with_copied_weights(rule):
    x = np.random.default_rng(2).normal(size=(2, 9, 8)).astype("float32")
    layer = TokenMixer(2, 4, rule=rule, chunk_size=4)
    layer(x)
    randomised(layer, 3)
    mixer = la.TokenMixer.from_keras(layer)
    assert (mixer.rule, mixer.num_heads, mixer.chunk_size) == (rule, 2, 4)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(layer(x)), mixer(x), atol=1e-5)


def test_the_three_rules_give_different_outputs():
    x = np.random.default_rng(4).normal(size=(1, 9, 8)).astype("float32")
    outputs = {}
    for rule in ("linear", "delta", "gated_delta"):
        layer = TokenMixer(2, 4, rule=rule)
        layer(x)
        outputs[rule] = keras.ops.convert_to_numpy(randomised(layer, 5)(x))
    assert np.abs(outputs["linear"] - outputs["delta"]).max() > 1e-2
    assert np.abs(outputs["delta"] - outputs["gated_delta"]).max() > 1e-2


def test_token_mixer_is_causal_and_serialisable():
    x = np.random.default_rng(6).normal(size=(1, 10, 8)).astype("float32")
    layer = TokenMixer(2, 4, chunk_size=3)
    layer(x)
    changed = x.copy()
    changed[:, 7:] += 1.0
    first, second = (keras.ops.convert_to_numpy(layer(a)) for a in (x, changed))
    np.testing.assert_allclose(first[:, :7], second[:, :7], atol=1e-6)
    assert np.abs(first[:, 7:] - second[:, 7:]).max() > 1e-3
    clone = TokenMixer.from_config(layer.get_config())
    assert (clone.rule, clone.chunk_size, clone.head_dim) == ("gated_delta", 3, 4)


def test_gradients_flow_through_the_chunked_rule():
    x = keras.Variable(np.random.default_rng(7).normal(size=(1, 6, 8)).astype("float32"))
    layer = TokenMixer(2, 4, chunk_size=4)
    with tf.GradientTape() as tape:
        loss = keras.ops.sum(layer(x) ** 2)
    grads = tape.gradient(loss, layer.trainable_weights)
    assert all(g is not None and np.all(np.isfinite(g)) for g in grads)


def test_bad_arguments():
    with pytest.raises(ValueError, match="rule must be one of"):
        TokenMixer(2, 4, rule="mamba")
    with pytest.raises(ValueError, match="chunk_size must be an integer in"):
        delta_rule_chunked(*tensors(n=3)[:4], chunk_size=0)
    with pytest.raises(ValueError, match="weights must hold"):
        la.TokenMixer({"query": np.ones((2, 2))}, num_heads=1, rule="delta")


def test_token_mixer_in_a_functional_model_of_fixed_length():
    inputs = keras.Input((7, 8))
    model = keras.Model(inputs, TokenMixer(2, 4, rule="delta", chunk_size=3)(inputs))
    x = np.random.default_rng(9).normal(size=(2, 7, 8)).astype("float32")
    mixer = la.TokenMixer.from_keras(model.layers[-1])
    assert model.output_shape == (None, 7, 8)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model(x)), mixer(x), atol=1e-5)


def test_token_mixer_has_only_the_weights_its_rule_uses():
    """So that training leaves no weight without a gradient."""
    x = np.zeros((1, 4, 8), dtype="float32")
    for rule, names in la.MIXER_WEIGHTS.items():
        layer = TokenMixer(2, 4, rule=rule)
        layer(x)
        assert sorted(w.name for w in layer.weights) == sorted(names)
        with tf.GradientTape() as tape:
            loss = keras.ops.sum(layer(x + 1.0) ** 2)
        assert all(g is not None for g in tape.gradient(loss, layer.trainable_weights)), rule

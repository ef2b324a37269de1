"""helpers.keras_latent_attention gives the numbers of helpers.latent_attention with copied
weights (float32, ``atol=1e-5``, every weight moved away from its initial value)."""

import numpy as np
import pytest

from helpers import latent_attention
from helpers._tensorflow import keras
from helpers.keras_latent_attention import MultiHeadLatentAttention

ATOL = 1e-5
SIZES = {"num_heads": 4, "head_dim": 6, "latent_dim": 10, "query_latent_dim": 12,
         "rope_dim": 4}


@pytest.fixture(scope="module", autouse=True)
def _seed_keras():
    keras.utils.set_random_seed(0)


def built(absorbed=False, seed=0):
    layer = MultiHeadLatentAttention(**SIZES, absorbed=absorbed)
    layer.build((None, None, 16))
    rng = np.random.default_rng(seed)
    for weight in layer.weights:                 # away from Glorot and from scales of 1
        weight.assign(np.asarray(weight) + rng.normal(0, 0.2, weight.shape).astype("float32"))
    return layer


def inputs(n=7, batch=2, seed=1):
    return np.random.default_rng(seed).normal(size=(batch, n, 16)).astype("float32")


@pytest.mark.parametrize("absorbed", [False, True])
def test_keras_layer_equals_the_numpy_layer_with_copied_weights(absorbed):
    layer, x = built(absorbed), inputs()
    out, weights = layer(x, return_attention_scores=True)
    twin = latent_attention.MultiHeadLatentAttention.from_keras(layer)
    expected, expected_weights = twin(x)
    assert expected.dtype == np.float32
    assert np.allclose(np.asarray(out), expected, atol=ATOL)
    assert np.allclose(np.asarray(weights), expected_weights, atol=ATOL)


@pytest.mark.parametrize("absorbed", [False, True])
def test_without_rope_the_layer_has_no_rope_weights_and_no_position(absorbed):
    layer = MultiHeadLatentAttention(**(SIZES | {"rope_dim": 0}), absorbed=absorbed)
    x = inputs()
    out = np.asarray(layer(x))
    assert layer.w_qr is None and layer.w_kr is None
    assert layer.count_params() == built().count_params() - (12 * 4 * 4 + 16 * 4)
    twin = latent_attention.MultiHeadLatentAttention.from_keras(layer)
    assert twin.rope_dim == 0 and twin.cache_elements_per_token() == SIZES["latent_dim"]
    assert np.allclose(out, twin(x)[0], atol=ATOL)
    # no position anywhere: the last output sees its prefix as a set, so swapping the
    # first two inputs leaves it unchanged
    swapped = x[:, [1, 0, *range(2, x.shape[1])]]
    assert np.allclose(np.asarray(layer(swapped))[:, -1], out[:, -1], atol=ATOL)


def test_keras_absorbed_form_equals_its_naive_form():
    naive, x = built(False, seed=2), inputs(n=9)
    absorbed = MultiHeadLatentAttention(**SIZES, absorbed=True)
    absorbed.build((None, None, 16))
    absorbed.set_weights(naive.get_weights())
    assert np.allclose(np.asarray(absorbed(x)), np.asarray(naive(x)), atol=ATOL)


def test_keras_layer_is_causal_and_trains():
    layer, x = built(seed=3), inputs()
    changed = x.copy()
    changed[:, -1] += 1.0                               # only the last position changes
    out, out_changed = np.asarray(layer(x)), np.asarray(layer(changed))
    assert np.allclose(out[:, :-1], out_changed[:, :-1], atol=ATOL)
    assert not np.allclose(out[:, -1], out_changed[:, -1], atol=1e-3)
    model = keras.Sequential([keras.Input((7, 16)), layer])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    before = [np.asarray(w).copy() for w in layer.weights]
    model.fit(x, np.zeros_like(x), epochs=1, verbose=0)
    assert all(not np.allclose(b, np.asarray(w)) for b, w in zip(before, layer.weights))


def test_config_round_trip_keeps_the_sizes():
    layer = MultiHeadLatentAttention(**SIZES, absorbed=True, epsilon=1e-5)
    again = MultiHeadLatentAttention.from_config(layer.get_config())
    assert (again.latent_dim, again.rope_dim, again.absorbed, again.epsilon) == (10, 4, True,
                                                                                 1e-5)


@pytest.mark.parametrize("changes, error, match", [
    ({"rope_dim": 3}, ValueError, "rope_dim must be even"),
    ({"rope_dim": -2}, ValueError, "rope_dim must be an integer in"),
    ({"latent_dim": 0}, ValueError, "latent_dim"),
    ({"num_heads": 2.0}, TypeError, "num_heads"),
    ({"absorbed": "yes"}, TypeError, "absorbed must be True or False"),
])
def test_bad_arguments_are_rejected(changes, error, match):
    with pytest.raises(error, match=match):
        MultiHeadLatentAttention(**(SIZES | changes))


def test_numpy_from_keras_needs_a_built_layer():
    with pytest.raises(ValueError, match="must be a built"):
        latent_attention.MultiHeadLatentAttention.from_keras(MultiHeadLatentAttention(**SIZES))

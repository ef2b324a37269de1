"""helpers.classifiers: BahdanauAttention, the three chapter-5 classifiers, attention_over_time."""

import numpy as np
import pytest

from helpers import classifiers as layers
from helpers._tensorflow import keras
from helpers.attention import additive_attention

BATCH, SEQ_LEN, HIDDEN, UNITS = 3, 7, 5, 4
to_numpy = keras.ops.convert_to_numpy


@pytest.fixture
def inputs():
    rng = np.random.default_rng(0)
    query = rng.normal(size=(BATCH, HIDDEN)).astype("float32")
    values = rng.normal(size=(BATCH, SEQ_LEN, HIDDEN)).astype("float32")
    return query, values


def test_bahdanau_shapes_and_weights_sum_to_one(inputs):
    context, weights = layers.BahdanauAttention(UNITS)(*inputs)
    assert context.shape == (BATCH, HIDDEN)
    assert weights.shape == (BATCH, SEQ_LEN, 1)
    np.testing.assert_allclose(to_numpy(weights).sum(axis=1), 1.0, rtol=1e-6)


def test_bahdanau_matches_numpy_additive_attention(inputs):
    query, values = inputs
    layer = layers.BahdanauAttention(UNITS)
    context, weights = layer(query, values)
    w1, w2, v = (to_numpy(w) for w in (layer.w1.kernel, layer.w2.kernel, layer.v.kernel))
    expected, expected_weights = additive_attention(query[:, None, :], values, values,
                                                    w1, w2, v[:, 0])
    np.testing.assert_allclose(to_numpy(context), expected[:, 0], atol=1e-5)
    np.testing.assert_allclose(to_numpy(weights)[..., 0], expected_weights[:, 0], atol=1e-6)


def test_bahdanau_parameter_count(inputs):
    layer = layers.BahdanauAttention(UNITS)
    layer(*inputs)
    assert layer.count_params() == HIDDEN * UNITS + HIDDEN * UNITS + UNITS


def test_bahdanau_mask_zeroes_masked_steps_and_ignores_their_values(inputs):
    query, values = inputs
    mask = np.arange(SEQ_LEN)[None, :] < np.array([[7], [3], [0]])
    layer = layers.BahdanauAttention(UNITS)
    context, weights = (to_numpy(t) for t in layer(query, values, mask=mask))
    weights = weights[..., 0]
    assert np.all(weights[~mask] == 0)
    np.testing.assert_allclose(weights.sum(axis=1), [1.0, 1.0, 0.0], atol=1e-6)
    np.testing.assert_array_equal(context[2], 0.0)
    changed = values.copy()
    changed[1, 3:] = 100.0  # masked steps of row 1
    context_changed = to_numpy(layer(query, changed, mask=mask)[0])
    np.testing.assert_allclose(context_changed[1], context[1], atol=1e-6)
    assert not np.any(np.isnan(context_changed))


def test_bahdanau_rejects_bad_units_and_shapes(inputs):
    with pytest.raises(ValueError, match=r"units must be an integer in \[1, inf\); got 0"):
        layers.BahdanauAttention(0)
    with pytest.raises(ValueError, match="query \\(batch, hidden_q\\) and values"):
        layers.BahdanauAttention(UNITS)(inputs[1], inputs[1])


BUILDERS = {
    "lstm": (layers.build_lstm_classifier, {}),
    "lstm_bahdanau": (layers.build_lstm_bahdanau_classifier, {"attention_units": 6}),
    "lstm_mha": (layers.build_lstm_mha_classifier, {"num_heads": 2, "key_dim": 3}),
}


def _build(name, seq_len=SEQ_LEN, n_features=2, lstm_units=8):
    build, extra = BUILDERS[name]
    return build(seq_len, n_features, lstm_units=lstm_units, dense_units=4, **extra)


@pytest.mark.parametrize("name", BUILDERS)
def test_builders_output_probabilities(name):
    model = _build(name)
    x = np.random.default_rng(1).normal(size=(5, SEQ_LEN, 2)).astype("float32")
    p = model.predict(x, verbose=0)
    assert model.name == name and p.shape == (5, 1)
    assert np.all((p > 0) & (p < 1))


def test_parameter_counts_follow_the_arithmetic():
    n_features, units = 2, 8
    lstm = 4 * (units * (n_features + units) + units)
    head = (units * 4 + 4) + (4 + 1)
    assert _build("lstm").count_params() == lstm + head
    assert _build("lstm_bahdanau").count_params() == lstm + 2 * units * 6 + 6 + head
    mha = 3 * (units * 2 * 3 + 2 * 3) + (2 * 3 * units + units)
    assert _build("lstm_mha").count_params() == lstm + mha + head


@pytest.mark.parametrize("name", ["lstm_bahdanau", "lstm_mha"])
def test_attention_over_time_rows_are_distributions(name):
    model = _build(name)
    x = np.random.default_rng(2).normal(size=(4, SEQ_LEN, 2))
    weights = layers.attention_over_time(model, x)
    assert weights.shape == (4, SEQ_LEN)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-5)


def test_attention_over_time_errors():
    with pytest.raises(ValueError, match="has no layer named 'attention'"):
        layers.attention_over_time(_build("lstm"), np.zeros((1, SEQ_LEN, 2)))
    with pytest.raises(ValueError, match="x must have shape"):
        layers.attention_over_time(_build("lstm_bahdanau"), np.zeros((SEQ_LEN, 2)))
    with pytest.raises(TypeError, match="x must be an array of real numbers; got dtype <U1"):
        layers.attention_over_time(_build("lstm_bahdanau"), np.full((1, SEQ_LEN, 2), "a"))


def test_builders_reject_bad_sizes():
    with pytest.raises(ValueError, match=r"seq_len must be an integer in \[1, inf\); got 0"):
        layers.build_lstm_classifier(0, 2)
    with pytest.raises(TypeError, match=r"num_heads must be an integer; got 2.5 \(float\)"):
        layers.build_lstm_mha_classifier(SEQ_LEN, 2, num_heads=2.5)


@pytest.mark.parametrize("name", ["lstm_bahdanau", "lstm_mha"])
def test_keras_format_round_trip(name, tmp_path):
    model = _build(name)
    x = np.random.default_rng(3).normal(size=(6, SEQ_LEN, 2)).astype("float32")
    model.fit(x, np.array([0, 1, 0, 1, 0, 1]), epochs=1, verbose=0)
    path = tmp_path / f"{name}.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    np.testing.assert_array_equal(layers.attention_over_time(loaded, x),
                                  layers.attention_over_time(model, x))

"""helpers.training.fit: one trace of the training step, the same training as model.fit."""

import numpy as np
import pytest

from helpers._tensorflow import keras
from helpers.classifiers import build_lstm_bahdanau_classifier
from helpers.training import fit


def small_classifier(seed):
    keras.utils.set_random_seed(seed)
    return build_lstm_bahdanau_classifier(6, 2, lstm_units=4, attention_units=3,
                                                 dense_units=4)


def counted_train_steps(model):
    calls = []
    original = model.train_step

    def train_step(data):
        calls.append(1)
        return original(data)

    model.train_step = train_step
    return calls


def test_fit_traces_the_training_step_once_and_trains_exactly_like_model_fit():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 6, 2)).astype("float32")
    y = rng.integers(0, 2, 40)
    plain, ours = small_classifier(3), small_classifier(3)
    plain_traces, our_traces = counted_train_steps(plain), counted_train_steps(ours)
    keras.utils.set_random_seed(4)
    plain.fit(x, y, epochs=2, batch_size=8, verbose=0)
    keras.utils.set_random_seed(4)
    history = fit(ours, x, y, epochs=2, batch_size=8, verbose=0)
    assert len(our_traces) == 1 and len(plain_traces) == 2
    assert len(history.history["loss"]) == 2
    for a, b in zip(plain.get_weights(), ours.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_fit_refuses_a_model_that_is_not_compiled():
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs), name="raw")
    with pytest.raises(ValueError, match="model 'raw' is not compiled"):
        fit(model, np.zeros((4, 3)), np.zeros(4))


def test_fit_refuses_what_is_not_a_keras_model():
    with pytest.raises(TypeError, match="model must be a keras.Model; got list"):
        fit([], np.zeros((4, 3)), np.zeros(4))

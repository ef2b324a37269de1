"""helpers.training.fit: one trace of the training step, the same training as model.fit."""

import numpy as np
import pytest

from helpers._tensorflow import keras, tf
from helpers.classifiers import build_lstm_bahdanau_classifier
from helpers.training import FusedAdam, fit


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


def embedding_model(seed, optimizer):
    return compiled(seed, optimizer, lambda: [
        keras.Input((5,), dtype="int32"), keras.layers.Embedding(7, 4),
        keras.layers.Flatten(), keras.layers.Dense(3)])


def dense_model(seed, optimizer):
    return compiled(seed, optimizer, lambda: [
        keras.Input((6,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(3)])


def compiled(seed, optimizer, layers):
    keras.utils.set_random_seed(seed)                       # before the layers are made
    model = keras.Sequential(layers())
    model.compile(optimizer=optimizer, jit_compile=False,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_fused_adam_trains_like_keras_adam_on_dense_gradients():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(48, 6)).astype("float32"), rng.integers(0, 3, 48)
    schedule = keras.optimizers.schedules.CosineDecay(0.0, 10, warmup_target=0.05,
                                                      warmup_steps=2)
    models = [dense_model(2, keras.optimizers.Adam(learning_rate=schedule)),
              dense_model(2, FusedAdam(learning_rate=schedule))]
    start = [w.copy() for w in models[1].get_weights()]
    for model in models:
        fit(model, x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    assert int(models[1].optimizer.iterations) == 12
    for a, b, w0 in zip(models[0].get_weights(), models[1].get_weights(), start):
        assert np.abs(b - w0).max() > 1e-3                  # the weights moved
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_fused_adam_first_step_moves_every_touched_embedding_entry_by_the_rate():
    # Adam's first step is lr * sign(gradient) for every entry whose gradient is not
    # zero, also for an embedding row whose token appears several times in the batch
    # (keras.optimizers.Adam does not do this: see FusedAdam's docstring).
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 7, (8, 5)).astype("int32"), rng.integers(0, 3, 8)
    model = embedding_model(2, FusedAdam(learning_rate=0.05))
    before = model.get_weights()[0].copy()
    fit(model, x, y, epochs=1, batch_size=8, verbose=0, shuffle=False)
    moved = np.abs(model.get_weights()[0] - before)[np.unique(x)]
    np.testing.assert_allclose(moved, 0.05, rtol=1e-2)      # epsilon: |g| / (|g| + 1e-7)
    assert np.bincount(x.ravel()).max() > 1                 # repeated tokens were there


def count_update_operations(optimizer):
    weights = [keras.Variable(np.ones((3, 2), "float32")) for _ in range(4)]
    optimizer.build(weights)

    @tf.function
    def update(gradients):
        optimizer.apply_gradients(zip(gradients, weights))

    gradients = [tf.ones((3, 2)) for _ in weights]
    return len(update.get_concrete_function(gradients).graph.get_operations())


def test_fused_adam_builds_a_much_smaller_update_graph_than_keras_adam():
    plain = count_update_operations(keras.optimizers.Adam())
    fused = count_update_operations(FusedAdam())
    assert fused < 0.6 * plain, (fused, plain)


def test_fused_adam_refuses_amsgrad():
    with pytest.raises(ValueError, match="does not support amsgrad"):
        FusedAdam(amsgrad=True)

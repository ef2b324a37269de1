"""helpers.keras_associative_recall gives the logits of helpers.associative_recall.RecallModel.

Every weight is set to random values first (so a weight that is not copied or not used shows);
float32 Keras against float64 NumPy, to 1e-4.
"""

import numpy as np
import pytest

from helpers import associative_recall as ar
from helpers.keras_associative_recall import SPARSE_MIXERS, TokenShift, build_recall_model


def randomised(model, seed):
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(scale=0.5, size=variable.shape).astype("float32"))
    return model


@pytest.mark.parametrize("kind", ar.MIXERS)
def test_keras_model_equals_numpy_model(kind):
    x, _, _ = ar.multi_query_recall(3, 6, num_keys=10, num_values=5, length=21,
                                    rng=np.random.default_rng(0))
    model = build_recall_model(16, mixer=kind, d_embed=6, num_heads=2, head_dim=4,
                               chunk_size=8)
    model(x)
    randomised(model, 1)
    twin = ar.RecallModel.from_keras(model)
    assert twin.kind == kind
    expected = twin(x)
    got = np.asarray(model(x))
    assert got.shape == (3, 21, 16)
    np.testing.assert_allclose(got, expected, atol=1e-4, rtol=1e-4)
    assert np.abs(expected).max() > 0.1


def test_token_shift_matches_numpy():
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    np.testing.assert_allclose(np.asarray(TokenShift()(x)), ar.shift_tokens(x), atol=1e-7)


@pytest.mark.parametrize(("options", "error"), [
    (dict(mixer="mamba"), ValueError), (dict(mixer="softmax", d_embed=0), ValueError),
    (dict(mixer="delta", d_embed=2.0), TypeError)])
def test_bad_input(options, error):
    with pytest.raises(error):
        build_recall_model(8, **options)


@pytest.mark.parametrize(("kind", "options"), [
    ("window", dict(window=4)), ("topk", dict(top_k=3, index_heads=2, index_dim=4)),
    ("nsa", dict(block_size=4, stride=2, select_size=4, num_selected=2, window=3))])
def test_sparse_mixers(kind, options):
    model = build_recall_model(16, mixer=kind, d_embed=6, num_heads=1, head_dim=4, **options)
    layer = model.get_layer("mixer")
    assert type(layer) is SPARSE_MIXERS[kind]
    assert all(getattr(layer, name) == value for name, value in options.items())
    x, _, _ = ar.multi_query_recall(3, 6, num_keys=10, num_values=5, length=21,
                                    rng=np.random.default_rng(0))
    assert tuple(model(x).shape) == (3, 21, 16)
    assert len(model.losses) == (kind == "topk")


def test_top_k_indexer_is_trained_by_its_kl_loss_inside_train_together():
    from helpers.keras_decoder_only import train_together
    x, y, w = ar.multi_query_recall(64, 4, num_keys=8, num_values=4, length=12,
                                    rng=np.random.default_rng(0))
    models = [build_recall_model(13, mixer="topk", d_embed=4, num_heads=1, head_dim=4,
                                 top_k=2, kl_weight=kl) for kl in (1.0, 0.0)]
    for model in models:
        model(x[:1])
    before = [np.asarray(m.get_layer("mixer").kernels["index_key"]).copy() for m in models]
    train_together(models, x, y, w, batch_size=32, warmup_steps=0, learning_rate=1e-2)
    after = [np.asarray(m.get_layer("mixer").kernels["index_key"]) for m in models]
    assert not np.allclose(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])   # no KL: no gradient at all


@pytest.mark.parametrize(("options", "message"), [
    (dict(mixer="window", num_heads=2, window=4), "num_heads must be 1"),
    (dict(mixer="softmax", window=4), "are for the sparse mixers")])
def test_sparse_arguments_checked(options, message):
    with pytest.raises(ValueError, match=message):
        build_recall_model(8, **options)

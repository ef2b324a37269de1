"""helpers.keras_associative_recall gives the logits of helpers.associative_recall.RecallModel.

Every weight is set to random values first (so a weight that is not copied or not used shows);
float32 Keras against float64 NumPy, to 1e-4.
"""

import numpy as np
import pytest

from helpers import associative_recall as ar
from helpers.keras_associative_recall import TokenShift, build_recall_model


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

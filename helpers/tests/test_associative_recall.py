"""helpers.associative_recall: the MQAR generator, the accuracy and the NumPy recall model."""

import numpy as np
import pytest

from helpers import associative_recall as ar
from helpers.attention import MultiHeadAttention
from helpers.linear_attention import TokenMixer


def make(num_pairs=5, **options):
    sizes = dict(num_keys=12, num_values=6, rng=np.random.default_rng(3))
    return ar.multi_query_recall(7, num_pairs, **{**sizes, **options})


def test_shapes_dtypes_and_padding():
    x, y, w = make(5, length=20)
    assert x.shape == y.shape == w.shape == (7, 20)
    assert x.dtype == y.dtype == np.int32 and w.dtype == np.float32
    assert np.all(x[:, 15:] == 0) and np.all(w[:, 15:] == 0) and np.all(x[:, :15] > 0)
    assert make(5)[0].shape == (7, 15)


def test_every_query_asks_a_stored_key_for_its_value():
    x, y, w = make(5)
    for row, target, weight in zip(x, y, w):
        keys, values = row[0:10:2], row[1:10:2]
        assert len(set(keys)) == 5 and np.all((keys >= 1) & (keys <= 12))
        assert np.all((values >= 13) & (values <= 18))
        assert sorted(row[10:15]) == sorted(keys)
        lookup = dict(zip(keys, values))
        assert [lookup[k] for k in row[10:15]] == list(target[10:15])
        assert np.all(weight[10:15] == 1) and np.all(weight[:10] == 0)
        assert np.all(target[:10] == 0)


def test_seeded_and_varied():
    first, again = make(), make()
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    other = make(rng=np.random.default_rng(4))
    assert not np.array_equal(first[0], other[0])
    x = make(8)[0]
    assert len({tuple(r) for r in x}) == len(x)


@pytest.mark.parametrize(("options", "error", "words"), [
    (dict(num_pairs=13), ValueError, "num_pairs"),
    (dict(num_pairs=0), ValueError, "num_pairs"),
    (dict(length=14), ValueError, "length"),
    (dict(num_values=1), ValueError, "num_values"),
    (dict(num_pairs=2.0), TypeError, "num_pairs"),
    (dict(rng=0), TypeError, "rng"),
])
def test_bad_input(options, error, words):
    with pytest.raises(error, match=words):
        make(**options)


def test_recall_accuracy_counts_only_weighted_positions():
    logits = np.zeros((1, 4, 3))
    logits[0, [0, 1, 2, 3], [1, 2, 0, 0]] = 1.0
    assert ar.recall_accuracy(logits, [[1, 2, 2, 2]], [[0, 1, 1, 1]]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="weights"):
        ar.recall_accuracy(logits, [[1, 2, 2, 2]], [[0, 0, 0, 0]])
    with pytest.raises(ValueError, match="shape"):
        ar.recall_accuracy(logits, [[1, 2, 2]], [[0, 1, 1]])


def test_shift_tokens_is_causal():
    x = np.random.default_rng(0).normal(size=(2, 6, 3))
    y = ar.shift_tokens(x)
    np.testing.assert_array_equal(y[..., :3], x)
    np.testing.assert_array_equal(y[:, 1:, 3:], x[:, :-1])
    assert np.all(y[:, 0, 3:] == 0)


@pytest.mark.parametrize("kind", ar.MIXERS)
def test_model_is_causal(kind):
    rng = np.random.default_rng(1)
    if kind == "softmax":
        mixer = MultiHeadAttention.random(8, num_heads=2, key_dim=4, rng=rng)
    else:
        mixer = TokenMixer.random(8, num_heads=2, rule=kind, rng=rng)
    model = ar.RecallModel(rng.normal(size=(9, 4)), mixer, rng.normal(size=(8, 9)), np.zeros(9))
    assert model.kind == kind
    ids = rng.integers(1, 9, size=(2, 10))
    changed = ids.copy()
    changed[:, 6:] = (changed[:, 6:] % 8) + 1
    a, b = model(ids), model(changed)
    np.testing.assert_allclose(a[:, :6], b[:, :6], atol=1e-12)
    assert not np.allclose(a[:, 6:], b[:, 6:])


def test_model_rejects_bad_parts():
    rng = np.random.default_rng(0)
    mixer = TokenMixer.random(4, num_heads=1, rule="linear", rng=rng)
    with pytest.raises(ValueError, match="head_kernel"):
        ar.RecallModel(rng.normal(size=(5, 2)), mixer, rng.normal(size=(3, 5)), np.zeros(5))
    with pytest.raises(TypeError, match="mixer"):
        ar.RecallModel(rng.normal(size=(5, 2)), "linear", rng.normal(size=(4, 5)), np.zeros(5))
    model = ar.RecallModel(rng.normal(size=(5, 2)), mixer, rng.normal(size=(4, 5)), np.zeros(5))
    with pytest.raises(ValueError, match="ids"):
        model(np.array([[1, 5]]))

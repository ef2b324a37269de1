"""helpers.keras_sparse_attention against dense masked attention written here in NumPy.

Every kernel is set to random values (so a weight that is not used shows); float32 Keras
against float64 NumPy, to 1e-4. The indexer and its top-k mask are also checked against
helpers.sparse_attention (the NumPy half of chapter 17) with the same weights.
"""

import numpy as np
import pytest

from helpers import sparse_attention as sa
from helpers._tensorflow import keras, tf
from helpers.keras_sparse_attention import (
    NativeSparseAttention,
    TopKAttention,
    WindowAttention,
    masked_softmax,
)

N, D, H = 13, 6, 4


def make(layer, seed=1):
    x = np.random.default_rng(0).normal(size=(2, N, D)).astype("float32")
    layer(x)
    rng = np.random.default_rng(seed)
    for variable in layer.kernels.values():
        variable.assign(rng.normal(scale=0.7, size=variable.shape).astype("float32"))
    return layer, x


def kernel(layer, name):
    return np.asarray(layer.kernels[name], dtype=np.float64)


def attend(q, k, v, mask):
    """Softmax attention over the true entries of mask (n, n); rows with none give 0."""
    scores = np.where(mask, q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.where(mask, np.exp(scores - np.where(np.isfinite(top), top, 0)), 0)
    total = e.sum(-1, keepdims=True)
    return (e / np.where(total > 0, total, 1)) @ v


def window(n, w):
    offset = np.arange(n)[:, None] - np.arange(n)[None, :]
    return (offset >= 0) & (offset < w)


def dense_output(layer, x, mask, key="key", value="value"):
    x = x.astype(np.float64)
    q = x @ kernel(layer, "query")
    out = attend(q, x @ kernel(layer, key), x @ kernel(layer, value), mask)
    return out @ kernel(layer, "output")


def indexer_numpy(layer, x):
    """(batch, n, n) indexer scores with -inf after the query, via helpers.sparse_attention."""
    x = x.astype(np.float64)
    q = (x @ kernel(layer, "index_query")).reshape(*x.shape[:2], layer.index_heads,
                                                   layer.index_dim)
    k, w = x @ kernel(layer, "index_key"), x @ kernel(layer, "index_weight")
    return np.stack([sa.indexer_scores(q[b], k[b], w[b]) for b in range(len(x))])


@pytest.mark.parametrize("w", [1, 4, N + 3])
def test_window_layer_is_attention_with_the_window_mask(w):
    layer, x = make(WindowAttention(H, w))
    np.testing.assert_allclose(np.asarray(layer(x)), dense_output(layer, x, window(N, w)),
                               atol=1e-4, rtol=1e-4)


def test_top_k_covering_every_key_is_causal_softmax_attention():
    layer, x = make(TopKAttention(H, N, index_heads=2, index_dim=3))
    got = np.asarray(layer(x))
    assert got.shape == (2, N, D)
    np.testing.assert_allclose(got, dense_output(layer, x, window(N, N)), atol=1e-4,
                               rtol=1e-4)



def test_dense_warm_up_reads_every_key_for_its_training_steps_then_the_top_k():
    layer, x = make(TopKAttention(H, 1, index_heads=2, index_dim=3, dense_steps=2))
    dense = dense_output(layer, x, window(N, N))
    chosen = np.stack([sa.top_k_mask(s, 1) for s in indexer_numpy(layer, x)])
    sparse = np.stack([dense_output(layer, x[b:b + 1], chosen[b])[0] for b in range(2)])
    np.testing.assert_allclose(np.asarray(layer(x)), sparse, atol=1e-4, rtol=1e-4)
    for _ in range(2):                       # two training calls: dense, and counted
        np.testing.assert_allclose(np.asarray(layer(x, training=True)), dense, atol=1e-4,
                                   rtol=1e-4)
    assert float(layer.step) == 2.0
    np.testing.assert_allclose(np.asarray(layer(x, training=True)), sparse, atol=1e-4,
                               rtol=1e-4)

@pytest.mark.parametrize("k", [1, 3])
def test_top_k_matches_numpy_indexer_and_mask(k):
    layer, x = make(TopKAttention(H, k, index_heads=3, index_dim=2))
    scores = indexer_numpy(layer, x)
    got_scores = np.asarray(layer.index_scores(x))
    causal = window(N, N)
    np.testing.assert_allclose(got_scores[:, causal], scores[:, causal], atol=1e-4,
                               rtol=1e-4)
    expected = np.stack([sa.top_k_mask(s, k) for s in scores])
    chosen = np.asarray(layer.selected(x))
    np.testing.assert_array_equal(chosen, expected)
    assert list(chosen.sum(-1)[0]) == [min(k, t + 1) for t in range(N)]
    want = np.stack([dense_output(layer, x[b:b + 1], expected[b])[0] for b in range(2)])
    np.testing.assert_allclose(np.asarray(layer(x)), want, atol=1e-4, rtol=1e-4)
    assert not np.allclose(want, dense_output(layer, x, causal), atol=1e-3)


def test_kl_loss_is_added_and_matches_numpy():
    layer, x = make(TopKAttention(H, 2, kl_weight=0.5))
    layer(x)
    assert len(layer.losses) == 1
    got = float(layer.losses[0])
    xs, causal = x.astype(np.float64), window(N, N)
    q, k = xs @ kernel(layer, "query"), xs @ kernel(layer, "key")
    p = attend(q, k, np.broadcast_to(np.eye(N), (2, N, N)), causal)  # attention weights
    index = np.where(causal, indexer_numpy(layer, x), -1e9)
    log_q = index - np.log(np.sum(np.exp(index - index.max(-1, keepdims=True)), -1,
                                  keepdims=True)) - index.max(-1, keepdims=True)
    kl = np.sum(np.where(causal, p * (np.log(np.where(causal, p, 1)) - log_q), 0), -1)
    assert got >= 0
    np.testing.assert_allclose(got, 0.5 * kl.mean(), rtol=1e-3)


def test_indexer_learns_from_the_kl_loss_only():
    layer, x = make(TopKAttention(H, 3, index_heads=2, index_dim=3))
    x = tf.constant(x)
    index = [layer.kernels[n] for n in ("index_query", "index_key", "index_weight")]
    main = [layer.kernels[n] for n in ("query", "key", "value", "output")]
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        task = tf.reduce_sum(layer(x) ** 2)
        kl = layer.losses[0]
    for grad in tape.gradient(task, index):
        assert grad is None or not np.any(np.asarray(grad))
    assert all(np.any(np.asarray(g)) for g in tape.gradient(task, main))
    for grad in tape.gradient(kl, index):
        assert np.any(np.asarray(grad))
    for grad in tape.gradient(kl, [*main, x]):       # the target is a constant
        assert grad is None or not np.any(np.asarray(grad))


def force_gates(layer, gates):
    layer.kernels["gate"].assign(np.zeros(layer.kernels["gate"].shape, "float32"))
    layer.kernels["gate_bias"].assign(np.where(np.array(gates) > 0, 30.0, -30.0)
                                      .astype("float32"))


def test_nsa_with_only_the_window_gate_is_window_attention():
    layer, x = make(NativeSparseAttention(H, block_size=4, stride=2, select_size=3,
                                          num_selected=2, window=5))
    force_gates(layer, (0, 0, 1))
    np.testing.assert_allclose(np.asarray(layer.gates(x)), np.broadcast_to([0, 0, 1],
                               (2, N, 3)), atol=1e-6)
    want = dense_output(layer, x, window(N, 5), "window_key", "window_value")
    np.testing.assert_allclose(np.asarray(layer(x)), want, atol=1e-4, rtol=1e-4)


def test_nsa_compressed_branch_matches_numpy():
    layer, x = make(NativeSparseAttention(H, block_size=4, stride=2, window=3))
    force_gates(layer, (1, 0, 0))
    xs = x.astype(np.float64)
    pos = kernel(layer, "block_position")
    blocks = range(0, N - 4 + 1, 2)

    def compress(part):
        y = xs @ kernel(layer, f"compressed_{part}")
        flat = np.stack([(y[:, s:s + 4] + pos).reshape(2, -1) for s in blocks], axis=1)
        return flat @ kernel(layer, f"compress_{part}")

    visible = sa.nsa_compressed_mask(N, 4, 2)
    assert visible.shape == (N, len(blocks))
    out = attend(xs @ kernel(layer, "query"), compress("key"), compress("value"), visible)
    np.testing.assert_allclose(np.asarray(layer(x)), out @ kernel(layer, "output"),
                               atol=1e-4, rtol=1e-4)


def test_nsa_selection_keeps_first_and_own_block_and_is_causal():
    size, count = 3, 3
    layer, x = make(NativeSparseAttention(H, block_size=4, stride=2, select_size=size,
                                          num_selected=count))
    chosen = np.asarray(layer.selected(x))
    assert chosen.shape == (2, N, N)
    assert not np.any(chosen & ~window(N, N))
    for t in range(N):
        blocks = chosen[:, t]
        own = t // size
        assert np.all(blocks[:, 0]) and np.all(blocks[:, own * size:t + 1])
        per_block = [blocks[:, j * size:(j + 1) * size].any(-1) for j in range(own + 1)]
        assert np.all(np.sum(per_block, axis=0) == min(count, own + 1))
    force_gates(layer, (0, 1, 0))
    want = np.stack([dense_output(layer, x[b:b + 1], chosen[b], "selected_key",
                                  "selected_value")[0] for b in range(2)])
    np.testing.assert_allclose(np.asarray(layer(x)), want, atol=1e-4, rtol=1e-4)


def test_nsa_selects_the_blocks_the_compressed_branch_attends_to():
    layer, x = make(NativeSparseAttention(H, block_size=2, stride=2, select_size=2,
                                          num_selected=3))
    n_blocks = N // 2
    probs = np.zeros((2, N, n_blocks), "float32")
    probs[:, :, 2] = 1.0                     # all compressed attention on tokens 4..5
    chosen = np.asarray(layer.selected(x, tf.constant(probs)))
    assert np.all(chosen[:, 12, [0, 1, 4, 5, 12]]) and list(chosen[:, 12].sum(-1)) == [5, 5]


@pytest.mark.parametrize("layer", [
    WindowAttention(4, 3), TopKAttention(4, 5, index_heads=2, index_dim=3, kl_weight=0.2,
                                         dense_steps=7),
    NativeSparseAttention(4, block_size=6, stride=3, select_size=5, num_selected=4,
                          window=2)])
def test_config_round_trip(layer):
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(restored) is type(layer) and restored.get_config() == config


@pytest.mark.parametrize(("make_layer", "error", "message"), [
    (lambda: WindowAttention(4, 0), ValueError, "window"),
    (lambda: WindowAttention(4.0, 2), TypeError, "head_dim"),
    (lambda: TopKAttention(4, 0), ValueError, "top_k"),
    (lambda: TopKAttention(4, 2, kl_weight=-1.0), ValueError, "kl_weight"),
    (lambda: TopKAttention(4, 2, index_heads=0), ValueError, "index_heads"),
    (lambda: TopKAttention(4, 2, dense_steps=-1), ValueError, "dense_steps"),
    (lambda: NativeSparseAttention(4, block_size=4, stride=5), ValueError, "stride"),
    (lambda: NativeSparseAttention(4, num_selected=1), ValueError, "num_selected")])
def test_bad_arguments(make_layer, error, message):
    with pytest.raises(error, match=message):
        make_layer()


def test_masked_softmax_rows():
    scores = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], "float32")
    mask = np.array([[True, False, True], [False, False, False]])
    got = np.asarray(masked_softmax(scores, mask))
    np.testing.assert_allclose(got[0], [1 / (1 + np.e**2), 0, np.e**2 / (1 + np.e**2)],
                               rtol=1e-5)
    assert not got[1].any()

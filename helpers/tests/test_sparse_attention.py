"""Unit tests of helpers.sparse_attention: DSA's indexer, top-k and sparse attention, MLA over
the selected latents, NSA's three branches, and the cost per generated token."""

import json
import math

import numpy as np
import pytest

from helpers.attention import (
    LatentCache,
    MultiHeadLatentAttention,
    causal_mask,
    merge_heads,
    scaled_dot_product_attention,
    sliding_window_mask,
)
from helpers.latent_attention import attention_flops_per_token
from helpers.normalization import rms_norm
from helpers.positions import rotary_position_embedding
from helpers.sparse_attention import (
    SPARSE_PUBLISHED,
    DSAConfig,
    IndexKeyCache,
    LightningIndexer,
    NSAConfig,
    cache_bytes_per_token,
    compress_blocks,
    decode_cost,
    dsa_latent_attention,
    indexer_scores,
    native_sparse_attention,
    nsa_block_scores,
    nsa_compressed_attention,
    nsa_compressed_mask,
    nsa_selected_blocks,
    nsa_selection_attention,
    sparse_attention,
    top_k_mask,
)


def rng(seed=0):
    return np.random.default_rng(seed)


# --- the indexer's scores and the top-k ------------------------------------------------------

def test_indexer_scores_equal_a_loop_over_equation_1():
    r = rng(1)
    n, n_k, heads, dim = 3, 7, 4, 5
    q, k, w = r.normal(size=(n, heads, dim)), r.normal(size=(n_k, dim)), r.normal(size=(n, heads))
    got = indexer_scores(q, k, w, causal=False)
    for t in range(n):
        for s in range(n_k):
            want = sum(w[t, j] * max(q[t, j] @ k[s], 0.0) for j in range(heads))
            assert got[t, s] == pytest.approx(want, abs=1e-12)
    causal = indexer_scores(q, k, w)
    visible = causal_mask(n_k)[-n:]                       # the last n positions
    assert np.array_equal(np.isfinite(causal), visible)
    np.testing.assert_array_equal(causal[visible], got[visible])


def test_relu_cuts_negative_products():
    q = np.array([[[1.0], [1.0]]])                        # two heads, same query
    k = np.array([[-2.0], [3.0]])
    w = np.array([[1.0, 1.0]])
    scores = indexer_scores(q, k, w, causal=False)
    np.testing.assert_array_equal(scores, [[0.0, 6.0]])   # without ReLU: -4 and 6
    assert indexer_scores(-q, k, w, causal=False)[0, 0] == 4.0


@pytest.mark.parametrize("k", [1, 2, 3, 5, 50])
def test_top_k_counts_visibility_and_values(k):
    scores = indexer_scores(*(rng(2).normal(size=s) for s in ((6, 3, 4), (9, 4), (6, 3))))
    mask = top_k_mask(scores, k)
    visible = np.isfinite(scores)
    np.testing.assert_array_equal(mask.sum(axis=1), np.minimum(k, visible.sum(axis=1)))
    assert not np.any(mask & ~visible)
    for row, chosen, seen in zip(scores, mask, visible):
        if np.any(seen & ~chosen):
            assert row[chosen].min() >= row[seen & ~chosen].max()


def test_top_k_breaks_ties_by_lower_index_and_all_visible_is_causal():
    np.testing.assert_array_equal(top_k_mask([[2.0, 5.0, 2.0, 2.0]], 2), [[1, 1, 0, 0]])
    scores = indexer_scores(rng(3).normal(size=(5, 2, 3)), rng(4).normal(size=(5, 3)),
                            rng(5).normal(size=(5, 2)))
    np.testing.assert_array_equal(top_k_mask(scores, 5), causal_mask(5))


# --- attention over the selected keys --------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 4, 7])
@pytest.mark.parametrize("heads", [None, 3])
def test_sparse_attention_equals_dense_with_the_mask(k, heads):
    r = rng(6)
    n, n_k, d, d_v = 5, 9, 4, 3
    shape = (n, d) if heads is None else (n, heads, d)
    query, key, value = r.normal(size=shape), r.normal(size=(n_k, d)), r.normal(size=(n_k, d_v))
    scores = indexer_scores(r.normal(size=(n, 2, 4)), r.normal(size=(n_k, 4)),
                            r.normal(size=(n, 2)))
    selected = top_k_mask(scores, k)
    got = sparse_attention(query, key, value, selected)
    if heads is None:
        want, _ = scaled_dot_product_attention(query, key, value, selected)
    else:   # heads share the key, value and selection: (heads, n, d) against (n_k, d)
        want, _ = scaled_dot_product_attention(query.transpose(1, 0, 2), key, value, selected)
        want = want.transpose(1, 0, 2)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_sparse_attention_with_every_visible_key_is_causal_attention():
    r = rng(7)
    query, key, value = r.normal(size=(6, 2, 4)), r.normal(size=(6, 4)), r.normal(size=(6, 2))
    scores = indexer_scores(r.normal(size=(6, 2, 3)), r.normal(size=(6, 3)), r.normal(size=(6, 2)))
    got = sparse_attention(query, key, value, top_k_mask(scores, 6))
    want, _ = scaled_dot_product_attention(query.transpose(1, 0, 2), key, value, causal_mask(6))
    np.testing.assert_allclose(got, want.transpose(1, 0, 2), rtol=0, atol=1e-12)


def test_sparse_attention_reads_only_the_selected_keys():
    r = rng(8)
    query, key, value = r.normal(size=(3, 4)), r.normal(size=(5, 4)), r.normal(size=(5, 2))
    selected = np.zeros((3, 5), bool)
    selected[:, [0, 2]] = True
    selected[2] = False                                  # nothing: a zero row
    changed_key, changed_value = key.copy(), value.copy()
    changed_key[[1, 3, 4]] = 1e3
    changed_value[[1, 3, 4]] = np.nan_to_num(np.inf)
    first = sparse_attention(query, key, value, selected)
    np.testing.assert_array_equal(first, sparse_attention(query, changed_key,
                                                          changed_value, selected))
    np.testing.assert_array_equal(first[2], 0.0)


# --- the indexer beside MLA -------------------------------------------------------------------

def mla_and_indexer(seed=0):
    mla = MultiHeadLatentAttention.random(16, num_heads=4, head_dim=6, latent_dim=10,
                                          query_latent_dim=12, rope_dim=4, rng=rng(seed))
    indexer = LightningIndexer.random(16, query_latent_dim=12, index_heads=3, index_dim=8,
                                      rope_dim=4, rng=rng(seed + 100))
    return mla, indexer


def masked_mla(mla, x_all, selected):
    """The layer's own naive form (keys and values rebuilt per head) with a mask."""
    positions = np.arange(x_all.shape[1])
    latent, rope_key = mla.latents(x_all, positions)
    n = selected.shape[1]
    q_c, q_r = mla.queries(x_all[:, -n:], positions[-n:])
    heads, _ = mla._naive(q_c, q_r, latent, rope_key, selected[:, None])
    return merge_heads(heads) @ mla.w_o


@pytest.mark.parametrize("top_k", [1, 3, 6])
def test_dsa_decode_equals_the_mla_layer_with_the_top_k_mask(top_k):
    mla, indexer = mla_and_indexer()
    x = rng(9).normal(size=(2, 10, 16))
    cache, index_cache = LatentCache(1), IndexKeyCache(1)
    dsa_latent_attention(mla, indexer, x[:, :9], top_k=top_k, cache=cache,
                         index_cache=index_cache)                           # prefill
    out, selected = dsa_latent_attention(mla, indexer, x[:, 9:], top_k=top_k, cache=cache,
                                         index_cache=index_cache)           # one decode step
    assert out.shape == (2, 1, 16) and selected.shape == (2, 1, 10)
    np.testing.assert_array_equal(selected.sum(axis=-1), min(top_k, 10))
    np.testing.assert_allclose(out, masked_mla(mla, x, selected),
                               rtol=0, atol=1e-10)
    assert cache.length == index_cache.length == 10
    assert index_cache.keys(0).shape == (2, 10, 8)


def test_dsa_selection_is_the_top_k_of_the_indexer_scores():
    mla, indexer = mla_and_indexer(1)
    x = rng(10).normal(size=(1, 8, 16))
    _, selected = dsa_latent_attention(mla, indexer, x, top_k=3, cache=LatentCache(1),
                                       index_cache=IndexKeyCache(1))
    c_q = rms_norm(x @ mla.w_dq, mla.q_norm)
    np.testing.assert_array_equal(selected[0], top_k_mask(indexer.scores(x, c_q)[0], 3))


def test_dsa_with_k_at_least_n_is_the_plain_mla_decode():
    mla, indexer = mla_and_indexer(2)
    x = rng(11).normal(size=(2, 7, 16))
    cache, index_cache, plain = LatentCache(1), IndexKeyCache(1), LatentCache(1)
    dsa_latent_attention(mla, indexer, x[:, :6], top_k=7, cache=cache, index_cache=index_cache)
    mla(x[:, :6], cache=plain)
    out, selected = dsa_latent_attention(mla, indexer, x[:, 6:], top_k=7, cache=cache,
                                         index_cache=index_cache)
    want, _ = mla(x[:, 6:], cache=plain)
    assert selected.all()
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-10)


def test_indexer_follows_the_released_indexer():
    r = rng(21)
    w_q, w_k, w_w = r.normal(size=(12, 3 * 8)), r.normal(size=(16, 8)), r.normal(size=(16, 3))
    scale, bias = r.normal(size=8), r.normal(size=8)
    indexer = LightningIndexer(w_q, w_k, w_w, scale, bias, index_heads=3, rope_dim=4)
    x, c_q = r.normal(size=(2, 5, 16)), r.normal(size=(2, 5, 12))
    positions = np.arange(3, 8)
    q = (c_q @ w_q).reshape(2, 5, 3, 8)                  # wq_b(qr), heads of index_dim
    q_pe = rotary_position_embedding(q[..., :4].transpose(0, 2, 1, 3), positions)
    np.testing.assert_allclose(indexer.queries(c_q, positions)[..., :4],
                               q_pe.transpose(0, 2, 1, 3), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(indexer.queries(c_q, positions)[..., 4:], q[..., 4:])
    k = x @ w_k                                          # k_norm(wk(x)): LayerNorm
    k = (k - k.mean(-1, keepdims=True)) / np.sqrt(k.var(-1, keepdims=True) + 1e-6)
    k = k * scale + bias
    np.testing.assert_allclose(indexer.keys(x, positions)[..., 4:], k[..., 4:],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(indexer.keys(x, positions)[..., :4],
                               rotary_position_embedding(k[..., :4], positions),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(indexer.weights(x), x @ w_w * 3 ** -0.5 * 8 ** -0.5,
                               rtol=0, atol=1e-12)


def test_indexer_rope_makes_scores_depend_on_offsets_only():
    _, indexer = mla_and_indexer(3)
    x, c_q = rng(12).normal(size=(1, 1, 16)), rng(13).normal(size=(1, 1, 12))
    def score(i, j):
        q, k = indexer.queries(c_q, [i]), indexer.keys(x, [j])
        return indexer_scores(q[0], k[0], indexer.weights(x)[0], causal=False)[0, 0]
    assert score(5, 2) == pytest.approx(score(9, 6), abs=1e-12)
    assert score(5, 2) != pytest.approx(score(5, 4), abs=1e-6)
    plain = LightningIndexer(indexer.w_q, indexer.w_k, indexer.w_weights, index_heads=3)
    np.testing.assert_array_equal(plain.keys(x, [0]), plain.keys(x, [7]))


def test_index_key_cache_bytes_per_token():
    v32 = SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"]
    assert cache_bytes_per_token(v32) == {"attention": (512 + 64) * 2, "indexer": 128 + 4}


# --- Native Sparse Attention ------------------------------------------------------------------

def test_compress_blocks_counts_and_means():
    key, value = rng(14).normal(size=(50, 3)), rng(15).normal(size=(50, 2))
    k_cmp, v_cmp = compress_blocks(key, value, 8, 4)
    assert len(k_cmp) == (50 - 8) // 4 + 1 == 11
    np.testing.assert_allclose(k_cmp[2], key[8:16].mean(axis=0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(v_cmp[10], value[40:48].mean(axis=0), rtol=0, atol=1e-15)
    k_max, _ = compress_blocks(key, value, 8, 4, phi=lambda b: b.max(axis=1))
    np.testing.assert_array_equal(k_max[1], key[4:12].max(axis=0))
    assert compress_blocks(key[:5], value[:5], 8, 4)[0].shape == (0, 3)


def test_compressed_mask_follows_the_paper_count():
    mask = nsa_compressed_mask(70, 32, 16)
    for t in range(70):
        want = max(0, (t + 1 - 32) // 16 + 1)
        assert mask[t].sum() == want and mask[t, :want].all()


def nsa_inputs(n=40, heads=2, seed=16):
    r = rng(seed)
    return r.normal(size=(n, heads, 4)), r.normal(size=(n, 4)), r.normal(size=(n, 3))


def dense(query, key, value, mask):
    out, weights = scaled_dot_product_attention(query.transpose(1, 0, 2), key, value, mask)
    return out.transpose(1, 0, 2), weights.transpose(1, 0, 2)


def test_compressed_branch_equals_dense_attention_over_compressed_keys():
    query, key, value = nsa_inputs()
    out, p_cmp = nsa_compressed_attention(query, key, value, block_len=8, stride=4)
    k_cmp, v_cmp = compress_blocks(key, value, 8, 4)
    mask = nsa_compressed_mask(40, 8, 4)
    want, weights = dense(query, k_cmp, v_cmp, mask)
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p_cmp, weights, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(out[:7], 0.0)          # no complete block yet


def test_block_scores_follow_equation_9_weights():
    m = (256 - 32) // 16 + 1
    for i in range(m):
        p = np.zeros((1, m))
        p[0, i] = 1.0
        got = nsa_block_scores(p, 256, block_len=32, stride=16, select_len=64)[0]
        want = [sum(1 for s in range(16 * i, 16 * i + 32, 16)   # d-steps of block i ...
                    if 64 * j <= s < 64 * (j + 1)) for j in range(4)]   # ... inside block j
        np.testing.assert_array_equal(got, want)
    p = np.arange(m, dtype=float)[None]
    got = nsa_block_scores(p, 256, block_len=32, stride=16, select_len=64)[0]
    weights = [1, 2, 2, 2, 1]                            # equation (9): 4j-1 .. 4j+3 here
    assert got[1] == sum(w * p[0, 3 + s] for s, w in enumerate(weights))
    heads = np.stack([p, 2 * p], axis=1)                 # (n, heads, m): summed (eq. 10)
    np.testing.assert_array_equal(nsa_block_scores(heads, 256, block_len=32, stride=16,
                                                   select_len=64)[0], 3 * got)


def test_selected_blocks_keep_initial_and_local_blocks():
    scores = rng(17).random((40, 10))
    blocks = nsa_selected_blocks(scores, select_len=4, num_selected=5)
    for t in range(40):
        current = t // 4
        visible = current + 1
        assert blocks[t].sum() == min(5, visible)
        assert blocks[t, 0] and blocks[t, current] and (current == 0 or blocks[t, current - 1])
        assert not blocks[t, current + 1:].any()
        free = [j for j in range(1, current - 1)]
        chosen = [j for j in free if blocks[t, j]]
        others = [j for j in free if not blocks[t, j]]
        if chosen and others:
            assert min(scores[t, chosen]) >= max(scores[t, others])


def test_selection_and_window_branches_equal_dense_attention_under_their_masks():
    query, key, value = nsa_inputs()
    out, branches = native_sparse_attention(query, key, value, np.full((40, 3), 0.5),
                                            block_len=8, stride=4, select_len=8,
                                            num_selected=3, window=6)
    blocks = branches["blocks"]
    token_mask = blocks[:, np.arange(40) // 8] & causal_mask(40)
    np.testing.assert_allclose(branches["selected"], dense(query, key, value, token_mask)[0],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(nsa_selection_attention(query, key, value, blocks,
                                                       select_len=8),
                               branches["selected"], rtol=0, atol=0)
    np.testing.assert_allclose(branches["window"],
                               dense(query, key, value, sliding_window_mask(40, 6))[0],
                               rtol=0, atol=1e-12)
    assert not np.array_equal(token_mask, causal_mask(40))   # really sparse
    assert blocks.sum(axis=1).max() == 3


def test_gates_select_a_branch_and_mix_linearly():
    query, key, value = nsa_inputs(seed=18)
    sizes = dict(block_len=8, stride=4, select_len=16, num_selected=3, window=5)
    _, branches = native_sparse_attention(query, key, value, np.zeros((40, 3)), **sizes)
    for c, name in enumerate(["compressed", "selected", "window"]):
        gates = np.zeros((40, 3))
        gates[:, c] = 1.0
        out, _ = native_sparse_attention(query, key, value, gates, **sizes)
        np.testing.assert_array_equal(out, branches[name])
    gates = rng(19).random((40, 2, 3))                     # per query and head
    out, _ = native_sparse_attention(query, key, value, gates, **sizes)
    want = sum(gates[..., c:c + 1] * branches[name]
               for c, name in enumerate(["compressed", "selected", "window"]))
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-15)


def test_nsa_single_head_query():
    query, key, value = nsa_inputs(heads=1, seed=20)
    out, branches = native_sparse_attention(query[:, 0], key, value, np.full((40, 3), 0.3),
                                            block_len=4, stride=4, select_len=4,
                                            num_selected=4, window=8)
    multi, _ = native_sparse_attention(query, key, value, np.full((40, 3), 0.3), block_len=4,
                                       stride=4, select_len=4, num_selected=4, window=8)
    assert out.shape == (40, 3)
    np.testing.assert_allclose(out, multi[:, 0], rtol=0, atol=1e-15)


# --- cost per generated token -----------------------------------------------------------------

def test_published_numbers_come_from_the_sources():
    v32, nsa = SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"], SPARSE_PUBLISHED["NSA 27B"]
    released = json.loads("""{"n_layers": 61, "dim": 7168, "n_heads": 128, "q_lora_rank": 1536,
        "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
        "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048}""")  # config_671B_v3.2
    m = v32.mla
    assert (m.num_layers, m.d_model, m.num_heads, m.query_latent_dim, m.latent_dim,
            m.head_dim, m.rope_dim, v32.index_heads, v32.index_dim, v32.top_k) == tuple(
        released.values())
    assert (nsa.num_layers, nsa.d_model, nsa.num_heads, nsa.num_kv_heads, nsa.head_dim,
            nsa.value_dim, nsa.block_len, nsa.stride, nsa.select_len, nsa.num_selected,
            nsa.window) == (30, 2560, 64, 4, 192, 128, 32, 16, 64, 16, 512)
    for config in (v32, nsa):
        assert "config_671B_v3.2.json" in config.source or "2502.11089" in config.source


def test_dsa_attention_stops_growing_after_top_k_and_the_indexer_grows():
    v32 = SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"]
    costs = [decode_cost(v32, n) for n in (1024, 2048, 4096, 65536, 131072)]
    assert costs[0]["attention_flops"] < costs[1]["attention_flops"]
    assert len({c["attention_flops"] for c in costs[1:]}) == 1
    assert len({c["attention_bytes"] for c in costs[1:]}) == 1
    indexer = [c["indexer_flops"] for c in costs]
    assert indexer == sorted(indexer) and len(set(indexer)) == len(indexer)
    assert costs[1]["attended_keys"] == costs[-1]["attended_keys"] == v32.top_k


def test_cost_hand_check_at_128k():
    v32 = SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"]
    n = 131072
    cost = decode_cost(v32, n)
    per_key = 2 * 128 * (512 + 64) + 2 * 128 * 512      # scores + weighted sum, absorbed
    assert per_key == 278528
    assert cost["attention_flops"] == 2048 * 278528 == 570425344
    assert cost["indexer_flops"] == n * (2 * 64 * 128 + 2 * 64) == 2164260864
    assert cost["attention_bytes"] == 2048 * 1152 and cost["indexer_bytes"] == n * 132
    full = decode_cost(v32, n, dense=True)
    assert full["attention_flops"] == n * 278528 and full["indexer_flops"] == 0
    assert full["attention_bytes"] == n * 1152


def test_dense_mla_cost_matches_chapter_12_accounting():
    v32 = SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"]
    for n in (1, 100, 5000):
        step = (attention_flops_per_token(v32.mla, n + 1, phase="decode", absorbed=True)
                - attention_flops_per_token(v32.mla, n, phase="decode", absorbed=True))
        assert step / v32.mla.num_layers == decode_cost(v32, 1, dense=True)["attention_flops"]
        assert decode_cost(v32, n, dense=True)["attention_flops"] * v32.mla.num_layers == (
            attention_flops_per_token(v32.mla, n, phase="decode", absorbed=True)
            - attention_flops_per_token(v32.mla, 1, phase="decode", absorbed=True)
            + decode_cost(v32, 1, dense=True)["attention_flops"] * v32.mla.num_layers)


def test_nsa_cost_counts_the_three_branches():
    nsa = SPARSE_PUBLISHED["NSA 27B"]
    n = 65536
    cost = decode_cost(nsa, n)
    keys = (n - 32) // 16 + 1 + 16 * 64 + 512
    assert cost["attended_keys"] == keys == 5631
    assert cost["attention_flops"] == keys * 64 * (2 * 192 + 2 * 128)
    assert cost["attention_bytes"] == keys * 4 * (192 + 128) * 2
    assert decode_cost(nsa, 10)["attended_keys"] == 0 + 10 + 10
    assert decode_cost(nsa, n, dense=True)["attended_keys"] == n
    assert cache_bytes_per_token(nsa) == {"attention": 2560, "compressed": 160.0}


# --- bad input ---------------------------------------------------------------------------------

def test_errors():
    q, k, w = np.ones((2, 3, 4)), np.ones((5, 4)), np.ones((2, 3))
    with pytest.raises(ValueError, match="index_dim"):
        indexer_scores(q, np.ones((5, 3)), w)
    with pytest.raises(ValueError, match=r"weights must have shape \(n, index_heads\)"):
        indexer_scores(q, k, np.ones((2, 2)))
    with pytest.raises(ValueError, match="must not exceed n_k"):
        indexer_scores(q, k[:1], w)
    with pytest.raises(ValueError, match="k must be an integer in"):
        top_k_mask(np.zeros((2, 2)), 0)
    with pytest.raises(TypeError, match="k must be an integer"):
        top_k_mask(np.zeros((2, 2)), 2.0)
    with pytest.raises(ValueError, match=r"\+inf"):
        top_k_mask([[np.inf, 0.0]], 1)
    with pytest.raises(ValueError, match="selected must have shape"):
        sparse_attention(np.ones((2, 4)), k, np.ones((5, 2)), np.ones((2, 4), bool))
    with pytest.raises(TypeError, match="selected must be boolean"):
        sparse_attention(np.ones((2, 4)), k, np.ones((5, 2)), np.ones((2, 5)))
    with pytest.raises(ValueError, match="n_k"):
        sparse_attention(np.ones((2, 4)), k, np.ones((4, 2)), np.ones((2, 5), bool))
    with pytest.raises(ValueError, match=r"\(n, d_k\) or \(n, num_heads, d_k\)"):
        sparse_attention(np.ones((1, 2, 2, 4)), k, np.ones((5, 2)), np.ones((2, 5), bool))
    key, value = np.ones((20, 4)), np.ones((20, 2))
    for bad, match in (({"block_len": 0, "stride": 1}, "block_len must be"),
                       ({"block_len": 4, "stride": 0}, "stride must be"),
                       ({"block_len": 4, "stride": 5}, "stride must be at most block_len")):
        with pytest.raises(ValueError, match=match):
            compress_blocks(key, value, **bad)
    with pytest.raises(TypeError, match="phi must be"):
        compress_blocks(key, value, 4, 2, phi=3)
    with pytest.raises(ValueError, match="phi must map"):
        compress_blocks(key, value, 4, 2, phi=lambda b: b)
    with pytest.raises(ValueError, match="equation \\(9\\)"):
        nsa_block_scores(np.ones((20, 5)), 20, block_len=8, stride=4, select_len=6)
    with pytest.raises(ValueError, match="equation \\(9\\)"):
        nsa_block_scores(np.ones((20, 5)), 20, block_len=8, stride=4, select_len=4)
    with pytest.raises(ValueError, match="p_cmp must have shape"):
        nsa_block_scores(np.ones((20, 3)), 20, block_len=8, stride=4, select_len=8)
    with pytest.raises(ValueError, match="num_selected must be an integer in"):
        nsa_selected_blocks(np.ones((20, 5)), select_len=4, num_selected=2)
    with pytest.raises(ValueError, match="at least 5 blocks"):
        nsa_selected_blocks(np.ones((20, 4)), select_len=4, num_selected=3)
    with pytest.raises(ValueError, match="blocks must have shape"):
        nsa_selection_attention(np.ones((20, 4)), key, value, np.ones((20, 2), bool),
                                select_len=4)
    sizes = dict(block_len=4, stride=2, select_len=4, num_selected=3, window=4)
    query = np.ones((20, 2, 4))
    with pytest.raises(ValueError, match="gates must lie in"):
        native_sparse_attention(query, key, value, np.full((20, 3), 1.5), **sizes)
    with pytest.raises(ValueError, match="gates must have shape"):
        native_sparse_attention(query, key, value, np.ones((20, 2)), **sizes)
    with pytest.raises(ValueError, match="gates must have shape"):
        native_sparse_attention(query[:, 0], key, value, np.ones((20, 2, 3)), **sizes)
    with pytest.raises(ValueError, match="num_selected"):
        native_sparse_attention(query, key, value, np.ones((20, 3)), **sizes | {"num_selected": 2})
    with pytest.raises(ValueError, match="window must be"):
        native_sparse_attention(query, key, value, np.ones((20, 3)), **sizes | {"window": 0})
    with pytest.raises(ValueError, match="same length n"):
        nsa_compressed_attention(query[:10], key, value, block_len=4, stride=2)


def test_errors_of_the_indexer_and_cost():
    mla, indexer = mla_and_indexer()
    with pytest.raises(ValueError, match="index_heads=3 must divide"):
        LightningIndexer(np.ones((12, 10)), np.ones((16, 3)), np.ones((16, 3)), index_heads=3)
    with pytest.raises(ValueError, match="w_k must have shape"):
        LightningIndexer(np.ones((12, 9)), np.ones((16, 4)), np.ones((16, 3)), index_heads=3)
    with pytest.raises(ValueError, match="rope_dim must be even"):
        LightningIndexer(np.ones((12, 9)), np.ones((16, 3)), np.ones((16, 3)), index_heads=3,
                         rope_dim=1)
    other = LightningIndexer.random(8, query_latent_dim=12, index_heads=2, index_dim=4,
                                    rng=rng())
    x = np.ones((1, 2, 16))
    with pytest.raises(ValueError, match="indexer must have the layer's d_model"):
        dsa_latent_attention(mla, other, x, top_k=2, cache=LatentCache(1),
                             index_cache=IndexKeyCache(1))
    cache = LatentCache(1)
    mla(x, cache=cache)
    with pytest.raises(ValueError, match="same"):
        dsa_latent_attention(mla, indexer, x, top_k=2, cache=cache, index_cache=IndexKeyCache(1))
    with pytest.raises(TypeError, match="cache must be a LatentCache"):
        dsa_latent_attention(mla, indexer, x, top_k=2, cache=None, index_cache=IndexKeyCache(1))
    with pytest.raises(ValueError, match="top_k must be an integer in"):
        dsa_latent_attention(mla, indexer, x, top_k=0, cache=LatentCache(1),
                             index_cache=IndexKeyCache(1))
    with pytest.raises(TypeError, match="DSAConfig or an NSAConfig"):
        decode_cost(SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"].mla, 10)
    with pytest.raises(ValueError, match="context must be an integer in"):
        decode_cost(SPARSE_PUBLISHED["NSA 27B"], 0)
    assert isinstance(SPARSE_PUBLISHED["NSA 27B"], NSAConfig)
    assert isinstance(SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"], DSAConfig)
    assert math.isclose(cache_bytes_per_token(SPARSE_PUBLISHED["NSA 27B"])["compressed"], 160)

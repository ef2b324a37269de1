"""Unit tests of helpers.decoder_only: the KV cache, cached generation, bad input."""

import numpy as np
import pytest

from helpers.attention import (
    GatedAttention,
    SinkLogitAttention,
    causal_mask,
    project_heads,
    sliding_window_mask,
    softmax,
)
from helpers.decoder_only import (
    DecoderOnlyLayer,
    DecoderOnlyTransformer,
    GroupedQueryAttention,
    KVCache,
    LatentCache,
    MultiHeadLatentAttention,
    greedy_generate,
    visible_keys,
)
from helpers.normalization import RMSNorm
from helpers.transformer import SwiGLU, alibi_bias, rotary_position_embedding


def model(num_kv_heads=2, window=None, dtype=np.float64, seed=0):
    return DecoderOnlyTransformer.random(
        11, d_model=8, num_query_heads=4, num_kv_heads=num_kv_heads, d_ff=16, num_layers=2,
        max_length=40, window=window, rng=np.random.default_rng(seed), dtype=dtype)


def prompt(n=5, batch=3, seed=1):
    return np.random.default_rng(seed).integers(0, 11, size=(batch, n))


def test_visible_keys_from_position_zero_are_the_course_masks():
    positions = np.arange(6)
    assert np.array_equal(visible_keys(positions, positions), causal_mask(6))
    assert np.array_equal(visible_keys(positions, positions, 3), sliding_window_mask(6, 3))


def test_visible_keys_of_new_positions_are_the_last_rows_of_the_full_mask():
    full = sliding_window_mask(9, 4)
    assert np.array_equal(visible_keys([6, 7, 8], np.arange(9), 4), full[6:])


@pytest.mark.parametrize("num_kv_heads, window", [(4, None), (2, None), (1, None), (2, 3)])
def test_cached_generation_gives_the_logits_and_tokens_of_recomputation(num_kv_heads, window):
    m = model(num_kv_heads, window)
    ids, logits = greedy_generate(m, prompt(), 12)
    cached_ids, cached_logits = greedy_generate(m, prompt(), 12, cache=m.new_cache())
    assert np.array_equal(ids, cached_ids)
    assert np.abs(logits - cached_logits).max() < 1e-10


def test_a_ring_buffer_of_window_entries_gives_the_full_cache_outputs():
    m = model(2, window=3)
    ids, logits = greedy_generate(m, prompt(n=6), 10, cache=m.new_cache())
    ring = m.new_cache(ring=True)
    ring_ids, ring_logits = greedy_generate(m, prompt(n=6), 10, cache=ring)
    assert np.array_equal(ids, ring_ids) and np.allclose(logits, ring_logits, atol=1e-12)
    assert ring.keys(0).shape[-2] == 3 and ring.positions().tolist() == [12, 13, 14]  # 6 + 9 fed in


def test_without_a_window_the_ring_buffer_would_change_the_outputs():
    m = model(2)
    ids, logits = greedy_generate(m, prompt(n=6), 6, cache=m.new_cache())
    short = KVCache(2, max_entries=3)
    _, short_logits = greedy_generate(m, prompt(n=6), 6, cache=short)
    assert not np.allclose(logits[:, 1:], short_logits[:, 1:])


def test_full_cache_bytes_grow_by_the_formula_per_token():
    m = model(2, dtype=np.float32)
    cache = m.new_cache()
    greedy_generate(m, prompt(n=7), 5, cache=cache)
    per_token = 2 * 2 * 2 * 2 * 4        # keys and values x layers x kv heads x head_dim x 4
    assert m.kv_cache_bytes_per_token() == per_token
    assert cache.length == 7 + 4 and cache.nbytes == 3 * cache.length * per_token  # batch 3
    assert cache.keys(1).shape == (3, 2, 11, 2) and cache.keys(1).dtype == np.float32


def test_the_cache_holds_the_keys_recomputation_would_make():
    m = model(1)
    ids = prompt(n=8)
    cache = m.new_cache()
    m(ids[:, :5], cache=cache)
    m(ids[:, 5:], cache=cache)
    x = m.embedding[ids] * np.sqrt(m.d_model) + m._table[:8]
    layer = m.layers[0]
    keys, values = layer.self_attention.keys_values(layer.self_attention_norm(x))
    assert np.allclose(cache.keys(0), keys) and np.allclose(cache.values(0), values)


def test_model_counts_params_and_rejects_bad_input():
    m = model(2)
    attention = 8 * 4 * 2 + 4 * 2 + 2 * (8 * 2 * 2 + 2 * 2) + 4 * 2 * 8 + 8
    layer = attention + (8 * 16 + 16 + 16 * 8 + 8) + 2 * 16
    assert m.count_params() == 11 * 8 + 2 * layer + 16 + 8 * 11 + 11
    with pytest.raises(ValueError, match="ids"):
        m(np.array([[1, 11]]))
    with pytest.raises(ValueError, match="max_length=40"):
        m(np.zeros((1, 41), int))
    with pytest.raises(ValueError, match="empty KVCache"):
        cache = m.new_cache()
        m(prompt(), cache=cache)
        greedy_generate(m, prompt(), 2, cache=cache)
    with pytest.raises(ValueError, match="window is None"):
        m.new_cache(ring=True)


def test_grouped_query_attention_layer_rejects_kernels_that_do_not_fit():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="must divide num_query_heads=4"):
        GroupedQueryAttention(rng.normal(size=(8, 4, 2)), rng.normal(size=(8, 3, 2)),
                              rng.normal(size=(8, 3, 2)), rng.normal(size=(4, 2, 8)))
    with pytest.raises(ValueError, match="value_kernel must have shape"):
        GroupedQueryAttention(rng.normal(size=(8, 4, 2)), rng.normal(size=(8, 2, 2)),
                              rng.normal(size=(8, 1, 2)), rng.normal(size=(4, 2, 8)))


def test_kv_cache_rejects_bad_updates():
    cache = KVCache(2)
    with pytest.raises(ValueError, match="layer"):
        cache.update(2, np.ones((1, 1, 1, 2)), np.ones((1, 1, 1, 2)))
    with pytest.raises(ValueError, match="must agree"):
        cache.update(0, np.ones((1, 1, 2, 2)), np.ones((1, 1, 1, 2)))
    with pytest.raises(ValueError, match="empty"):
        cache.keys(1)
    with pytest.raises(ValueError, match="max_entries"):
        KVCache(1, max_entries=0)


# --- positions: sinusoidal, RoPE, ALiBi, none ------------------------------------------------

def positioned(position, num_kv_heads=2, window=None, max_length=40, num_layers=2):
    return DecoderOnlyTransformer.random(
        11, d_model=8, num_query_heads=4, num_kv_heads=num_kv_heads, d_ff=16,
        num_layers=num_layers,
        max_length=max_length, window=window, rng=np.random.default_rng(0), dtype=np.float64,
        position=position)


@pytest.mark.parametrize("position", ["rope", "alibi", "none"])
@pytest.mark.parametrize("num_kv_heads, window", [(4, None), (1, None), (2, 3)])
def test_cached_generation_agrees_for_every_position(position, num_kv_heads, window):
    m = positioned(position, num_kv_heads, window)
    ids, logits = greedy_generate(m, prompt(), 10)
    cached_ids, cached_logits = greedy_generate(m, prompt(), 10, cache=m.new_cache())
    assert np.array_equal(ids, cached_ids) and np.abs(logits - cached_logits).max() < 1e-10
    if window is not None:
        ring_ids, ring_logits = greedy_generate(m, prompt(), 10, cache=m.new_cache(ring=True))
        assert np.array_equal(ids, ring_ids) and np.abs(logits - ring_logits).max() < 1e-10


def test_the_rope_cache_holds_rotated_keys():
    m = positioned("rope", 1)
    ids = prompt(n=8)
    cache = m.new_cache()
    m(ids[:, :5], cache=cache)
    m(ids[:, 5:], cache=cache)
    x = m.embedding[ids] * np.sqrt(m.d_model)                  # no table added
    layer = m.layers[0]
    keys, _ = layer.self_attention.keys_values(layer.self_attention_norm(x))
    assert np.allclose(cache.keys(0), rotary_position_embedding(keys))
    assert not np.allclose(cache.keys(0), keys)


def test_alibi_weights_are_the_softmax_of_scores_plus_bias():
    m = positioned("alibi", 4)
    ids = prompt(n=6, batch=1)
    _, weights = m(ids, return_attention_scores=True)
    x = m.embedding[ids] * np.sqrt(m.d_model)
    attention = m.layers[0].self_attention
    h = m.layers[0].self_attention_norm(x)
    q = project_heads(h, attention.query_kernel, attention.query_bias)
    k, _ = attention.keys_values(h)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(attention.head_dim) + alibi_bias(4, 6)
    expected = softmax(np.where(causal_mask(6), scores, -np.inf))
    assert np.allclose(weights[0], expected)


def test_without_positions_one_layer_ignores_the_order_of_earlier_tokens():
    """Causal attention alone sees the last token and the *set* before it (in one layer;
    a second layer sees earlier positions' own prefixes, which do change)."""
    ids = np.array([[1, 2, 3, 4, 5, 6]])
    shuffled = np.array([[4, 2, 5, 1, 3, 6]])                 # the last token stays
    for position, same in [("none", True), ("rope", False), ("alibi", False),
                           ("sinusoidal", False)]:
        m = positioned(position, num_layers=1)
        close = np.allclose(m(ids)[:, -1], m(shuffled)[:, -1])
        assert close == same, position


def test_rope_and_alibi_models_need_no_max_length_but_sinusoidal_does():
    for position in ("rope", "alibi", "none"):
        m = positioned(position, max_length=None)
        assert m(np.zeros((1, 60), int)).shape == (1, 60, 11) and m.max_length is None
    with pytest.raises(ValueError, match="max_length must be an integer for position="):
        positioned("sinusoidal", max_length=None)


def test_the_model_and_its_layers_must_agree_on_position():
    rope = positioned("rope")
    with pytest.raises(ValueError, match="position='alibi' needs every layer's attention"):
        DecoderOnlyTransformer(rope.embedding, rope.layers, rope.final_norm,
                               rope.output_kernel, rope.output_bias, max_length=None,
                               position="alibi")
    with pytest.raises(ValueError, match="position must be one of 'sinusoidal'"):
        positioned("learned")
    with pytest.raises(ValueError, match="position must be one of 'none', 'rope', 'alibi'"):
        GroupedQueryAttention.random(8, 2, 1, rng=np.random.default_rng(0), position="x")


def test_with_rope_frequencies_changes_only_the_rotation():
    from helpers.transformer import rope_frequencies  # noqa: PLC0415 - only this test

    m = positioned("rope", 1)
    ids = prompt(n=8)
    head_dim = m.layers[0].self_attention.head_dim
    same = m.with_rope_frequencies(rope_frequencies(head_dim))
    assert np.allclose(same(ids), m(ids)) and m.layers[0].self_attention.rope_frequencies is None
    slower = m.with_rope_frequencies(rope_frequencies(head_dim, factor=4,
                                                      method="interpolation"))
    assert not np.allclose(slower(ids), m(ids))
    assert np.allclose(slower(ids[:, :1]), m(ids[:, :1]))     # position 0 is not turned
    assert np.allclose(m.with_rope_frequencies(None)(ids), m(ids))
    with pytest.raises(ValueError, match="position='rope'"):
        positioned("alibi", 1).with_rope_frequencies(None)
    with pytest.raises(ValueError, match="frequencies must have shape"):
        m.with_rope_frequencies(np.ones(head_dim // 2 + 1))


LATENT = {"latent_dim": 6, "query_latent_dim": 10, "rope_dim": 2}


def latent_model(seed=0, dtype=np.float64):
    return DecoderOnlyTransformer.random(
        11, d_model=8, num_query_heads=4, num_kv_heads=4, d_ff=16, num_layers=2,
        max_length=40, rng=np.random.default_rng(seed), dtype=dtype, latent=LATENT)


def test_latent_model_caches_latents_and_generates_as_recomputation_does():
    m = latent_model()
    ids, logits = greedy_generate(m, prompt(), 12)
    cache = m.new_cache()
    cached_ids, cached_logits = greedy_generate(m, prompt(), 12, cache=cache)
    assert isinstance(cache, LatentCache) and cache.length == 5 + 12 - 1
    assert np.array_equal(ids, cached_ids)
    assert np.abs(logits - cached_logits).max() < 1e-10
    assert cache.latents(1).shape == (3, 16, 6) and cache.rope_keys(1).shape == (3, 16, 2)


def test_latent_cache_bytes_per_token_are_latent_plus_rope_key_per_layer():
    m = latent_model(dtype=np.float32)
    cache = m.new_cache()
    m(prompt(n=7), cache=cache)
    assert m.kv_cache_bytes_per_token() == 2 * (6 + 2) * 4
    assert cache.nbytes == 3 * 7 * m.kv_cache_bytes_per_token()


def test_latent_layers_are_multi_head_latent_attention_and_reject_a_window():
    m = latent_model()
    assert all(isinstance(layer.self_attention, MultiHeadLatentAttention) for layer in m.layers)
    assert m.uses_latent_attention and not model().uses_latent_attention
    with pytest.raises(ValueError, match="window=3 needs grouped-query attention"):
        DecoderOnlyTransformer(m.embedding, m.layers, m.final_norm, m.output_kernel,
                               m.output_bias, max_length=40, window=3)
    with pytest.raises(ValueError, match="latent must have the keys"):
        DecoderOnlyTransformer.random(11, d_model=8, num_query_heads=4, num_kv_heads=4,
                                      d_ff=16, num_layers=1, max_length=9,
                                      rng=np.random.default_rng(0), latent={"latent_dim": 6})


def test_latent_attention_rejects_a_mask_other_than_the_causal_one():
    attention = latent_model().layers[0].self_attention
    x = np.random.default_rng(2).normal(size=(1, 5, 8))
    positions = np.arange(5)
    out, _ = attention.attend(x, positions, causal_mask(5))
    assert np.allclose(out, attention(x)[0], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="must be the causal mask"):
        attention.attend(x, positions, sliding_window_mask(5, 2))


def test_visible_keys_with_sinks_keep_the_first_positions_in_every_window():
    mask = visible_keys(np.arange(8), np.arange(8), 3, sinks=2)
    expected = sliding_window_mask(8, 3) | (causal_mask(8) & (np.arange(8) < 2)[None, :])
    assert np.array_equal(mask, expected)
    assert np.array_equal(visible_keys(np.arange(8), np.arange(8), 3, sinks=0),
                          sliding_window_mask(8, 3))
    with pytest.raises(ValueError, match="sinks=2 needs a window"):
        visible_keys([1], [0, 1], sinks=2)
    with pytest.raises(ValueError, match="sinks"):
        visible_keys([1], [0, 1], 2, sinks=-1)


def test_with_window_shares_the_weights_and_equals_a_model_built_with_that_window():
    full = model()
    windowed = full.with_window(3, sinks=1)
    assert windowed.embedding is full.embedding and windowed.layers is full.layers
    assert (full.window, full.sinks, windowed.window, windowed.sinks) == (None, 0, 3, 1)
    ids = prompt(n=9)
    cache = windowed.new_cache()
    stepwise = np.concatenate([windowed(ids[:, t:t + 1], cache=cache) for t in range(9)],
                              axis=1)
    np.testing.assert_allclose(stepwise, windowed(ids), atol=1e-12)
    assert not np.allclose(windowed(ids)[:, -1], full(ids)[:, -1])
    assert not np.allclose(windowed(ids)[:, -1], full.with_window(3)(ids)[:, -1])
    with pytest.raises(ValueError, match="sinks=2 needs a window"):
        full.with_window(None, sinks=2)


def test_a_kv_cache_with_sinks_pins_the_first_positions_and_rings_the_rest():
    cache = KVCache(1, max_entries=3, sinks=2)
    sizes = []
    for p in range(9):
        entry, seen = np.full((1, 1, 1, 2), float(p)), cache.positions(new=1)
        keys, _ = cache.update(0, entry, entry)
        assert keys[0, 0, :, 0].tolist() == seen.tolist()    # what position p attends to
        sizes.append(cache.nbytes)
    assert cache.positions().tolist() == [0, 1, 6, 7, 8]
    assert cache.positions(new=2).tolist() == [0, 1, 6, 7, 8, 9, 10]
    assert set(sizes) == {(2 + 3) * 2 * 2 * 8}   # sinks + ring slots, keys and values, float64
    early = KVCache(1, max_entries=3, sinks=2)
    early.update(0, np.ones((1, 1, 1, 2)), np.ones((1, 1, 1, 2)))
    assert early.positions().tolist() == [0]
    with pytest.raises(ValueError, match="sinks=2 needs max_entries"):
        KVCache(1, sinks=2)
    with pytest.raises(ValueError, match="sinks"):
        KVCache(1, max_entries=2, sinks=-1)


@pytest.mark.parametrize("position", ["sinusoidal", "rope", "alibi"])
@pytest.mark.parametrize("prefill", [1, 5], ids=["token_by_token", "prompt_of_5"])
def test_decoding_through_the_pinned_ring_equals_masked_full_attention(position, prefill):
    m = DecoderOnlyTransformer.random(
        11, d_model=8, num_query_heads=2, num_kv_heads=1, d_ff=16, num_layers=2,
        max_length=40, position=position, rng=np.random.default_rng(0), dtype=np.float64)
    streaming = m.with_window(4, sinks=2)
    ids = np.random.default_rng(1).integers(0, 11, size=(2, 20))
    cache = streaming.new_cache(ring=True)
    steps, sizes = [streaming(ids[:, :prefill], cache=cache)], []
    for t in range(prefill, 20):
        steps.append(streaming(ids[:, t:t + 1], cache=cache))
        sizes.append(cache.nbytes)
    np.testing.assert_allclose(np.concatenate(steps, axis=1), streaming(ids), rtol=0,
                               atol=1e-12)
    assert cache.positions().tolist() == [0, 1, 16, 17, 18, 19]
    assert len(set(sizes)) == 1 and sizes[0] == 2 * (2 + 4) * m.kv_cache_bytes_per_token()
    no_sinks = m.with_window(4)(ids)                       # the sinks change the numbers
    assert np.abs(no_sinks[:, -1] - streaming(ids)[:, -1]).max() > 1e-3


@pytest.mark.parametrize("variant, kind", [("sink_logit", SinkLogitAttention),
                                           ("gated", GatedAttention)])
def test_random_models_of_each_variant_stream_through_the_pinned_ring(variant, kind):
    m = DecoderOnlyTransformer.random(
        11, d_model=8, num_query_heads=2, num_kv_heads=1, d_ff=16, num_layers=2,
        max_length=None, position="rope", rng=np.random.default_rng(0), dtype=np.float64,
        variant=variant).with_window(3, sinks=1)
    assert all(type(layer.self_attention) is kind for layer in m.layers)
    ids = np.random.default_rng(1).integers(0, 11, size=(1, 12))
    cache = m.new_cache(ring=True)
    steps = [m(ids[:, t:t + 1], cache=cache) for t in range(12)]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), m(ids), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="variant='gated' needs grouped-query attention"):
        DecoderOnlyTransformer.random(11, d_model=8, num_query_heads=2, num_kv_heads=2,
                                      d_ff=16, num_layers=1, max_length=8,
                                      rng=np.random.default_rng(0), variant="gated",
                                      latent={"latent_dim": 4, "query_latent_dim": 4,
                                              "rope_dim": 2})


def rope_model():
    return DecoderOnlyTransformer.random(
        11, d_model=8, num_query_heads=2, num_kv_heads=1, d_ff=16, num_layers=2,
        max_length=None, position="rope", rng=np.random.default_rng(0), dtype=np.float64)


def test_with_rope_pairing_turns_other_features_together_without_copying_weights():
    adjacent = rope_model()
    halves = adjacent.with_rope_pairing("halves")
    first, other = adjacent.layers[0].self_attention, halves.layers[0].self_attention
    assert other.query_kernel is first.query_kernel and first.rope_pairing == "adjacent"
    assert other.rope_pairing == "halves"
    ids = prompt(n=6)
    assert not np.allclose(adjacent(ids), halves(ids))
    # the halves pairing of permuted features is the adjacent pairing (chapter 11)
    order = np.concatenate([np.arange(0, 4, 2), np.arange(1, 4, 2)])
    permuted = adjacent.with_rope_pairing("halves")
    for layer in permuted.layers:
        attention = layer.self_attention
        attention.query_kernel = attention.query_kernel[..., order]
        attention.key_kernel = attention.key_kernel[..., order]
    np.testing.assert_allclose(permuted(ids), adjacent(ids), atol=1e-12)
    with pytest.raises(ValueError, match="pairing"):
        adjacent.with_rope_pairing("diagonal")
    with pytest.raises(ValueError, match="position='rope'"):
        model().with_rope_pairing("halves")


def test_a_llama_style_model_has_no_embedding_scale_no_bias_and_counts_a_tied_kernel_once():
    rng = np.random.default_rng(3)
    d, vocab = 8, 11

    def attention():  # Llama's projections have no biases
        kernels = GroupedQueryAttention.random(d, 2, 1, rng=rng).get_weights()[::2]
        return GroupedQueryAttention(*kernels, position="rope")

    layers = [DecoderOnlyLayer(
        attention(),
        SwiGLU(*rng.normal(size=(2, d, 12)), rng.normal(size=(12, d))),
        RMSNorm(rng.normal(size=d)), RMSNorm(rng.normal(size=d))) for _ in range(2)]
    embedding = rng.normal(size=(vocab, d))
    tied = DecoderOnlyTransformer(embedding, layers, RMSNorm(np.ones(d)), embedding.T, None,
                                  max_length=None, position="rope", scale_embedding=False)
    per_layer = (8 * 2 * 4 + 2 * 8 * 1 * 4 + 2 * 4 * 8) + 3 * 8 * 12 + 2 * 8
    assert tied.count_params() == vocab * d + 2 * per_layer + d
    ids = prompt(n=4)
    x = embedding[ids]
    for index, layer in enumerate(tied.layers):
        x, _ = layer(x, visible_keys(np.arange(4), np.arange(4)), layer=index)
    np.testing.assert_allclose(tied(ids), tied.final_norm(x) @ embedding.T, atol=1e-12)


def test_hidden_states_are_the_residual_stream_the_logits_are_read_from():
    m = model()
    ids = prompt(n=6)
    logits, weights, hidden = m(ids, return_attention_scores=True, return_hidden_states=True)
    assert len(hidden) == len(m.layers) + 1 and len(weights) == len(m.layers)
    assert np.allclose(hidden[0], m.embedding[ids] * np.sqrt(m.d_model) + m._table[:6])
    x = hidden[0]
    for index, layer in enumerate(m.layers):
        x, _ = layer(x, causal_mask(6))
        assert np.allclose(hidden[index + 1], x)
    assert np.allclose(logits, m.final_norm(hidden[-1]) @ m.output_kernel + m.output_bias)
    _, only_hidden = m(ids, return_hidden_states=True)
    assert all(np.array_equal(a, b) for a, b in zip(hidden, only_hidden))

"""Unit tests of helpers.latent_attention: MLA's two forms, its cache, GQA as MLA, accounting."""

import subprocess
import sys

import numpy as np
import pytest

from helpers.attention import causal_mask, softmax
from helpers.decoder_only import DecoderOnlyTransformer, GroupedQueryAttention, greedy_generate
from helpers.latent_attention import (
    H100_SXM,
    PUBLISHED,
    AttentionConfig,
    LatentCache,
    MultiHeadLatentAttention,
    absorbed_decoder,
    attention_flops_per_token,
    cache_elements_per_token,
    cache_read_intensity,
    coupled_rope_scores,
    gqa_groups_of_same_cache,
)
from helpers.transformer import rms_norm, rotary_position_embedding


def layer(seed=0, rope_dim=4, **sizes):
    sizes = {"num_heads": 4, "head_dim": 6, "latent_dim": 10, "query_latent_dim": 12,
             "rope_dim": rope_dim} | sizes
    mla = MultiHeadLatentAttention.random(16, rng=np.random.default_rng(seed), **sizes)
    rng = np.random.default_rng(seed + 100)        # RMSNorm scales other than 1
    mla.q_norm = rng.uniform(0.5, 1.5, mla.query_latent_dim)
    mla.kv_norm = rng.uniform(0.5, 1.5, mla.latent_dim)
    return mla


def inputs(n=7, batch=2, seed=1):
    return np.random.default_rng(seed).normal(size=(batch, n, 16))


def by_the_equations(mla, x):
    """Equations (9)-(19) token by token and head by head, loops only."""
    batch, n, _ = x.shape
    h, d_h, d_r = mla.num_heads, mla.head_dim, mla.rope_dim
    out = np.zeros_like(x)
    for b in range(batch):
        c_q = rms_norm(x[b] @ mla.w_dq, mla.q_norm)
        c_kv = rms_norm(x[b] @ mla.w_dkv, mla.kv_norm)
        k_r = rotary_position_embedding(x[b] @ mla.w_kr)
        heads = []
        for i in range(h):
            q_c = c_q @ mla.w_uq[:, i * d_h:(i + 1) * d_h]
            q_r = rotary_position_embedding(c_q @ mla.w_qr[:, i * d_r:(i + 1) * d_r])
            k_c = c_kv @ mla.w_uk[:, i * d_h:(i + 1) * d_h]
            v_c = c_kv @ mla.w_uv[:, i * d_h:(i + 1) * d_h]
            q, k = np.hstack([q_c, q_r]), np.hstack([k_c, k_r])
            scores = np.where(causal_mask(n), q @ k.T / np.sqrt(d_h + d_r), -np.inf)
            heads.append(softmax(scores) @ v_c)
        out[b] = np.hstack(heads) @ mla.w_o
    return out


@pytest.mark.parametrize("absorbed", [False, True])
def test_both_forms_equal_the_equations_written_out(absorbed):
    mla, x = layer(), inputs()
    out, weights = mla(x, absorbed=absorbed)
    assert np.allclose(out, by_the_equations(mla, x), rtol=0, atol=1e-12)
    assert np.allclose(weights.sum(-1), 1) and np.all(np.triu(weights[0, 0], 1) == 0)


@pytest.mark.parametrize("rope_dim", [0, 2, 4])
def test_naive_and_absorbed_agree_to_1e_10_in_prefill(rope_dim):
    mla, x = layer(seed=rope_dim, rope_dim=rope_dim, value_dim=5), inputs(n=9)
    naive, w_naive = mla(x)
    absorbed, w_absorbed = mla(x, absorbed=True)
    assert np.max(np.abs(naive - absorbed)) < 1e-10
    assert np.max(np.abs(w_naive - w_absorbed)) < 1e-10


@pytest.mark.parametrize("absorbed", [False, True])
def test_cached_generation_equals_recomputation_to_1e_10(absorbed):
    mla, x = layer(seed=3), inputs(n=8)
    full, _ = mla(x)
    cache = LatentCache(num_layers=1)
    rows = [mla(x[:, :5], cache=cache, absorbed=absorbed)[0]]       # prefill 5 tokens
    for t in range(5, 8):                                             # then one at a time
        rows.append(mla(x[:, t:t + 1], cache=cache, absorbed=absorbed)[0])
    assert np.max(np.abs(np.concatenate(rows, axis=1) - full)) < 1e-10


def test_the_cache_holds_exactly_the_latent_and_the_rope_key_per_token():
    mla, x = layer(seed=4), inputs(n=6, batch=3)
    cache = LatentCache(num_layers=2)
    mla(x, cache=cache, layer=1)
    latent, rope_key = mla.latents(x, np.arange(6))
    assert np.array_equal(cache.latents(1), latent) and np.array_equal(cache.rope_keys(1),
                                                                        rope_key)
    assert cache.latents(1).shape == (3, 6, 10) and cache.rope_keys(1).shape == (3, 6, 4)
    assert cache.nbytes == 3 * 6 * mla.cache_elements_per_token() * 8
    assert mla.cache_elements_per_token() == 10 + 4


def test_rope_key_is_shared_by_all_heads_and_positions_matter():
    mla, x = layer(seed=5), inputs(n=4)
    spread = [0, 2, 5, 9]
    assert not np.allclose(mla(x, positions=spread)[0], mla(x)[0])   # other offsets
    assert np.allclose(mla(x, positions=np.arange(4) + 3)[0], mla(x)[0])   # same offsets
    no_rope = layer(seed=5, rope_dim=0)
    assert np.allclose(no_rope(x, positions=spread)[0], no_rope(x)[0])
    cache = LatentCache(1)
    mla(x, cache=cache)
    assert cache.rope_keys(0).shape == (2, 4, 4)        # one RoPE key per token, not per head


@pytest.mark.parametrize("rope", [False, True])
def test_coupled_rope_breaks_absorption_only_with_rope(rope):
    mla, x = layer(seed=6), inputs(n=6)
    naive = coupled_rope_scores(mla, x, rope=rope, absorbed=False)
    absorbed = coupled_rope_scores(mla, x, rope=rope, absorbed=True)
    gap = np.max(np.abs(naive - absorbed))
    if rope:
        assert gap > 0.1
        # the absorbed form is right only where the key is at position 0 (R_0 = identity)
        assert np.allclose(naive[..., 0], absorbed[..., 0], atol=1e-12)
    else:
        assert gap < 1e-12


def test_decoupled_rope_restores_absorption_for_the_same_weights():
    mla, x = layer(seed=6), inputs(n=6)
    assert np.max(np.abs(mla(x)[0] - mla(x, absorbed=True)[0])) < 1e-10


@pytest.mark.parametrize("num_kv_heads", [1, 2, 4])
def test_grouped_query_attention_rewritten_as_mla_gives_the_same_output(num_kv_heads):
    gqa = GroupedQueryAttention.random(16, 4, num_kv_heads, rng=np.random.default_rng(7))
    x = inputs(n=6)
    expected, expected_weights = gqa(x, causal_mask(6))
    mla = MultiHeadLatentAttention.from_grouped_query_attention(gqa)
    assert mla.cache_elements_per_token() == 2 * num_kv_heads * gqa.head_dim
    for absorbed in (False, True):
        out, weights = mla(x, absorbed=absorbed)
        assert np.max(np.abs(out - expected)) < 1e-12
        assert np.max(np.abs(weights - expected_weights)) < 1e-12


def test_mla_keys_span_the_whole_latent_but_gqa_keys_only_half_of_its_cache():
    gqa = GroupedQueryAttention.random(16, 4, 2, rng=np.random.default_rng(8))
    as_mla = MultiHeadLatentAttention.from_grouped_query_attention(gqa)
    mla = layer(seed=8, latent_dim=as_mla.latent_dim)               # same cache: 16 numbers
    assert np.linalg.matrix_rank(as_mla.w_uk) == 2 * gqa.head_dim   # g d_h = 8
    assert np.linalg.matrix_rank(mla.w_uk) == mla.latent_dim        # 16


@pytest.mark.parametrize("bad, match", [
    (GroupedQueryAttention.random(8, 2, 1, rng=np.random.default_rng(0), position="rope"),
     "position='none'"),
    ("not a layer", "GroupedQueryAttention"),
])
def test_conversion_rejects_what_mla_cannot_express(bad, match):
    with pytest.raises((TypeError, ValueError), match=match):
        MultiHeadLatentAttention.from_grouped_query_attention(bad)


def test_conversion_rejects_a_non_zero_bias():
    gqa = GroupedQueryAttention.random(8, 2, 1, rng=np.random.default_rng(0))
    gqa.key_bias = gqa.key_bias + 0.5
    with pytest.raises(ValueError, match="key_bias must be None or zero"):
        MultiHeadLatentAttention.from_grouped_query_attention(gqa)


def test_published_configurations_give_the_papers_numbers():
    v2, v3 = PUBLISHED["DeepSeek-V2"], PUBLISHED["DeepSeek-V3"]
    assert (v2.num_layers, v2.num_heads, v2.head_dim, v2.latent_dim, v2.query_latent_dim,
            v2.rope_dim) == (60, 128, 128, 512, 1536, 64)
    assert (v3.num_layers, v3.query_latent_dim, v3.latent_dim) == (61, 1536, 512)
    assert cache_elements_per_token(v2, per_layer=True) == 576 == 4.5 * v2.head_dim
    assert gqa_groups_of_same_cache(v2) == 2.25
    assert cache_elements_per_token(v2) == 576 * 60
    llama = PUBLISHED["Llama 3 70B"]
    assert llama.kind == "GQA" and cache_elements_per_token(llama) == 2 * 8 * 128 * 80
    assert gqa_groups_of_same_cache(llama) == 8
    assert PUBLISHED["MHA (DeepSeek-V2 sizes)"].kind == "MHA" == PUBLISHED["Llama 2 7B"].kind
    assert cache_elements_per_token(PUBLISHED["Llama 2 7B"]) * 2 == 512 * 1024
    assert all(config.source for config in PUBLISHED.values())


def test_flops_count_the_matrix_products_of_a_small_layer():
    c = AttentionConfig("toy", num_layers=1, d_model=16, num_heads=4, head_dim=6,
                        latent_dim=10, query_latent_dim=12, rope_dim=4)
    products = [(16, 12), (12, 24), (12, 16), (16, 10), (16, 4), (24, 16)]   # (d_in, d_out)
    projections = sum(2 * a * b for a, b in products)
    n = 5
    naive = projections + n * 2 * 10 * 48 + n * (2 * 4 * 10 + 2 * 4 * 6)
    absorbed = projections + 2 * 4 * 6 * 10 * 2 + n * (2 * 4 * 14 + 2 * 4 * 10)
    assert attention_flops_per_token(c, n, phase="decode") == naive
    assert attention_flops_per_token(c, n, phase="decode", absorbed=True) == absorbed


def test_absorption_pays_in_decoding_but_not_in_prefill():
    v2 = PUBLISHED["DeepSeek-V2"]
    one = attention_flops_per_token(v2, 1, phase="decode")
    assert attention_flops_per_token(v2, 1, phase="decode", absorbed=True) > one
    for n in (2, 512, 4096, 32768):
        naive = attention_flops_per_token(v2, n, phase="decode")
        assert attention_flops_per_token(v2, n, phase="decode", absorbed=True) < naive
        naive = attention_flops_per_token(v2, n, phase="prefill")
        assert attention_flops_per_token(v2, n, phase="prefill", absorbed=True) > naive


def test_gqa_flops_do_not_depend_on_the_form_and_grow_with_the_context():
    llama = PUBLISHED["Llama 3 70B"]
    short = attention_flops_per_token(llama, 10, phase="decode")
    longer = attention_flops_per_token(llama, 11, phase="decode")
    assert longer - short == 80 * 4 * 64 * 128
    with pytest.raises(ValueError, match="absorbed=True needs an MLA config"):
        attention_flops_per_token(llama, 10, phase="decode", absorbed=True)


@pytest.mark.parametrize("name, absorbed", [("DeepSeek-V2", True), ("DeepSeek-V2", False),
                                            ("Llama 3 70B", False), ("Llama 2 7B", False)])
def test_intensity_is_the_flops_one_more_key_adds_over_the_bytes_it_is_cached_in(name,
                                                                                 absorbed):
    config = PUBLISHED[name]
    more = (attention_flops_per_token(config, 101, phase="decode", absorbed=absorbed)
            - attention_flops_per_token(config, 100, phase="decode", absorbed=absorbed))
    cached = cache_elements_per_token(config) * 2                  # bytes, every layer
    assert cache_read_intensity(config, absorbed=absorbed) == pytest.approx(more / cached)


def test_intensity_has_the_closed_forms_of_each_design():
    v2 = PUBLISHED["DeepSeek-V2"]
    assert cache_read_intensity(v2, absorbed=True) == pytest.approx(128 * (1024 + 64) / 576)
    assert cache_read_intensity(PUBLISHED["Llama 3 70B"]) == 64 / 8
    assert cache_read_intensity(PUBLISHED["MHA (DeepSeek-V2 sizes)"]) == 1
    assert cache_read_intensity(v2, absorbed=True, bytes_per_number=1) == pytest.approx(
        2 * cache_read_intensity(v2, absorbed=True))               # FP8 reads half the bytes
    assert cache_read_intensity(v2) > 100 * cache_read_intensity(v2, absorbed=True)


def test_the_h100_ratio_is_its_datasheet_dense_bf16_over_its_bandwidth():
    assert H100_SXM.flops_per_second == 989.5e12 and H100_SXM.bytes_per_second == 3.35e12
    assert round(H100_SXM.flops_per_byte, 1) == 295.4
    assert "datasheet" in H100_SXM.source


def latent_model(seed=0, dtype=np.float64):
    return DecoderOnlyTransformer.random(
        14, d_model=16, num_query_heads=4, num_kv_heads=4, d_ff=32, num_layers=2,
        max_length=12, rng=np.random.default_rng(seed), dtype=dtype,
        latent={"latent_dim": 6, "query_latent_dim": 8, "rope_dim": 2})


def test_the_absorbed_decoder_shares_the_weights_and_gives_the_same_logits_and_tokens():
    model = latent_model()
    absorbed = absorbed_decoder(model)
    ids = np.random.default_rng(1).integers(0, 14, size=(5, 4))
    assert np.max(np.abs(absorbed(ids) - model(ids))) < 1e-12
    for ours, theirs in zip(absorbed.layers, model.layers):
        assert ours.self_attention.w_uk is theirs.self_attention.w_uk
        assert type(theirs.self_attention) is MultiHeadLatentAttention   # left as it was
    tokens, logits = greedy_generate(absorbed, ids, steps=6, cache=absorbed.new_cache())
    expected, expected_logits = greedy_generate(model, ids, steps=6, cache=model.new_cache())
    assert np.array_equal(tokens, expected)
    assert np.max(np.abs(logits - expected_logits)) < 1e-12


def test_the_absorbed_decoder_never_rebuilds_keys(monkeypatch):
    model, ids = latent_model(seed=2), np.array([[1, 2, 3]])
    absorbed = absorbed_decoder(model)

    def rebuild(*args):
        raise AssertionError("keys rebuilt")

    monkeypatch.setattr(MultiHeadLatentAttention, "_naive", rebuild)
    assert absorbed(ids).shape == (1, 3, 14)
    with pytest.raises(AssertionError, match="keys rebuilt"):
        model(ids)


@pytest.mark.parametrize("make, error, match", [
    (lambda: layer()(np.ones((2, 3, 5))), ValueError, r"d_model=16"),
    (lambda: layer()(np.ones((3, 16))), ValueError, r"\(batch, n, d_model\)"),
    (lambda: layer()(inputs(), positions=[0, 1]), ValueError, "positions"),
    (lambda: layer()(inputs(), cache={}), TypeError, "cache must be a LatentCache"),
    (lambda: layer()(inputs(), absorbed=1), TypeError, "absorbed must be True or False"),
    (lambda: MultiHeadLatentAttention.random(16, num_heads=4, head_dim=6, latent_dim=10,
                                             query_latent_dim=12, rope_dim=3,
                                             rng=np.random.default_rng(0)),
     ValueError, "rope_dim must be even"),
    (lambda: _with(w_kr=None), ValueError, "w_qr and w_kr must both"),
    (lambda: _with(w_uq=np.ones((12, 23))), ValueError, "num_heads=4 must divide w_uq"),
    (lambda: _with(w_uk=np.ones((10, 23))), ValueError, r"w_uk must have shape \(10, 24\)"),
    (lambda: _with(w_uk=np.ones((9, 24))), ValueError, r"w_uk must have shape \(10, 24\)"),
    (lambda: _with(kv_norm=np.ones(3)), ValueError, r"kv_norm must have shape \(10,\)"),
    (lambda: LatentCache(0), ValueError, "num_layers"),
    (lambda: LatentCache(1).latents(0), ValueError, "layer 0 of the cache is empty"),
    (lambda: LatentCache(1).update(0, np.ones((1, 2, 4)), np.ones((1, 3, 2))), ValueError,
     "must agree on"),
    (lambda: attention_flops_per_token(PUBLISHED["DeepSeek-V2"], 0, phase="decode"),
     ValueError, "context"),
    (lambda: attention_flops_per_token(PUBLISHED["DeepSeek-V2"], 4, phase="train"),
     ValueError, "phase"),
    (lambda: cache_elements_per_token({"num_layers": 1}), TypeError, "AttentionConfig"),
    (lambda: cache_read_intensity(PUBLISHED["Llama 3 70B"], absorbed=True), ValueError,
     "absorbed=True needs an MLA config"),
    (lambda: cache_read_intensity(PUBLISHED["DeepSeek-V2"], bytes_per_number=0), ValueError,
     "bytes_per_number"),
    (lambda: absorbed_decoder(layer()), TypeError, "DecoderOnlyTransformer"),
    (lambda: absorbed_decoder(DecoderOnlyTransformer.random(
        14, d_model=16, num_query_heads=4, num_kv_heads=2, d_ff=32, num_layers=1,
        max_length=12, rng=np.random.default_rng(0))), ValueError,
     "multi-head latent attention in every layer"),
])
def test_bad_input_is_rejected_with_a_clear_message(make, error, match):
    with pytest.raises(error, match=match):
        make()


def _with(**changes):
    mla = layer()
    weights = {name: getattr(mla, name) for name in
               ("w_dq", "q_norm", "w_uq", "w_qr", "w_dkv", "kv_norm", "w_uk", "w_uv", "w_kr",
                "w_o")} | changes
    return MultiHeadLatentAttention(**weights, num_heads=4)


def test_cache_rejects_a_layer_entry_of_another_size():
    cache = LatentCache(1)
    cache.update(0, np.ones((1, 2, 4)), np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="layer 0 stores latents"):
        cache.update(0, np.ones((1, 1, 5)), np.ones((1, 1, 2)))


def test_the_module_imports_numpy_only():
    code = ("import sys, helpers.latent_attention; "
            "print('tensorflow' in sys.modules, 'keras' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False False"
